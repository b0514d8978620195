"""Workflow runs as the store keeps them (seed 002): :class:`WorkflowRuns`.

A run, its step outputs (the data contract), its step-5 phases and a numbered trail of
transitions. The store only keeps them: which move is legal is decided by the caller
(:mod:`skillrt.orchestration.state`) inside one :class:`WorkflowTx`, which reads the
run with its row locked and writes the move, all of it or none of it. Times of leases
are the database's clock (``db_now``), so hosts need not agree on the time; mappings
(runner, options, errors, outputs) are kept as JSON.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "JSON_RUN_FIELDS",
    "RUN_FIELDS",
    "NewRun",
    "PhaseRow",
    "RunRow",
    "RunTransition",
    "StoredRun",
    "WorkflowRuns",
    "WorkflowTx",
]


@dataclass(frozen=True)
class RunRow:
    """A run as stored, with the database's clock when it was read."""

    run_id: str
    skill: str
    skill_dir: str
    query: str
    state: str
    mode: str
    memory_dir: str
    learnings_dir: str
    created_at: float
    updated_at: float
    seq: int
    blocked_from: str | None
    task_id: str | None
    domain: str | None
    runner: Mapping[str, Any] | None
    options: Mapping[str, Any]
    last_error: Mapping[str, Any] | None
    owner: str | None
    completed_at: float | None
    lease_until: float | None
    #: The database's clock (Unix seconds) when the row was read (None in a listing).
    db_now: float | None


@dataclass(frozen=True)
class PhaseRow:
    """A phase as stored."""

    index: int
    phase_id: str
    agent: str
    state: str
    attempts: int
    memory_file: str
    memory_sha256: str | None
    prompt_sha256: str | None
    started_at: float | None
    verified_at: float | None
    last_error: Mapping[str, Any] | None
    runner: Mapping[str, Any] | None
    agent_process: Mapping[str, Any] | None


@dataclass(frozen=True)
class StoredRun:
    """A run with its step outputs (and when each was made) and its phases."""

    run: RunRow
    steps: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)
    step_times: Mapping[int, float] = field(default_factory=dict)
    phases: tuple[PhaseRow, ...] = ()


@dataclass(frozen=True)
class NewRun:
    """A run to create (state ``created``)."""

    run_id: str
    skill: str
    skill_dir: str
    query: str
    state: str
    mode: str
    runner: Mapping[str, Any] | None
    memory_dir: str
    learnings_dir: str
    options: Mapping[str, Any]
    owner: str | None


@dataclass(frozen=True)
class RunTransition:
    """One numbered entry of a run's trail."""

    kind: str
    to_state: str
    from_state: str | None
    at: float
    phase_id: str | None = None
    step: int | None = None
    detail: Mapping[str, Any] | None = None
    pid: int | None = None


#: What :meth:`WorkflowTx.update_run` may change.
RUN_FIELDS = frozenset(
    {"state", "blocked_from", "last_error", "task_id", "domain", "completed_at", "mode", "runner"}
)
#: Fields of :data:`RUN_FIELDS` kept as JSON.
JSON_RUN_FIELDS = frozenset({"last_error", "runner"})


class WorkflowTx(ABC):
    """One transaction on the workflow runs: everything it writes commits together."""

    @abstractmethod
    def run(self, run_id: str, *, lock: bool = True) -> RunRow | None:
        """The run (None: no such run), its row locked until the end of the
        transaction unless ``lock=False``."""

    @abstractmethod
    def insert_run(self, run: NewRun, *, now: float, lease_s: float | None) -> None:
        """Create ``run``; with ``lease_s`` its owner holds it that long (the database's
        clock)."""

    @abstractmethod
    def update_run(self, run_id: str, changes: Mapping[str, Any]) -> None:
        """Set fields of :data:`RUN_FIELDS` (mappings as given, None clears)."""

    @abstractmethod
    def log(self, run_id: str, transition: RunTransition, *, renew_lease_s: float | None) -> int:
        """Number the run's next transition, stamp the run ``updated_at`` its time, and
        add it to the trail; with ``renew_lease_s`` the owner's lease is renewed that
        long. Returns its number."""

    @abstractmethod
    def set_owner(self, run_id: str, owner: str, *, lease_s: float) -> None:
        """Make ``owner`` the run's owner for ``lease_s`` seconds."""

    @abstractmethod
    def renew(self, run_id: str, owner: str, *, lease_s: float) -> bool:
        """Extend ``owner``'s lease; False when the run is not its own."""

    @abstractmethod
    def release(self, run_id: str, owner: str) -> None:
        """Clear the owner and lease, if ``owner`` holds the run."""

    @abstractmethod
    def phase_states(self, run_id: str) -> list[tuple[str, str]]:
        """``(phase_id, state)`` of the run's phases, in order."""

    @abstractmethod
    def step_numbers(self, run_id: str) -> set[int]:
        """The steps whose output is stored."""

    @abstractmethod
    def add_step(
        self, run_id: str, number: int, name: str, output: Mapping[str, Any], *, at: float
    ) -> None:
        """Store step ``number``'s output."""

    @abstractmethod
    def add_phases(self, run_id: str, phases: Sequence[tuple[str, str, str]], state: str) -> None:
        """Create the run's phases, in order, from ``(phase_id, agent, memory_file)``."""

    @abstractmethod
    def start_phase(
        self, run_id: str, index: int, state: str, *, at: float, prompt_sha256: str | None
    ) -> None:
        """A new attempt of the phase: one more attempt, started ``at``, its error and
        agent cleared."""

    @abstractmethod
    def verify_phase(
        self,
        run_id: str,
        index: int,
        state: str,
        *,
        at: float,
        memory_sha256: str | None,
        runner: Mapping[str, Any] | None,
    ) -> None:
        """The phase's output was verified ``at``; error and agent cleared; ``runner``
        (None keeps the stored one) is what ran it."""

    @abstractmethod
    def end_phase(
        self,
        run_id: str,
        index: int,
        state: str,
        *,
        error: Mapping[str, Any],
        runner: Mapping[str, Any] | None,
    ) -> None:
        """The phase's attempt ended otherwise (failed, blocked): its error kept, its
        agent cleared; ``runner`` (None keeps the stored one) is what ran it."""

    @abstractmethod
    def set_agent(self, run_id: str, phase_id: str, agent: Mapping[str, Any] | None) -> None:
        """Record (None: forget) the process group of the agent running the phase."""


class WorkflowRuns(ABC):
    """Workflow runs: read them, or change them in a :class:`WorkflowTx`."""

    @abstractmethod
    def transaction(self, *, sync: bool) -> AbstractContextManager[WorkflowTx]:
        """One transaction; ``sync``: the commit waits until it is on disk."""

    @abstractmethod
    def load(self, run_id: str) -> StoredRun | None:
        """The run with its steps and phases; None when there is no such run."""

    @abstractmethod
    def list_runs(self, limit: int | None = None) -> list[RunRow]:
        """Runs, most recently updated first."""

    @abstractmethod
    def transitions(self, run_id: str) -> list[dict[str, Any]]:
        """The run's trail in order: ``seq``, ``kind``, ``phase_id``, ``step``,
        ``from_state``, ``to_state``, ``detail`` (a mapping or None), ``pid``, ``at``."""
