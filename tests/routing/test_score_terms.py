"""A score term is one registry entry (issue 28): its name, column, reading, neutral
value, default weight and computation are read by the weights, the breakdown, the route
events and the CLI's tables alike."""

from __future__ import annotations

import dataclasses

from skillrt.cli.routing_cmds import render_route
from skillrt.config import RoutingConfig, RoutingWeights
from skillrt.routing.plan import ScoreBreakdown
from skillrt.routing.router import Router
from skillrt.score_terms import SCORE_TERMS, ScoreTerm, TermInput, term_fields, term_values
from skillrt.telemetry.events import route_event

from .conftest import catalogue


def test_the_weights_and_the_breakdown_are_made_from_the_entries() -> None:
    weights = dataclasses.fields(RoutingWeights)
    assert [(f.name, f.default) for f in weights] == [(t.name, t.weight) for t in SCORE_TERMS]
    names = [f.name for f in dataclasses.fields(ScoreBreakdown)]
    assert names == [*(t.name for t in SCORE_TERMS), "total", "signals", "matched"]
    assert sum(t.weight for t in SCORE_TERMS) == 1.0  # the seed's weights sum to 1


def test_events_and_the_route_table_show_every_entry() -> None:
    router = Router.from_skills(catalogue(), RoutingConfig(use_stats=False), backend="hashing")
    result = router.route("please do a code review of my pull request")
    event = route_event(result, surface="cli")
    for entry in event.score_breakdown.values():
        assert [k for k in entry if k in {t.name for t in SCORE_TERMS}] == [
            t.name for t in SCORE_TERMS
        ]
    lines = render_route(result).splitlines()
    columns = next(line for line in lines if "CANDIDATE" in line).split()
    assert columns[4 : 4 + len(SCORE_TERMS)] == [t.column for t in SCORE_TERMS]


def test_a_new_term_is_one_entry_for_the_classes_made_from_the_registry(monkeypatch) -> None:
    import skillrt.score_terms as registry

    novelty = ScoreTerm("novelty", "NEW", 0.5, lambda t: t.intent, 0.0, "novelty (1 new)")
    monkeypatch.setattr(registry, "SCORE_TERMS", (*SCORE_TERMS, novelty))

    @term_fields(default=lambda term: term.weight)
    class Weights:
        pass

    assert Weights().novelty == 0.0 and Weights(novelty=0.2).novelty == 0.2
    values = term_values(TermInput(0.7, False, False, 0.5, 0.5, 0.5))
    assert values["novelty"] == 0.7
