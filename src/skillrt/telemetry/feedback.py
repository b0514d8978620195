"""Recorded right answers for routes: what ``selection_precision`` is computed from.

``skillrt feedback ROUTE_ID --correct NAME`` (repeatable, for multi-skill plans) or
``--none`` ("no skill was right") stores one row per route; recording again replaces it.
The route must exist in the route events and every name must be a known skill; names are
stored qualified (``ns:name``) so they compare with what the router selected.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from skillrt.errors import RouteNotFound, StoreError, UsageError
from skillrt.skills.registry import SkillRegistry
from skillrt.store.base import Store

#: The router's table of route events (migration slot 3).
ROUTE_EVENTS = "route_events"


@dataclass(frozen=True)
class Feedback:
    """The right answer for one route: skills (qualified names), or none."""

    route_id: str
    #: The skills that should have been selected; empty means "no skill".
    correct: tuple[str, ...]
    source: str = "cli"
    note: str | None = None
    created_at: float = 0.0

    @property
    def none(self) -> bool:
        return not self.correct


def _no_table(exc: StoreError) -> bool:
    """The error says the table does not exist (SQLite's or PostgreSQL's words)."""
    text = str(exc)
    return "no such table" in text or "does not exist" in text


def route_exists(store: Store, route_id: str) -> bool:
    try:
        row = (
            store.connection()
            .execute(f"SELECT 1 FROM {ROUTE_EVENTS} WHERE route_id = ? LIMIT 1", (route_id,))
            .fetchone()
        )
    except StoreError as exc:
        if _no_table(exc):
            return False
        raise
    return row is not None


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
    with store.transaction(sync=False) as conn:
        conn.execute(
            "INSERT INTO route_feedback(route_id, correct, source, note, created_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT(route_id) DO UPDATE SET "
            "correct = excluded.correct, source = excluded.source, note = excluded.note, "
            "created_at = excluded.created_at",
            (fb.route_id, json.dumps(list(fb.correct)), fb.source, fb.note, fb.created_at),
        )
    return fb


def load_feedback(store: Store, since: float | None = None) -> dict[str, Feedback]:
    """Every recorded answer (optionally only those recorded after ``since``)."""
    sql = "SELECT route_id, correct, source, note, created_at FROM route_feedback"
    params: tuple[float, ...] = ()
    if since is not None:
        sql += " WHERE created_at >= ?"
        params = (since,)
    out: dict[str, Feedback] = {}
    for row in store.connection().execute(sql, params):
        try:
            correct = tuple(str(n) for n in json.loads(row["correct"]))
        except (ValueError, TypeError):
            continue  # a hand-edited row must not break stats
        out[row["route_id"]] = Feedback(
            row["route_id"], correct, row["source"], row["note"], float(row["created_at"])
        )
    return out
