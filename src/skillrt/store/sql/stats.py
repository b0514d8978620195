"""Per-skill counters in SQL: the ``skill_stats`` table (migration 3)."""

from __future__ import annotations

from collections.abc import Iterable

from skillrt.store.sql.connection import Connection, Database
from skillrt.store.stats import SkillStats, SkillStatsTable

__all__ = ["SqlSkillStats", "add_route_counts"]

_COLUMNS = (
    "name, routes, selections, executions, successes, failures, fallbacks, "
    "latency_ms_total, tokens_in, tokens_out, last_routed_at, last_executed_at"
)
#: Names per ``IN (...)`` lookup (SQLite's host-parameter limit is 999 in old builds).
_CHUNK = 500


class SqlSkillStats(SkillStatsTable):
    def __init__(self, store: Database) -> None:
        self.store = store

    def read(self, names: Iterable[str] | None = None) -> dict[str, SkillStats]:
        conn = self.store.connection()
        if names is None:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM skill_stats").fetchall()
        else:
            wanted = list(dict.fromkeys(names))
            rows = []
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start : start + _CHUNK]
                rows += conn.execute(
                    f"SELECT {_COLUMNS} FROM skill_stats WHERE name IN "
                    f"({', '.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
        return {row[0]: SkillStats(*tuple(row)) for row in rows}

    def add_execution(
        self,
        name: str,
        *,
        success: bool,
        latency_ms: float,
        tokens_in: int,
        tokens_out: int,
        fallback_used: bool,
        at: float,
    ) -> None:
        with self.store.transaction(sync=False) as conn:
            conn.execute(
                "INSERT INTO skill_stats(name, executions, successes, failures, fallbacks, "
                "latency_ms_total, tokens_in, tokens_out, last_executed_at) "
                "VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET "
                "executions = skill_stats.executions + 1, "
                "successes = skill_stats.successes + excluded.successes, "
                "failures = skill_stats.failures + excluded.failures, "
                "fallbacks = skill_stats.fallbacks + excluded.fallbacks, "
                "latency_ms_total = skill_stats.latency_ms_total + excluded.latency_ms_total, "
                "tokens_in = skill_stats.tokens_in + excluded.tokens_in, "
                "tokens_out = skill_stats.tokens_out + excluded.tokens_out, "
                "last_executed_at = excluded.last_executed_at",
                (
                    name,
                    int(success),
                    int(not success),
                    int(fallback_used),
                    latency_ms,
                    tokens_in,
                    tokens_out,
                    at,
                ),
            )


def add_route_counts(conn: Connection, counts: dict[str, tuple[int, int]], at: float) -> None:
    """Add ``(routes, selections)`` to each skill's counters, in one statement per chunk
    of skills, inside the caller's transaction.

    Each counter is bumped in place (``routes = routes + n``), so concurrent writers
    never lose a count; rows are touched in name order, so two writers never wait on
    each other's rows in a cycle (a deadlock, on PostgreSQL).
    """
    if not counts:
        return
    names = sorted(counts)
    for start in range(0, len(names), _CHUNK // 4):
        chunk = names[start : start + _CHUNK // 4]
        params = [v for name in chunk for v in (name, *counts[name], at)]
        # One statement per chunk; each name once in it (an upsert may not touch a row
        # twice in one statement on PostgreSQL).
        conn.execute(
            "INSERT INTO skill_stats(name, routes, selections, last_routed_at) VALUES "
            + ", ".join(["(?, ?, ?, ?)"] * len(chunk))
            + " ON CONFLICT(name) DO UPDATE SET routes = skill_stats.routes + excluded.routes, "
            "selections = skill_stats.selections + excluded.selections, "
            "last_routed_at = CASE WHEN skill_stats.last_routed_at IS NULL "
            "OR excluded.last_routed_at > skill_stats.last_routed_at "
            "THEN excluded.last_routed_at ELSE skill_stats.last_routed_at END",
            params,
        )
