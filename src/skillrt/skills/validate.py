"""Frontmatter validation per the Agent Skills spec (S1) plus skillrt's own fields (S2).

Every problem is reported, not only the first. Messages contain the same phrases as
the reference library ``skills-ref`` so tools that grep them keep working.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from skillrt.skills.model import COST_HINTS, Diagnostic

#: The common case, checked first: the per-character test below is the general rule.
_ASCII_NAME = re.compile(r"[a-z0-9-]+")
MAX_SKILL_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500

SPEC_FIELDS = frozenset(
    {"name", "description", "license", "allowed-tools", "metadata", "compatibility"}
)
ROUTING_FIELDS = frozenset(
    {
        "triggers",
        "anti_triggers",
        "cost_hint",
        "prerequisites",
        "parallel_safe",
        "always",
        "examples",
    }
)
CLIENT_FIELDS = frozenset(
    {
        "disable-model-invocation",
        "user-invocable",
        "argument-hint",
        "context",
        "model",
        "agent",
        "hooks",
        "version",
    }
)
KNOWN_FIELDS = SPEC_FIELDS | ROUTING_FIELDS | CLIENT_FIELDS


def normalise_name(name: str) -> str:
    return unicodedata.normalize("NFKC", name.strip())


def _err(code: str, message: str, field: str | None = None) -> Diagnostic:
    return Diagnostic(code=code, severity="error", message=message, field=field)


def _warn(code: str, message: str, field: str | None = None) -> Diagnostic:
    return Diagnostic(code=code, severity="warning", message=message, field=field)


def validate_name(name: Any, dir_name: str | None) -> list[Diagnostic]:
    if not isinstance(name, str) or not name.strip():
        return [_err("NAME_EMPTY", "Field 'name' must be a non-empty string", "name")]
    name = normalise_name(name)
    out: list[Diagnostic] = []
    if len(name) > MAX_SKILL_NAME_LENGTH:
        out.append(
            _err(
                "NAME_TOO_LONG",
                f"Skill name '{name}' exceeds {MAX_SKILL_NAME_LENGTH} character limit "
                f"({len(name)} chars)",
                "name",
            )
        )
    if name != name.lower():
        out.append(_err("NAME_NOT_LOWERCASE", f"Skill name '{name}' must be lowercase", "name"))
    if name.startswith("-") or name.endswith("-"):
        out.append(_err("NAME_HYPHEN_EDGE", "Skill name cannot start or end with a hyphen", "name"))
    if "--" in name:
        out.append(
            _err(
                "NAME_CONSECUTIVE_HYPHENS", "Skill name cannot contain consecutive hyphens", "name"
            )
        )
    if not _ASCII_NAME.fullmatch(name) and not all(c.isalnum() or c == "-" for c in name):
        out.append(
            _err(
                "NAME_INVALID_CHARS",
                f"Skill name '{name}' contains invalid characters. "
                "Only letters, digits, and hyphens are allowed.",
                "name",
            )
        )
    if dir_name is not None and normalise_name(dir_name) != name:
        # S4: a mismatch is reported but the skill still loads under its frontmatter name.
        out.append(
            _warn(
                "NAME_DIR_MISMATCH",
                f"Directory name '{dir_name}' must match skill name '{name}'",
                "name",
            )
        )
    return out


def validate_description(description: Any) -> list[Diagnostic]:
    if not isinstance(description, str) or not description.strip():
        return [
            _err(
                "DESCRIPTION_EMPTY", "Field 'description' must be a non-empty string", "description"
            )
        ]
    if len(description) > MAX_DESCRIPTION_LENGTH:
        return [
            _err(
                "DESCRIPTION_TOO_LONG",
                f"Description exceeds {MAX_DESCRIPTION_LENGTH} character limit "
                f"({len(description)} chars)",
                "description",
            )
        ]
    return []


def validate_compatibility(value: Any) -> list[Diagnostic]:
    if not isinstance(value, str):
        return [
            _err("COMPATIBILITY_TYPE", "Field 'compatibility' must be a string", "compatibility")
        ]
    if len(value) > MAX_COMPATIBILITY_LENGTH:
        return [
            _err(
                "COMPATIBILITY_TOO_LONG",
                f"Compatibility exceeds {MAX_COMPATIBILITY_LENGTH} character limit "
                f"({len(value)} chars)",
                "compatibility",
            )
        ]
    return []


def _routing_source(data: Mapping[str, Any], key: str) -> Any:
    if key in data:
        return data[key]
    meta = data.get("metadata")
    if isinstance(meta, Mapping):
        return meta.get(key)
    return None


def validate_routing_fields(data: Mapping[str, Any]) -> list[Diagnostic]:
    """S2: routing fields are optional, and a malformed one is a warning, not a failure."""
    out: list[Diagnostic] = []
    for key in ("triggers", "anti_triggers", "examples"):
        value = _routing_source(data, key)
        if value is not None and not isinstance(value, (str, list)):
            out.append(_warn("ROUTING_FIELD_INVALID", f"'{key}' must be a list of strings", key))
    cost = _routing_source(data, "cost_hint")
    if cost is not None and cost not in COST_HINTS:
        out.append(
            _warn(
                "ROUTING_FIELD_INVALID",
                f"'cost_hint' must be one of low, medium, high (got {cost!r})",
                "cost_hint",
            )
        )
    prereq = _routing_source(data, "prerequisites")
    if prereq is not None and not isinstance(prereq, (dict, list, str)):
        out.append(
            _warn(
                "ROUTING_FIELD_INVALID",
                "'prerequisites' must be a mapping with 'bins' and/or 'env'",
                "prerequisites",
            )
        )
    for key in ("parallel_safe", "always"):
        value = _routing_source(data, key)
        if value is not None and not isinstance(value, (bool, str)):
            out.append(_warn("ROUTING_FIELD_INVALID", f"'{key}' must be true or false", key))
    return out


def _key_label(key: Any) -> str:
    """A key as the frontmatter wrote it: a string as is (quoted when YAML would read
    it as another type, so ``'1'`` and ``1`` stay apart), anything else in YAML form."""
    if isinstance(key, str):
        from skillrt.skills.fastyaml import is_string_key

        return key if is_string_key(key) else repr(key)
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def validate_frontmatter(data: Mapping[Any, Any], dir_name: str | None = None) -> list[Diagnostic]:
    """Check a parsed frontmatter mapping; returns every problem found."""
    out: list[Diagnostic] = []
    extra = set(data) - KNOWN_FIELDS
    if extra:
        out.append(
            _warn(
                "UNEXPECTED_FIELDS",
                f"Unexpected fields in frontmatter: {', '.join(sorted(map(_key_label, extra)))}. "
                f"Only {sorted(SPEC_FIELDS)} are allowed by the Agent Skills spec.",
                None,
            )
        )
    if "name" not in data:
        out.append(_err("MISSING_NAME", "Missing required field in frontmatter: name", "name"))
    else:
        out.extend(validate_name(data["name"], dir_name))
    if "description" not in data:
        out.append(
            _err(
                "MISSING_DESCRIPTION",
                "Missing required field in frontmatter: description",
                "description",
            )
        )
    else:
        out.extend(validate_description(data["description"]))
    if "compatibility" in data:
        out.extend(validate_compatibility(data["compatibility"]))
    if "license" in data and not isinstance(data["license"], str):
        out.append(_warn("LICENSE_TYPE", "Field 'license' should be a string", "license"))
    if "metadata" in data and not isinstance(data["metadata"], Mapping):
        out.append(
            _err("METADATA_TYPE", "Field 'metadata' must be a mapping of strings", "metadata")
        )
    tools = data.get("allowed-tools")
    if tools is not None and not isinstance(tools, (str, list)):
        out.append(
            _err(
                "ALLOWED_TOOLS_TYPE",
                "Field 'allowed-tools' must be a space-separated string or a list",
                "allowed-tools",
            )
        )
    out.extend(validate_routing_fields(data))
    return out
