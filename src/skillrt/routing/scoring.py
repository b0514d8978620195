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

from dataclasses import dataclass

from skillrt.config import RoutingConfig, RoutingWeights
from skillrt.routing.calibration import logit, sigmoid

__all__ = ["COST_VALUE", "NEUTRAL", "Terms", "cold_start_factor", "combine", "success_term"]

#: cost_hint -> cost term (higher is better: cheaper).
COST_VALUE = {"low": 1.0, "medium": 0.5, "high": 0.0}
#: The value of each non-intent term that carries no information.
NEUTRAL = {
    "trigger_match": 0.0,
    "success_rate": 0.5,
    "context_readiness": 0.5,
    "cost_penalty": 0.5,
    "conflict_penalty": 1.0,
}
#: Pseudo-counts of the success-rate prior (Beta(1, 1): unknown = 0.5).
PRIOR_SUCCESSES = 1.0
PRIOR_FAILURES = 1.0


@dataclass(frozen=True)
class Terms:
    """The six terms for one candidate, each in 0..1."""

    intent_match: float
    trigger_match: float
    success_rate: float
    context_readiness: float
    cost_penalty: float
    conflict_penalty: float


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
    return (
        weights.intent_match * terms.intent_match
        + weights.trigger_match * terms.trigger_match
        + weights.success_rate * terms.success_rate
        + weights.context_readiness * terms.context_readiness
        + weights.cost_penalty * terms.cost_penalty
        + weights.conflict_penalty * terms.conflict_penalty
    )


def combine(
    terms: Terms,
    config: RoutingConfig,
    *,
    anti_trigger: bool = False,
    damping: float = 1.0,
) -> float:
    """The calibrated total in 0..1 (see the module docstring)."""
    w = config.weights
    anchor = w.intent_match if w.intent_match > 0 else 1.0
    shift = (
        w.trigger_match * (terms.trigger_match - NEUTRAL["trigger_match"])
        + w.success_rate * (terms.success_rate - NEUTRAL["success_rate"])
        + w.context_readiness * (terms.context_readiness - NEUTRAL["context_readiness"])
        + w.cost_penalty * (terms.cost_penalty - NEUTRAL["cost_penalty"])
        + w.conflict_penalty * (terms.conflict_penalty - NEUTRAL["conflict_penalty"])
    ) / anchor
    total = sigmoid(logit(terms.intent_match) + config.evidence_scale * shift)
    if anti_trigger:
        total *= config.anti_trigger_factor
    return max(0.0, min(1.0, total * damping))
