"""The score terms of seed 001 §6.2 in one registry: :data:`SCORE_TERMS`.

A term is one entry: its name, the column ``skillrt route`` prints it under, how its
value reads when explained, the value that carries no information, its default weight
and how it is computed from a candidate (:class:`TermInput`). Everything that names the
terms reads this table: the decision (:mod:`skillrt.routing.decide`, through
:func:`term_values`), the weights of ``routing.weights``
(:class:`~skillrt.config.RoutingWeights`) and the breakdown a route returns
(:class:`~skillrt.routing.plan.ScoreBreakdown`), both given a field per term by
:func:`term_fields`, the route events (:mod:`skillrt.telemetry.events`) and the CLI's
tables. It imports only the standard library, below the config.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["SCORE_TERMS", "ScoreTerm", "TermInput", "term_fields", "term_values"]

T = TypeVar("T")


@dataclass(frozen=True)
class TermInput:
    """What a score term may read of one candidate."""

    #: Calibrated intent of the candidate for the text being judged.
    intent: float
    #: Trigger phrases of the skill found in the request.
    triggers: bool
    #: An anti-trigger of the skill was hit in the text being judged.
    anti: bool
    #: Smoothed success rate from the skill's stats (0.5 without any).
    success: float
    #: Context readiness: history affinity, 0 with unmet prerequisites.
    readiness: float
    #: The skill's ``cost_hint`` as a value (1 low, 0.5 medium, 0 high).
    cost: float


@dataclass(frozen=True)
class ScoreTerm:
    """One term of the stage-2 score (seed 001 §6.2), each in 0..1."""

    name: str
    #: The column ``skillrt route`` prints it under.
    column: str
    #: The value that carries no information: it moves nothing in the total.
    neutral: float
    compute: Callable[[TermInput], float]
    #: Its default weight (``routing.weights.<name>``).
    weight: float
    #: How its value reads where it is explained (``route --why-not``): higher is
    #: always better for the skill, penalties included.
    reading: str = ""


SCORE_TERMS: tuple[ScoreTerm, ...] = (
    ScoreTerm("intent_match", "INTENT", 0.5, lambda t: t.intent, 0.40),
    ScoreTerm("trigger_match", "TRIGGER", 0.0, lambda t: 1.0 if t.triggers else 0.0, 0.20),
    ScoreTerm("success_rate", "SUCCESS", 0.5, lambda t: t.success, 0.15),
    ScoreTerm(
        "context_readiness", "READY", 0.5, lambda t: t.readiness, 0.10,
        "context_readiness (0 missing prereqs)",
    ),
    ScoreTerm(
        "cost_penalty", "COST", 0.5, lambda t: t.cost, 0.10, "cost_penalty (1 cheap, 0 costly)"
    ),
    ScoreTerm(
        "conflict_penalty", "CONFLICT", 1.0, lambda t: 0.0 if t.anti else 1.0, 0.05,
        "conflict_penalty (1 none, 0 anti-trigger)",
    ),
)  # fmt: skip


def term_values(inp: TermInput) -> dict[str, float]:
    """Every score term of one candidate, by name."""
    return {t.name: t.compute(inp) for t in SCORE_TERMS}


def term_fields(
    default: Callable[[ScoreTerm], float] | None = None,
) -> Callable[[type[T]], type[T]]:
    """Give the decorated class a ``float`` field per score term, in the registry's
    order and before its own fields (``default``: each term's default, else none), then
    make it a frozen dataclass."""

    def decorate(cls: type[T]) -> type[T]:
        own = dict(cls.__dict__.get("__annotations__", {}))
        annotations: dict[str, Any] = {}
        for t in SCORE_TERMS:
            annotations[t.name] = float
            if default is not None:
                setattr(cls, t.name, default(t))
        cls.__annotations__ = {**annotations, **own}
        return dataclass(frozen=True)(cls)

    return decorate
