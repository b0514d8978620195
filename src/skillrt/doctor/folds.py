"""Leave-out routers: the real router over the catalogue with one fold of texts held out.

Folds 0 and 1 leave out every skill's body sections at even and odd positions; folds 2
and 3 its description clauses, examples and triggers at even and odd positions
(:func:`held_out`), the rest of every skill staying whole. A pseudo-request is routed
through the router of its fold, so its own sentence is not in the index, yet everything
else is: the rest of its skill, and every other skill (each missing the same share of
the same kind of text, so the competition stays fair).

A fold's router is the project's :class:`~skillrt.routing.router.Router` over a
:class:`~skillrt.routing.index.RouterIndex` built from the held-out views. Body sections
and examples keep their texts, so their vectors and token states come from the vector
cache; only a shortened description is a new text (embedded once, then cached).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from skillrt.doctor.pseudo import DESCRIPTION_FOLD, description_clauses, description_pieces
from skillrt.routing.fields import BodySection, SkillFields, skill_fields
from skillrt.routing.text import terms
from skillrt.skills.model import Skill

if TYPE_CHECKING:
    from skillrt.config import RoutingConfig
    from skillrt.routing.embeddings.base import EmbeddingBackend
    from skillrt.routing.router import Router
    from skillrt.routing.vector_cache import BuildProgress
    from skillrt.store.base import Store

__all__ = ["fold_router", "held_out", "section_terms", "skill_fields_section"]


def skill_fields_section(section: BodySection) -> tuple[str, ...]:
    """One section's terms, as :func:`skill_fields` derives the body field."""
    return tuple(terms(f"{section.heading} {section.text}"))


def _held(items: Sequence[str], parity: int) -> set[str]:
    """The texts of ``items`` at positions of ``parity`` (blank ones do not count)."""
    kept = [t for t in items if t.strip()]
    return {t for j, t in enumerate(kept) if j % 2 == parity}


def held_out(
    skill: Skill,
    fields: SkillFields,
    fold: int,
    per_section: Sequence[tuple[str, ...]] | None = None,
) -> tuple[Skill, SkillFields]:
    """``skill`` and its fields without the texts of ``fold`` (see the module docstring).

    A text held out is removed wherever it occurs: a sentence the skill repeats is not
    left behind to match itself. The fields are what :func:`skill_fields` derives from
    the view; ``per_section`` (each section's terms, from :func:`section_terms`) spares
    tokenising the kept sections again for every fold.
    """
    if fold < DESCRIPTION_FOLD:
        out = {s.text for j, s in enumerate(fields.sections) if j % 2 == fold}
        kept = [j for j, s in enumerate(fields.sections) if s.text not in out]
        terms_of = per_section if per_section is not None else _section_terms(fields)
        body = tuple(t for j in kept for t in terms_of[j])
        head = fields.field_terms[:3]
        sections = tuple(fields.sections[j] for j in kept)
        return skill, SkillFields(sections, (*head, body))
    parity = fold - DESCRIPTION_FOLD
    clauses = _held(description_clauses(skill.description), parity)
    examples = _held(skill.routing.examples, parity)
    triggers = _held(skill.routing.triggers, parity)
    description = " ".join(p for p in description_pieces(skill.description) if p not in clauses)
    routing = dataclasses.replace(
        skill.routing,
        examples=tuple(e for e in skill.routing.examples if e not in examples),
        triggers=tuple(t for t in skill.routing.triggers if t not in triggers),
    )
    view = dataclasses.replace(skill, description=description, routing=routing)
    derived = skill_fields(view, ())  # name, description, examples: short texts
    name, desc_terms, example_terms, _ = derived.field_terms
    return view, SkillFields(
        fields.sections, (name, desc_terms, example_terms, fields.field_terms[3])
    )


def _section_terms(fields: SkillFields) -> list[tuple[str, ...]]:
    return [skill_fields_section(s) for s in fields.sections]


def section_terms(fields: Sequence[SkillFields]) -> list[list[tuple[str, ...]]]:
    """Each skill's per-section terms (the body field is their concatenation)."""
    return [_section_terms(f) for f in fields]


def fold_router(
    skills: Sequence[Skill],
    fields: Sequence[SkillFields],
    fold: int,
    *,
    backend: EmbeddingBackend | None,
    config: RoutingConfig,
    store: Store | None,
    is_enabled: Callable[[Skill], bool] | None = None,
    progress: BuildProgress | None = None,
    env: dict[str, str] | None = None,
    terms_of: Sequence[Sequence[tuple[str, ...]]] | None = None,
) -> Router:
    """The real router over the catalogue with ``fold``'s texts held out (``terms_of``:
    each skill's per-section terms, from :func:`section_terms`)."""
    from skillrt.routing.index import RouterIndex
    from skillrt.routing.router import Router
    from skillrt.routing.vector_cache import VectorCache

    views = [
        held_out(s, f, fold, terms_of[i] if terms_of is not None else None)
        for i, (s, f) in enumerate(zip(skills, fields, strict=True))
    ]
    index = RouterIndex(
        [v for v, _ in views],
        backend=backend,
        cache=VectorCache(store, progress=progress),
        is_enabled=is_enabled,
        token_match_max_texts=config.token_match_max_texts,
        fields=[f for _, f in views],
    )
    # The index holds its vectors as matrices: the cache's per-text copies can go.
    index.cache.clear_memory()
    return Router(index, config, env=env)
