"""skills-ref's ``SkillProperties``, built from a skillrt :class:`~skillrt.skills.model.Skill`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skillrt.skills.model import Skill


@dataclass
class SkillProperties:
    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_skill(cls, skill: Skill) -> SkillProperties:
        return cls(
            name=skill.name,
            description=skill.description,
            license=skill.license,
            compatibility=skill.compatibility,
            # skillrt parses allowed-tools into a tuple; skills-ref keeps the string.
            allowed_tools=" ".join(skill.allowed_tools) if skill.allowed_tools else None,
            metadata=dict(skill.metadata),
        )

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.license is not None:
            result["license"] = self.license
        if self.compatibility is not None:
            result["compatibility"] = self.compatibility
        if self.allowed_tools is not None:
            result["allowed-tools"] = self.allowed_tools
        if self.metadata:
            result["metadata"] = self.metadata
        return result
