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
import time
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from skillrt.errors import StoreError
from skillrt.score_terms import SCORE_TERMS
from skillrt.store.counters import TelemetryWarning
from skillrt.store.routes import RouteEvent

if TYPE_CHECKING:
    from skillrt.routing.plan import RouteResult
    from skillrt.store.base import Store

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
            **{t.name: round(getattr(s, t.name), 4) for t in SCORE_TERMS},
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


def write_route_events(
    store: Store,
    items: Sequence[tuple[RouteEvent, Sequence[str]]],
    *,
    update_stats: bool = True,
) -> int:
    """Insert ``(event, candidate names)`` items in one transaction; how many were new.

    Raises ``StoreError`` (nothing is written then).
    """
    return store.routes.write(items, update_stats=update_stats)


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
        return store.routes.set_outcome(
            route_id,
            execution_result=execution_result,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            fallback_used=fallback_used,
        )
    except (StoreError, OSError) as exc:
        _warn(f"outcome of route {route_id} was not recorded: {exc}")
        return False


def list_route_events(store: Store, *, limit: int = 100) -> list[RouteEvent]:
    """The latest route events, newest first."""
    return store.routes.latest(limit)


def _warn(message: str) -> None:
    warnings.warn(message, TelemetryWarning, stacklevel=3)
