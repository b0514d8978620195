"""Recording a route's T1 event (seed 001 §14) once the router decided it.

The router never writes: :class:`RouteRecorder` is the observer the runtime gives its
router (``on_route``), and records each route in the request or hands it to the
background :class:`~skillrt.telemetry.writer.RouteEventWriter`; :func:`record_result`
records one result for a caller that routed without it.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from skillrt.telemetry.events import record_route, route_event

if TYPE_CHECKING:
    from skillrt.config import TelemetryConfig
    from skillrt.routing.observe import RouteSeen
    from skillrt.routing.plan import RouteResult
    from skillrt.store.base import Store
    from skillrt.telemetry.writer import RouteEventWriter

__all__ = ["RouteRecorder", "record_result"]


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


class RouteRecorder:
    """Records each route's T1 event, as an observer the router calls
    (``Router(on_route=[recorder])``, :mod:`skillrt.routing.observe`): in the request on
    a local store, through a background :class:`RouteEventWriter` on a store written
    over the network (the route never waits on it).

    Whether a route is recorded: the caller's ``record`` (:class:`RouteSeen`), else
    ``telemetry.enabled``. The runtime's router has one, so a route is recorded the same
    way whoever asked for it (the facade's ``route``, the dispatch service's planning,
    a turn's context).
    """

    def __init__(
        self, store: Store, telemetry: TelemetryConfig, *, record_query_text: bool = False
    ) -> None:
        self.store = store
        self.telemetry = telemetry
        self.record_query_text = record_query_text
        self._events: RouteEventWriter | None = None

    def __call__(self, result: RouteResult, seen: RouteSeen) -> tuple[dict[str, Any], ...]:
        """Record ``result`` (unless told not to); what was recorded, for its ``events``."""
        if not (self.telemetry.enabled if seen.record is None else seen.record):
            return ()
        writer = self._writer()
        if writer is not None:  # a shared store: off the request path
            return _queued(writer, result, seen.surface, seen.model_id)
        recorded = record_result(
            self.store,
            result,
            surface=seen.surface,
            model_id=seen.model_id,
            record_query_text=self.record_query_text,
        )
        return tuple(recorded.events)

    def _writer(self) -> RouteEventWriter | None:
        if not self.store.background_writes:
            return None
        if self._events is None:
            from skillrt.telemetry.writer import RouteEventWriter

            self._events = RouteEventWriter(
                self.store,
                write_timeout_ms=self.telemetry.write_timeout_ms,
                record_query_text=self.record_query_text,
                read_only=self.store.read_only,
            )
        return self._events

    def flush_events(self, timeout_s: float = 10.0) -> bool:
        """Wait until queued route events are written (True when none is left)."""
        return self._events.flush(timeout_s) if self._events is not None else True

    def abandon_events(self, why: str) -> int:
        """For a process about to end at once: queued route events to the outbox now,
        never waiting on the store (:meth:`RouteEventWriter.abandon`)."""
        return self._events.abandon(why) if self._events is not None else 0

    def close(self, timeout_s: float | None = None) -> None:
        """Write the queued route events (waiting at most ``timeout_s``; default the
        writer's; what is left goes to the outbox) and stop the writer."""
        if self._events is not None:
            if timeout_s is None:
                self._events.close()
            else:
                self._events.close(timeout_s=timeout_s)
            self._events = None


def _queued(
    writer: RouteEventWriter, result: RouteResult, surface: str, model_id: str | None
) -> tuple[dict[str, Any], ...]:
    from skillrt.telemetry.events import event_summary

    event = writer.submit(result, surface=surface, model_id=model_id)
    if event is None:
        return ()
    return (event_summary(event, recorded=False, queued=True),)
