"""Recording a route's T1 event (seed 001 §14) after the router answered.

The router never writes; the surface that routed (the facade, the MCP server) records
the result here, or hands it to the background :class:`~skillrt.telemetry.writer.RouteEventWriter`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from skillrt.config import StateConfig
from skillrt.telemetry.events import record_route, route_event

if TYPE_CHECKING:
    from skillrt.config import TelemetryConfig
    from skillrt.routing.plan import RouteResult
    from skillrt.routing.router import Router
    from skillrt.store.base import Store
    from skillrt.telemetry.writer import RouteEventWriter

__all__ = ["RecordingRouter", "record_result"]


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


class RecordingRouter:
    """Routes through the current router and records each route's T1 event: in the
    request on a local store, through a background :class:`RouteEventWriter` on a store
    written over the network (the route never waits on it).

    On a store written over the network, a route waits on it (the enable state, when
    the skills are read for the first time, and per-skill stats) at most
    ``store_wait_s`` all told (:func:`~skillrt.store.base.patience`; default
    ``state.route_wait_s``): past it, the route goes on with every skill enabled and
    the stats last read (or none), so a store outage never holds a route.

    The facade's ``route`` and the dispatch service's planning both route through one
    of these, so a route is recorded the same way whoever asked for it.
    """

    def __init__(
        self,
        router: Callable[[], Router],
        store: Store,
        telemetry: TelemetryConfig,
        *,
        record_query_text: bool = False,
        store_wait_s: float | None = StateConfig.route_wait_s,
    ) -> None:
        self._router = router
        self.store = store
        self.telemetry = telemetry
        self.record_query_text = record_query_text
        self.store_wait_s = store_wait_s
        self._events: RouteEventWriter | None = None

    def route(
        self,
        query: str,
        *,
        history: Sequence[str | Mapping[str, Any]] | None = None,
        top_k: int | None = None,
        candidates: Sequence[str] | None = None,
        explain: bool = False,
        surface: str | None = None,
        record: bool | None = None,
    ) -> RouteResult:
        """Route one query and record its event (``record``: default
        ``telemetry.enabled``; False leaves recording to the caller)."""
        from skillrt.store.base import patience
        from skillrt.telemetry.otel import span

        surface = surface or "library"
        attrs = {"skillrt.surface": surface, "skillrt.query_chars": len(query)}
        with span("skillrt.route", attrs, enabled=self.telemetry.otel) as sp:
            # One budget for every wait on the store: building the router reads the
            # enable state (the first time), the route reads stats.
            with patience(self.store_wait_s if self.store.background_writes else None):
                router = self._router()
                result = router.route(
                    query,
                    history=history,
                    top_k=top_k,
                    candidates=candidates,
                    explain=explain,
                    surface=surface,
                )
            if self.telemetry.enabled if record is None else record:
                writer = self._writer()
                if writer is not None:  # a shared store: off the request path
                    result = _queued(writer, result, surface, router.index.model_id)
                else:
                    result = record_result(
                        self.store,
                        result,
                        surface=surface,
                        model_id=router.index.model_id,
                        record_query_text=router.config.record_query_text,
                    )
            sp.set_attribute("skillrt.route_id", result.route_id)
            return result

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
) -> RouteResult:
    from skillrt.telemetry.events import event_summary

    event = writer.submit(result, surface=surface, model_id=model_id)
    if event is None:
        return result
    return replace(result, events=(event_summary(event, recorded=False, queued=True),))
