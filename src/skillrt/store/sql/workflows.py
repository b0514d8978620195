"""Workflow runs in SQL: ``workflow_runs``, ``workflow_steps``, ``workflow_phases`` and
``workflow_transitions`` (migrations 5, 7 and 10).

A transaction reads the run's row with ``SELECT ... FOR UPDATE`` on PostgreSQL (SQLite's
write transaction holds the whole database), so two processes never both make a move;
lease times are the database's clock (the dialect's ``now``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from skillrt.store.sql.connection import Connection, Database
from skillrt.store.workflows import (
    JSON_RUN_FIELDS,
    RUN_FIELDS,
    NewRun,
    PhaseRow,
    RunRow,
    RunTransition,
    StoredRun,
    WorkflowRuns,
    WorkflowTx,
)

__all__ = ["SqlWorkflowRuns", "SqlWorkflowTx"]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _maybe_json(value: Mapping[str, Any] | None) -> str | None:
    return _dumps(dict(value)) if value is not None else None


def _loads(text: str | None) -> Any:
    return json.loads(text) if text else None


def _run(row: Any, db_now: Any = None) -> RunRow:
    return RunRow(
        run_id=row["run_id"],
        skill=row["skill"],
        skill_dir=row["skill_dir"],
        query=row["query"],
        state=row["state"],
        mode=row["mode"],
        memory_dir=row["memory_dir"],
        learnings_dir=row["learnings_dir"],
        created_at=float(row["created_at"]),
        updated_at=float(row["updated_at"]),
        seq=int(row["seq"]),
        blocked_from=row["blocked_from"],
        task_id=row["task_id"],
        domain=row["domain"],
        runner=_loads(row["runner"]),
        options=json.loads(row["options"] or "{}"),
        last_error=_loads(row["last_error"]),
        owner=row["owner"],
        completed_at=row["completed_at"],
        lease_until=row["lease_until"],
        db_now=None if db_now is None else float(db_now),
    )


def _phase(p: Any) -> PhaseRow:
    return PhaseRow(
        index=int(p["idx"]),
        phase_id=p["phase_id"],
        agent=p["agent"],
        state=p["state"],
        attempts=int(p["attempts"]),
        memory_file=p["memory_file"],
        memory_sha256=p["memory_sha256"],
        prompt_sha256=p["prompt_sha256"],
        started_at=p["started_at"],
        verified_at=p["verified_at"],
        last_error=_loads(p["last_error"]),
        runner=_loads(p["runner"]),
        agent_process=_loads(p["agent_process"]),
    )


def _read_run(conn: Connection, run_id: str, *, lock: bool) -> RunRow | None:
    dialect = conn.dialect
    row = conn.execute(
        f"SELECT *, {dialect.now} AS db_now FROM workflow_runs WHERE run_id = ?"
        + (dialect.for_update if lock else ""),
        (run_id,),
    ).fetchone()
    return None if row is None else _run(row, row["db_now"])


class SqlWorkflowTx(WorkflowTx):
    """The moves of one transaction, on its connection."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def run(self, run_id: str, *, lock: bool = True) -> RunRow | None:
        return _read_run(self.conn, run_id, lock=lock)

    def insert_run(self, run: NewRun, *, now: float, lease_s: float | None) -> None:
        self.conn.execute(
            "INSERT INTO workflow_runs(run_id, skill, skill_dir, query, state, mode, runner,"
            " memory_dir, learnings_dir, options, owner, created_at, updated_at, lease_until)"
            f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {self.conn.dialect.now} + ?)",
            (
                run.run_id,
                run.skill,
                run.skill_dir,
                run.query,
                run.state,
                run.mode,
                _dumps(run.runner) if run.runner is not None else None,
                run.memory_dir,
                run.learnings_dir,
                _dumps(dict(run.options)),
                run.owner,
                now,
                now,
                lease_s,
            ),
        )

    def update_run(self, run_id: str, changes: Mapping[str, Any]) -> None:
        unknown = set(changes) - RUN_FIELDS
        if unknown:
            raise ValueError(f"not a field a run update may change: {sorted(unknown)}")
        if not changes:
            return
        values = [
            _maybe_json(value) if name in JSON_RUN_FIELDS else value
            for name, value in changes.items()
        ]
        self.conn.execute(
            f"UPDATE workflow_runs SET {', '.join(f'{name} = ?' for name in changes)} "
            "WHERE run_id = ?",
            (*values, run_id),
        )

    def log(self, run_id: str, transition: RunTransition, *, renew_lease_s: float | None) -> int:
        t = transition
        # A fenced transition is also a heartbeat: it renews its owner's lease.
        renew = f", lease_until = {self.conn.dialect.now} + ?" if renew_lease_s is not None else ""
        seq = int(
            self.conn.execute(
                f"UPDATE workflow_runs SET seq = seq + 1, updated_at = ?{renew} "
                "WHERE run_id = ? RETURNING seq",
                (t.at, renew_lease_s, run_id) if renew_lease_s is not None else (t.at, run_id),
            ).fetchone()[0]
        )
        self.conn.execute(
            "INSERT INTO workflow_transitions(run_id, seq, kind, phase_id, step, from_state, "
            "to_state, detail, pid, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                seq,
                t.kind,
                t.phase_id,
                t.step,
                t.from_state,
                t.to_state,
                _dumps(t.detail) if t.detail else None,
                t.pid,
                t.at,
            ),
        )
        return seq

    def set_owner(self, run_id: str, owner: str, *, lease_s: float) -> None:
        self.conn.execute(
            f"UPDATE workflow_runs SET owner = ?, lease_until = {self.conn.dialect.now} + ? "
            "WHERE run_id = ?",
            (owner, lease_s, run_id),
        )

    def renew(self, run_id: str, owner: str, *, lease_s: float) -> bool:
        cur = self.conn.execute(
            f"UPDATE workflow_runs SET lease_until = {self.conn.dialect.now} + ? "
            "WHERE run_id = ? AND owner = ?",
            (lease_s, run_id, owner),
        )
        return cur.rowcount > 0

    def release(self, run_id: str, owner: str) -> None:
        self.conn.execute(
            "UPDATE workflow_runs SET owner = NULL, lease_until = NULL "
            "WHERE run_id = ? AND owner = ?",
            (run_id, owner),
        )

    def phase_states(self, run_id: str) -> list[tuple[str, str]]:
        return [
            (r["phase_id"], r["state"])
            for r in self.conn.execute(
                "SELECT phase_id, state FROM workflow_phases WHERE run_id = ? ORDER BY idx",
                (run_id,),
            )
        ]

    def step_numbers(self, run_id: str) -> set[int]:
        return {
            int(r[0])
            for r in self.conn.execute(
                "SELECT step FROM workflow_steps WHERE run_id = ?", (run_id,)
            )
        }

    def add_step(
        self, run_id: str, number: int, name: str, output: Mapping[str, Any], *, at: float
    ) -> None:
        self.conn.execute(
            "INSERT INTO workflow_steps(run_id, step, name, output, completed_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (run_id, number, name, _dumps(dict(output)), at),
        )

    def add_phases(self, run_id: str, phases: Sequence[tuple[str, str, str]], state: str) -> None:
        for idx, (phase_id, agent, memory_file) in enumerate(phases):
            self.conn.execute(
                "INSERT INTO workflow_phases(run_id, idx, phase_id, agent, state, "
                "memory_file) VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, idx, phase_id, agent, state, memory_file),
            )

    def start_phase(
        self, run_id: str, index: int, state: str, *, at: float, prompt_sha256: str | None
    ) -> None:
        self.conn.execute(
            "UPDATE workflow_phases SET state = ?, attempts = attempts + 1, "
            "started_at = ?, prompt_sha256 = ?, last_error = NULL, agent_process = NULL "
            "WHERE run_id = ? AND idx = ?",
            (state, at, prompt_sha256, run_id, index),
        )

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
        self.conn.execute(
            "UPDATE workflow_phases SET state = ?, verified_at = ?, memory_sha256 = ?, "
            "last_error = NULL, agent_process = NULL, runner = COALESCE(?, runner) "
            "WHERE run_id = ? AND idx = ?",
            (state, at, memory_sha256, _maybe_json(runner), run_id, index),
        )

    def end_phase(
        self,
        run_id: str,
        index: int,
        state: str,
        *,
        error: Mapping[str, Any],
        runner: Mapping[str, Any] | None,
    ) -> None:
        self.conn.execute(
            "UPDATE workflow_phases SET state = ?, last_error = ?, agent_process = NULL, "
            "runner = COALESCE(?, runner) WHERE run_id = ? AND idx = ?",
            (state, _dumps(dict(error)), _maybe_json(runner), run_id, index),
        )

    def set_agent(self, run_id: str, phase_id: str, agent: Mapping[str, Any] | None) -> None:
        self.conn.execute(
            "UPDATE workflow_phases SET agent_process = ? WHERE run_id = ? AND phase_id = ?",
            (_maybe_json(agent), run_id, phase_id),
        )


class SqlWorkflowRuns(WorkflowRuns):
    def __init__(self, store: Database) -> None:
        self.store = store

    @contextmanager
    def transaction(self, *, sync: bool) -> Iterator[WorkflowTx]:
        with self.store.transaction(sync=sync) as conn:
            yield SqlWorkflowTx(conn)

    def load(self, run_id: str) -> StoredRun | None:
        conn = self.store.connection()
        run = _read_run(conn, run_id, lock=False)
        if run is None:
            return None
        steps: dict[int, Mapping[str, Any]] = {}
        times: dict[int, float] = {}
        for s in conn.execute(
            "SELECT step, output, completed_at FROM workflow_steps WHERE run_id = ? ORDER BY step",
            (run_id,),
        ):
            steps[int(s["step"])] = json.loads(s["output"])
            times[int(s["step"])] = float(s["completed_at"])
        phases = tuple(
            _phase(p)
            for p in conn.execute(
                "SELECT * FROM workflow_phases WHERE run_id = ? ORDER BY idx", (run_id,)
            )
        )
        return StoredRun(run, steps, times, phases)

    def list_runs(self, limit: int | None = None) -> list[RunRow]:
        sql = "SELECT * FROM workflow_runs ORDER BY updated_at DESC, run_id"
        params: tuple[Any, ...] = ()
        if limit is not None:
            sql += " LIMIT ?"
            params = (int(limit),)
        return [_run(r) for r in self.store.connection().execute(sql, params)]

    def transitions(self, run_id: str) -> list[dict[str, Any]]:
        rows = self.store.connection().execute(
            "SELECT * FROM workflow_transitions WHERE run_id = ? ORDER BY seq", (run_id,)
        )
        return [
            {
                "seq": r["seq"],
                "kind": r["kind"],
                "phase_id": r["phase_id"],
                "step": r["step"],
                "from_state": r["from_state"],
                "to_state": r["to_state"],
                "detail": json.loads(r["detail"]) if r["detail"] else None,
                "pid": r["pid"],
                "at": r["at"],
            }
            for r in rows
        ]
