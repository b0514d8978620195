"""What execution writes to the state store (migration slot 4) and the stats hook (T2).

Every runner call is one ``executions`` row; every state-machine move one
``fsm_transitions`` row. Writes are serialised by a lock so the parallel steps of a run
can share one store (an in-memory store has a single connection).
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from skillrt.errors import StoreError
from skillrt.execution.fallback import Transition
from skillrt.store.base import Store

log = logging.getLogger(__name__)


def new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(6)}"


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


StatsHook = Callable[..., None]


def _default_stats_hook() -> StatsHook | None:
    import importlib

    try:
        module = importlib.import_module("skillrt.telemetry.stats")
    except ImportError:
        return None
    hook: StatsHook | None = getattr(module, "record_execution", None)
    return hook


class ExecutionRecorder:
    """Writes executions and transitions of one run; ``store=None`` records nothing."""

    def __init__(
        self,
        store: Store | None,
        *,
        run_id: str | None = None,
        stats_hook: StatsHook | None | bool = True,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self._lock = threading.Lock()
        if stats_hook is True:
            self._stats: StatsHook | None = _default_stats_hook()
        elif stats_hook is False:
            self._stats = None
        else:
            self._stats = stats_hook

    def transition(self, t: Transition) -> None:
        if self.store is None:
            return
        with self._lock, self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO fsm_transitions(run_id, machine, path, from_state, to_state, "
                "attempt, reason, error_code, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (
                    self.run_id,
                    t.machine,
                    t.path,
                    t.from_state,
                    t.to_state,
                    t.attempt,
                    t.reason[:2000],
                    t.error_code,
                    t.at,
                ),
            )

    def execution(self, row: ExecutionRow, *, count_stats: bool) -> None:
        """Store one execution; ``count_stats`` feeds the router's per-skill stats (T2)."""
        if self.store is None:
            return
        with self._lock:
            with self.store.transaction() as conn:
                conn.execute(
                    "INSERT INTO executions(execution_id, run_id, request_id, parent_id, skill, "
                    "role, execution_mode, depth, edge_type, path, runner, status, exit_code, "
                    "latency_ms, tokens_in, tokens_out, truncated, fallback_used, error_code, "
                    "error_message, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        row.execution_id,
                        row.run_id or self.run_id,
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
                        (row.error_message or "")[:2000] or None,
                        time.time(),
                    ),
                )
            if count_stats and row.skill and self._stats is not None:
                try:
                    self._stats(
                        self.store,
                        row.skill,
                        success=row.status == "success",
                        latency_ms=row.latency_ms,
                        tokens_in=row.tokens_in,
                        tokens_out=row.tokens_out,
                        fallback_used=row.fallback_used,
                    )
                except StoreError as exc:  # stats must never fail a run
                    log.warning("recording stats for %s failed: %s", row.skill, exc)


def list_executions(
    store: Store, *, run_id: str | None = None, limit: int = 100
) -> list[dict[str, Any]]:
    """Recent executions (newest first), optionally of one run."""
    sql = "SELECT * FROM executions"
    args: tuple[Any, ...] = ()
    if run_id:
        sql += " WHERE run_id = ?"
        args = (run_id,)
    sql += " ORDER BY created_at DESC LIMIT ?"
    rows = store.connection().execute(sql, (*args, limit)).fetchall()
    return [dict(r) for r in rows]


def list_transitions(store: Store, run_id: str) -> list[dict[str, Any]]:
    rows = (
        store.connection()
        .execute("SELECT * FROM fsm_transitions WHERE run_id = ? ORDER BY id", (run_id,))
        .fetchall()
    )
    return [dict(r) for r in rows]
