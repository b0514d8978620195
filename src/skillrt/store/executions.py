"""What execution records, as the store keeps it: :class:`ExecutionLog`.

Every runner call (or dispatch blocked before any) is one :class:`ExecutionRow`; every
move of the fallback and repair state machines one transition.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["ExecutionLog", "ExecutionRow", "MachineMove"]


@dataclass(frozen=True)
class ExecutionRow:
    """One runner call (or a dispatch blocked before any call)."""

    execution_id: str
    request_id: str
    skill: str | None
    role: str | None
    execution_mode: str
    depth: int
    path: str
    runner: str
    status: str  # success | failed | blocked
    latency_ms: float
    run_id: str | None = None
    parent_id: str | None = None
    edge_type: str | None = None
    exit_code: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    truncated: bool = False
    fallback_used: bool = False
    error_code: str | None = None
    error_message: str | None = None


class MachineMove(Protocol):
    """One move of a state machine (``execution.fallback.Transition``)."""

    @property
    def machine(self) -> str: ...

    @property
    def path(self) -> str: ...

    @property
    def from_state(self) -> str: ...

    @property
    def to_state(self) -> str: ...

    @property
    def attempt(self) -> int: ...

    @property
    def reason(self) -> str: ...

    @property
    def error_code(self) -> str | None: ...

    @property
    def at(self) -> float: ...


class ExecutionLog(ABC):
    """Executions and state-machine transitions, by run."""

    @abstractmethod
    def add_execution(self, row: ExecutionRow, *, created_at: float) -> None:
        """Store one execution (its error message cut to 2,000 characters)."""

    @abstractmethod
    def add_transition(self, run_id: str | None, move: MachineMove) -> None:
        """Store one move of a run's state machine (its reason cut to 2,000 characters)."""

    @abstractmethod
    def executions(self, *, run_id: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """Recent executions (newest first), optionally of one run, as column -> value."""

    @abstractmethod
    def transitions(self, run_id: str) -> list[dict[str, Any]]:
        """The transitions of ``run_id`` in the order they were made."""
