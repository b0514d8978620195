"""skills-ref's parser API over skillrt's reader."""

from __future__ import annotations

from pathlib import Path

from skillrt.skills.frontmatter import parse_frontmatter
from skillrt.skills.model import BrokenSkill, Skill
from skillrt.skills.reader import find_skill_md, read_skill

from .errors import ParseError, ValidationError
from .models import SkillProperties

__all__ = [
    "ParseError",
    "ValidationError",
    "find_skill_md",
    "load_skill",
    "parse_frontmatter",
    "read_properties",
]

#: skillrt diagnostics that skills-ref raises as ValidationError (the rest are ParseError).
VALIDATION_CODES = frozenset(
    {"MISSING_NAME", "MISSING_DESCRIPTION", "NAME_EMPTY", "DESCRIPTION_EMPTY"}
)


def load_skill(skill_dir: Path | str) -> Skill:
    """Read a skill with skillrt, raising skills-ref's exceptions for a broken one."""
    item = read_skill(Path(skill_dir))
    if isinstance(item, BrokenSkill):
        errors = [d for d in item.diagnostics if d.severity == "error"]
        first = errors[0]
        if first.code in VALIDATION_CODES:
            raise ValidationError(first.message, [d.message for d in errors])
        raise ParseError(first.message, reason=first.code)
    return item


def read_properties(skill_dir: Path | str) -> SkillProperties:
    return SkillProperties.from_skill(load_skill(skill_dir))
