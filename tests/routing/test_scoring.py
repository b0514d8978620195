"""Six-term scoring, calibration, cold start and stats feeding success_rate (R3, R6, T2)."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from skillrt.config import RoutingConfig
from skillrt.routing.calibration import MODELS, ScoreModel, fit_logistic, model_for
from skillrt.routing.router import Router
from skillrt.routing.scoring import NEUTRAL, Terms, cold_start_factor, combine, success_term
from skillrt.store import MEMORY, Store, open_location
from skillrt.store.counters import record_execution, skill_stats

from .conftest import RecordingRouter, catalogue

CFG = RoutingConfig()


def terms(intent: float, **kw: float) -> Terms:
    return {"intent_match": intent, **NEUTRAL, **kw}


def test_neutral_terms_leave_the_calibrated_intent_unchanged() -> None:
    for p in (0.1, 0.5, 0.65, 0.9):
        assert abs(combine(terms(p), CFG) - p) < 1e-9


def test_trigger_success_cost_move_the_total_in_the_right_direction() -> None:
    base = combine(terms(0.5), CFG)
    assert combine(terms(0.5, trigger_match=1.0), CFG) > base
    assert combine(terms(0.5, success_rate=0.9), CFG) > base
    assert combine(terms(0.5, success_rate=0.1), CFG) < base
    assert (
        combine(terms(0.5, cost_penalty=1.0), CFG)
        > base
        > combine(terms(0.5, cost_penalty=0.0), CFG)
    )
    assert combine(terms(0.5, context_readiness=1.0), CFG) > base


def test_anti_trigger_and_damping_multiply_the_total() -> None:
    t = terms(0.9, conflict_penalty=0.0)
    undamped = combine(t, CFG)
    assert abs(combine(t, CFG, anti_trigger=True) - undamped * CFG.anti_trigger_factor) < 1e-9
    assert abs(combine(terms(0.9), CFG, damping=0.9) - 0.9 * 0.9) < 1e-9


def test_cold_start_factor_rises_to_one_over_n() -> None:
    assert cold_start_factor(0, CFG) == 1.0 - CFG.cold_start_max_damping
    assert cold_start_factor(10, CFG) == 1.0 - CFG.cold_start_max_damping / 2
    assert cold_start_factor(20, CFG) == 1.0
    assert cold_start_factor(500, CFG) == 1.0
    off = dataclasses.replace(CFG, cold_start=False)
    assert cold_start_factor(0, off) == 1.0
    factors = [cold_start_factor(n, CFG) for n in range(25)]
    assert factors == sorted(factors)


def test_success_term_is_smoothed() -> None:
    assert success_term(0, 0) == 0.5
    assert success_term(9, 1) == 10 / 12
    assert success_term(0, 3) == 0.2


@given(
    st.floats(0, 1),
    st.floats(0, 1),
    st.floats(-0.5, 0.5),
    st.floats(0, 1),
    st.floats(0, 1),
)
def test_calibration_is_monotone(
    best: float, lex: float, step: float, unknown: float, f: float
) -> None:
    signals = {"fused": best, "lexical": lex, "unknown": unknown}
    for model in MODELS.values():
        # P(scope) rises with the best evidence.
        assert model.scope({**signals, "fused": best + abs(step)}) >= model.scope(signals)
        # Intent rises with the candidate's own evidence, and never exceeds P(scope).
        lo, hi = sorted((f * best, f * best + abs(step) * best))
        p = model.intent(np.asarray([lo, hi], dtype=np.float32), best, signals)
        assert p[0] <= p[1] + 1e-12
        assert p[1] <= model.scope(signals) + 1e-12
        assert 0.0 <= p[0] <= 1.0


def test_score_model_overrides_and_errors() -> None:
    m = model_for("onnx-minilm", {"bias": -1.0, "mix": [1, 0, 0]})
    assert m.bias == -1.0 and m.mix == (1.0, 0.0, 0.0)
    assert model_for(None) == MODELS["lexical"]
    import pytest

    from skillrt.errors import ConfigError

    with pytest.raises(ConfigError):
        ScoreModel().with_overrides({"nope": 1})
    with pytest.raises(ConfigError):
        ScoreModel().with_overrides({"bias": "x"})
    # A request signal's name sets its coefficient; the others keep theirs.
    m = ScoreModel().with_overrides({"brevity": -2, "coefficients": {"question": -1.5}})
    assert m.coefficient("brevity") == -2.0 and m.coefficient("question") == -1.5
    assert m.coefficient("fused") == ScoreModel().coefficient("fused")
    with pytest.raises(ConfigError):
        ScoreModel().with_overrides({"coefficients": {"no_such_signal": 1.0}})


def test_fit_logistic_recovers_a_known_model() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4000, 2))
    p = 1 / (1 + np.exp(-(0.5 + 2.0 * x[:, 0] - 1.0 * x[:, 1])))
    y = (rng.random(4000) < p).astype(float)
    beta = fit_logistic(x, y, l2=0.0)
    assert np.allclose(beta, [0.5, 2.0, -1.0], atol=0.2)


def _router(store: Store, **changes: object) -> RecordingRouter:
    cfg = dataclasses.replace(RoutingConfig(), **changes)  # type: ignore[arg-type]
    return RecordingRouter(Router.from_skills(catalogue(), cfg, store=store, backend="hashing"))


def test_stats_feed_success_rate() -> None:
    store = open_location(MEMORY)
    query = "rebase my branch with git"

    def _router(store: Store) -> Router:  # no cold start: only success_rate may move
        return globals()["_router"](store, cold_start=False)

    before = next(c for c in _router(store).route(query).candidates if c.name == "git-helper")
    for _ in range(8):
        record_execution(store, "git-helper", success=True, latency_ms=12.0, tokens_in=5)
    stats = skill_stats(store)["git-helper"]
    assert stats.executions == 8 and stats.success_rate == 1.0
    after = next(c for c in _router(store).route(query).candidates if c.name == "git-helper")
    assert after.score.success_rate == success_term(8, 0)
    assert after.score.total > before.score.total
    for _ in range(20):
        record_execution(store, "git-helper", success=False)
    worse = next(c for c in _router(store).route(query).candidates if c.name == "git-helper")
    assert worse.score.success_rate < 0.5
    assert worse.score.total < after.score.total


def test_cold_start_damps_new_skills_until_they_have_routes() -> None:
    store = open_location(MEMORY)
    query = "rebase my branch with git"
    r = _router(store)
    first = next(c for c in r.route(query, explain=True).candidates if c.name == "git-helper")
    assert first.score.signals["cold_start_factor"] == 1.0 - 0.1
    for _ in range(25):
        r.route(query)
    assert skill_stats(store)["git-helper"].routes >= 20
    warm = next(c for c in r.route(query, explain=True).candidates if c.name == "git-helper")
    assert warm.score.signals["cold_start_factor"] == 1.0
    assert warm.score.total > first.score.total
    # Forced skills are never damped; a config switch turns damping off.
    off = _router(open_location(MEMORY), cold_start=False)
    c = next(c for c in off.route(query, explain=True).candidates if c.name == "git-helper")
    assert c.score.signals["cold_start_factor"] == 1.0
    forced = _router(open_location(MEMORY)).route("$git-helper rebase", explain=True)
    c = next(c for c in forced.candidates if c.name == "git-helper")
    assert c.score.signals["cold_start_factor"] == 1.0
