"""``skillrt stats``: read route events and feedback from the store, compute the metrics.

Route events are the router's (:attr:`Store.routes <skillrt.store.base.Store.routes>`);
this module only reads them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

from skillrt.config import TelemetryConfig
from skillrt.errors import SkillrtError, UsageError
from skillrt.skills.registry import SkillRegistry
from skillrt.store.base import Store
from skillrt.telemetry.feedback import load_feedback
from skillrt.telemetry.metrics import (
    RouteRecord,
    StatsReport,
    by_config,
    compute_metrics,
    skill_metrics,
    trigger_stats,
)
from skillrt.telemetry.outbox import outbox_for

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*$", re.IGNORECASE)
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(value: str | None, *, now: float | None = None) -> float | None:
    """``--since``: an ISO date/time (UTC when no zone) or a duration back from now
    (``90s``, ``30m``, ``24h``, ``7d``, ``2w``). Returns a Unix timestamp."""
    if value is None or not value.strip():
        return None
    m = _DURATION.match(value)
    if m:
        return (now if now is not None else time.time()) - float(m.group(1)) * _UNIT_S[
            m.group(2).lower()
        ]
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(
            f"--since {value!r}: give an ISO date/time (2026-01-31, 2026-01-31T09:00) or a "
            "duration (30m, 24h, 7d, 2w)",
            since=value,
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _names(selected: Any) -> tuple[str, ...]:
    out: list[str] = []
    for item in selected if isinstance(selected, list) else []:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            out.append(item["name"])
    return tuple(out)


def triggers_fired(
    breakdown: Any,
    query_text: str | None = None,
    phrases_of: Callable[[str, str], list[str]] | None = None,
) -> tuple[tuple[str, str], ...]:
    """``(skill, trigger)`` pairs from a route's recorded score breakdown.

    A candidate fired a trigger when its ``trigger_match`` is positive or the rule stage
    recalled it (``sources`` has ``rule``). The phrases come from the entry when the
    router recorded them (``triggers`` / ``matched_triggers``); otherwise, when the query
    text was kept (``routing.record_query_text``), ``phrases_of(skill, text)`` re-matches
    the skill's trigger phrases; failing both, the hit counts as the skill's ``*``.
    """
    entries: list[Any]
    if isinstance(breakdown, dict):
        entries = breakdown.get("candidates") or [
            {"name": k, **v} if isinstance(v, dict) else {"name": k} for k, v in breakdown.items()
        ]
    elif isinstance(breakdown, list):
        entries = breakdown
    else:
        return ()
    pairs: list[tuple[str, str]] = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        name = entry["name"]
        phrases: list[str] = []
        for holder in (entry, entry.get("signals"), entry.get("score")):
            if isinstance(holder, dict):
                for key in ("matched_triggers", "triggers", "trigger_hits"):
                    value = holder.get(key)
                    if isinstance(value, list):
                        phrases += [p for p in value if isinstance(p, str)]
        sources = entry.get("sources")
        rule = isinstance(sources, list) and "rule" in sources
        match = entry.get("trigger_match")
        hit = rule or (isinstance(match, (int, float)) and match > 0)
        if not phrases and hit:
            if query_text and phrases_of is not None:
                phrases = phrases_of(name, query_text)
            phrases = phrases or ["*"]
        pairs += [(name, p) for p in dict.fromkeys(phrases)]
    return tuple(pairs)


def trigger_matcher(registry: SkillRegistry) -> Callable[[str, str], list[str]]:
    """``(skill, text) -> the skill's trigger phrases found in text`` (router's matcher)."""
    from skillrt.routing.phrases import PhraseIndex

    cache: dict[str, PhraseIndex | None] = {}

    def phrases_of(name: str, text: str) -> list[str]:
        if name not in cache:
            try:
                triggers = registry.get(name).routing.triggers
            except SkillrtError:
                triggers = ()
            index = None
            if triggers:
                index = PhraseIndex()
                index.add_all(triggers, 0)
            cache[name] = index
        index = cache[name]
        return [] if index is None else [m.phrase for m in index.match(text)]

    return phrases_of


def iter_routes(
    store: Store,
    since: float | None = None,
    *,
    with_triggers: bool = False,
    phrases_of: Callable[[str, str], list[str]] | None = None,
) -> Iterator[RouteRecord]:
    """Route events recorded at or after ``since`` (all when None), oldest first."""
    for row in store.routes.since(since, with_breakdown=with_triggers):
        yield RouteRecord(
            route_id=row.route_id,
            ts=row.ts,
            selected=_names(row.selected_skills),
            latency_ms=float(row.latency_ms or 0.0),
            config_id=row.config_id or "default",
            query_type=row.query_type,
            candidate_count=int(row.candidate_count or 0),
            tokens_in=row.tokens_in,
            tokens_out=row.tokens_out,
            execution_result=row.execution_result,
            fallback_used=row.fallback_used,
            triggers=(
                triggers_fired(row.score_breakdown, row.query_text, phrases_of)
                if with_triggers
                else ()
            ),
        )


def build_report(
    store: Store,
    telemetry: TelemetryConfig,
    *,
    since: float | None = None,
    configs: bool = False,
    triggers: bool = False,
    registry: SkillRegistry | None = None,
) -> StatsReport:
    """Everything ``skillrt stats`` shows (``registry`` names trigger phrases)."""
    phrases_of = trigger_matcher(registry) if triggers and registry is not None else None
    routes = list(iter_routes(store, since, with_triggers=triggers, phrases_of=phrases_of))
    feedback = load_feedback(store)
    outbox = outbox_for(store)
    return StatsReport(
        unrecorded=outbox.summary() if outbox is not None else None,
        since=since,
        overall=compute_metrics(routes, feedback),
        skills=tuple(skill_metrics(routes, feedback)),
        by_config=by_config(routes, feedback) if configs else {},
        triggers=(
            tuple(
                trigger_stats(
                    routes,
                    feedback,
                    min_fires=telemetry.prune_min_fires,
                    max_success_rate=telemetry.prune_max_success_rate,
                    min_correction_rate=telemetry.prune_min_correction_rate,
                )
            )
            if triggers
            else None
        ),
    )
