"""Executions in SQL: the ``executions`` and ``fsm_transitions`` tables (migration 4)."""

from __future__ import annotations

from typing import Any

from skillrt.store.executions import ExecutionLog, ExecutionRow, MachineMove
from skillrt.store.sql.connection import Database

__all__ = ["SqlExecutionLog"]

#: Characters kept of an error message or a transition's reason.
MAX_TEXT = 2000


class SqlExecutionLog(ExecutionLog):
    def __init__(self, store: Database) -> None:
        self.store = store

    def add_execution(self, row: ExecutionRow, *, created_at: float) -> None:
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO executions(execution_id, run_id, request_id, parent_id, skill, "
                "role, execution_mode, depth, edge_type, path, runner, status, exit_code, "
                "latency_ms, tokens_in, tokens_out, truncated, fallback_used, error_code, "
                "error_message, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    row.execution_id,
                    row.run_id,
                    row.request_id,
                    row.parent_id,
                    row.skill,
                    row.role,
                    row.execution_mode,
                    row.depth,
                    row.edge_type,
                    row.path,
                    row.runner,
                    row.status,
                    row.exit_code,
                    row.latency_ms,
                    row.tokens_in,
                    row.tokens_out,
                    int(row.truncated),
                    int(row.fallback_used),
                    row.error_code,
                    (row.error_message or "")[:MAX_TEXT] or None,
                    created_at,
                ),
            )

    def add_transition(self, run_id: str | None, move: MachineMove) -> None:
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO fsm_transitions(run_id, machine, path, from_state, to_state, "
                "attempt, reason, error_code, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    run_id,
                    move.machine,
                    move.path,
                    move.from_state,
                    move.to_state,
                    move.attempt,
                    move.reason[:MAX_TEXT],
                    move.error_code,
                    move.at,
                ),
            )

    def executions(self, *, run_id: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        sql = "SELECT * FROM executions"
        args: tuple[Any, ...] = ()
        if run_id:
            sql += " WHERE run_id = ?"
            args = (run_id,)
        sql += " ORDER BY created_at DESC LIMIT ?"
        rows = self.store.connection().execute(sql, (*args, limit)).fetchall()
        return [dict(r) for r in rows]

    def transitions(self, run_id: str) -> list[dict[str, Any]]:
        rows = (
            self.store.connection()
            .execute("SELECT * FROM fsm_transitions WHERE run_id = ? ORDER BY id", (run_id,))
            .fetchall()
        )
        return [dict(r) for r in rows]
