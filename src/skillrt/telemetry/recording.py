"""Recording a route's T1 event (seed 001 §14) after the router answered.

The router never writes; the surface that routed (the facade, the MCP server) records
the result here, or hands it to the background :class:`~skillrt.telemetry.writer.RouteEventWriter`.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import TYPE_CHECKING

from skillrt.telemetry.events import record_route, route_event

if TYPE_CHECKING:
    from skillrt.routing.plan import RouteResult
    from skillrt.store.sqlite import Store

__all__ = ["record_result"]


def record_result(
    store: Store | None,
    result: RouteResult,
    *,
    surface: str,
    model_id: str | None = None,
    record_query_text: bool = False,
) -> RouteResult:
    """Write ``result``'s event and return the result with it in ``events``.

    A store that cannot be written (or none) never fails the route: the event is still
    attached, marked ``recorded: false``.
    """
    event = record_route(
        store, result, surface=surface, model_id=model_id, record_query_text=record_query_text
    )
    recorded = event is not None
    if event is None:
        event = route_event(result, surface=surface, model_id=model_id)
    data = asdict(event)
    data["selected_skills"] = list(event.selected_skills)
    data.pop("score_breakdown", None)  # the candidates carry it already
    data = {"event": "route", "table": "route_events", "recorded": recorded, **data}
    return replace(result, events=(data,))
