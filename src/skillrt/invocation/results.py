"""What resolving a message returns: activations, diagnostics, commands (seed 004 §4, §7)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from skillrt.invocation.scanner import Mention

Surface = Literal["user", "palette", "model"]
SURFACES: tuple[Surface, ...] = ("user", "palette", "model")
CommandAction = Literal["list", "enable", "disable"]


@dataclass(frozen=True)
class Activation:
    """A skill a mention activated: the visible line, its body, its declared tools (I3)."""

    #: The skill's qualified name (``ns:name`` or ``name``).
    skill: str
    #: The first mention that named it (later mentions of the same skill collapse into it).
    mention: Mention
    #: ``Using skill: <name>``.
    line: str
    #: The body as loaded by the loader: injected into the turn as guidance.
    body: str
    #: The loader's load report (sha256, bytes_read, chars_returned, truncated, ...).
    load_report: Any
    #: ``allowed-tools`` as declared, parsed; shown but not enforced (004 §4).
    allowed_tools: tuple[str, ...] = ()
    allowed_tools_enforced: bool = False
    #: ``Allowed tools: a, b (parsed, not enforced)``.
    tools_line: str = ""
    description: str = ""
    #: The guidance block to put in context (seed 003 §6: ``[Skill: …]`` header + body).
    injection: str = ""


@dataclass(frozen=True)
class InvocationDiagnostic:
    """Why a mention (or command) did not activate; ``code`` is stable, ``message`` is 004 §7."""

    code: str
    message: str
    #: The mention's id as written (``None`` for diagnostics about commands or the turn).
    mention_id: str | None = None
    #: Ids to type instead, best first (qualified names).
    suggestions: tuple[str, ...] = ()
    #: Where in the text: the mention's (or command line's) span.
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class SkillCommand:
    """A ``/skill list|enable|disable`` line found in the text."""

    action: CommandAction
    #: The skill id for enable/disable, an optional filter for list.
    target: str | None
    raw: str
    start: int
    end: int


@dataclass(frozen=True)
class SkillListing:
    """One row of ``/skill list``."""

    id: str
    description: str
    enabled: bool
    namespace: str | None = None


@dataclass(frozen=True)
class CommandOutcome:
    """What applying a :class:`SkillCommand` did."""

    command: SkillCommand
    ok: bool
    message: str
    #: For ``/skill list``: the skills, in registry order.
    skills: tuple[SkillListing, ...] = ()
    applied: bool = False


@dataclass(frozen=True)
class Resolution:
    """Everything one message resolved to (SPEC I1-I6)."""

    activated: tuple[Activation, ...]
    #: The text with activated mentions and ``/skill`` command lines removed; unresolved
    #: mentions stay in place (they are sent as ordinary text).
    task_text: str
    diagnostics: tuple[InvocationDiagnostic, ...]
    mentions: tuple[Mention, ...]
    commands: tuple[SkillCommand, ...]
    surface: str
    #: A JSON-ready event record for telemetry.
    event: dict[str, Any] = field(default_factory=dict)
    #: Filled when the caller asked to apply the commands.
    command_results: tuple[CommandOutcome, ...] = ()

    @property
    def activated_names(self) -> tuple[str, ...]:
        return tuple(a.skill for a in self.activated)

    @property
    def lines(self) -> tuple[str, ...]:
        """The transcript lines: one ``Using skill:`` line per activation."""
        return tuple(a.line for a in self.activated)


@dataclass(frozen=True)
class Completion:
    """One completion for a partial ``$tok`` (or ``/skill`` argument) under the cursor."""

    #: The id to insert (bare when that is unambiguous, else ``ns:name``).
    id: str
    #: What a menu shows: ``$id``.
    display: str
    description: str
    #: Replace ``text[replace_start:replace_end]`` with ``insert``.
    replace_start: int
    replace_end: int
    insert: str = ""
    #: How it matched: "prefix", "substring", "initials", "subsequence", "command".
    match: str = "prefix"
    qualified_name: str = ""
