"""Routing metrics (seed 001 §14, SPEC T2) over the recorded route events.

Definitions (every rate is a fraction in 0..1, ``None`` when its denominator is 0):

- ``trigger_rate``: routes that selected at least one skill / all routes.
- ``selection_precision``: routes with recorded feedback whose selected set equals the
  right answer (``--none`` feedback: nothing selected) / routes with feedback.
- ``success_rate``: routes whose execution succeeded / routes with an execution result.
- ``fallback_rate``: routes whose execution used a fallback / routes with an execution
  result.
- ``latency_ms``: p50 and p95 (nearest rank) of the routing latency, all routes.
- ``avg_token_cost``: mean ``tokens_in + tokens_out`` over routes that recorded tokens.

Per skill, the same numbers are computed over the routes that selected the skill, with
``precision`` = routes with feedback naming the skill as right / routes with feedback
that selected it, and ``missed`` = feedback naming the skill on routes that did not
select it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillrt.telemetry.feedback import Feedback

#: Execution results (the fallback FSM's final states, seed 001 §10, plus common
#: synonyms) counted as success / as a failure; anything else ("pending") is "not run".
SUCCESS_RESULTS = frozenset({"success", "succeeded", "ok", "completed"})
FAILURE_RESULTS = frozenset(
    {
        "exit",
        "fatal_failure",
        "retryable_failure",
        "fallback",
        "failure",
        "failed",
        "error",
        "timeout",
        "aborted",
        "ask_user",
    }
)


@dataclass(frozen=True)
class RouteRecord:
    """The fields of one route event the metrics need (seed 001 §14)."""

    route_id: str
    ts: float
    selected: tuple[str, ...]
    latency_ms: float
    config_id: str = "default"
    query_type: str | None = None
    candidate_count: int = 0
    tokens_in: int | None = None
    tokens_out: int | None = None
    execution_result: str | None = None
    fallback_used: bool = False
    #: ``(skill, trigger)`` pairs that fired (hard/rule recall) on this route.
    triggers: tuple[tuple[str, str], ...] = ()

    @property
    def executed(self) -> bool:
        r = (self.execution_result or "").lower()
        return r in SUCCESS_RESULTS or r in FAILURE_RESULTS

    @property
    def succeeded(self) -> bool:
        return (self.execution_result or "").lower() in SUCCESS_RESULTS

    @property
    def token_cost(self) -> int | None:
        if self.tokens_in is None and self.tokens_out is None:
            return None
        return (self.tokens_in or 0) + (self.tokens_out or 0)


@dataclass(frozen=True)
class Latency:
    p50: float | None
    p95: float | None
    max: float | None = None


@dataclass(frozen=True)
class Metrics:
    """The T2 metrics over one set of routes, with the counts behind them."""

    routes: int
    trigger_rate: float | None
    selection_precision: float | None
    success_rate: float | None
    fallback_rate: float | None
    latency_ms: Latency
    avg_token_cost: float | None
    #: Denominators, so a reader can judge each rate.
    triggered: int = 0
    with_feedback: int = 0
    executed: int = 0


@dataclass(frozen=True)
class SkillMetrics:
    """Metrics over the routes that selected one skill."""

    name: str
    selected: int
    selection_share: float | None
    precision: float | None
    success_rate: float | None
    fallback_rate: float | None
    latency_ms: Latency
    avg_token_cost: float | None
    with_feedback: int = 0
    executed: int = 0
    missed: int = 0


@dataclass(frozen=True)
class TriggerStat:
    """One trigger phrase of one skill: how often it fired and how its routes went."""

    skill: str
    trigger: str
    fires: int
    success_rate: float | None
    correction_rate: float | None
    executed: int
    with_feedback: int
    prune: bool
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class StatsReport:
    """What ``skillrt stats`` prints."""

    since: float | None
    overall: Metrics
    skills: tuple[SkillMetrics, ...]
    by_config: dict[str, Metrics] = field(default_factory=dict)
    triggers: tuple[TriggerStat, ...] | None = None
    #: Route events of this machine not in the store: ``pending`` (kept in the outbox
    #: until a writer reaches the store), ``lost`` (counted) and the ``outbox`` folder.
    unrecorded: dict[str, Any] | None = None


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..100) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return float(ordered[min(rank, len(ordered)) - 1])


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def _latency(values: Sequence[float]) -> Latency:
    return Latency(percentile(values, 50), percentile(values, 95), max(values) if values else None)


def _avg_tokens(routes: Sequence[RouteRecord]) -> float | None:
    costs = [c for c in (r.token_cost for r in routes) if c is not None]
    return sum(costs) / len(costs) if costs else None


def matches(selected: Iterable[str], fb: Feedback) -> bool:
    """The selection equals the right answer (as sets; ``none`` = nothing selected)."""
    return set(selected) == set(fb.correct)


def compute_metrics(routes: Sequence[RouteRecord], feedback: Mapping[str, Feedback]) -> Metrics:
    triggered = sum(1 for r in routes if r.selected)
    rated = [(r, feedback[r.route_id]) for r in routes if r.route_id in feedback]
    executed = [r for r in routes if r.executed]
    return Metrics(
        routes=len(routes),
        trigger_rate=_rate(triggered, len(routes)),
        selection_precision=_rate(sum(1 for r, fb in rated if matches(r.selected, fb)), len(rated)),
        success_rate=_rate(sum(1 for r in executed if r.succeeded), len(executed)),
        fallback_rate=_rate(sum(1 for r in executed if r.fallback_used), len(executed)),
        latency_ms=_latency([r.latency_ms for r in routes]),
        avg_token_cost=_avg_tokens(routes),
        triggered=triggered,
        with_feedback=len(rated),
        executed=len(executed),
    )


def skill_metrics(
    routes: Sequence[RouteRecord], feedback: Mapping[str, Feedback]
) -> list[SkillMetrics]:
    by_skill: dict[str, list[RouteRecord]] = {}
    for r in routes:
        for name in dict.fromkeys(r.selected):
            by_skill.setdefault(name, []).append(r)
    missed: dict[str, int] = {}
    for r in routes:
        fb = feedback.get(r.route_id)
        if fb is not None:
            for name in set(fb.correct) - set(r.selected):
                missed[name] = missed.get(name, 0) + 1
    out: list[SkillMetrics] = []
    for name in sorted(set(by_skill) | set(missed)):
        mine = by_skill.get(name, [])
        rated = [feedback[r.route_id] for r in mine if r.route_id in feedback]
        executed = [r for r in mine if r.executed]
        out.append(
            SkillMetrics(
                name=name,
                selected=len(mine),
                selection_share=_rate(len(mine), len(routes)),
                precision=_rate(sum(1 for fb in rated if name in fb.correct), len(rated)),
                success_rate=_rate(sum(1 for r in executed if r.succeeded), len(executed)),
                fallback_rate=_rate(sum(1 for r in executed if r.fallback_used), len(executed)),
                latency_ms=_latency([r.latency_ms for r in mine]),
                avg_token_cost=_avg_tokens(mine),
                with_feedback=len(rated),
                executed=len(executed),
                missed=missed.get(name, 0),
            )
        )
    out.sort(key=lambda m: (-m.selected, m.name))
    return out


def by_config(
    routes: Sequence[RouteRecord], feedback: Mapping[str, Feedback]
) -> dict[str, Metrics]:
    groups: dict[str, list[RouteRecord]] = {}
    for r in routes:
        groups.setdefault(r.config_id or "default", []).append(r)
    return {cid: compute_metrics(groups[cid], feedback) for cid in sorted(groups)}


def trigger_stats(
    routes: Sequence[RouteRecord],
    feedback: Mapping[str, Feedback],
    *,
    min_fires: int,
    max_success_rate: float,
    min_correction_rate: float,
) -> list[TriggerStat]:
    """Every trigger that fired, flagged for pruning per seed 001 §15.

    A trigger is flagged when it fired at least ``min_fires`` times and either the
    routes it fired on succeeded less than ``max_success_rate`` of the time, or feedback
    said its skill was wrong on more than ``min_correction_rate`` of them.
    """
    fired: dict[tuple[str, str], list[RouteRecord]] = {}
    for r in routes:
        for pair in dict.fromkeys(r.triggers):
            fired.setdefault(pair, []).append(r)
    out: list[TriggerStat] = []
    for (skill, trigger), mine in fired.items():
        executed = [r for r in mine if r.executed]
        rated = [feedback[r.route_id] for r in mine if r.route_id in feedback]
        success = _rate(sum(1 for r in executed if r.succeeded), len(executed))
        corrected = _rate(sum(1 for fb in rated if skill not in fb.correct), len(rated))
        reasons: list[str] = []
        if len(mine) >= min_fires:
            if success is not None and success < max_success_rate:
                reasons.append(f"success_rate {success:.2f} < {max_success_rate:.2f}")
            if corrected is not None and corrected > min_correction_rate:
                reasons.append(f"correction_rate {corrected:.2f} > {min_correction_rate:.2f}")
        out.append(
            TriggerStat(
                skill=skill,
                trigger=trigger,
                fires=len(mine),
                success_rate=success,
                correction_rate=corrected,
                executed=len(executed),
                with_feedback=len(rated),
                prune=bool(reasons),
                reasons=tuple(reasons),
            )
        )
    out.sort(key=lambda t: (not t.prune, -t.fires, t.skill, t.trigger))
    return out
