"""``run_skill`` text (seed 001 §19): the commands that delegate a sub-task to a skill.

Two text forms are understood::

    /run_skill <skill> <task>
    run_skill <skill>: <task>

:func:`parse_run_skill` reads the command a text starts with, :func:`find_run_skill_calls`
every one-line command in a model's output (outside fenced code), and
:func:`delegation_context` renders the block injected into the delegated prompt. The
delegation itself (checks, cycle and depth refusals, the dispatch) is
:meth:`skillrt.dispatch.dispatcher.Dispatcher.run_skill`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from skillrt.dispatch.header import yaml_scalar

_SKILL_ID = r"[\w][\w.-]*(?::[\w][\w.-]*)?"
_SLASH = re.compile(rf"^[ \t]*/run_skill[ \t]+({_SKILL_ID})(?:[ \t]+|$)(.*)$", re.DOTALL)
_MESSAGE = re.compile(rf"^[ \t]*run_skill[ \t]+({_SKILL_ID})[ \t]*:(?:[ \t]+|$)(.*)$", re.DOTALL)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
#: At most this many run_skill lines of one output are followed.
MAX_CALLS_PER_OUTPUT = 4


@dataclass(frozen=True)
class RunSkillCall:
    """A parsed ``run_skill`` command."""

    skill: str
    task: str
    form: Literal["slash", "message"]


def parse_run_skill(text: str) -> RunSkillCall | None:
    """The ``run_skill`` command ``text`` starts with (the task runs to its end), or None."""
    stripped = text.lstrip("\n")
    for form, pattern in (("slash", _SLASH), ("message", _MESSAGE)):
        m = pattern.match(stripped)
        if m:
            return RunSkillCall(m.group(1), m.group(2).strip(), form)  # type: ignore[arg-type]
    return None


def find_run_skill_calls(text: str) -> list[RunSkillCall]:
    """Every one-line ``run_skill`` command in ``text``, outside fenced code."""
    calls: list[RunSkillCall] = []
    fence: str | None = None
    for line in text.splitlines():
        m = _FENCE.match(line)
        if m:
            marker = m.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        if fence is not None:
            continue
        call = parse_run_skill(line)
        if call is not None and call.task:
            calls.append(call)
    return calls


def delegation_context(
    target: str, chain: tuple[str, ...], skill_file: str | None, extra: Mapping[str, Any]
) -> str:
    """The delegation block injected into the prompt (YAML)."""
    lines = [
        "run_skill:",
        f"  target_skill: {yaml_scalar(target)}",
        "  call_chain:",
        *(f"    - {yaml_scalar(c)}" for c in chain),
        f"  skill_file: {yaml_scalar(skill_file)}",
    ]
    text = extra.get("text")
    out = "\n".join(lines) + "\n"
    if isinstance(text, str) and text.strip():
        out += "\n" + text.strip() + "\n"
    return out
