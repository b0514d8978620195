"""What ``workflow status`` / ``list`` report about a run (O4), as plain dataclasses.

``steps`` is seed 002's data contract keyed "1".."6" (only completed steps appear);
``phases_completed`` lists the verified phases in order, also while step 5 runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillrt.orchestration.events import COMPLETE_MARKER
from skillrt.orchestration.fsm import STEPS, PhaseState, RunState
from skillrt.orchestration.state import RunRecord

__all__ = ["PhaseStatus", "RunSummary", "WorkflowStatus", "next_action", "run_status", "summary"]


@dataclass(frozen=True)
class PhaseStatus:
    phase_id: str
    agent: str
    state: str
    attempts: int
    memory_file: str
    memory_exists: bool
    memory_sha256: str | None
    started_at: float | None
    verified_at: float | None
    last_error: dict[str, Any] | None
    #: Which runner and model ran the last attempt (``kind``, ``model``, ...), its exit,
    #: latency and token counts, and ``memory_from``: ``agent`` (the agent wrote the
    #: file) or ``reply`` (its reply was written to it).
    runner: dict[str, Any] | None = None
    #: The process group of the agent running the phase now (host, pgid, lease).
    agent_process: dict[str, Any] | None = None


@dataclass(frozen=True)
class WorkflowStatus:
    """Everything about one run."""

    run_id: str
    skill: str
    query: str
    #: The FSM state (``completed`` when done, ``blocked`` when stopped by an error).
    state: str
    blocked_from: str | None
    mode: str
    task_id: str | None
    domain: str | None
    #: The seed 002 data contract: {"1": {"task_id"}, "2": {"domain", "confidence"}, ...}.
    steps: dict[str, dict[str, Any]]
    steps_completed: list[int]
    current_step: int | None
    phases: list[PhaseStatus]
    phases_completed: list[dict[str, Any]]
    memory_dir: str
    memory_files: list[str]
    learnings_dir: str
    runner: dict[str, Any] | None
    last_error: dict[str, Any] | None
    owner: str | None
    transitions: int
    created_at: float
    updated_at: float
    completed_at: float | None
    step_completed_at: dict[str, float]
    complete: bool
    marker: str | None
    next: str


@dataclass(frozen=True)
class RunSummary:
    """One line of ``workflow list``."""

    run_id: str
    skill: str
    state: str
    mode: str
    task_id: str | None
    domain: str | None
    query: str
    created_at: float
    updated_at: float
    completed_at: float | None


def _current_step(rec: RunRecord) -> int | None:
    active = rec.active_state
    if active is RunState.COMPLETED:
        return None
    if active is RunState.TRIGGERING_AGENTS:
        return 5
    for s in STEPS:
        if s.requires is active:
            return s.number
    return None


def next_action(rec: RunRecord) -> str:
    """What the user can do next, as a command line."""
    run = rec.run_id
    if rec.state is RunState.COMPLETED:
        return "nothing: the run is complete"
    if rec.state is RunState.BLOCKED:
        code = (rec.last_error or {}).get("code")
        phase = (rec.last_error or {}).get("phase_id")
        if code == "E_MEMORY_VERIFICATION_FAILED" and phase:
            return (
                f"fix {phase}'s memory file and `skillrt workflow advance {run} {phase}`, or "
                f"`skillrt workflow resume {run}` to run the phase again"
            )
        return f"fix the cause, then `skillrt workflow resume {run}`"
    if rec.mode == "manual" and rec.state is RunState.TRIGGERING_AGENTS:
        running = next((p for p in rec.phases if p.state is not PhaseState.VERIFIED), None)
        if running is not None and running.state is PhaseState.RUNNING:
            return (
                f"have agent '{running.agent}' write its memory file, then "
                f"`skillrt workflow advance {run} {running.phase_id}`"
            )
    return f"`skillrt workflow resume {run}` (if no process is driving it)"


def run_status(rec: RunRecord) -> WorkflowStatus:
    memory_dir = Path(rec.memory_dir)
    phases = [
        PhaseStatus(
            phase_id=p.phase_id,
            agent=p.agent,
            state=p.state.value,
            attempts=p.attempts,
            memory_file=str(memory_dir / p.memory_file),
            memory_exists=(memory_dir / p.memory_file).is_file(),
            memory_sha256=p.memory_sha256,
            started_at=p.started_at,
            verified_at=p.verified_at,
            last_error=dict(p.last_error) if p.last_error else None,
            runner=dict(p.runner) if p.runner else None,
            agent_process=dict(p.agent_process) if p.agent_process else None,
        )
        for p in rec.phases
    ]
    completed = [
        {
            "phase_id": p.phase_id,
            "agent": p.agent,
            "memory_file": str(memory_dir / p.memory_file),
            "verified_at": p.verified_at,
        }
        for p in rec.phases
        if p.state is PhaseState.VERIFIED
    ]
    memory_files: list[str] = []
    if rec.task_id:
        try:
            memory_files = sorted(
                str(f)
                for f in memory_dir.iterdir()
                if f.name.startswith(f"{rec.task_id}-") and f.is_file()
            )
        except OSError:
            memory_files = []
    done = rec.state is RunState.COMPLETED
    return WorkflowStatus(
        run_id=rec.run_id,
        skill=rec.skill,
        query=rec.query,
        state=rec.state.value,
        blocked_from=rec.blocked_from.value if rec.blocked_from else None,
        mode=rec.mode,
        task_id=rec.task_id,
        domain=rec.domain,
        steps={str(k): dict(v) for k, v in sorted(rec.steps.items())},
        steps_completed=sorted(rec.steps),
        current_step=_current_step(rec),
        phases=phases,
        phases_completed=completed,
        memory_dir=rec.memory_dir,
        memory_files=memory_files,
        learnings_dir=rec.learnings_dir,
        runner=dict(rec.runner) if rec.runner else None,
        last_error=dict(rec.last_error) if rec.last_error else None,
        owner=rec.owner,
        transitions=rec.seq,
        created_at=rec.created_at,
        updated_at=rec.updated_at,
        completed_at=rec.completed_at,
        step_completed_at={str(k): v for k, v in sorted(rec.step_times.items())},
        complete=done,
        marker=COMPLETE_MARKER if done else None,
        next=next_action(rec),
    )


def summary(rec: RunRecord) -> RunSummary:
    return RunSummary(
        run_id=rec.run_id,
        skill=rec.skill,
        state=rec.state.value,
        mode=rec.mode,
        task_id=rec.task_id,
        domain=rec.domain,
        query=rec.query,
        created_at=rec.created_at,
        updated_at=rec.updated_at,
        completed_at=rec.completed_at,
    )
