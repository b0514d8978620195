"""Values that describe skills at Level 1: what the registry knows without a body read."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Severity = Literal["error", "warning"]
CostHint = Literal["low", "medium", "high"]
COST_HINTS: tuple[CostHint, ...] = ("low", "medium", "high")


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in a skill; ``code`` is stable, ``message`` is for people."""

    code: str
    severity: Severity
    message: str
    path: str | None = None
    field: str | None = None


@dataclass(frozen=True)
class Prerequisites:
    """What must be present for a skill to run (seed 001 §5)."""

    bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()


@dataclass(frozen=True)
class RoutingMeta:
    """The routing fields of seed 001 §5, from top level or ``metadata`` (S2)."""

    triggers: tuple[str, ...] = ()
    anti_triggers: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    cost_hint: CostHint = "medium"
    prerequisites: Prerequisites = field(default_factory=Prerequisites)
    parallel_safe: bool = False
    always: bool = False


@dataclass(frozen=True)
class SkillRef:
    """How the loader finds a skill: its identity and where it lives (seed 003 §2.1)."""

    name: str
    qualified_name: str
    source: str
    path: Path
    skill_file: Path | None


@dataclass(frozen=True)
class Skill:
    """A discovered skill's Level-1 record. Its body is not read until asked for."""

    name: str
    description: str
    #: Skill folder (absolute). For catalogue (JSONL) skills: the catalogue file's folder.
    path: Path
    #: The SKILL.md file, or None for a skill that came from a JSONL catalogue.
    skill_file: Path | None
    namespace: str | None = None
    #: Where it came from: "project", "user", "flag", "config", "catalog".
    source: str = "project"
    root: Path | None = None
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: tuple[str, ...] = ()
    metadata: dict[str, str] = field(default_factory=dict)
    routing: RoutingMeta = field(default_factory=RoutingMeta)
    disable_model_invocation: bool = False
    user_invocable: bool = True
    argument_hint: str | None = None
    context: str | None = None
    #: sha256 of the SKILL.md bytes read at Level 1 (the frontmatter, up to and including
    #: its closing fence), or of the catalogue record.
    content_hash: str = ""
    diagnostics: tuple[Diagnostic, ...] = ()
    #: Anything else from the frontmatter that we do not model, kept for clients.
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def qualified_name(self) -> str:
        return f"{self.namespace}:{self.name}" if self.namespace else self.name

    @property
    def valid(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)

    @property
    def ref(self) -> SkillRef:
        return SkillRef(self.name, self.qualified_name, self.source, self.path, self.skill_file)


@dataclass(frozen=True)
class BrokenSkill:
    """A skill folder that could not be loaded at all; reported, then skipped (S4)."""

    path: Path
    skill_file: Path | None
    source: str
    namespace: str | None
    diagnostics: tuple[Diagnostic, ...]

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def valid(self) -> bool:
        """Always False: a broken skill could not be loaded."""
        return False


@dataclass(frozen=True)
class ShadowedSkill:
    """A skill hidden by another of the same qualified name (S5); never silently dropped."""

    skill: Skill
    shadowed_by: Path
    reason: str
