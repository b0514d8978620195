"""The orchestration state machines, as data (seed 002 steps 1-6 and step 5's phases).

A run moves through one state per completed step; step 5 holds a phase machine per
phase. Every move goes through :func:`check_run` / :func:`check_phase`, which raise
:class:`WorkflowIllegalTransition` (``E_WORKFLOW_ILLEGAL_TRANSITION``) for anything the tables
below do not list, so a step can be neither skipped nor reordered.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from skillrt.errors import WorkflowIllegalTransition

__all__ = [
    "PHASE_TRANSITIONS",
    "RUN_TRANSITIONS",
    "STEPS",
    "PhaseState",
    "RunState",
    "Step",
    "check_phase",
    "check_phase_order",
    "check_run",
    "check_step_output",
    "step",
]


class RunState(StrEnum):
    """Where a run is: the last step it completed, or ``blocked`` / ``completed``."""

    CREATED = "created"
    TASK_ID_GENERATED = "task_id_generated"
    DOMAIN_CLASSIFIED = "domain_classified"
    SKILL_READ = "skill_read"
    MEMORY_CREATED = "memory_created"
    TRIGGERING_AGENTS = "triggering_agents"
    AGENTS_TRIGGERED = "agents_triggered"
    COMPLETED = "completed"
    #: Stopped by an error (runner failure, failed verification, bad config); resumable.
    BLOCKED = "blocked"


class PhaseState(StrEnum):
    """A phase inside step 5."""

    PENDING = "pending"
    #: Its agent was started (or, in manual mode, its directive printed).
    RUNNING = "running"
    #: Its memory file passed verification; it never runs again.
    VERIFIED = "verified"
    #: Its runner failed or its memory file was rejected; re-run on resume.
    FAILED = "failed"


@dataclass(frozen=True)
class Step:
    """One of the six steps: the run state it needs, the state it leaves, its output keys."""

    number: int
    name: str
    requires: RunState
    produces: RunState
    output_keys: tuple[str, ...]
    directive: str


#: The six steps of seed 002, in order. Step 5 passes through ``triggering_agents``.
STEPS: tuple[Step, ...] = (
    Step(
        1,
        "GENERATE_TASK_ID",
        RunState.CREATED,
        RunState.TASK_ID_GENERATED,
        ("task_id",),
        "Generate the task id (12 hex characters) that names every memory file.",
    ),
    Step(
        2,
        "CLASSIFY_DOMAIN",
        RunState.TASK_ID_GENERATED,
        RunState.DOMAIN_CLASSIFIED,
        ("domain", "confidence"),
        "Classify the request's domain; its learnings are injected into every agent.",
    ),
    Step(
        3,
        "READ_SKILL",
        RunState.DOMAIN_CLASSIFIED,
        RunState.SKILL_READ,
        ("skill_config",),
        "Load the composite skill's config.yaml: phases, agents, context patterns.",
    ),
    Step(
        4,
        "CREATE_MEMORY",
        RunState.SKILL_READ,
        RunState.MEMORY_CREATED,
        ("memory_file",),
        "Write the workflow context memory file: user query, domain, skill config.",
    ),
    Step(
        5,
        "TRIGGER_AGENTS",
        RunState.MEMORY_CREATED,
        RunState.AGENTS_TRIGGERED,
        ("phases_completed",),
        "Run each phase's agent; verify its memory file before advancing.",
    ),
    Step(
        6,
        "COMPLETE_WORKFLOW",
        RunState.AGENTS_TRIGGERED,
        RunState.COMPLETED,
        ("summary",),
        "Aggregate the memory files into the summary; merge learnings; validate all steps.",
    ),
)

_BY_NUMBER = {s.number: s for s in STEPS}
_NON_TERMINAL = tuple(s for s in RunState if s not in (RunState.COMPLETED, RunState.BLOCKED))

#: from-state -> the states a run may move to. ``blocked`` may only return to the state
#: it was blocked from (:func:`check_run` needs ``blocked_from`` for that move).
RUN_TRANSITIONS: Mapping[RunState, frozenset[RunState]] = {
    RunState.CREATED: frozenset({RunState.TASK_ID_GENERATED, RunState.BLOCKED}),
    RunState.TASK_ID_GENERATED: frozenset({RunState.DOMAIN_CLASSIFIED, RunState.BLOCKED}),
    RunState.DOMAIN_CLASSIFIED: frozenset({RunState.SKILL_READ, RunState.BLOCKED}),
    RunState.SKILL_READ: frozenset({RunState.MEMORY_CREATED, RunState.BLOCKED}),
    RunState.MEMORY_CREATED: frozenset({RunState.TRIGGERING_AGENTS, RunState.BLOCKED}),
    RunState.TRIGGERING_AGENTS: frozenset({RunState.AGENTS_TRIGGERED, RunState.BLOCKED}),
    RunState.AGENTS_TRIGGERED: frozenset({RunState.COMPLETED, RunState.BLOCKED}),
    RunState.BLOCKED: frozenset(_NON_TERMINAL),
    RunState.COMPLETED: frozenset(),
}

#: from-state -> allowed next states of a phase. ``running -> running`` is a restart
#: after a crash; ``failed -> verified`` is a manual ``advance`` after the file was fixed.
PHASE_TRANSITIONS: Mapping[PhaseState, frozenset[PhaseState]] = {
    PhaseState.PENDING: frozenset({PhaseState.RUNNING}),
    PhaseState.RUNNING: frozenset({PhaseState.RUNNING, PhaseState.VERIFIED, PhaseState.FAILED}),
    PhaseState.FAILED: frozenset({PhaseState.RUNNING, PhaseState.VERIFIED}),
    PhaseState.VERIFIED: frozenset(),
}

_TASK_ID = re.compile(r"^[0-9a-f]{12}$")
CONFIDENCE_LABELS = ("CERTAIN", "PROBABLE", "UNCERTAIN")


def step(number: int) -> Step:
    """The step with this number (1-6)."""
    try:
        return _BY_NUMBER[number]
    except KeyError:
        raise WorkflowIllegalTransition(
            f"there is no step {number}; steps are 1-6", step=number
        ) from None


def check_run(
    current: RunState | str,
    target: RunState | str,
    *,
    run_id: str | None = None,
    blocked_from: RunState | str | None = None,
) -> None:
    """Raise unless a run in ``current`` may move to ``target``."""
    cur, tgt = RunState(current), RunState(target)
    allowed = RUN_TRANSITIONS[cur]
    if tgt not in allowed:
        raise WorkflowIllegalTransition(
            f"run {run_id or '?'}: cannot go from '{cur}' to '{tgt}'"
            + (f"; allowed: {', '.join(sorted(allowed))}" if allowed else "; the run is finished"),
            run_id=run_id,
            from_state=cur,
            to_state=tgt,
            allowed=sorted(allowed),
        )
    if cur is RunState.BLOCKED and (blocked_from is None or tgt != RunState(blocked_from)):
        raise WorkflowIllegalTransition(
            f"run {run_id or '?'} is blocked at '{blocked_from}'; it can only resume there",
            run_id=run_id,
            from_state=cur,
            to_state=tgt,
            allowed=[str(blocked_from)],
        )


def check_phase(
    current: PhaseState | str,
    target: PhaseState | str,
    *,
    run_id: str | None = None,
    phase_id: str | None = None,
) -> None:
    """Raise unless a phase in ``current`` may move to ``target``."""
    cur, tgt = PhaseState(current), PhaseState(target)
    allowed = PHASE_TRANSITIONS[cur]
    if tgt not in allowed:
        raise WorkflowIllegalTransition(
            f"phase {phase_id or '?'} of run {run_id or '?'}: cannot go from '{cur}' to '{tgt}'"
            + ("; it is already verified and never runs again" if not allowed else ""),
            run_id=run_id,
            phase_id=phase_id,
            from_state=cur,
            to_state=tgt,
            allowed=sorted(allowed),
        )


def check_phase_order(
    phases: Sequence[tuple[str, PhaseState | str]],
    index: int,
    *,
    run_id: str | None = None,
) -> None:
    """Raise unless every phase before ``index`` is verified and none after it started."""
    for earlier_id, state in phases[:index]:
        if PhaseState(state) is not PhaseState.VERIFIED:
            raise WorkflowIllegalTransition(
                f"run {run_id or '?'}: phase '{phases[index][0]}' cannot start before "
                f"'{earlier_id}' is verified (it is {state})",
                run_id=run_id,
                phase_id=phases[index][0],
                blocking_phase=earlier_id,
            )
    for later_id, state in phases[index + 1 :]:
        if PhaseState(state) is not PhaseState.PENDING:
            raise WorkflowIllegalTransition(
                f"run {run_id or '?'}: phase '{later_id}' is already {state}",
                run_id=run_id,
                phase_id=phases[index][0],
            )


def check_step_output(number: int, output: Mapping[str, Any]) -> None:
    """Raise unless ``output`` honours step ``number``'s part of the data contract."""
    spec = step(number)
    missing = [k for k in spec.output_keys if k not in output]
    if missing:
        raise WorkflowIllegalTransition(
            f"step {number} {spec.name} cannot complete without {', '.join(missing)}",
            step=number,
            missing=missing,
        )
    if number == 1 and not _TASK_ID.match(str(output["task_id"])):
        raise WorkflowIllegalTransition(
            f"task id {output['task_id']!r} is not 12 lowercase hex characters", step=1
        )
    if number == 2 and output["confidence"] not in CONFIDENCE_LABELS:
        raise WorkflowIllegalTransition(
            f"confidence {output['confidence']!r} is not one of {CONFIDENCE_LABELS}", step=2
        )
