"""The router's signals in one registry: what each is, how it is computed, how it is shown.

Three kinds, each a table that the rest of the router iterates (a new one is an entry
here, a coefficient from a refit, and a test):

* **Request signals** (:data:`REQUEST_SIGNALS`): features of one text, the request or a
  clause of it, that ``P(scope)`` reads (:meth:`ScoreModel.scope
  <skillrt.routing.calibration.ScoreModel.scope>`, one coefficient per signal name).
  :func:`request_signals` computes them for :mod:`skillrt.routing.evidence`;
  ``--explain`` shows each under its name. Signals of the request's *form* are read on
  the whole request only: a clause is a part of a request already judged as a whole, so
  they are neutral (0) on clauses.
* **Companion signals** (:data:`COMPANION_SIGNALS`): what the planner reads of a skill
  that could join the plan for one clause of the request
  (:mod:`skillrt.routing.planner`); :meth:`ScoreModel.companion
  <skillrt.routing.calibration.ScoreModel.companion>` turns them into the probability
  that the skill is needed there, one coefficient per signal name.
* **Score terms** (:data:`SCORE_TERMS`): the six terms of seed 001 §6.2, declared in
  :mod:`skillrt.score_terms` (below the config, whose weights they give) and handed on
  here: each entry is the term's name, the column ``route`` prints it under, how its
  value reads, the value that carries no information, its default weight and how it is
  computed from a candidate.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from skillrt.routing.request_form import brevity, quick_question
from skillrt.score_terms import SCORE_TERMS, ScoreTerm, TermInput, term_values

__all__ = [
    "COMPANION_SIGNALS",
    "REQUEST_SIGNALS",
    "SCORE_TERMS",
    "RequestSignal",
    "CompanionInput",
    "CompanionSignal",
    "ScoreTerm",
    "SignalInput",
    "TermInput",
    "companion_signals",
    "request_signals",
    "term_values",
]


@dataclass(frozen=True)
class SignalInput:
    """What a request signal may read of one text and its evidence."""

    text: str
    #: The best fused score with every skill weighed as one without a body.
    scope: float
    #: The best-ranked candidate's normalised BM25F.
    lexical: float
    #: Share of the text's words that no skill's fields contain.
    unknown: float
    #: 1 when the best-ranked candidate's body is indexed, else 0.
    body: float = 0.0


@dataclass(frozen=True)
class RequestSignal:
    """One feature of a text that ``P(scope)`` reads."""

    name: str
    #: What ``--explain`` and the docs say it is.
    label: str
    compute: Callable[[SignalInput], float]
    #: Computed on clauses too; False for the request's form (neutral 0 on a clause).
    on_clauses: bool = True


REQUEST_SIGNALS: tuple[RequestSignal, ...] = (
    RequestSignal(
        "fused",
        "best fused evidence, every skill weighed as one without a body",
        lambda s: s.scope,
    ),
    RequestSignal("lexical", "the best candidate's normalised BM25F", lambda s: s.lexical),
    RequestSignal("unknown", "share of the words no skill knows", lambda s: s.unknown),
    RequestSignal(
        "body",
        "the best candidate's body is indexed (a body's sections raise every similarity)",
        lambda s: s.body,
    ),
    RequestSignal(
        "question",
        "how much it is a quick question (request_form.quick_question)",
        lambda s: quick_question(s.text),
        on_clauses=False,
    ),
    RequestSignal(
        "brevity",
        "how brief the whole message is (request_form.brevity)",
        lambda s: brevity(s.text),
        on_clauses=False,
    ),
)


def request_signals(inp: SignalInput, *, clause: bool = False) -> dict[str, float]:
    """Every request signal of one text (a clause: the form signals are 0)."""
    return {
        s.name: (s.compute(inp) if s.on_clauses or not clause else 0.0) for s in REQUEST_SIGNALS
    }


@dataclass(frozen=True)
class CompanionInput:
    """What a companion signal may read of a skill that could serve one clause."""

    #: Its total on the clause (calibrated like the whole request's).
    own: float
    #: How well the skills already planned serve the clause (their best total there).
    served: float
    #: Its document similarity to the closest planned skill.
    overlap: float
    #: Its total on the whole request.
    request: float


@dataclass(frozen=True)
class CompanionSignal:
    """One feature of the probability that a skill is needed for a clause."""

    name: str
    label: str
    compute: Callable[[CompanionInput], float]


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1.0 - 1e-4)
    return math.log(p / (1.0 - p))


COMPANION_SIGNALS: tuple[CompanionSignal, ...] = (
    CompanionSignal(
        "need",
        "log-odds of its total on the clause times the chance the plan does not serve it",
        lambda c: _logit(c.own * (1.0 - c.served)),
    ),
    CompanionSignal("own", "log-odds of its total on the clause", lambda c: _logit(c.own)),
    CompanionSignal(
        "served", "log-odds of the plan's best total on the clause", lambda c: _logit(c.served)
    ),
    CompanionSignal("overlap", "similarity to the closest planned skill", lambda c: c.overlap),
    CompanionSignal(
        "request", "log-odds of its total on the whole request", lambda c: _logit(c.request)
    ),
)


def companion_signals(inp: CompanionInput) -> dict[str, float]:
    """Every companion signal of one skill for one clause."""
    return {s.name: s.compute(inp) for s in COMPANION_SIGNALS}


@lru_cache(maxsize=64)
def weights_of(weights: object) -> Mapping[str, float]:
    """The weight of each score term in a :class:`~skillrt.config.RoutingWeights`."""
    return {t.name: float(getattr(weights, t.name)) for t in SCORE_TERMS}
