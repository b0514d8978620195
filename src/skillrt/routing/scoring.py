"""Stage 2 scoring (seed 001 §6.2): six terms, their weights, and one calibrated total.

Each term is in 0..1. The seed's weighted sum ``0.40·intent + 0.20·trigger + ...`` is
reported as the ``weighted_sum`` signal, but it is not a probability: a skill with no
trigger, no history and a medium cost could never reach 0.65 however sure the intent.
The total therefore keeps the weights' *relative* say and anchors the scale on the
calibrated intent:

    logit(total) = logit(intent_match)
                   + evidence_scale · Σ_{t ≠ intent} (w_t / w_intent) · (term_t − neutral_t)

A term at its neutral value (no trigger, no stats, no history, medium cost, no
conflict) moves nothing, so ``total == intent_match`` for a plain skill and the
threshold keeps its calibrated meaning. A trigger hit adds
``evidence_scale · 0.20/0.40 = 2.5`` log-odds by default (0.3 -> 0.9). Then:

* an anti-trigger hit multiplies the total by ``anti_trigger_factor`` (0.25): a strong
  penalty that only the user's explicit words override;
* cold start (seed 001 §15) multiplies it by ``1 − max_damping · (1 − routes/N)`` for
  a skill seen in fewer than N routes, so a new skill cannot take the top spot on a
  borderline match while it has no track record. Never applied to a forced skill.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from skillrt.config import RoutingConfig, RoutingWeights
from skillrt.routing.calibration import logit, sigmoid
from skillrt.routing.signals import SCORE_TERMS, weights_of

__all__ = ["COST_VALUE", "NEUTRAL", "Terms", "cold_start_factor", "combine", "success_term"]

#: cost_hint -> cost term (higher is better: cheaper).
COST_VALUE = {"low": 1.0, "medium": 0.5, "high": 0.0}
#: The value of each non-intent term that carries no information.
NEUTRAL = {t.name: t.neutral for t in SCORE_TERMS if t.name != "intent_match"}
#: Pseudo-counts of the success-rate prior (Beta(1, 1): unknown = 0.5).
PRIOR_SUCCESSES = 1.0
PRIOR_FAILURES = 1.0

#: The six terms of one candidate by name (:data:`~skillrt.routing.signals.SCORE_TERMS`),
#: each in 0..1.
Terms = Mapping[str, float]


def success_term(successes: int, failures: int) -> float:
    """Smoothed success rate: (s + 1) / (s + f + 2); 0.5 with no executions."""
    return (successes + PRIOR_SUCCESSES) / (successes + failures + PRIOR_SUCCESSES + PRIOR_FAILURES)


def cold_start_factor(routes: int, config: RoutingConfig) -> float:
    """Multiplier on the total of a skill seen in ``routes`` routes (1.0 once warm)."""
    n = config.cold_start_requests
    if not config.cold_start or n <= 0 or routes >= n:
        return 1.0
    return 1.0 - config.cold_start_max_damping * (1.0 - max(routes, 0) / n)


def weighted_sum(terms: Terms, weights: RoutingWeights) -> float:
    """The seed's literal formula (reported as a signal, not used for decisions)."""
    return sum(w * terms[name] for name, w in weights_of(weights).items())


@lru_cache(maxsize=64)
def _relative_weights(weights: RoutingWeights) -> tuple[tuple[str, float, float], ...]:
    """Each non-intent term's weight relative to intent's, with its neutral value (the
    hot loop of a route: computed once per weights)."""
    w = weights_of(weights)
    anchor = w["intent_match"] if w["intent_match"] > 0 else 1.0
    return tuple((name, w[name] / anchor, neutral) for name, neutral in NEUTRAL.items())


def combine(
    terms: Terms,
    config: RoutingConfig,
    *,
    anti_trigger: bool = False,
    damping: float = 1.0,
) -> float:
    """The calibrated total in 0..1 (see the module docstring)."""
    shift = 0.0
    for name, weight, neutral in _relative_weights(config.weights):
        shift += weight * (terms[name] - neutral)
    total = sigmoid(logit(terms["intent_match"]) + config.evidence_scale * shift)
    if anti_trigger:
        total *= config.anti_trigger_factor
    return max(0.0, min(1.0, total * damping))
