"""Skills at Level 1: files, frontmatter, validation, discovery, the registry."""

from skillrt.skills.model import BrokenSkill, Diagnostic, RoutingMeta, Skill, SkillRef
from skillrt.skills.registry import SkillEntry, SkillRegistry

__all__ = [
    "BrokenSkill",
    "Diagnostic",
    "RoutingMeta",
    "Skill",
    "SkillEntry",
    "SkillRef",
    "SkillRegistry",
]
