"""The Level-1 ``<available_skills>`` block for a model's context (S7).

Stable order (qualified name), XML-escaped, within a character budget: when over it,
the descriptions of the least-used skills go first; names are never dropped.
Skills with ``disable-model-invocation: true`` and disabled skills are left out.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from skillrt.skills.model import Skill

OPEN, CLOSE = "<available_skills>", "</available_skills>"


@dataclass(frozen=True)
class Catalog:
    text: str
    #: Qualified names listed, in order.
    names: tuple[str, ...]
    #: Names whose description was dropped to fit the budget.
    descriptions_dropped: tuple[str, ...]
    budget: int | None
    #: True when even the names alone did not fit (names are never dropped).
    over_budget: bool

    @property
    def chars(self) -> int:
        return len(self.text)


def _entry(skill: Skill, with_description: bool) -> str:
    lines = ["<skill>", "<name>", html.escape(skill.qualified_name), "</name>"]
    if with_description:
        lines += ["<description>", html.escape(skill.description), "</description>"]
    location = skill.skill_file if skill.skill_file is not None else skill.path
    lines += ["<location>", html.escape(str(location)), "</location>", "</skill>"]
    return "\n".join(lines)


def render_skills(
    skills: Sequence[Skill], *, budget: int | None = None, usage: Mapping[str, int] | None = None
) -> Catalog:
    """Render exactly ``skills`` (already filtered) within ``budget`` characters."""
    ordered = sorted(skills, key=lambda s: s.qualified_name)
    if not ordered:
        text = f"{OPEN}\n{CLOSE}"
        return Catalog(text, (), (), budget, budget is not None and len(text) > budget)
    full = [_entry(s, True) for s in ordered]
    bare = [_entry(s, False) for s in ordered]
    chosen = list(full)
    # Each entry is joined by one newline; the wrapper adds len(OPEN) + len(CLOSE) + 2.
    total = len(OPEN) + len(CLOSE) + 2 + sum(len(e) for e in chosen) + len(chosen) - 1
    dropped: list[str] = []
    if budget is not None and total > budget:
        use = usage or {}
        # Least used first; ties broken by the longest description (frees the most room).
        order = sorted(
            range(len(ordered)),
            key=lambda i: (
                use.get(ordered[i].qualified_name, 0),
                -len(full[i]),
                ordered[i].qualified_name,
            ),
        )
        for i in order:
            if total <= budget:
                break
            total -= len(full[i]) - len(bare[i])
            chosen[i] = bare[i]
            dropped.append(ordered[i].qualified_name)
    text = "\n".join([OPEN, *chosen, CLOSE])
    return Catalog(
        text,
        tuple(s.qualified_name for s in ordered),
        tuple(sorted(dropped)),
        budget,
        budget is not None and len(text) > budget,
    )


class EnabledSkills(Protocol):
    """What the catalogue reads of a registry (:class:`skillrt.skills.registry.SkillRegistry`)."""

    def enabled_skills(self) -> list[Skill]: ...


def render_catalog(
    registry: EnabledSkills, *, budget: int | None = None, usage: Mapping[str, int] | None = None
) -> Catalog:
    """The catalogue of a registry's enabled, model-invocable skills."""
    skills = [s for s in registry.enabled_skills() if not s.disable_model_invocation]
    return render_skills(skills, budget=budget, usage=usage)
