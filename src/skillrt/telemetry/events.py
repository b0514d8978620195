"""Route events (T1, seed 001 §14): one ``route_events`` row per route.

Every route records ``route_id``, ``query_type``, ``candidate_count``,
``selected_skills``, ``score_breakdown``, ``latency_ms``, ``tokens_in/out``,
``execution_result`` and ``fallback_used`` (the last three start as NULL/"pending"/0
and are filled by :func:`record_route_outcome` once the plan ran), plus the serving
``config_id``, the ``surface`` (cli, library, mcp, eval) and the embedding model.

Privacy: by default only the query's sha256 and length are stored, never its text;
``routing.record_query_text: true`` keeps the text too.

Recording never fails or blocks a route: a locked, read-only or broken store costs a
:class:`TelemetryWarning` and the event, nothing else.

:func:`write_route_events` writes a batch in one transaction and is idempotent: an
event already stored (a batch retried after a commit whose answer was lost) is skipped,
and only the events it inserts are counted in the skill stats.
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skillrt.errors import StoreError
from skillrt.telemetry.stats import add_route_counts

if TYPE_CHECKING:
    from skillrt.routing.plan import RouteResult
    from skillrt.store.base import Connection, Store

__all__ = [
    "RouteEvent",
    "TelemetryWarning",
    "event_summary",
    "list_route_events",
    "query_type",
    "record_route",
    "record_route_outcome",
    "route_event",
    "write_route_events",
]

#: Candidates kept in a stored score breakdown (the best ones; the count is stored too).
MAX_BREAKDOWN = 20
EXECUTION_RESULTS = ("pending", "success", "retryable_failure", "fatal_failure", "fallback", "exit")


class TelemetryWarning(RuntimeWarning):
    """A route event or stats update could not be written; the route itself is unaffected."""


@dataclass(frozen=True)
class RouteEvent:
    """One row of ``route_events``."""

    route_id: str
    ts: float
    surface: str
    config_id: str
    query_hash: str
    query_chars: int
    query_text: str | None
    query_type: str
    candidate_count: int
    selected_skills: tuple[str, ...]
    score_breakdown: dict[str, dict[str, Any]]
    routing_reason: str
    latency_ms: float
    tokens_in: int | None = None
    tokens_out: int | None = None
    execution_result: str = "pending"
    fallback_used: bool = False
    model_id: str | None = None


def query_type(result: RouteResult) -> str:
    """``explicit`` (a forced skill runs), ``multi``, ``single`` or ``none`` (no skill)."""
    plan = result.plan
    if plan.no_skill:
        return "none"
    if any(s.forced for s in plan.skills):
        return "explicit"
    return "multi" if len(plan.skills) > 1 else "single"


def route_event(
    result: RouteResult,
    *,
    surface: str,
    model_id: str | None = None,
    record_query_text: bool = False,
    at: float | None = None,
) -> RouteEvent:
    """The event of one route result (nothing is written)."""
    breakdown: dict[str, dict[str, Any]] = {}
    for c in result.candidates[:MAX_BREAKDOWN]:
        s = c.score
        breakdown[c.name] = {
            "intent_match": round(s.intent_match, 4),
            "trigger_match": round(s.trigger_match, 4),
            "success_rate": round(s.success_rate, 4),
            "context_readiness": round(s.context_readiness, 4),
            "cost_penalty": round(s.cost_penalty, 4),
            "conflict_penalty": round(s.conflict_penalty, 4),
            "total": round(s.total, 4),
            "status": c.status,
            "sources": list(c.sources),
        }
    return RouteEvent(
        route_id=result.route_id,
        ts=time.time() if at is None else at,
        surface=surface,
        config_id=result.config_id,
        query_hash=hashlib.sha256(result.query.encode("utf-8")).hexdigest(),
        query_chars=len(result.query),
        # NUL is text to SQLite but not to PostgreSQL: never let one cost the event.
        query_text=result.query.replace("\x00", "\ufffd") if record_query_text else None,
        query_type=query_type(result),
        candidate_count=len(result.candidates),
        selected_skills=result.plan.names,
        score_breakdown=breakdown,
        routing_reason=result.routing_reason,
        latency_ms=round(result.latency_ms, 3),
        model_id=model_id,
    )


def event_summary(event: RouteEvent, *, recorded: bool, queued: bool = False) -> dict[str, Any]:
    """The event as a route result carries it (``events``), without the breakdown."""
    from dataclasses import fields

    # Shallow: the breakdown (the only nested value) is left out; the candidates carry it.
    data = {f.name: getattr(event, f.name) for f in fields(event) if f.name != "score_breakdown"}
    data["selected_skills"] = list(event.selected_skills)
    head: dict[str, Any] = {"event": "route", "table": "route_events", "recorded": recorded}
    if queued:
        head["queued"] = True
    return {**head, **data}


def record_route(
    store: Store | None,
    result: RouteResult,
    *,
    surface: str,
    model_id: str | None = None,
    record_query_text: bool = False,
    update_stats: bool = True,
) -> RouteEvent | None:
    """Write the route's event (and per-skill route counts); None when it could not be."""
    if store is None:
        return None
    event = route_event(
        result, surface=surface, model_id=model_id, record_query_text=record_query_text
    )
    candidates = [c.name for c in result.candidates]
    try:
        write_route_events(store, [(event, candidates)], update_stats=update_stats)
    except (StoreError, OSError) as exc:
        _warn(f"route {result.route_id} was not recorded: {exc}")
        from skillrt.telemetry.outbox import outbox_for

        outbox = outbox_for(store)
        if outbox is not None:  # counted, so `skillrt stats` can say so
            outbox.count_lost(1, f"not recorded: {exc}")
        return None
    return event


_EVENT_COLUMNS = (
    "route_id, ts, surface, config_id, query_hash, query_chars, query_text, query_type, "
    "candidate_count, selected_skills, score_breakdown, routing_reason, latency_ms, "
    "tokens_in, tokens_out, execution_result, fallback_used, model_id"
)
_EVENT_PARAMS = "(" + ", ".join("?" * 18) + ")"
#: Events per INSERT statement (18 parameters each; SQLite allows 32766 per statement).
_INSERT_CHUNK = 50


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


def write_route_events(
    store: Store,
    items: Sequence[tuple[RouteEvent, Sequence[str]]],
    *,
    update_stats: bool = True,
) -> int:
    """Insert ``(event, candidate names)`` items in one transaction; how many were new.

    Raises ``StoreError`` (nothing is written then).
    """
    if not items:
        return 0
    with store.transaction(sync=False) as conn:
        inserted = _insert_events(conn, [event for event, _ in items])
        if update_stats and inserted:
            counts: dict[str, tuple[int, int]] = {}
            last = 0.0
            for event, candidates in items:
                if event.route_id not in inserted:
                    continue
                last = max(last, event.ts)
                chosen = set(event.selected_skills)
                for name in dict.fromkeys([*candidates, *event.selected_skills]):
                    r, s = counts.get(name, (0, 0))
                    counts[name] = (r + 1, s + int(name in chosen))
            add_route_counts(conn, counts, last)
    return len(inserted)


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


def record_route_outcome(
    store: Store,
    route_id: str,
    *,
    execution_result: str,
    tokens_in: int | None = None,
    tokens_out: int | None = None,
    fallback_used: bool | None = None,
) -> bool:
    """Fill in how the plan of ``route_id`` ran; False when the route or store is missing."""
    if execution_result not in EXECUTION_RESULTS:
        raise ValueError(
            f"execution_result must be one of {', '.join(EXECUTION_RESULTS)}, "
            f"got {execution_result!r}"
        )
    try:
        with store.transaction(sync=False) as conn:
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
    except (StoreError, OSError) as exc:
        _warn(f"outcome of route {route_id} was not recorded: {exc}")
        return False


def list_route_events(store: Store, *, limit: int = 100) -> list[RouteEvent]:
    """The latest route events, newest first."""
    rows = (
        store.connection()
        .execute(
            "SELECT route_id, ts, surface, config_id, query_hash, query_chars, query_text, "
            "query_type, candidate_count, selected_skills, score_breakdown, routing_reason, "
            "latency_ms, tokens_in, tokens_out, execution_result, fallback_used, model_id "
            "FROM route_events ORDER BY ts DESC LIMIT ?",
            (limit,),
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


def _warn(message: str) -> None:
    warnings.warn(message, TelemetryWarning, stacklevel=3)
