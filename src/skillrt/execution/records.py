"""What execution writes to the state store (its :class:`ExecutionLog`) and the stats
hook (T2).

Every runner call is one execution row; every state-machine move one transition. Writes
are serialised by a lock so the parallel steps of a run can share one store (an
in-memory store has a single connection).
"""

from __future__ import annotations

import dataclasses
import logging
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from skillrt.errors import StoreError
from skillrt.execution.fallback import Transition
from skillrt.store.base import Store
from skillrt.store.executions import ExecutionRow

__all__ = [
    "ExecutionRecorder",
    "ExecutionRow",
    "list_executions",
    "list_transitions",
    "new_id",
]

log = logging.getLogger(__name__)


def new_id(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(6)}"


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
        with self._lock:
            self.store.executions.add_transition(self.run_id, t)

    def execution(self, row: ExecutionRow, *, count_stats: bool) -> None:
        """Store one execution; ``count_stats`` feeds the router's per-skill stats (T2)."""
        if self.store is None:
            return
        run_id = row.run_id or self.run_id
        if run_id != row.run_id:
            row = dataclasses.replace(row, run_id=run_id)
        with self._lock:
            self.store.executions.add_execution(row, created_at=time.time())
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
    return store.executions.executions(run_id=run_id, limit=limit)


def list_transitions(store: Store, run_id: str) -> list[dict[str, Any]]:
    return store.executions.transitions(run_id)
