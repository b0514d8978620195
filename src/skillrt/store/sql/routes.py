"""Route events in SQL: the ``route_events`` table (migration 3)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from skillrt.errors import StoreError
from skillrt.store.routes import RouteEvent, RouteLog, StoredRoute, route_counts
from skillrt.store.sql.connection import Connection, Database, missing_table
from skillrt.store.sql.stats import add_route_counts

__all__ = ["SqlRouteLog"]

_EVENT_COLUMNS = (
    "route_id, ts, surface, config_id, query_hash, query_chars, query_text, query_type, "
    "candidate_count, selected_skills, score_breakdown, routing_reason, latency_ms, "
    "tokens_in, tokens_out, execution_result, fallback_used, model_id"
)
_EVENT_PARAMS = "(" + ", ".join("?" * 18) + ")"
#: Events per INSERT statement (18 parameters each; SQLite allows 32766 per statement).
_INSERT_CHUNK = 50
_STATS_COLUMNS = (
    "route_id, ts, config_id, query_type, candidate_count, selected_skills, latency_ms, "
    "tokens_in, tokens_out, execution_result, fallback_used"
)


def _event_row(event: RouteEvent) -> tuple[Any, ...]:
    return (
        event.route_id,
        event.ts,
        event.surface,
        event.config_id,
        event.query_hash,
        event.query_chars,
        event.query_text,
        event.query_type,
        event.candidate_count,
        json.dumps(list(event.selected_skills), ensure_ascii=False),
        json.dumps(event.score_breakdown, ensure_ascii=False),
        event.routing_reason,
        event.latency_ms,
        event.tokens_in,
        event.tokens_out,
        event.execution_result,
        int(event.fallback_used),
        event.model_id,
    )


def _json(value: Any) -> Any:
    if value is None:
        return None
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return None


class SqlRouteLog(RouteLog):
    def __init__(self, store: Database) -> None:
        self.store = store

    def write(
        self, items: Sequence[tuple[RouteEvent, Sequence[str]]], *, update_stats: bool = True
    ) -> int:
        if not items:
            return 0
        with self.store.transaction(sync=False) as conn:
            inserted = _insert_events(conn, [event for event, _ in items])
            if update_stats and inserted:
                counts, last = route_counts(items, inserted)
                add_route_counts(conn, counts, last)
        return len(inserted)

    def set_outcome(
        self,
        route_id: str,
        *,
        execution_result: str,
        tokens_in: int | None,
        tokens_out: int | None,
        fallback_used: bool | None,
    ) -> bool:
        with self.store.transaction(sync=False) as conn:
            cur = conn.execute(
                "UPDATE route_events SET execution_result = ?, "
                "tokens_in = COALESCE(?, tokens_in), tokens_out = COALESCE(?, tokens_out), "
                "fallback_used = COALESCE(?, fallback_used) WHERE route_id = ?",
                (
                    execution_result,
                    tokens_in,
                    tokens_out,
                    None if fallback_used is None else int(fallback_used),
                    route_id,
                ),
            )
            return cur.rowcount > 0

    def latest(self, limit: int) -> list[RouteEvent]:
        rows = (
            self.store.connection()
            .execute(
                f"SELECT {_EVENT_COLUMNS} FROM route_events ORDER BY ts DESC LIMIT ?", (limit,)
            )
            .fetchall()
        )
        out = []
        for r in rows:
            values = list(r)
            values[9] = tuple(json.loads(values[9]))
            values[10] = json.loads(values[10])
            values[16] = bool(values[16])
            out.append(RouteEvent(*values))
        return out

    def exists(self, route_id: str) -> bool:
        try:
            row = (
                self.store.connection()
                .execute("SELECT 1 FROM route_events WHERE route_id = ? LIMIT 1", (route_id,))
                .fetchone()
            )
        except StoreError as exc:
            if missing_table(exc):
                return False
            raise
        return row is not None

    def since(self, since: float | None, *, with_breakdown: bool = False) -> Iterator[StoredRoute]:
        sql = (
            f"SELECT {_STATS_COLUMNS}"
            + (", score_breakdown, query_text" if with_breakdown else "")
            + " FROM route_events"
        )
        params: tuple[float, ...] = ()
        if since is not None:
            sql += " WHERE ts >= ?"
            params = (since,)
        sql += " ORDER BY ts"
        try:
            rows = self.store.connection().execute(sql, params)
        except StoreError as exc:
            if missing_table(exc):
                return  # a read-only store of an older schema: nothing was recorded
            raise
        for row in rows:
            yield StoredRoute(
                route_id=row["route_id"],
                ts=float(row["ts"]),
                config_id=row["config_id"],
                query_type=row["query_type"],
                candidate_count=row["candidate_count"],
                selected_skills=_json(row["selected_skills"]),
                latency_ms=row["latency_ms"],
                tokens_in=row["tokens_in"],
                tokens_out=row["tokens_out"],
                execution_result=row["execution_result"],
                fallback_used=bool(row["fallback_used"]),
                score_breakdown=_json(row["score_breakdown"]) if with_breakdown else None,
                query_text=row["query_text"] if with_breakdown else None,
            )


def _insert_events(conn: Connection, events: Sequence[RouteEvent]) -> set[str]:
    inserted: set[str] = set()
    for start in range(0, len(events), _INSERT_CHUNK):
        chunk = events[start : start + _INSERT_CHUNK]
        params = [value for event in chunk for value in _event_row(event)]
        rows = conn.execute(
            f"INSERT INTO route_events({_EVENT_COLUMNS}) VALUES "
            + ", ".join([_EVENT_PARAMS] * len(chunk))
            + " ON CONFLICT(route_id) DO NOTHING RETURNING route_id",
            params,
        ).fetchall()
        inserted.update(str(r[0]) for r in rows)
    return inserted
