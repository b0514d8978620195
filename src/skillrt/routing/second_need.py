"""P(a runner-up serves a second need of the request): a small learned reader of the plan.

A request often asks for two things ("set up Sentry for the workers, then add the alert
rules to our CI"), and the second thing's skill is then usually the router's second or
third candidate, under the companion threshold. A runner-up of a one-need request sits
in the same place. What tells them apart is how the runner-up and the primary meet the
request's parts: the runner-up leads on a clause the primary serves poorly, the request
has parts that ask, the two skills' documents differ. :class:`SecondNeedModel` weighs
those twelve readings (:data:`FEATURES`, computed by :func:`features` from what the
planner sees) with a logistic model, and the planner points to a runner-up whose
probability reaches ``pointer_second_need`` (:mod:`skillrt.routing.planner`).

The shipped weights (``second_need.json``, with their model card: data, seed, command,
figures, the weights' sha256) were trained by ``python bench/train_second_need.py`` on
two-need pseudo-requests made by joining two skills' pseudo-requests (the doctor's
leave-out generator over the real catalogues) and one-need ones (one pseudo-request, or
two of one skill joined), each routed through the leave-out router that has not indexed
the texts it came from; the real-skills dev requests were used only to measure it and to
choose the threshold. Nothing of a dataset is in it but these numbers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from skillrt.routing.candidate import Candidate

__all__ = ["FEATURES", "SecondNeedModel", "features", "shipped"]

#: What the model reads of a runner-up ``c`` beside the ``primary``, in order.
FEATURES = (
    "share",  # c's total over the primary's
    "similarity",  # the two skills' document similarity
    "clause_gap",  # max over clauses of c's clause total minus the primary's
    "asking_gap",  # the same over the clauses that ask for something
    "clause_first",  # c is the best candidate of some clause
    "clauses",  # the request's clauses (at most 5; 0: one part)
    "asking_clauses",  # how many of them ask for something
    "rank",  # c's place among the candidates by total (1: right after the best)
    "primary_total",
    "total",  # c's own total
    "best_clause",  # c's best clause total
    "primary_worst_clause",  # the primary's lowest clause total
)
MAX_CLAUSES = 5


def features(
    primary: Candidate,
    c: Candidate,
    rank: int,
    asking: Sequence[bool],
    overlap: Callable[[int, int], float],
) -> tuple[float, ...]:
    """The :data:`FEATURES` of runner-up ``c`` (``asking``: per clause, it asks)."""
    n = min(len(c.clause_totals), len(primary.clause_totals))
    gaps = [c.clause_totals[k] - primary.clause_totals[k] for k in range(n)]
    asked = [gaps[k] for k in range(n) if k < len(asking) and asking[k]]
    return (
        c.total / max(primary.total, 1e-6),
        overlap(primary.idx, c.idx),
        max(gaps, default=-1.0),
        max(asked, default=-1.0),
        float(any(c.clause_first)),
        float(min(len(asking), MAX_CLAUSES)),
        float(sum(asking)),
        float(rank),
        primary.total,
        c.total,
        max(c.clause_totals, default=0.0),
        min(primary.clause_totals, default=1.0),
    )


@dataclass(frozen=True)
class SecondNeedModel:
    """A logistic model over standardised :data:`FEATURES`."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    #: The model card (data, seed, command, figures, sha256 of the weights).
    card: dict[str, Any]

    def probability(self, x: Sequence[float]) -> float:
        z = self.intercept + sum(
            w * (v - m) / s for w, v, m, s in zip(self.coef, x, self.mean, self.scale, strict=True)
        )
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SecondNeedModel:
        weights = data["weights"]
        if tuple(weights["features"]) != FEATURES:
            raise ValueError(f"second-need weights for other features: {weights['features']}")
        return cls(
            mean=tuple(float(v) for v in weights["mean"]),
            scale=tuple(float(v) for v in weights["scale"]),
            coef=tuple(float(v) for v in weights["coef"]),
            intercept=float(weights["intercept"]),
            card={k: v for k, v in data.items() if k != "weights"},
        )


@cache
def shipped() -> SecondNeedModel:
    """The weights that ship with the package (``second_need.json``)."""
    text = resources.files("skillrt.routing").joinpath("second_need.json").read_text("utf-8")
    return SecondNeedModel.from_dict(json.loads(text))
