"""Check a skill's declared prerequisites before running it (001 §5, §10).

A missing prerequisite is a fatal failure of the path (001 §10): the fallback state
machine goes straight to ``fallback`` without calling the runner.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping

from skillrt.errors import MissingPrerequisite
from skillrt.skills.model import Skill


def missing_prerequisites(skill: Skill, environ: Mapping[str, str]) -> tuple[str, ...]:
    """``bin:<name>`` / ``env:<NAME>`` for each unmet prerequisite, in declared order.

    ``bins`` are looked up on ``environ["PATH"]``; ``env`` names must be set and
    non-empty in ``environ`` (the caller's environment, not the runner's filtered one).
    """
    prereq = skill.routing.prerequisites
    path = environ.get("PATH", "")
    missing = [f"bin:{b}" for b in prereq.bins if shutil.which(b, path=path) is None]
    missing.extend(f"env:{e}" for e in prereq.env if not environ.get(e))
    return tuple(missing)


def check_prerequisites(skill: Skill, environ: Mapping[str, str]) -> None:
    """Raise :class:`MissingPrerequisite` when anything is missing."""
    missing = missing_prerequisites(skill, environ)
    if missing:
        raise MissingPrerequisite(
            f"'{skill.qualified_name}' cannot run here: missing {', '.join(missing)}",
            skill=skill.qualified_name,
            missing=list(missing),
        )
