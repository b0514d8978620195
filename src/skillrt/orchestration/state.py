"""Durable run state in the store (its :class:`~skillrt.store.workflows.WorkflowRuns`),
one transaction per transition.

Every method that changes a run opens a transaction, reads the run's *stored* state
with the run's row locked (SQLite's write lock, PostgreSQL's ``FOR UPDATE``), checks
the move against the FSM tables, writes the new state, the step output or phase row
and a numbered transition, and commits — or changes nothing. The
stored state is the only truth: two processes cannot both make the same move, and a
process that crashed leaves the last committed transition behind.

Ownership is a lease: the process driving a run holds ``owner`` until ``lease_until``
(the database's clock, so hosts need not agree on the time) and renews it while it
works (:class:`LeaseKeeper`). A run whose lease ran out — its worker died, on any host
— can be claimed by another worker; on the same host a dead owner is seen at once.
Transitions given an ``owner`` are fenced: when the run's owner is someone else by
then, the transition raises :class:`WorkflowLeaseLost` and writes nothing.

Durability (``orchestration.synchronous``): a commit survives a killed process at any
level — on SQLite it is in the WAL before ``COMMIT`` returns, on PostgreSQL in the
server. What the level decides is an OS crash or power loss (of the server).
``results`` (the default) syncs the transactions that record work done — a run
created, a step output, a verified phase — to disk at commit (SQLite's ``synchronous =
FULL``, which also syncs every earlier transaction), and lets the rest (a phase started
or failed, blocked, unblocked, ownership) commit without waiting for the disk (SQLite's
``NORMAL``, PostgreSQL's ``synchronous_commit = off``). Power loss can then only drop a
suffix of *intent* transitions, which resume re-derives: a phase whose start was lost
runs again (it was never verified), one whose file is complete is verified without a
re-run. ``full`` syncs every transition; ``normal`` none.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Literal

from skillrt.errors import (
    StoreError,
    WorkflowBusy,
    WorkflowIllegalTransition,
    WorkflowLeaseLost,
    WorkflowNotFound,
)
from skillrt.execution.processes import process_start_time
from skillrt.orchestration.fsm import (
    PhaseState,
    RunState,
    check_phase,
    check_phase_order,
    check_run,
    check_step_output,
    step,
)
from skillrt.store.base import Store
from skillrt.store.workflows import NewRun, RunRow, RunTransition, WorkflowTx

__all__ = [
    "DEFAULT_LEASE_S",
    "LeaseKeeper",
    "PhaseRecord",
    "RunRecord",
    "WorkflowStore",
    "current_owner",
]

Synchronous = Literal["full", "results", "normal"]
#: Seconds a claim holds a run without renewal (the keeper renews it every third of it).
DEFAULT_LEASE_S = 30.0

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PhaseRecord:
    """A phase row."""

    index: int
    phase_id: str
    agent: str
    state: PhaseState
    attempts: int
    memory_file: str
    memory_sha256: str | None = None
    prompt_sha256: str | None = None
    started_at: float | None = None
    verified_at: float | None = None
    last_error: Mapping[str, Any] | None = None
    #: Which runner and model ran the last attempt, its exit, latency and tokens.
    runner: Mapping[str, Any] | None = None
    #: The process group of the agent running the phase now (while ``running``).
    agent_process: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class RunRecord:
    """A run as stored: state, step outputs (the data contract), phases."""

    run_id: str
    skill: str
    skill_dir: str
    query: str
    state: RunState
    mode: str
    memory_dir: str
    learnings_dir: str
    created_at: float
    updated_at: float
    seq: int = 0
    blocked_from: RunState | None = None
    task_id: str | None = None
    domain: str | None = None
    runner: Mapping[str, Any] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    last_error: Mapping[str, Any] | None = None
    owner: str | None = None
    completed_at: float | None = None
    lease_until: float | None = None
    steps: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)
    step_times: Mapping[int, float] = field(default_factory=dict)
    phases: tuple[PhaseRecord, ...] = ()

    @property
    def active_state(self) -> RunState:
        """The state the run works in: ``blocked_from`` while blocked."""
        if self.state is RunState.BLOCKED and self.blocked_from is not None:
            return self.blocked_from
        return self.state

    def phase(self, phase_id: str) -> PhaseRecord:
        for p in self.phases:
            if p.phase_id == phase_id:
                return p
        raise KeyError(phase_id)


def current_owner() -> str:
    """``host:pid:start`` of this process; ``start`` tells a reused pid apart."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{process_start_time(pid) or ''}"


def owner_alive(owner: str) -> bool:
    """Whether the process that claimed a run still runs (on this host)."""
    host, _, rest = owner.partition(":")
    pid_text, _, start = rest.partition(":")
    if host != socket.gethostname():
        return True  # cannot tell; assume alive rather than run a phase twice
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    now = process_start_time(pid)
    if now == "dead":
        return False
    return not (start and now and now != start)


class WorkflowStore:
    """Reads and transitions workflow runs in a :class:`Store` (its
    :attr:`~skillrt.store.base.Store.workflows`)."""

    def __init__(
        self,
        store: Store,
        *,
        synchronous: Synchronous = "results",
        lease_s: float = DEFAULT_LEASE_S,
    ) -> None:
        self.store = store
        self.synchronous = synchronous
        self.lease_s = lease_s

    # -- transactions ------------------------------------------------------------------
    def _tx(self, *, result: bool = False) -> AbstractContextManager[WorkflowTx]:
        """One transaction; synced to disk per :attr:`synchronous` (``result``: it records
        work done — a run created, a step output, a verified phase)."""
        sync = self.synchronous == "full" or (self.synchronous == "results" and result)
        return self.store.workflows.transaction(sync=sync)

    def _row(
        self, tx: WorkflowTx, run_id: str, *, lock: bool = True, owner: str | None = None
    ) -> RunRow:
        """The run's row, locked for this transaction; fenced when ``owner`` is given."""
        row = tx.run(run_id, lock=lock)
        if row is None:
            raise WorkflowNotFound(f"no workflow run {run_id!r}", run_id=run_id)
        if owner is not None and row.owner != owner:
            raise WorkflowLeaseLost(
                f"run {run_id} is now driven by {row.owner or 'nobody'}: this process "
                f"({owner}) lost its lease and stops",
                run_id=run_id,
                owner=row.owner,
                worker=owner,
            )
        return row

    def _log(
        self,
        tx: WorkflowTx,
        run_id: str,
        *,
        kind: str,
        to_state: str,
        from_state: str | None,
        now: float,
        phase_id: str | None = None,
        step_no: int | None = None,
        detail: Mapping[str, Any] | None = None,
        owner: str | None = None,
    ) -> int:
        # A fenced transition is also a heartbeat: it renews its owner's lease.
        return tx.log(
            run_id,
            RunTransition(
                kind=kind,
                to_state=to_state,
                from_state=from_state,
                at=now,
                phase_id=phase_id,
                step=step_no,
                detail=detail,
                pid=os.getpid(),
            ),
            renew_lease_s=self.lease_s if owner is not None else None,
        )

    # -- create / read -----------------------------------------------------------------
    def create_run(
        self,
        *,
        run_id: str,
        skill: str,
        skill_dir: str,
        query: str,
        mode: str,
        runner: Mapping[str, Any] | None,
        memory_dir: str,
        learnings_dir: str,
        options: Mapping[str, Any] | None = None,
        owner: str | None = None,
    ) -> None:
        """Insert a run in state ``created`` (claimed by ``owner`` when given)."""
        now = time.time()
        with self._tx(result=True) as tx:
            tx.insert_run(
                NewRun(
                    run_id=run_id,
                    skill=skill,
                    skill_dir=skill_dir,
                    query=query,
                    state=RunState.CREATED.value,
                    mode=mode,
                    runner=runner,
                    memory_dir=memory_dir,
                    learnings_dir=learnings_dir,
                    options=dict(options or {}),
                    owner=owner,
                ),
                now=now,
                lease_s=self.lease_s if owner is not None else None,
            )
            self._log(tx, run_id, kind="run", from_state=None, to_state=RunState.CREATED, now=now)

    def load(self, run_id: str) -> RunRecord:
        stored = self.store.workflows.load(run_id)
        if stored is None:
            raise WorkflowNotFound(f"no workflow run {run_id!r}", run_id=run_id)
        phases = tuple(
            PhaseRecord(
                index=p.index,
                phase_id=p.phase_id,
                agent=p.agent,
                state=PhaseState(p.state),
                attempts=p.attempts,
                memory_file=p.memory_file,
                memory_sha256=p.memory_sha256,
                prompt_sha256=p.prompt_sha256,
                started_at=p.started_at,
                verified_at=p.verified_at,
                last_error=p.last_error,
                runner=p.runner,
                agent_process=p.agent_process,
            )
            for p in stored.phases
        )
        return _record(stored.run, stored.steps, stored.step_times, phases)

    def list_runs(self, *, limit: int | None = None) -> list[RunRecord]:
        """Runs, most recently updated first (without steps and phases)."""
        return [_record(r, {}, {}, ()) for r in self.store.workflows.list_runs(limit)]

    def transitions(self, run_id: str) -> list[dict[str, Any]]:
        return self.store.workflows.transitions(run_id)

    # -- ownership: one live driver per run, under a lease ------------------------------
    def claim(self, run_id: str, owner: str) -> None:
        """Make ``owner`` the run's driver for :attr:`lease_s` seconds.

        Refused (:class:`WorkflowBusy`) while another owner's lease runs, unless that
        owner is a process on this host that is gone. A run claimed before leases
        existed (no ``lease_until``) is held until its owner is seen dead.
        """
        with self._tx() as tx:
            row = self._row(tx, run_id)
            held = row.owner
            if held and held != owner:
                lease = row.lease_until
                db_now = float(row.db_now or 0.0)
                expired = lease is not None and float(lease) <= db_now
                if not expired and owner_alive(held):
                    left = None if lease is None else round(float(lease) - db_now, 3)
                    raise WorkflowBusy(
                        f"run {run_id} is being driven by another live process ({held}); "
                        "wait for it to finish (or its lease to run out), then resume",
                        run_id=run_id,
                        owner=held,
                        lease_expires_in_s=left,
                    )
            tx.set_owner(run_id, owner, lease_s=self.lease_s)

    def renew(self, run_id: str, owner: str) -> bool:
        """Extend ``owner``'s lease; False when the run is no longer its own."""
        with self._tx() as tx:
            return tx.renew(run_id, owner, lease_s=self.lease_s)

    def release(self, run_id: str, owner: str) -> None:
        with self._tx() as tx:
            tx.release(run_id, owner)

    def set_mode(
        self,
        run_id: str,
        mode: str,
        runner: Mapping[str, Any] | None,
        *,
        owner: str | None = None,
    ) -> None:
        with self._tx() as tx:
            self._row(tx, run_id, owner=owner)
            tx.update_run(run_id, {"mode": mode, "runner": runner})

    # -- run transitions ---------------------------------------------------------------
    def complete_step(
        self,
        run_id: str,
        number: int,
        output: Mapping[str, Any],
        *,
        task_id: str | None = None,
        domain: str | None = None,
        phases: Sequence[tuple[str, str, str]] = (),
        owner: str | None = None,
    ) -> int:
        """Record step ``number``'s output and move to the state it produces.

        Step 3 also creates the phase rows (``(phase_id, agent, memory_file)``); step 6
        checks every earlier step's output is there (seed 002 complete.py).
        """
        spec = step(number)
        check_step_output(number, output)
        now = time.time()
        with self._tx(result=True) as tx:
            row = self._row(tx, run_id, owner=owner)
            current = RunState(row.state)
            if number == 5:
                if current is not RunState.TRIGGERING_AGENTS:
                    check_run(current, RunState.TRIGGERING_AGENTS, run_id=run_id)
                states = [state for _, state in tx.phase_states(run_id)]
                pending = [s for s in states if s != PhaseState.VERIFIED]
                if not states or pending:
                    raise WorkflowIllegalTransition(
                        f"run {run_id}: step 5 cannot complete while {len(pending)} phase(s) "
                        "are not verified",
                        run_id=run_id,
                        from_state=current,
                        to_state=spec.produces,
                    )
            else:
                check_run(current, spec.produces, run_id=run_id)
            if number == 6:
                missing = sorted({1, 2, 3, 4, 5} - tx.step_numbers(run_id))
                if missing:
                    raise WorkflowIllegalTransition(
                        f"run {run_id}: cannot complete, step(s) {missing} have no output",
                        run_id=run_id,
                        missing_steps=missing,
                    )
            tx.add_step(run_id, number, spec.name, output, at=now)
            changes: dict[str, Any] = {"state": spec.produces.value, "last_error": None}
            if task_id is not None:
                changes["task_id"] = task_id
            if domain is not None:
                changes["domain"] = domain
            if number == 6:
                changes["completed_at"] = now
            tx.update_run(run_id, changes)
            tx.add_phases(run_id, phases, PhaseState.PENDING.value)
            return self._log(
                tx,
                run_id,
                owner=owner,
                kind="step",
                step_no=number,
                from_state=current,
                to_state=spec.produces,
                now=now,
            )

    def begin_agents(self, run_id: str, *, owner: str | None = None) -> int:
        """``memory_created -> triggering_agents``: step 5 starts."""
        return self._move(run_id, RunState.TRIGGERING_AGENTS, kind="run", step_no=5, owner=owner)

    def block(self, run_id: str, error: Mapping[str, Any], *, owner: str | None = None) -> int:
        """Stop the run with ``error``; it resumes where it was."""
        now = time.time()
        with self._tx() as tx:
            row = self._row(tx, run_id, owner=owner)
            current = RunState(row.state)
            if current is RunState.BLOCKED:
                tx.update_run(run_id, {"last_error": dict(error)})
                return row.seq
            check_run(current, RunState.BLOCKED, run_id=run_id)
            tx.update_run(
                run_id,
                {
                    "state": RunState.BLOCKED.value,
                    "blocked_from": current.value,
                    "last_error": dict(error),
                },
            )
            return self._log(
                tx,
                run_id,
                owner=owner,
                kind="run",
                from_state=current,
                to_state=RunState.BLOCKED,
                now=now,
                detail={"error": dict(error)},
            )

    def unblock(self, run_id: str, *, owner: str | None = None) -> RunState:
        """``blocked -> <blocked_from>``; returns the state the run is back in."""
        now = time.time()
        with self._tx() as tx:
            row = self._row(tx, run_id, owner=owner)
            current = RunState(row.state)
            if current is not RunState.BLOCKED:
                return current
            back = RunState(row.blocked_from or "")  # a blocked run says where it was
            check_run(current, back, run_id=run_id, blocked_from=back)
            tx.update_run(run_id, {"state": back.value, "blocked_from": None})
            self._log(
                tx, run_id, kind="run", from_state=current, to_state=back, now=now, owner=owner
            )
            return back

    def _move(
        self,
        run_id: str,
        target: RunState,
        *,
        kind: str,
        step_no: int | None,
        owner: str | None = None,
    ) -> int:
        now = time.time()
        with self._tx() as tx:
            row = self._row(tx, run_id, owner=owner)
            current = RunState(row.state)
            check_run(current, target, run_id=run_id)
            tx.update_run(run_id, {"state": target.value})
            return self._log(
                tx,
                run_id,
                owner=owner,
                kind=kind,
                step_no=step_no,
                from_state=current,
                to_state=target,
                now=now,
            )

    # -- phase transitions -------------------------------------------------------------
    def phase_transition(
        self,
        run_id: str,
        phase_id: str,
        target: PhaseState,
        *,
        prompt_sha256: str | None = None,
        memory_sha256: str | None = None,
        error: Mapping[str, Any] | None = None,
        detail: Mapping[str, Any] | None = None,
        runner: Mapping[str, Any] | None = None,
        owner: str | None = None,
    ) -> int:
        """Move one phase; starting it requires every earlier phase verified.

        Every move ends the phase's recorded agent (its attempt started or ended);
        ``runner`` records what ran the attempt that ends here."""
        now = time.time()
        with self._tx(result=target is PhaseState.VERIFIED) as tx:
            row = self._row(tx, run_id, owner=owner)
            if RunState(row.state) is not RunState.TRIGGERING_AGENTS:
                check_run(row.state, RunState.TRIGGERING_AGENTS, run_id=run_id)
            phases = tx.phase_states(run_id)
            index = next((i for i, (pid, _) in enumerate(phases) if pid == phase_id), None)
            if index is None:
                raise WorkflowIllegalTransition(
                    f"run {run_id} has no phase {phase_id!r}; phases: "
                    + ", ".join(p for p, _ in phases),
                    run_id=run_id,
                    phase_id=phase_id,
                    phases=[p for p, _ in phases],
                )
            current = PhaseState(phases[index][1])
            check_phase(current, target, run_id=run_id, phase_id=phase_id)
            check_phase_order(phases, index, run_id=run_id)
            if target is PhaseState.RUNNING:
                tx.start_phase(run_id, index, target.value, at=now, prompt_sha256=prompt_sha256)
            elif target is PhaseState.VERIFIED:
                tx.verify_phase(
                    run_id, index, target.value, at=now, memory_sha256=memory_sha256, runner=runner
                )
            else:
                tx.end_phase(run_id, index, target.value, error=dict(error or {}), runner=runner)
            log_detail = dict(detail or {})
            if error:
                log_detail["error"] = dict(error)
            return self._log(
                tx,
                run_id,
                owner=owner,
                kind="phase",
                phase_id=phase_id,
                step_no=5,
                from_state=current,
                to_state=target,
                now=now,
                detail=log_detail or None,
            )

    def record_agent(
        self,
        run_id: str,
        phase_id: str,
        agent: Mapping[str, Any] | None,
        *,
        owner: str | None = None,
    ) -> None:
        """Record (None: forget) the process group of the agent running ``phase_id``.

        Not a transition (the phase stays ``running``); fenced like one. Committed with
        a full sync: a resume after a power cut must still see the agent."""
        with self._tx(result=True) as tx:
            self._row(tx, run_id, owner=owner)
            tx.set_agent(run_id, phase_id, agent)


class LeaseKeeper:
    """Renews ``owner``'s lease on a run every third of the lease while it drives it.

    When a renewal finds the run taken over (the lease had run out), :attr:`lost` is
    set; the owner's next fenced transition fails with :class:`WorkflowLeaseLost`. A
    renewal that cannot reach the store is retried at the next tick.
    """

    def __init__(self, store: WorkflowStore, run_id: str, owner: str) -> None:
        self.store = store
        self.run_id = run_id
        self.owner = owner
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"skillrt-lease-{run_id}", daemon=True
        )

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)

    def _run(self) -> None:
        interval = max(0.05, self.store.lease_s / 3)
        while not self._stop.wait(interval):
            try:
                if not self.store.renew(self.run_id, self.owner):
                    self.lost = True
                    return
            except StoreError as exc:
                log.warning("could not renew the lease on run %s: %s", self.run_id, exc)


def _record(
    row: RunRow,
    steps: Mapping[int, Mapping[str, Any]],
    times: Mapping[int, float],
    phases: tuple[PhaseRecord, ...],
) -> RunRecord:
    return RunRecord(
        run_id=row.run_id,
        skill=row.skill,
        skill_dir=row.skill_dir,
        query=row.query,
        state=RunState(row.state),
        mode=row.mode,
        memory_dir=row.memory_dir,
        learnings_dir=row.learnings_dir,
        created_at=row.created_at,
        updated_at=row.updated_at,
        seq=row.seq,
        blocked_from=RunState(row.blocked_from) if row.blocked_from else None,
        task_id=row.task_id,
        domain=row.domain,
        runner=row.runner,
        options=row.options,
        last_error=row.last_error,
        owner=row.owner,
        completed_at=row.completed_at,
        lease_until=row.lease_until,
        steps=steps,
        step_times=times,
        phases=phases,
    )
