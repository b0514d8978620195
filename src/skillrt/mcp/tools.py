"""The server's tools as plain data: name, description, JSON Schema of the arguments.

``load_skill``'s ``name`` is an enum of the skills a model may load, so a
client (and the model) sees exactly which names are valid; the spec is rebuilt whenever
the skills change. Arguments are checked here against the same schemas, by jsonschema,
so every surface refuses the same way with the same error codes.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from skillrt.errors import UsageError

#: Old tool names still served (not listed): ``activate_skill`` was renamed
#: ``load_skill``, since Gemini CLI has a built-in tool of that name.
TOOL_ALIASES = {"activate_skill": "load_skill"}
#: Longest free-text argument accepted (queries, tasks, texts to scan).
MAX_TEXT_CHARS = 100_000


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = True


def tool_wire(spec: ToolSpec) -> dict[str, Any]:
    """``spec`` as a ``tools/list`` entry on the wire: what the server gives the SDK
    and what an early answer sends (:mod:`skillrt.mcp.early`), the same dict."""
    return {
        "name": spec.name,
        "title": spec.title,
        "description": spec.description,
        "inputSchema": spec.input_schema,
        "annotations": {"title": spec.title, "readOnlyHint": spec.read_only,
                        "openWorldHint": False},
    }  # fmt: skip


def _string(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def tool_specs(activatable: Sequence[str]) -> list[ToolSpec]:
    """Every tool, with ``load_skill``'s enum built from ``activatable``."""
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
            "load_skill",
            "Load a skill",
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
    """Validate ``arguments`` against ``spec``'s JSON Schema (jsonschema); raise UsageError
    (E_USAGE) naming the argument when they do not fit, and fill in the defaults.

    Two rules are added to the published schema: every string is at most
    :data:`MAX_TEXT_CHARS` long, and a string with ``minLength`` must not be blank. The
    enum is not enforced here: a name outside it gets the runtime's precise error
    (SkillNotFound, SkillDisabled, ...) rather than a bare "not one of".
    """
    args = dict(arguments or {})
    errors = sorted(_validator(spec).iter_errors(args), key=_error_order)
    if errors:
        raise _usage_error(spec, args, errors[0])
    for key, schema in spec.input_schema["properties"].items():
        if key not in args and "default" in schema:
            args[key] = schema["default"]
    return args


def _validator(spec: ToolSpec) -> Any:
    key = json.dumps(spec.input_schema, sort_keys=True)
    found = _VALIDATORS.get(key)
    if found is None:
        from jsonschema import Draft202012Validator

        found = _VALIDATORS[key] = Draft202012Validator(_checked_schema(spec.input_schema))
    return found


_VALIDATORS: dict[str, Any] = {}


def _checked_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with the two added rules, and without ``enum`` (see check_arguments)."""
    out = copy.deepcopy(dict(schema))

    def strings(node: dict[str, Any]) -> None:
        node.pop("enum", None)
        if node.get("type") == "string":
            node["maxLength"] = MAX_TEXT_CHARS
            if node.get("minLength"):
                node["pattern"] = r"\S"
        for branch in node.get("anyOf", ()):
            strings(branch)

    for prop in out["properties"].values():
        strings(prop)
    return out


def _error_order(error: Any) -> tuple[int, str]:
    # Unknown and missing arguments first (they say the most), then by argument.
    rank = {"additionalProperties": 0, "required": 1, "type": 2}.get(error.validator, 3)
    return rank, ".".join(str(p) for p in error.path)


def _usage_error(spec: ToolSpec, args: Mapping[str, Any], error: Any) -> UsageError:
    name = spec.name
    if error.validator == "additionalProperties":
        unknown = sorted(set(args) - set(spec.input_schema["properties"]))
        return UsageError(
            f"{name}: unknown argument(s): {', '.join(unknown)}", tool=name, arguments=unknown
        )
    if error.validator == "required":
        missing = next(k for k in error.validator_value if k not in args)
        return UsageError(f"{name}: missing argument '{missing}'", tool=name, argument=missing)
    key = str(error.path[0]) if error.path else None
    if key is None:
        return UsageError(f"{name}: the arguments must be an object", tool=name)
    why = {
        "maxLength": f"is longer than {MAX_TEXT_CHARS} characters",
        "minLength": "is empty",
        "pattern": "is empty",
    }.get(error.validator, "must be a string")
    return UsageError(f"{name}: '{key}' {why}", tool=name, argument=key)
