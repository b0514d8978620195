"""Which score term decided between two candidates, in log-odds (``route --why-not``).

A candidate's total is one number made of its six terms (:mod:`skillrt.routing.scoring`),
an anti-trigger factor and cold-start damping. What each part is worth to it is
measured the way the total is made, by taking that part away: its *weight* is
``logit(total) - logit(total with the part at its neutral value)`` (intent 0.5, no
trigger, no conflict, no damping, ...). Comparing the winner's weights with the
skill's gives each part's *gap*; the part with the largest gap decided, and a part
whose gap is not positive did not decide anything (it is never named as a reason).

Read-only: it calls the scoring functions the router uses and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from skillrt.config import RoutingConfig
from skillrt.routing.calibration import logit
from skillrt.routing.plan import ScoreBreakdown
from skillrt.routing.scoring import combine
from skillrt.routing.signals import SCORE_TERMS

__all__ = ["COLD_START", "Gap", "gaps", "part_weights", "undamped_total"]

#: The name of the cold-start part (not a score term: a factor on the total).
COLD_START = "cold_start"
_NEUTRAL = {t.name: t.neutral for t in SCORE_TERMS}


@dataclass(frozen=True)
class Gap:
    """How much more one part is worth to the winner than to the skill (log-odds)."""

    part: str
    gap: float
    winner: float
    skill: float


def _terms(score: ScoreBreakdown) -> dict[str, float]:
    return {t.name: float(getattr(score, t.name)) for t in SCORE_TERMS}


def _damping(score: ScoreBreakdown) -> float:
    return float(score.signals.get("cold_start_factor", 1.0))


def _total(terms: Mapping[str, float], config: RoutingConfig, damping: float) -> float:
    anti = terms["conflict_penalty"] < _NEUTRAL["conflict_penalty"]
    return combine(terms, config, anti_trigger=anti, damping=damping)


def part_weights(score: ScoreBreakdown, config: RoutingConfig) -> dict[str, float]:
    """What each term (and cold start) is worth to this total, in log-odds."""
    terms, damping = _terms(score), _damping(score)
    base = logit(_total(terms, config, damping))
    out: dict[str, float] = {}
    for t in SCORE_TERMS:
        neutral = {**terms, t.name: t.neutral}
        out[t.name] = base - logit(_total(neutral, config, damping))
    out[COLD_START] = base - logit(_total(terms, config, 1.0))
    return out


def undamped_total(score: ScoreBreakdown, config: RoutingConfig) -> float:
    """The total without cold-start damping."""
    return _total(_terms(score), config, 1.0)


def gaps(winner: ScoreBreakdown, skill: ScoreBreakdown, config: RoutingConfig) -> list[Gap]:
    """Every part that favours the winner, largest gap first (the first decided)."""
    w, s = part_weights(winner, config), part_weights(skill, config)
    out = [Gap(name, w[name] - s[name], w[name], s[name]) for name in w]
    return sorted((g for g in out if g.gap > 1e-3), key=lambda g: (-g.gap, g.part))
