"""The tables of the shared state, and how many rows each holds (``state info``,
``state migrate``). Derived per-machine caches (parsed skills, vectors, routing
fields) are not among them: each machine rebuilds its own."""

from __future__ import annotations

from collections.abc import Sequence

from skillrt.errors import StoreError
from skillrt.store.sql.connection import Database, missing_table

__all__ = ["COPIED_TABLES", "table_counts"]

#: In dependency order (a run before its steps).
COPIED_TABLES = (
    "skill_state",
    "skill_stats",
    "route_events",
    "route_feedback",
    "routing_configs",
    "executions",
    "fsm_transitions",
    "repair_attempts",
    "patches",
    "workflow_runs",
    "workflow_steps",
    "workflow_phases",
    "workflow_transitions",
    "learnings",
)


def table_counts(store: Database, tables: Sequence[str] = COPIED_TABLES) -> dict[str, int]:
    """Rows per table (0 for a table an older schema does not have)."""
    conn = store.connection()
    out = {}
    for t in tables:
        try:
            out[t] = int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0])
        except StoreError as exc:
            if not missing_table(exc):
                raise
            out[t] = 0
    return out
