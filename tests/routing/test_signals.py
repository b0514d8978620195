"""The signal registry: one entry makes a signal computed, weighed and shown."""

from __future__ import annotations

import dataclasses

import pytest

from skillrt.config import RoutingConfig, RoutingWeights
from skillrt.routing import signals as signals_module
from skillrt.routing.calibration import ScoreModel
from skillrt.routing.plan import ScoreBreakdown
from skillrt.routing.router import Router
from skillrt.routing.signals import (
    COMPANION_SIGNALS,
    REQUEST_SIGNALS,
    SCORE_TERMS,
    CompanionInput,
    RequestSignal,
    SignalInput,
    companion_signals,
    request_signals,
)

from .conftest import catalogue


def test_score_terms_weights_and_breakdown_name_the_same_six_terms() -> None:
    names = [t.name for t in SCORE_TERMS]
    assert names == [f.name for f in dataclasses.fields(RoutingWeights)]
    breakdown = [f.name for f in dataclasses.fields(ScoreBreakdown)]
    assert breakdown[: len(names)] == names
    assert len({t.column for t in SCORE_TERMS}) == len(SCORE_TERMS)


def test_form_signals_are_neutral_on_a_clause() -> None:
    inp = SignalInput("which port?", scope=0.9, lexical=0.2, unknown=0.1)
    whole, clause = request_signals(inp), request_signals(inp, clause=True)
    assert set(whole) == {s.name for s in REQUEST_SIGNALS}
    assert whole["question"] > 0 and whole["brevity"] > 0
    assert clause["question"] == clause["brevity"] == 0.0
    assert clause["fused"] == whole["fused"] == 0.9


def test_a_new_request_signal_is_one_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    # An entry in the registry is computed for every text, shown by --explain, and read
    # by P(scope) through a coefficient of its name (here from the config).
    shouting = RequestSignal("shouting", "share of capitals", lambda s: float(s.text.isupper()))
    monkeypatch.setattr(signals_module, "REQUEST_SIGNALS", (*REQUEST_SIGNALS, shouting))
    query = "REVIEW MY PULL REQUEST FOR BUGS"
    plain = Router.from_skills(catalogue(), RoutingConfig(use_stats=False), backend="hashing")
    weighed = Router.from_skills(
        catalogue(),
        RoutingConfig(use_stats=False, options={"score_model": {"shouting": -20.0}}),
        backend="hashing",
    )
    top = plain.route(query, explain=True).candidates[0]
    assert top.score.signals["scope_shouting"] == 1.0
    assert not plain.route(query).plan.no_skill
    assert weighed.route(query).plan.no_skill
    assert not weighed.route(query.lower()).plan.no_skill


def test_companion_signals_and_the_default_model() -> None:
    inp = CompanionInput(own=0.9, served=0.1, overlap=0.2, request=0.3)
    values = companion_signals(inp)
    assert set(values) == {s.name for s in COMPANION_SIGNALS}
    # The default reads "need" alone: its total there times what the plan leaves.
    assert ScoreModel().companion(values) == pytest.approx(0.9 * 0.9, abs=1e-9)
    more = companion_signals(dataclasses.replace(inp, served=0.5))
    assert ScoreModel().companion(more) < ScoreModel().companion(values)
