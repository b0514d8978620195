"""Per-skill counters (T2): how often a skill was routed, selected, run, and succeeded.

The router reads them for the ``success_rate`` term and cold-start damping; the
dispatcher calls :func:`record_execution` after each run. Counters live in the
``skill_stats`` table (migration 3), keyed by qualified skill name.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from skillrt.errors import StoreError, StoreUnavailable
from skillrt.skills.model import Skill
from skillrt.store.base import Connection, Store

__all__ = ["SkillStats", "add_route_counts", "record_execution", "record_routes", "skill_stats"]

_COLUMNS = (
    "name, routes, selections, executions, successes, failures, fallbacks, "
    "latency_ms_total, tokens_in, tokens_out, last_routed_at, last_executed_at"
)
#: Names per ``IN (...)`` lookup (SQLite's host-parameter limit is 999 in old builds).
_CHUNK = 500


@dataclass(frozen=True)
class SkillStats:
    """Counters of one skill. ``routes`` counts the routes where it was a scored candidate."""

    name: str
    routes: int = 0
    selections: int = 0
    executions: int = 0
    successes: int = 0
    failures: int = 0
    fallbacks: int = 0
    latency_ms_total: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    last_routed_at: float | None = None
    last_executed_at: float | None = None

    @property
    def success_rate(self) -> float | None:
        """Successes / executions, or None before the first execution."""
        return self.successes / self.executions if self.executions else None

    @property
    def fallback_rate(self) -> float | None:
        return self.fallbacks / self.executions if self.executions else None

    @property
    def avg_latency_ms(self) -> float | None:
        return self.latency_ms_total / self.executions if self.executions else None

    @property
    def avg_tokens(self) -> float | None:
        return (self.tokens_in + self.tokens_out) / self.executions if self.executions else None


def _name(skill: Skill | str) -> str:
    return skill.qualified_name if isinstance(skill, Skill) else skill


def record_execution(
    store: Store,
    skill: Skill | str,
    *,
    success: bool,
    latency_ms: float = 0.0,
    tokens_in: int | None = 0,
    tokens_out: int | None = 0,
    fallback_used: bool = False,
) -> None:
    """Count one execution of ``skill`` (atomic upsert). Raises StoreError on failure."""
    name = _name(skill)
    try:
        with store.transaction(sync=False) as conn:
            conn.execute(
                "INSERT INTO skill_stats(name, executions, successes, failures, fallbacks, "
                "latency_ms_total, tokens_in, tokens_out, last_executed_at) "
                "VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET "
                "executions = skill_stats.executions + 1, "
                "successes = skill_stats.successes + excluded.successes, "
                "failures = skill_stats.failures + excluded.failures, "
                "fallbacks = skill_stats.fallbacks + excluded.fallbacks, "
                "latency_ms_total = skill_stats.latency_ms_total + excluded.latency_ms_total, "
                "tokens_in = skill_stats.tokens_in + excluded.tokens_in, "
                "tokens_out = skill_stats.tokens_out + excluded.tokens_out, "
                "last_executed_at = excluded.last_executed_at",
                (
                    name,
                    int(success),
                    int(not success),
                    int(fallback_used),
                    float(latency_ms or 0.0),
                    int(tokens_in or 0),
                    int(tokens_out or 0),
                    time.time(),
                ),
            )
    except StoreError as exc:
        raise type(exc)(
            f"cannot record stats for {name}: {exc.message}", **{**exc.context, "skill": name}
        ) from exc


def record_routes(
    conn: Connection,
    candidates: Iterable[str],
    selected: Sequence[str],
    *,
    at: float | None = None,
) -> None:
    """Count one route for each candidate and one selection for each selected skill.

    Runs on the caller's connection, inside the caller's transaction.
    """
    chosen = set(selected)
    names = dict.fromkeys([*candidates, *selected])
    add_route_counts(
        conn, {n: (1, int(n in chosen)) for n in names}, time.time() if at is None else at
    )


def add_route_counts(conn: Connection, counts: dict[str, tuple[int, int]], at: float) -> None:
    """Add ``(routes, selections)`` to each skill's counters, in one statement per skill.

    Each counter is bumped in place (``routes = routes + n``), so concurrent writers
    never lose a count; rows are touched in name order, so two writers never wait on
    each other's rows in a cycle (a deadlock, on PostgreSQL).
    """
    if not counts:
        return
    names = sorted(counts)
    for start in range(0, len(names), _CHUNK // 4):
        chunk = names[start : start + _CHUNK // 4]
        params = [v for name in chunk for v in (name, *counts[name], at)]
        # One statement per chunk; each name once in it (an upsert may not touch a row
        # twice in one statement on PostgreSQL).
        conn.execute(
            "INSERT INTO skill_stats(name, routes, selections, last_routed_at) VALUES "
            + ", ".join(["(?, ?, ?, ?)"] * len(chunk))
            + " ON CONFLICT(name) DO UPDATE SET routes = skill_stats.routes + excluded.routes, "
            "selections = skill_stats.selections + excluded.selections, "
            "last_routed_at = CASE WHEN skill_stats.last_routed_at IS NULL "
            "OR excluded.last_routed_at > skill_stats.last_routed_at "
            "THEN excluded.last_routed_at ELSE skill_stats.last_routed_at END",
            params,
        )


#: Seconds a shared store's per-skill stats are reused for routing. Route events reach
#: such a store through a background writer, so its stats are about this old anyway;
#: reusing them spares each route a round trip to the server. An embedded store is
#: read fresh every time.
SHARED_STATS_MAX_AGE_S = 1.0
#: Seconds a shared store that could not be read is not asked again for stats: routes
#: meanwhile use the stats last read (or none) without waiting on it.
SHARED_STATS_BACKOFF_S = 5.0


class _StatsCache:
    """Recently read stats of one store: name -> (stats or None, when read)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rows: dict[str, tuple[SkillStats | None, float]] = {}
        #: ``time.monotonic()`` before which the store is not asked again, and why.
        self.quiet_until = 0.0
        self.error: StoreUnavailable | None = None


_caches: weakref.WeakKeyDictionary[Store, _StatsCache] = weakref.WeakKeyDictionary()


def skill_stats(store: Store, names: Iterable[str] | None = None) -> dict[str, SkillStats]:
    """Stats by qualified name (all skills, or only ``names``); unseen skills are absent.

    All skills are always read fresh. Named skills of a store written in the background
    (PostgreSQL) may be up to :data:`SHARED_STATS_MAX_AGE_S` old; when such a store
    cannot be read (``StoreUnavailable``), the stats last read are returned instead
    (the error is raised only when none were ever read) and the store is left alone for
    :data:`SHARED_STATS_BACKOFF_S`.
    """
    if names is None or not store.background_writes:
        return _read(store, names)
    wanted = list(dict.fromkeys(names))
    cache = _caches.get(store)
    if cache is None:
        cache = _caches.setdefault(store, _StatsCache())
    now = time.monotonic()
    with cache.lock:
        quiet = now < cache.quiet_until
        stale = [
            n
            for n in wanted
            if n not in cache.rows or now - cache.rows[n][1] > SHARED_STATS_MAX_AGE_S
        ]
        known = any(n in cache.rows for n in wanted)
    if stale and quiet:  # the store was just found unreachable: use what is known
        if not known and cache.error is not None:
            raise cache.error
        stale = []
    if stale:
        try:
            fresh = _read(store, stale)
        except StoreUnavailable as exc:
            with cache.lock:
                cache.quiet_until = time.monotonic() + SHARED_STATS_BACKOFF_S
                cache.error = exc
                known = any(n in cache.rows for n in wanted)
            if not known:
                raise
        else:
            with cache.lock:
                for n in stale:
                    cache.rows[n] = (fresh.get(n), now)
    with cache.lock:
        return {n: st for n in wanted if n in cache.rows and (st := cache.rows[n][0]) is not None}


def _read(store: Store, names: Iterable[str] | None) -> dict[str, SkillStats]:
    try:
        conn = store.connection()
        if names is None:
            rows = conn.execute(f"SELECT {_COLUMNS} FROM skill_stats").fetchall()
        else:
            wanted = list(dict.fromkeys(names))
            rows = []
            for start in range(0, len(wanted), _CHUNK):
                chunk = wanted[start : start + _CHUNK]
                rows += conn.execute(
                    f"SELECT {_COLUMNS} FROM skill_stats WHERE name IN "
                    f"({', '.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
    except StoreError as exc:
        raise type(exc)(f"cannot read skill stats: {exc.message}", **exc.context) from exc
    return {row[0]: SkillStats(*tuple(row)) for row in rows}
