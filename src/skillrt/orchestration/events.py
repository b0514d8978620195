"""What the engine reports as it goes: one event per committed transition.

The engine calls the observer only *after* the transition's transaction committed
(seed 002 invariant 7: state saved before the next directive is printed); surfaces
print directives from these events and never from anywhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "COMPLETE_MARKER",
    "Checkpoint",
    "EventKind",
    "Observer",
    "WorkflowEvent",
]

#: Printed when a run completes (seed 002 complete.py).
COMPLETE_MARKER = "SKILL_ORCHESTRATION_COMPLETE"

EventKind = Literal[
    "created",
    "step",
    "agents_started",
    "phase_started",
    "phase_awaiting",
    "phase_verified",
    "phase_failed",
    "agent_settled",
    "blocked",
    "completed",
]


@dataclass(frozen=True)
class WorkflowEvent:
    """One committed transition and the directive that follows it."""

    run_id: str
    kind: EventKind
    #: Run state after the commit.
    state: str
    #: The transition's sequence number in ``workflow_transitions``.
    seq: int
    step: int | None = None
    name: str | None = None
    output: Mapping[str, Any] | None = None
    phase_id: str | None = None
    agent: str | None = None
    memory_file: str | None = None
    #: The next thing to do, in words (the seed's "directive").
    directive: str = ""
    #: The assembled phase prompt (phase_started / phase_awaiting only).
    prompt: str | None = None
    error: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


#: Receives each event after its transaction committed.
Observer = Callable[[WorkflowEvent], None]
#: ``(point, run_id)`` at named points (``step:N``, ``phase:ID:...``); the CLI's test hook.
Checkpoint = Callable[[str, str], None]
