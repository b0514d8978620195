"""Leave-out routers: the real router over the catalogue with one fold of texts held out.

Fold ``f`` keeps every skill whole except its texts at positions ``j % FOLDS == f``:
those description clauses, examples, triggers and body sections are left out of the
index (:func:`held_out`). A pseudo-request of fold ``f`` is routed through fold ``f``'s
router, so its own sentence is not in the index, yet everything else is: the rest of its
skill, and every other skill (each missing the same share of its texts, so the
competition stays fair).

A fold's router is the project's :class:`~skillrt.routing.router.Router` over a
:class:`~skillrt.routing.index.RouterIndex` built from the held-out views. Body sections
and examples keep their texts, so their vectors and token states come from the vector
cache; only a shortened description is a new text (embedded once, then cached).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from skillrt.doctor.pseudo import FOLDS, description_clauses
from skillrt.routing.fields import SkillFields, skill_fields
from skillrt.skills.model import Skill

if TYPE_CHECKING:
    from skillrt.config import RoutingConfig
    from skillrt.routing.embeddings.base import EmbeddingBackend
    from skillrt.routing.router import Router
    from skillrt.routing.vector_cache import BuildProgress
    from skillrt.store.base import Store

__all__ = ["fold_router", "held_out"]


def _kept(items: Sequence[str], fold: int) -> tuple[str, ...]:
    kept = [t for t in items if t.strip()]
    return tuple(t for j, t in enumerate(kept) if j % FOLDS != fold)


def held_out(skill: Skill, fields: SkillFields, fold: int) -> tuple[Skill, SkillFields]:
    """``skill`` and its fields without the texts of ``fold`` (see the module docstring)."""
    clauses = description_clauses(skill.description)
    description = " ".join(c for j, c in enumerate(clauses) if j % FOLDS != fold)
    routing = dataclasses.replace(
        skill.routing,
        examples=_kept(skill.routing.examples, fold),
        triggers=_kept(skill.routing.triggers, fold),
    )
    view = dataclasses.replace(skill, description=description, routing=routing)
    sections = [s for j, s in enumerate(fields.sections) if j % FOLDS != fold]
    return view, skill_fields(view, sections)


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
) -> Router:
    """The real router over the catalogue with ``fold``'s texts held out."""
    from skillrt.routing.index import RouterIndex
    from skillrt.routing.router import Router
    from skillrt.routing.vector_cache import VectorCache

    views = [held_out(s, f, fold) for s, f in zip(skills, fields, strict=True)]
    index = RouterIndex(
        [v for v, _ in views],
        backend=backend,
        cache=VectorCache(store, progress=progress),
        is_enabled=is_enabled,
        token_match_max_texts=config.token_match_max_texts,
        fields=[f for _, f in views],
    )
    return Router(index, config, env=env)
