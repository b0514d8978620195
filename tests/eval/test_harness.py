"""Eval metrics on tiny hand-made data: exact expected numbers."""

from __future__ import annotations

import pytest

from routing.conftest import catalogue
from skillrt.config import RoutingConfig
from skillrt.eval.datasets import LabelledQuery
from skillrt.eval.harness import QueryOutcome, evaluate, percentile, summarise
from skillrt.routing.router import Router


def outcome(expected, selected, ranking, latency=1.0):  # type: ignore[no-untyped-def]
    return QueryOutcome("q", tuple(expected), tuple(selected), tuple(ranking), latency)


def test_metrics_exact() -> None:
    outcomes = [
        # single-skill queries
        outcome(["a"], ["a"], ["a", "b", "c"], 1.0),  # top1 hit, selected ok
        outcome(["a"], [], ["b", "a", "c"], 2.0),  # r@3 hit, answered no-skill
        outcome(["b"], ["c"], ["c", "d", "e", "f", "b"], 3.0),  # only r@5
        outcome(["c"], ["c"], ["c"], 4.0),
        # multi-skill
        outcome(["a", "b"], ["a", "c"], ["a", "c", "x", "y", "z", "b"], 5.0),
        # no-skill queries
        outcome([], [], ["a"], 6.0),  # TP
        outcome([], ["a"], ["a"], 7.0),  # FN
    ]
    r = summarise(outcomes)
    assert r.top1 == r.recall_at_1 == 2 / 4
    assert r.recall_at_3 == 3 / 4
    assert r.recall_at_5 == 4 / 4
    assert r.selected_accuracy == 2 / 4
    assert r.macro_top1 == pytest.approx((1 / 2 + 0 + 1) / 3)
    assert r.set_precision == 1 / 2 and r.set_recall == 1 / 2 and r.set_f1 == 1 / 2
    assert r.multi_recall_at_5 == 1 / 2 and r.multi_recall_at_10 == 1.0
    assert r.no_skill_precision == 1 / 2  # predicted none twice, once right
    assert r.no_skill_recall == 1 / 2
    assert r.no_skill_f1 == 1 / 2
    assert r.latency_ms["p50"] == 4.0 and r.latency_ms["max"] == 7.0
    assert r.counts == {
        "queries": 7,
        "single": 4,
        "multi": 1,
        "no_skill": 2,
        "predicted_no_skill": 2,
        "with_candidates": 0,
    }
    pairs = {(c.expected, c.predicted): c.count for c in r.confusion}
    assert pairs == {("a", "(none)"): 1, ("b", "c"): 1, ("(none)", "a"): 1}
    data = r.to_dict()
    assert "outcomes" not in data and 0 <= data["no_skill_f1"] <= 1


def test_also_ok_counts_as_a_hit_for_hit_at_k_only() -> None:
    outcomes = [
        QueryOutcome("q", ("a",), ("b",), ("b", "a"), 1.0, also_ok=("b",)),
        QueryOutcome("q", ("a",), ("c",), ("c", "d", "b"), 1.0, also_ok=("b",)),
        QueryOutcome("q", ("a",), (), ("c", "d", "e", "f", "g", "b"), 1.0, also_ok=("b",)),
    ]
    r = summarise(outcomes)
    assert r.recall_at_1 == 0.0 and r.recall_at_3 == 1 / 3  # strict: the expected skill only
    assert r.hit_at_1 == 1 / 3 and r.hit_at_3 == 2 / 3 and r.hit_at_5 == 2 / 3
    assert r.selected_accuracy == 1 / 3  # an also_ok skill selected is right
    # An also_ok answer is not a confusion.
    assert {(c.expected, c.predicted) for c in r.confusion} == {("a", "c"), ("a", "(none)")}
    line = outcomes[1].to_dict()
    assert line["also_ok"] == ["b"] and line["hit_at_1"] is False
    assert set(line) >= {"query", "expected", "ranking", "scores", "selected", "latency_ms"}


def test_injection_metrics_judge_the_plan_not_the_ranking() -> None:
    def q(expected, selected, also_ok=(), style=""):  # type: ignore[no-untyped-def]
        return QueryOutcome(
            "q", tuple(expected), tuple(selected), tuple(selected), 1.0, tuple(also_ok), (), style
        )

    outcomes = [
        q(["a"], ["a"], style="short"),  # clean
        q(["a"], ["a", "b"], also_ok=["b"], style="short"),  # clean: b is equally right
        q(["a"], ["a", "c"], style="long"),  # right first, but c is injected too
        q(["a"], [], style="long"),  # empty plan: not clean
        q(["a", "b"], ["a", "b"], style="multi"),  # covered
        q(["a", "b"], ["a", "x"], also_ok=["x"], style="multi"),  # x stands in for b
        q(["a", "b"], ["a", "c"], style="multi"),  # b missing: not covered
        q([], ["a"], style="none"),
        q([], [], style="none"),
    ]
    r = summarise(outcomes)
    assert r.clean_rate == 2 / 4
    assert r.mean_injected == (1 + 2 + 2 + 0) / 4
    # Right skills over planned skills, on every skill query: 1+2+1+0 + 2+2+1 of 1+2+2+0+2+2+2.
    assert r.injected_precision == 9 / 11
    assert r.covered_rate == 2 / 3
    assert [o.clean for o in outcomes] == [True, True, False, False, True, True, False, None, None]
    assert r.by_style["short"]["clean_rate"] == 1.0
    assert r.by_style["long"]["clean_rate"] == 0.0 and r.by_style["long"]["hit_at_1"] == 0.5
    assert r.by_style["multi"]["covered_rate"] == 2 / 3
    assert r.by_style["none"]["no_skill_recall"] == 0.5
    assert r.by_style["none"]["clean_rate"] is None
    line = outcomes[2].to_dict()
    assert line["clean"] is False and line["injected"] == 2 and line["style"] == "long"


def test_pointer_metrics() -> None:
    def q(expected, selected, pointers, also_ok=()):  # type: ignore[no-untyped-def]
        return QueryOutcome(
            "q", tuple(expected), tuple(selected), (), 1.0, tuple(also_ok), pointers=pointers
        )

    outcomes = [
        q(["a"], ["a"], ("b",), also_ok=["b"]),  # a right pointer (an equal)
        q(["a"], ["b"], ("a", "c")),  # the right skill pointed to, and a wrong one
        q(["a"], ["a"], ()),
        q(["a", "b"], ["a"], ("b",)),  # pointed to: covered or pointed, not covered
        q(["a", "b"], ["a"], ("x",), also_ok=["x"]),  # a stand-in pointed to
        q(["a", "b"], ["a"], ("c",)),  # neither
        q([], [], ("a",)),  # a pointer on a no-skill request is wrong
    ]
    r = summarise(outcomes)
    assert r.pointer_rate == 6 / 7
    assert r.pointer_precision == 4 / 7
    assert r.covered_rate == 0.0 and r.covered_or_pointed_rate == 2 / 3
    assert outcomes[1].to_dict()["pointers"] == ["a", "c"]
    assert summarise([q(["a"], ["a"], ())]).pointer_precision is None


def test_metrics_without_a_category_are_none() -> None:
    r = summarise([outcome(["a"], ["a"], ["a"])])
    assert r.set_precision is None and r.no_skill_recall is None and r.no_skill_f1 is None


def test_percentile() -> None:
    assert percentile([], 50) == 0.0
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 95) == 5


def test_evaluate_routes_within_candidates() -> None:
    router = Router.from_skills(catalogue(), RoutingConfig(use_stats=False), backend="hashing")
    queries = [
        LabelledQuery("do a code review of my pull request", ("code-review",)),
        LabelledQuery("rebase my branch with git", ("git-helper",), ("git-helper", "code-review")),
        LabelledQuery("tell me a joke about penguins", ()),
        # The right skill is not among the candidates: the answer must come from them.
        LabelledQuery("do a code review of my pull request", (), ("weather-report",)),
    ]
    seen: list[int] = []
    report = evaluate(router, queries, progress=lambda d, t: seen.append(d), keep_outcomes=True)
    assert seen == [1, 2, 3, 4]
    assert report.top1 == 1.0 and report.recall_at_5 == 1.0
    assert report.counts["with_candidates"] == 2
    assert report.outcomes[1].ranking[0] == "git-helper"
    assert set(report.outcomes[1].ranking) <= {"git-helper", "code-review"}
    assert set(report.outcomes[3].ranking) <= {"weather-report"}
    assert report.no_skill_recall == 1.0
    assert report.catalog_size == 5 and report.threshold == 0.65
    assert report.pointer_rate is not None and "pointer_precision" in report.to_dict()
