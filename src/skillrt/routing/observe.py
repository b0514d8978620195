"""Who hears of a route: observers the router calls once each route is decided, as
httpx calls its ``event_hooks`` inside its send chain.

An observer is given at construction (``Router(..., on_route=[...])``); the router
calls each with the result and what it knows of the route (:class:`RouteSeen`), and
attaches what they return to ``RouteResult.events``. Recording a route's T1 event is
one (:class:`skillrt.telemetry.recording.RouteRecorder`); the router itself never
writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from skillrt.routing.plan import RouteResult

__all__ = ["RouteObserver", "RouteSeen"]


@dataclass(frozen=True)
class RouteSeen:
    """What an observer is told of a route beside its result."""

    #: Where the request came from (``cli``, ``library``, ``mcp``, ``hook``...).
    surface: str
    #: The model that encoded the request (``lexical`` without one).
    model_id: str
    #: The caller's say on recording: None leaves it to the observer's configuration,
    #: False means the caller records the route itself (off the request path).
    record: bool | None = None


class RouteObserver(Protocol):
    """Hears of each route; returns what it recorded, for ``RouteResult.events``."""

    def __call__(self, result: RouteResult, seen: RouteSeen) -> Sequence[dict[str, Any]]: ...
