"""``run_skill`` (seed 001 §19): delegate a sub-task to a named skill.

Two text forms are understood::

    /run_skill <skill> <task>
    run_skill <skill>: <task>

and the Python call ``run_skill(skill, task, context)``. In order, a call:

1. checks the skill exists (and is enabled);
2. builds the delegation context: ``target_skill``, ``call_chain`` (the caller's chain
   plus the target) and ``skill_file``, injected into the prompt;
3. refuses a cycle (``a -> b -> a``: the target is already in the chain) with
   ``E_SKILL_REENTRY_BLOCKED``;
4. refuses a delegation deeper than ``dispatch.run_skill_max_depth`` (default 2) with
   ``E_DEPTH_LIMIT``;
5. runs the skill through the dispatcher (delegated mode; dry-run when no runner is
   configured) and returns ``{"status": "delegated" | "error", "target_skill",
   "call_chain", "skill_file", "result" | "error"}``.

A model's output may itself contain ``run_skill`` lines; the dispatcher runs them with
the emitting skill's stack as the chain (``dispatch.follow_run_skill``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from skillrt.dispatch.header import yaml_scalar
from skillrt.errors import (
    AmbiguousSkill,
    DepthLimitExceeded,
    SkillDisabled,
    SkillNotFound,
    SkillReentryBlocked,
    SkillrtError,
)

if TYPE_CHECKING:
    from skillrt.dispatch.dispatcher import (
        Dispatcher,
        DispatchRequest,
        DispatchResult,
        DispatchSession,
        Prepared,
    )

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


@dataclass(frozen=True)
class RunSkillResult:
    """The structured result of 001 §19."""

    status: Literal["delegated", "error"]
    target_skill: str
    call_chain: tuple[str, ...]
    skill_file: str | None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    #: The dispatch tree behind ``result`` (None when refused before running).
    dispatch: DispatchResult | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status,
            "target_skill": self.target_skill,
            "call_chain": list(self.call_chain),
            "skill_file": self.skill_file,
        }
        if self.status == "delegated":
            out["result"] = self.result
        else:
            out["error"] = self.error
        if self.dispatch is not None:
            from skillrt.serialize import to_jsonable

            out["dispatch"] = to_jsonable(self.dispatch)
        return out


def _error(
    target: str, chain: tuple[str, ...], skill_file: str | None, exc: SkillrtError
) -> RunSkillResult:
    return RunSkillResult("error", target, chain, skill_file, error=exc.to_dict())


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


def run_skill(
    dispatcher: Dispatcher,
    skill: str,
    task: str,
    context: Mapping[str, Any] | None = None,
    *,
    session: DispatchSession | None = None,
) -> RunSkillResult:
    """Delegate ``task`` to ``skill`` (001 §19).

    ``context`` may hold ``call_chain`` (the caller's chain, outermost first), ``role``,
    ``request_id`` and ``text`` (extra context for the prompt).
    """
    from skillrt.dispatch.dispatcher import DispatchRequest

    ctx = dict(context or {})
    raw_chain = ctx.get("call_chain") or ()
    if isinstance(raw_chain, str):
        raw_chain = [c for c in raw_chain.split(",") if c.strip()]
    chain = tuple(dispatcher._qualify(str(c).strip()) for c in raw_chain)
    registry = dispatcher.registry
    try:
        target = registry.get(skill)
    except (SkillNotFound, AmbiguousSkill) as exc:
        return _error(skill, (*chain, skill), None, exc)
    name = target.qualified_name
    new_chain = (*chain, name)
    skill_file = str(target.skill_file) if target.skill_file else None
    if not registry.is_enabled(target):
        return _error(
            name,
            new_chain,
            skill_file,
            SkillDisabled(
                f"Skill '{name}' is disabled. Enable it with `skillrt enable {name}`.", name=name
            ),
        )
    max_depth = dispatcher.config.dispatch.run_skill_max_depth
    common = {
        "request_id": session.request_id if session else ctx.get("request_id"),
        "current_skill": chain[-1] if chain else None,
        "target_skill": name,
        "depth": len(chain),
        "skill_stack": list(chain),
        "call_chain": list(new_chain),
    }
    if name in chain:
        cycle = " -> ".join(chain[chain.index(name) :] + (name,))
        return _error(
            name,
            new_chain,
            skill_file,
            SkillReentryBlocked(f"run_skill cycle: {cycle}", guard="cycle", **common),
        )
    if len(new_chain) > max_depth:
        return _error(
            name,
            new_chain,
            skill_file,
            DepthLimitExceeded(
                f"run_skill depth {len(new_chain)} is over the limit of {max_depth} "
                f"({' -> '.join(new_chain)})",
                guard="depth",
                max_depth=max_depth,
                **common,
            ),
        )
    request = DispatchRequest(
        skill=name,
        prompt=task,
        role=ctx.get("role"),
        execution_mode="delegated",
        depth=len(chain),
        parent_skill=chain[-1] if chain else None,
        edge_type="requires_now",
        visited_skills=chain,
        request_id=ctx.get("request_id"),
        context=delegation_context(name, new_chain, skill_file, ctx),
        call_chain=new_chain,
    )
    try:
        result = dispatcher.dispatch(request, session=session)
    except SkillrtError as exc:
        return _error(name, new_chain, skill_file, exc)
    if not result.ok:
        return RunSkillResult(
            "error", name, new_chain, skill_file, error=result.error, dispatch=result
        )
    return RunSkillResult(
        "delegated",
        name,
        new_chain,
        skill_file,
        result={
            "output": result.output,
            "request_id": result.request_id,
            "execution_id": result.execution_id,
            "depth": result.depth,
            "runner": result.runner,
        },
        dispatch=result,
    )


def follow_run_skill_calls(
    dispatcher: Dispatcher,
    output: str,
    prepared: Prepared,
    request: DispatchRequest,
    session: DispatchSession,
) -> tuple[RunSkillResult, ...]:
    """Run the ``run_skill`` lines of a model's output, with the emitter's chain."""
    calls = find_run_skill_calls(output)[:MAX_CALLS_PER_OUTPUT]
    if not calls:
        return ()
    chain = request.call_chain or prepared.header.trace.skill_stack
    return tuple(
        run_skill(
            dispatcher,
            call.skill,
            call.task,
            {"call_chain": list(chain), "role": prepared.role},
            session=session,
        )
        for call in calls
    )
