"""Per-skill counters (T2): how often a skill was routed, selected, run, and succeeded.

The router reads them for the ``success_rate`` term and cold-start damping; the
dispatcher calls :func:`record_execution` after each run. The store keeps them
(:attr:`Store.stats <skillrt.store.base.Store.stats>`), keyed by qualified skill name;
route counts are added with the route events (:mod:`skillrt.telemetry.events`).
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Iterable

from skillrt.errors import StoreError, StoreUnavailable
from skillrt.skills.model import Skill
from skillrt.store.base import Store
from skillrt.store.stats import SkillStats

__all__ = ["SkillStats", "record_execution", "skill_stats"]


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
        store.stats.add_execution(
            name,
            success=success,
            latency_ms=float(latency_ms or 0.0),
            tokens_in=int(tokens_in or 0),
            tokens_out=int(tokens_out or 0),
            fallback_used=fallback_used,
            at=time.time(),
        )
    except StoreError as exc:
        raise type(exc)(
            f"cannot record stats for {name}: {exc.message}", **{**exc.context, "skill": name}
        ) from exc


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
        return store.stats.read(names)
    except StoreError as exc:
        raise type(exc)(f"cannot read skill stats: {exc.message}", **exc.context) from exc
