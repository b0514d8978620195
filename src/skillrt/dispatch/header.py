"""The runtime header of seed 000 §2: who is running, under which policy, how deep.

The dispatcher builds one for every call and injects it into the assembled prompt as a
YAML block. It is runtime context, never frontmatter (000 §7).

Rendering is hand-written (not ``yaml.safe_dump``) because it runs on every dispatch;
every scalar goes through :func:`yaml_scalar`, whose output ``yaml.safe_load`` reads
back to the same value (a property test pins that).
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass, replace
from typing import Literal

ExecutionMode = Literal["root", "delegated"]
EXECUTION_MODES: tuple[ExecutionMode, ...] = ("root", "delegated")

# Plain scalars safe in YAML 1.1 (PyYAML): start with a letter/digit/underscore, no ": "
# or " #", and not a word YAML would turn into a bool/null/number.
_PLAIN = re.compile(r"^[A-Za-z_/][A-Za-z0-9_.:/@+-]*$")
_YAML_WORDS = frozenset(
    ["y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", "nan", "inf"]
)
_NUMBERISH = re.compile(r"^[-+.]?[0-9]|^\.(?:nan|inf)$", re.IGNORECASE)


@dataclass(frozen=True)
class Identity:
    """Who runs: the role and the skill, and the skill that delegated to it."""

    role: str
    current_skill: str | None
    origin_skill: str | None
    root_loaded: bool


@dataclass(frozen=True)
class Policy:
    """The recursion policy every hop is checked against (000 §4)."""

    forbid_root_reload: bool = True
    max_depth: int = 3
    allow_reentry: bool = False


@dataclass(frozen=True)
class Trace:
    """Where in the request tree this call sits.

    ``skill_stack`` is the chain from the outermost skill to the current one;
    ``visited_skills`` lists the skills that ran in this request before the current one
    (the seed's example: stack ``[a, b, c]``, visited ``[a, b]``).
    """

    request_id: str
    depth: int
    skill_stack: tuple[str, ...]
    visited_skills: tuple[str, ...]


@dataclass(frozen=True)
class RuntimeHeader:
    """The header of one call (000 §2)."""

    execution_mode: ExecutionMode
    identity: Identity
    policy: Policy
    trace: Trace

    def child(self, target: str, *, visited: tuple[str, ...] | None = None) -> RuntimeHeader:
        """The header of a delegated call from this one to ``target`` (000 §5).

        ``visited`` overrides the child's visited list (the dispatcher passes every skill
        the request has run so far); by default it is this call's visited plus its skill.
        """
        current = self.identity.current_skill
        if visited is None:
            visited = self.trace.visited_skills
            if current is not None and current not in visited:
                visited = (*visited, current)
        return RuntimeHeader(
            execution_mode="delegated",
            identity=replace(
                self.identity, current_skill=target, origin_skill=current, root_loaded=True
            ),
            policy=self.policy,
            trace=Trace(
                request_id=self.trace.request_id,
                depth=self.trace.depth + 1,
                skill_stack=(*self.trace.skill_stack, target),
                visited_skills=tuple(v for v in visited if v != target),
            ),
        )

    def to_yaml(self) -> str:
        """The header as the YAML block of 000 §2, keys in the seed's order."""
        ident, pol, tr = self.identity, self.policy, self.trace
        lines = [
            f"execution_mode: {self.execution_mode}",
            "identity:",
            f"  role: {yaml_scalar(ident.role)}",
            f"  current_skill: {yaml_scalar(ident.current_skill)}",
            f"  origin_skill: {yaml_scalar(ident.origin_skill)}",
            f"  root_loaded: {yaml_scalar(ident.root_loaded)}",
            "policy:",
            f"  forbid_root_reload: {yaml_scalar(pol.forbid_root_reload)}",
            f"  max_depth: {pol.max_depth}",
            f"  allow_reentry: {yaml_scalar(pol.allow_reentry)}",
            "trace:",
            f"  request_id: {yaml_scalar(tr.request_id)}",
            f"  depth: {tr.depth}",
        ]
        lines.extend(_yaml_list("skill_stack", tr.skill_stack))
        lines.extend(_yaml_list("visited_skills", tr.visited_skills))
        return "\n".join(lines) + "\n"


def _yaml_list(key: str, items: tuple[str, ...]) -> list[str]:
    if not items:
        return [f"  {key}: []"]
    return [f"  {key}:", *(f"    - {yaml_scalar(item)}" for item in items)]


def yaml_scalar(value: str | bool | int | None) -> str:
    """One YAML scalar: plain when unambiguous, else a double-quoted (JSON) string."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if (
        _PLAIN.match(value)
        and value.lower() not in _YAML_WORDS
        and not _NUMBERISH.match(value)
        and not value.endswith(":")
    ):
        return value
    return _double_quoted(value)


def _double_quoted(value: str) -> str:
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0 or code in (0x2028, 0x2029):
            out.append(f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")
        elif code == 0xFEFF or 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):
            out.append(f"\\u{code:04x}")
        elif code > 0xFFFF and not ch.isprintable():
            out.append(f"\\U{code:08x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def new_request_id() -> str:
    """``req-YYYY-MM-DD-<hex>``, the seed's shape with a random suffix (UTC date)."""
    return "req-" + time.strftime("%Y-%m-%d", time.gmtime()) + "-" + secrets.token_hex(4)
