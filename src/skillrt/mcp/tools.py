"""The server's tools as plain data: name, description, JSON Schema of the arguments.

``activate_skill``'s ``name`` is an enum of the skills a model may activate, so a
client (and the model) sees exactly which names are valid; the spec is rebuilt whenever
the skills change. Argument checking lives here too, so every surface refuses the same
way with the same error codes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skillrt.errors import UsageError

#: Longest free-text argument accepted (queries, tasks, texts to scan).
MAX_TEXT_CHARS = 100_000


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = True


def _string(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def tool_specs(activatable: Sequence[str]) -> list[ToolSpec]:
    """Every tool, with ``activate_skill``'s enum built from ``activatable``."""
    name_schema: dict[str, Any] = _string("Qualified skill name (ns:name or name).")
    # An empty enum is invalid JSON Schema; with no skills, any string is accepted
    # and activation answers SkillNotFound.
    if activatable:
        name_schema["enum"] = sorted(activatable)
    return [
        ToolSpec(
            "route_skills",
            "Route a request to skills",
            "Find the skills that fit a user request. Returns the activation plan (skills to "
            "use, in order), the routing reason, and the scored candidates. An empty plan "
            "means no skill fits: answer without one.",
            {
                "type": "object",
                "properties": {"query": _string("The user's request, verbatim.", minLength=1)},
                "required": ["query"],
                "additionalProperties": False,
            },
        ),
        ToolSpec(
            "activate_skill",
            "Activate a skill",
            "Load a skill's instructions (its SKILL.md body). Call it before following a "
            "skill; read its references with read_skill_resource only when needed.",
            {
                "type": "object",
                "properties": {"name": name_schema},
                "required": ["name"],
                "additionalProperties": False,
            },
        ),
        ToolSpec(
            "read_skill_resource",
            "Read a skill file",
            "Read a file bundled with a skill (e.g. references/guide.md), optionally only one "
            "section (a Markdown heading). Paths are relative to the skill folder.",
            {
                "type": "object",
                "properties": {
                    "name": _string("Qualified skill name."),
                    "path": _string("File path relative to the skill folder."),
                    "section": {
                        "anyOf": [{"type": "string"}, {"type": "null"}],
                        "description": "Heading to extract (optional).",
                        "default": None,
                    },
                },
                "required": ["name", "path"],
                "additionalProperties": False,
            },
        ),
        ToolSpec(
            "resolve_mentions",
            "Resolve $skill mentions",
            "Find explicit $skill-name mentions in a message (outside code) and activate "
            "them. Returns the activated skills, the task text with mentions removed, and "
            "diagnostics for unknown or ambiguous names.",
            {
                "type": "object",
                "properties": {"text": _string("The message to scan.")},
                "required": ["text"],
                "additionalProperties": False,
            },
        ),
        ToolSpec(
            "run_skill",
            "Delegate a task to a skill",
            "Delegate a sub-task to a named skill (depth limits and cycle checks apply). "
            "Returns a structured result with status 'delegated' or 'error'.",
            {
                "type": "object",
                "properties": {
                    "skill": _string("Qualified skill name."),
                    "task": _string("The sub-task for the skill.", minLength=1),
                },
                "required": ["skill", "task"],
                "additionalProperties": False,
            },
            read_only=False,
        ),
    ]


def check_arguments(spec: ToolSpec, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validate ``arguments`` against ``spec``; raise UsageError (E_USAGE) when wrong.

    Only the shapes the tools use are checked: an object of known keys, required keys
    present, strings (or null where allowed), length bounds. The enum is not enforced
    here: a name outside it gets the runtime's precise error (SkillNotFound,
    SkillDisabled, ...) rather than a bare "not one of".
    """
    args = dict(arguments or {})
    props: dict[str, Any] = spec.input_schema["properties"]
    unknown = sorted(set(args) - set(props))
    if unknown:
        raise UsageError(
            f"{spec.name}: unknown argument(s): {', '.join(unknown)}",
            tool=spec.name,
            arguments=unknown,
        )
    for key in spec.input_schema.get("required", []):
        if key not in args:
            raise UsageError(f"{spec.name}: missing argument '{key}'", tool=spec.name, argument=key)
    for key, value in args.items():
        schema = props[key]
        nullable = "anyOf" in schema
        if value is None and nullable:
            continue
        if not isinstance(value, str):
            raise UsageError(f"{spec.name}: '{key}' must be a string", tool=spec.name, argument=key)
        if len(value) > MAX_TEXT_CHARS:
            raise UsageError(
                f"{spec.name}: '{key}' is longer than {MAX_TEXT_CHARS} characters",
                tool=spec.name,
                argument=key,
            )
        if schema.get("minLength") and not value.strip():
            raise UsageError(f"{spec.name}: '{key}' is empty", tool=spec.name, argument=key)
    for key, schema in props.items():
        if key not in args and "default" in schema:
            args[key] = schema["default"]
    return args
