"""Recorded right answers for routes: what ``selection_precision`` is computed from.

``skillrt feedback ROUTE_ID --correct NAME`` (repeatable, for multi-skill plans) or
``--none`` ("no skill was right") stores one row per route; recording again replaces it.
The route must exist in the route events and every name must be a known skill; names are
stored qualified (``ns:name``) so they compare with what the router selected.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from skillrt.errors import RouteNotFound, UsageError
from skillrt.skills.registry import SkillRegistry
from skillrt.store.base import Store
from skillrt.store.feedback import Feedback

__all__ = ["Feedback", "load_feedback", "record_feedback", "route_exists"]


def route_exists(store: Store, route_id: str) -> bool:
    return store.routes.exists(route_id)


def record_feedback(
    store: Store,
    registry: SkillRegistry,
    route_id: str,
    *,
    correct: Sequence[str] = (),
    none: bool = False,
    source: str = "cli",
    note: str | None = None,
) -> Feedback:
    """Validate and store the right answer for ``route_id`` (the latest answer wins)."""
    if bool(correct) == bool(none):
        raise UsageError(
            "give the right skill(s) with correct=[...] or say none=True (not both)",
            route_id=route_id,
        )
    if not route_id or not route_exists(store, route_id):
        raise RouteNotFound(
            f"no route with id '{route_id}' was recorded (see `skillrt stats` or the "
            "route_id of a `skillrt route --json` answer)",
            route_id=route_id,
        )
    names: list[str] = []
    for name in correct:
        qualified = registry.get(name).qualified_name  # SkillNotFound / AmbiguousSkill
        if qualified not in names:
            names.append(qualified)
    fb = Feedback(route_id, tuple(names), source, note, time.time())
    store.feedback.put(fb)
    return fb


def load_feedback(store: Store, since: float | None = None) -> dict[str, Feedback]:
    """Every recorded answer (optionally only those recorded after ``since``)."""
    return store.feedback.load(since)
