"""The second-need model: its features, its shipped weights and card, its pointers."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from importlib import resources

import pytest

from skillrt.routing.candidate import Candidate
from skillrt.routing.planner import Clause, PlanRules, build_plan
from skillrt.routing.second_need import FEATURES, SecondNeedModel, features, shipped


def cand(idx: int, total: float, clause_totals: list[float], first: list[bool]) -> Candidate:
    return Candidate(
        idx=idx,
        name=f"s{idx}",
        total=total,
        clause_totals=clause_totals,
        clause_first=first,
        eligible=total >= 0.65,
    )


ASKING = [Clause("set up sentry in the workers", True), Clause("then add the CI alert", True)]


def test_features_read_the_runner_up_beside_the_primary() -> None:
    primary = cand(0, 0.9, [0.9, 0.2], [True, False])
    runner = cand(1, 0.45, [0.1, 0.8], [False, True])
    x = dict(
        zip(FEATURES, features(primary, runner, 1, [True, False], lambda a, b: 0.3), strict=True)
    )
    assert x["share"] == pytest.approx(0.5)
    assert x["similarity"] == 0.3
    assert x["clause_gap"] == pytest.approx(0.6)  # it leads the second clause by 0.6
    assert x["asking_gap"] == pytest.approx(-0.8)  # only the first clause asks
    assert x["clause_first"] == 1.0 and x["clauses"] == 2.0 and x["asking_clauses"] == 1.0
    assert x["best_clause"] == 0.8 and x["primary_worst_clause"] == 0.2
    # A one-part request: no clause readings to compare.
    one = features(cand(0, 0.9, [], []), cand(1, 0.4, [], []), 2, [], lambda a, b: 0.1)
    assert dict(zip(FEATURES, one, strict=True))["clause_gap"] == -1.0


def test_the_shipped_weights_match_their_model_card() -> None:
    data = json.loads(
        resources.files("skillrt.routing").joinpath("second_need.json").read_text("utf-8")
    )
    weights = data["weights"]
    digest = hashlib.sha256(json.dumps(weights, sort_keys=True).encode()).hexdigest()
    assert digest == data["weights_sha256"]
    assert tuple(weights["features"]) == FEATURES
    for key in ("data", "seed", "command", "figures"):
        assert data[key]
    assert "train_second_need.py" in data["command"]
    model = shipped()
    assert model.card["weights_sha256"] == digest
    assert 0.0 < model.probability([0.0] * len(FEATURES)) < 1.0
    # A runner-up that leads a clause the primary serves poorly reads as a second need
    # more than one that trails the primary everywhere.
    primary = cand(0, 0.9, [0.9, 0.2], [True, False])
    leads = features(
        primary, cand(1, 0.5, [0.1, 0.9], [False, True]), 1, [True, True], lambda a, b: 0.2
    )
    trails = features(
        primary, cand(2, 0.5, [0.5, 0.1], [False, False]), 1, [True, True], lambda a, b: 0.2
    )
    assert model.probability(leads) > model.probability(trails)


def test_weights_for_other_features_are_refused() -> None:
    data = json.loads(
        resources.files("skillrt.routing").joinpath("second_need.json").read_text("utf-8")
    )
    data["weights"]["features"] = ["share"]
    with pytest.raises(ValueError, match="other features"):
        SecondNeedModel.from_dict(data)


def _need(seen: object) -> float:
    return 0.0


RULES = PlanRules(
    threshold=0.65,
    companion_threshold=0.9,
    max_parallel=2,
    overlap_threshold=0.55,
    needed=_need,  # type: ignore[arg-type]
    pointers=True,
    pointer_companion=1.0,
    second_need=lambda x: 0.9 if x[FEATURES.index("clause_gap")] > 0 else 0.1,
    pointer_second_need=0.5,
)


def plan(cands: list[Candidate], rules: PlanRules = RULES):  # type: ignore[no-untyped-def]
    return build_plan(
        cands, clauses=ASKING, rules=rules, overlap=lambda a, b: 0.2, conflicts=lambda a, b: False
    )


def test_a_runner_up_read_as_a_second_need_is_pointed_to() -> None:
    primary = cand(0, 0.9, [0.9, 0.2], [True, False])
    second = cand(1, 0.4, [0.1, 0.7], [False, True])
    other = cand(2, 0.45, [0.3, 0.1], [False, False])
    out = plan([primary, second, other])
    assert out.plan.names == ("s0",)
    assert [p.name for p in out.pointers] == ["s1"]
    assert out.pointers[0].why.startswith("may serve a second part of the request")
    # Off: above 1, or pointers off, or no model.
    assert (
        plan([primary, second], dataclasses.replace(RULES, pointer_second_need=1.01)).pointers == ()
    )
    assert plan([primary, second], dataclasses.replace(RULES, pointers=False)).pointers == ()
    assert plan([primary, second], dataclasses.replace(RULES, second_need=None)).pointers == ()
    # Only the primary's first three runners-up are read; a forced plan points to none.
    far = [primary, *(cand(i, 0.5, [0.0, 0.0], [False, False]) for i in (2, 3, 4)), second]
    assert plan(far).pointers == ()
    forced = dataclasses.replace(primary, forced=True)
    assert plan([forced, second]).pointers == ()


def test_the_training_script_fits_a_known_logistic_and_measures_auc() -> None:
    import sys
    from pathlib import Path

    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        from train_second_need import auc, fit
    finally:
        sys.path.pop(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4000, 2)) * [1.0, 3.0] + [0.0, 5.0]
    true = 1.5 * x[:, 0] - 0.5 * (x[:, 1] - 5.0) / 3.0 - 1.0
    y = (rng.random(4000) < 1 / (1 + np.exp(-true))).astype(float)
    mean, scale, coef, intercept = fit(x, y, l2=0.0)
    # Standardised coefficients: x0 has scale ~1, x1 ~3 (the true -0.5 per scale unit).
    assert coef[0] * 1.0 / scale[0] == pytest.approx(1.5, abs=0.15)
    assert coef[1] == pytest.approx(-0.5, abs=0.1)
    assert intercept == pytest.approx(-1.0 + coef[0] * mean[0] / scale[0], abs=0.15)
    assert auc(np.array([0.1, 0.4, 0.35, 0.8]), np.array([0, 0, 1, 1])) == 0.75
    assert auc(np.array([0.5, 0.5]), np.array([0, 1])) == 0.5
