"""A composite skill's ``config.yaml``: its phases, agents and context patterns (O1).

The format (seed 002 step 3)::

    name: develop-feature
    description: optional text
    phases:
      - id: clarification            # unique, [a-z0-9][a-z0-9_-]*
        agent: clarification         # unique; memory file is {task_id}-{agent}-memory.md
        instructions: |              # optional; `{task_id}` is substituted
          ...
        context: ["{task_id}-workflow-context.md"]   # globs inside the memory folder
        role: researcher             # optional, default = agent (the dispatcher's role)
        timeout_s: 600               # optional, default = execution.timeout_s
        description: optional text

Only ``id`` and ``agent`` are required, as in seed 002's own data contract: a phase
without ``instructions`` runs on its agent's role guide and the composite skill's body
(the dispatcher puts both in every phase prompt). Every problem is reported at once;
unknown keys are errors (a typo must not silently drop a phase's context). A name or
pattern that could leave the memory folder raises :class:`MemoryPathEscape`, anything else
:class:`WorkflowConfigError`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillrt.errors import MemoryPathEscape, WorkflowConfigError
from skillrt.fileopen import read_regular

__all__ = [
    "CONFIG_FILENAME",
    "DEFAULT_CONTEXT",
    "PhaseSpec",
    "WorkflowSpec",
    "load_workflow_spec",
    "parse_workflow_spec",
]

CONFIG_FILENAME = "config.yaml"
#: A phase without ``context`` still reads the workflow context (seed 002 invariant 4).
DEFAULT_CONTEXT = ("{task_id}-workflow-context.md",)
MAX_CONFIG_BYTES = 1_000_000
MAX_PHASES = 64
MAX_INSTRUCTIONS_CHARS = 100_000
MAX_CONTEXT_PATTERNS = 32

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_TOP_KEYS = frozenset({"name", "description", "phases"})
_PHASE_KEYS = frozenset(
    {"id", "agent", "instructions", "context", "role", "timeout_s", "description"}
)
_ESCAPE = "escape"


@dataclass(frozen=True)
class PhaseSpec:
    """One phase: the agent that runs it and the memory files it reads."""

    id: str
    agent: str
    #: The phase's own task text; None: the role guide and the skill's body say it all.
    instructions: str | None = None
    context: tuple[str, ...] = DEFAULT_CONTEXT
    role: str | None = None
    timeout_s: float | None = None
    description: str | None = None

    @property
    def dispatch_role(self) -> str:
        """The role the dispatcher runs this phase's agent as."""
        return self.role or self.agent

    def memory_file_name(self, task_id: str) -> str:
        """``{task_id}-{agent}-memory.md`` (seed 002: never change this format)."""
        return f"{task_id}-{self.agent}-memory.md"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "agent": self.agent,
            "role": self.dispatch_role,
            "context": list(self.context),
            "instructions": self.instructions,
        }
        if self.timeout_s is not None:
            out["timeout_s"] = self.timeout_s
        if self.description is not None:
            out["description"] = self.description
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PhaseSpec:
        """Rebuild from :meth:`to_dict` output (a run's saved step-3 snapshot)."""
        role = data.get("role")
        return cls(
            id=str(data["id"]),
            agent=str(data["agent"]),
            instructions=(
                str(data["instructions"]) if data.get("instructions") is not None else None
            ),
            context=tuple(str(p) for p in data.get("context", DEFAULT_CONTEXT)),
            role=None if role in (None, data["agent"]) else str(role),
            timeout_s=float(data["timeout_s"]) if data.get("timeout_s") is not None else None,
            description=data.get("description"),
        )


@dataclass(frozen=True)
class WorkflowSpec:
    """A validated composite-skill configuration."""

    name: str
    phases: tuple[PhaseSpec, ...]
    description: str | None = None
    #: The config.yaml it came from (None when built from a mapping).
    source: Path | None = None
    #: sha256 of the config bytes (or of the canonical mapping).
    sha256: str = ""
    phase_index: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "phase_index", {p.id: i for i, p in enumerate(self.phases)})

    def phase(self, phase_id: str) -> PhaseSpec:
        return self.phases[self.phase_index[phase_id]]

    def to_dict(self) -> dict[str, Any]:
        """The ``skill_config`` of step 3's output (phases, agents, context patterns)."""
        out: dict[str, Any] = {"name": self.name}
        if self.description is not None:
            out["description"] = self.description
        out["phases"] = [p.to_dict() for p in self.phases]
        out["source"] = str(self.source) if self.source else None
        out["sha256"] = self.sha256
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WorkflowSpec:
        """Rebuild the snapshot saved at step 3 (no re-validation of a trusted record)."""
        source = data.get("source")
        return cls(
            name=str(data["name"]),
            phases=tuple(PhaseSpec.from_dict(p) for p in data["phases"]),
            description=data.get("description"),
            source=Path(source) if source else None,
            sha256=str(data.get("sha256", "")),
        )


def load_workflow_spec(path: Path | str) -> WorkflowSpec:
    """Read and validate a ``config.yaml`` (or the one inside a skill folder)."""
    import yaml

    path = Path(path)
    if path.is_dir():
        path = path / CONFIG_FILENAME
    problems: list[dict[str, Any]] = []
    try:
        size = path.stat().st_size
    except OSError:
        raise WorkflowConfigError(
            f"composite skill config not found: {path}",
            path=str(path),
            problems=[{"where": "config.yaml", "message": "file not found"}],
        ) from None
    if size > MAX_CONFIG_BYTES:
        raise WorkflowConfigError(
            f"{path} is {size} bytes, over the {MAX_CONFIG_BYTES}-byte limit",
            path=str(path),
            problems=[{"where": "config.yaml", "message": "file too large"}],
        )
    try:
        raw = read_regular(path, limit=MAX_CONFIG_BYTES + 1)  # never blocks on a FIFO
        if len(raw) > MAX_CONFIG_BYTES:
            raise OSError(f"grew past the {MAX_CONFIG_BYTES}-byte limit while being read")
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available
        data = yaml.load(raw.decode("utf-8-sig"), Loader=loader)
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkflowConfigError(f"cannot read {path}: {exc}", path=str(path)) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problems.append({"where": "config.yaml", "line": line, "message": f"bad YAML: {exc}"})
        raise WorkflowConfigError(
            f"{path} is not valid YAML" + (f" (line {line})" if line else ""),
            path=str(path),
            problems=problems,
        ) from exc
    return parse_workflow_spec(data, source=path, sha256=hashlib.sha256(raw).hexdigest())


def parse_workflow_spec(
    data: Any, *, source: Path | None = None, sha256: str | None = None
) -> WorkflowSpec:
    """Validate a parsed mapping; raise with every problem found."""
    problems: list[dict[str, Any]] = []

    def bad(where: str, message: str, kind: str = "config") -> None:
        problems.append({"where": where, "message": message, "kind": kind})

    phases: list[PhaseSpec] = []
    name = ""
    description: str | None = None
    if not isinstance(data, Mapping):
        bad("config.yaml", "must be a mapping with 'name' and 'phases'")
    else:
        for key in sorted(set(map(str, data)) - _TOP_KEYS):
            bad(key, f"unknown key {key!r} (allowed: {', '.join(sorted(_TOP_KEYS))})")
        name_raw = data.get("name")
        if not isinstance(name_raw, str) or not _NAME.match(name_raw):
            bad("name", "required: lowercase letters, digits, '-' or '_', at most 64 chars")
        else:
            name = name_raw
        desc = data.get("description")
        if desc is not None and not isinstance(desc, str):
            bad("description", "must be a string")
        elif isinstance(desc, str):
            description = desc.strip() or None
        raw_phases = data.get("phases")
        if not isinstance(raw_phases, list) or not raw_phases:
            bad("phases", "required: a non-empty list of phases")
        elif len(raw_phases) > MAX_PHASES:
            bad("phases", f"at most {MAX_PHASES} phases")
        else:
            for i, item in enumerate(raw_phases):
                phase = _phase(item, f"phases[{i}]", bad)
                if phase is not None:
                    phases.append(phase)
            _uniqueness(phases, bad)
    if problems:
        escapes = [p for p in problems if p["kind"] == _ESCAPE]
        where = str(source) if source else "config"
        first = escapes[0] if escapes else problems[0]
        summary = f"{where}: {first['where']}: {first['message']}"
        if len(problems) > 1:
            summary += f" (and {len(problems) - 1} more problem(s))"
        err = MemoryPathEscape if escapes else WorkflowConfigError
        raise err(summary, path=where, problems=problems)
    if sha256 is None:
        import json

        canonical = json.dumps(data, sort_keys=True, default=str).encode("utf-8")
        sha256 = hashlib.sha256(canonical).hexdigest()
    return WorkflowSpec(
        name=name, phases=tuple(phases), description=description, source=source, sha256=sha256
    )


def _phase(item: Any, where: str, bad: Any) -> PhaseSpec | None:
    if not isinstance(item, Mapping):
        bad(where, "a phase must be a mapping with id and agent (and optional instructions)")
        return None
    ok = True
    for key in sorted(set(map(str, item)) - _PHASE_KEYS):
        bad(f"{where}.{key}", f"unknown key {key!r} (allowed: {', '.join(sorted(_PHASE_KEYS))})")
        ok = False
    pid = item.get("id")
    if not isinstance(pid, str) or not _NAME.match(pid):
        bad(f"{where}.id", "required: lowercase letters, digits, '-' or '_', at most 64 chars")
        ok = False
    agent = item.get("agent")
    if isinstance(agent, str) and _is_escape(agent):
        bad(f"{where}.agent", f"agent {agent!r} would put the memory file outside", _ESCAPE)
        ok = False
    elif not isinstance(agent, str) or not _NAME.match(agent):
        bad(f"{where}.agent", "required: lowercase letters, digits, '-' or '_', at most 64 chars")
        ok = False
    instructions = item.get("instructions")
    if instructions is None:
        pass  # seed 002's contract: the role guide and the skill's body instruct the agent
    elif not isinstance(instructions, str) or not instructions.strip():
        bad(f"{where}.instructions", "non-empty text when given")
        ok = False
    elif len(instructions) > MAX_INSTRUCTIONS_CHARS:
        bad(f"{where}.instructions", f"longer than {MAX_INSTRUCTIONS_CHARS} characters")
        ok = False
    context = _context(item.get("context", list(DEFAULT_CONTEXT)), f"{where}.context", bad)
    if context is None:
        ok = False
    role = item.get("role")
    if role is not None and (not isinstance(role, str) or not _NAME.match(role)):
        bad(f"{where}.role", "must be a name: lowercase letters, digits, '-' or '_'")
        ok = False
    timeout = item.get("timeout_s")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
    ):
        bad(f"{where}.timeout_s", "must be a positive number of seconds")
        ok = False
    desc = item.get("description")
    if desc is not None and not isinstance(desc, str):
        bad(f"{where}.description", "must be a string")
        ok = False
    if not ok:
        return None
    assert isinstance(pid, str) and isinstance(agent, str) and context is not None
    return PhaseSpec(
        id=pid,
        agent=agent,
        instructions=instructions.strip("\n") + "\n" if isinstance(instructions, str) else None,
        context=context,
        role=role if role != agent else None,
        timeout_s=float(timeout) if timeout is not None else None,
        description=desc,
    )


def _context(raw: Any, where: str, bad: Any) -> tuple[str, ...] | None:
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        bad(where, "must be a list of glob patterns")
        return None
    if len(raw) > MAX_CONTEXT_PATTERNS:
        bad(where, f"at most {MAX_CONTEXT_PATTERNS} patterns")
        return None
    out: list[str] = []
    ok = True
    for j, pattern in enumerate(raw):
        here = f"{where}[{j}]"
        if not isinstance(pattern, str) or not pattern.strip():
            bad(here, "a pattern must be a non-empty string")
            ok = False
            continue
        if _is_escape(pattern):
            bad(here, f"pattern {pattern!r} reaches outside the memory folder", _ESCAPE)
            ok = False
            continue
        unknown = sorted({m for m in _PLACEHOLDER.findall(pattern) if m != "task_id"})
        if unknown:
            bad(here, f"unknown placeholder(s) {unknown}; only {{task_id}} is substituted")
            ok = False
            continue
        out.append(pattern)
    return tuple(out) if ok else None


def _is_escape(value: str) -> bool:
    """True for anything that is not a plain file name inside one folder."""
    return (
        "/" in value
        or "\\" in value
        or "\x00" in value
        or value in (".", "..")
        or value.startswith("~")
        or (len(value) > 1 and value[1] == ":")  # C:foo on Windows
    )


def _uniqueness(phases: list[PhaseSpec], bad: Any) -> None:
    seen_ids: set[str] = set()
    seen_agents: set[str] = set()
    for phase in phases:
        if phase.id in seen_ids:
            bad("phases", f"duplicate phase id {phase.id!r}")
        if phase.agent in seen_agents:
            # Two phases of one agent would write the same memory file.
            bad("phases", f"agent {phase.agent!r} is used by two phases; memory files would clash")
        seen_ids.add(phase.id)
        seen_agents.add(phase.agent)
