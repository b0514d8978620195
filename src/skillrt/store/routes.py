"""Route events (T1, seed 001 §14) as the store keeps them: :class:`RouteLog`.

One event per route; writing a batch also counts it in the per-skill stats
(:mod:`skillrt.store.stats`), in the same transaction, so a route is counted exactly
when its event is stored.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["RouteEvent", "RouteLog", "StoredRoute", "route_counts"]


@dataclass(frozen=True)
class RouteEvent:
    """One route event (a ``route_events`` row)."""

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


@dataclass(frozen=True)
class StoredRoute:
    """A stored route as ``skillrt stats`` reads it: a JSON value that does not decode
    is None (a hand-edited row never breaks the report)."""

    route_id: str
    ts: float
    config_id: str | None
    query_type: str
    candidate_count: int | None
    #: The decoded ``selected_skills`` (names, or ``{"name": ...}`` objects).
    selected_skills: Any
    latency_ms: float | None
    tokens_in: int | None
    tokens_out: int | None
    execution_result: str
    fallback_used: bool
    #: Read only when asked for (``with_breakdown``).
    score_breakdown: Any = None
    query_text: str | None = None


def route_counts(
    items: Sequence[tuple[RouteEvent, Sequence[str]]], new: set[str]
) -> tuple[dict[str, tuple[int, int]], float]:
    """What the events of ``items`` whose ids are in ``new`` add to the per-skill stats:
    ``(name -> (routes, selections), the latest event's time)``. Each candidate and
    each selected skill counts one route; each selected skill one selection."""
    counts: dict[str, tuple[int, int]] = {}
    last = 0.0
    for event, candidates in items:
        if event.route_id not in new:
            continue
        last = max(last, event.ts)
        chosen = set(event.selected_skills)
        for name in dict.fromkeys([*candidates, *event.selected_skills]):
            r, s = counts.get(name, (0, 0))
            counts[name] = (r + 1, s + int(name in chosen))
    return counts, last


class RouteLog(ABC):
    """Route events and their outcome."""

    @abstractmethod
    def write(
        self, items: Sequence[tuple[RouteEvent, Sequence[str]]], *, update_stats: bool = True
    ) -> int:
        """Store ``(event, candidate names)`` items in one transaction; how many were new.

        Idempotent: an event already stored (a batch retried after a commit whose answer
        was lost) is skipped, and only new events are counted in the per-skill stats
        (:func:`route_counts`; none with ``update_stats=False``). Raises ``StoreError``
        (nothing is written then).
        """

    @abstractmethod
    def set_outcome(
        self,
        route_id: str,
        *,
        execution_result: str,
        tokens_in: int | None,
        tokens_out: int | None,
        fallback_used: bool | None,
    ) -> bool:
        """Record how the plan of ``route_id`` ran (None keeps what is stored); False
        when no such route is stored."""

    @abstractmethod
    def latest(self, limit: int) -> list[RouteEvent]:
        """The latest events, newest first."""

    @abstractmethod
    def exists(self, route_id: str) -> bool:
        """Whether the route was recorded (False too for a store of a schema without
        route events)."""

    @abstractmethod
    def since(self, since: float | None, *, with_breakdown: bool = False) -> Iterator[StoredRoute]:
        """Events at or after ``since`` (all when None), oldest first; none for a store
        of a schema without route events. ``with_breakdown`` also reads the score
        breakdown and the query text."""
