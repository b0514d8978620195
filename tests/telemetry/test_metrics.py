"""T2 metrics over route records: definitions checked on hand-made data."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skillrt.telemetry.feedback import Feedback
from skillrt.telemetry.metrics import (
    RouteRecord,
    by_config,
    compute_metrics,
    percentile,
    skill_metrics,
    trigger_stats,
)


def rec(rid: str, selected: tuple[str, ...] = (), **kw: object) -> RouteRecord:
    base: dict[str, object] = {"route_id": rid, "ts": 0.0, "selected": selected, "latency_ms": 1.0}
    base.update(kw)
    return RouteRecord(**base)  # type: ignore[arg-type]


ROUTES = [
    rec("r1", ("a",), latency_ms=1.0, execution_result="success", tokens_in=10, tokens_out=5),
    rec("r2", ("a", "b"), latency_ms=2.0, execution_result="failed", fallback_used=True),
    rec("r3", (), latency_ms=3.0),
    rec("r4", ("b",), latency_ms=10.0, execution_result="success", config_id="cand"),
]
FEEDBACK = {
    "r1": Feedback("r1", ("a",)),  # right
    "r2": Feedback("r2", ("a",)),  # over-selected: wrong
    "r3": Feedback("r3", ()),  # no skill was right: right
    "r4": Feedback("r4", ("c",)),  # wrong; c missed
}


def test_overall_definitions() -> None:
    m = compute_metrics(ROUTES, FEEDBACK)
    assert m.routes == 4
    assert m.trigger_rate == 3 / 4
    assert m.selection_precision == 2 / 4
    assert m.success_rate == 2 / 3 and m.executed == 3
    assert m.fallback_rate == 1 / 3
    assert m.latency_ms.p50 == 2.0 and m.latency_ms.p95 == 10.0
    assert m.avg_token_cost == 15.0


def test_empty_denominators_are_none() -> None:
    m = compute_metrics([rec("x")], {})
    assert m.selection_precision is None and m.success_rate is None
    assert m.fallback_rate is None and m.avg_token_cost is None
    assert compute_metrics([], {}).trigger_rate is None


def test_per_skill() -> None:
    by = {s.name: s for s in skill_metrics(ROUTES, FEEDBACK)}
    assert by["a"].selected == 2 and by["a"].selection_share == 0.5
    assert by["a"].precision == 1.0  # a was right on both rated routes selecting it
    assert by["b"].precision == 0.0
    assert by["b"].success_rate == 0.5
    assert by["c"].selected == 0 and by["c"].missed == 1


def test_by_config_groups() -> None:
    groups = by_config(ROUTES, FEEDBACK)
    assert set(groups) == {"default", "cand"}
    assert groups["cand"].routes == 1 and groups["default"].routes == 3


def test_trigger_pruning_flags_low_success_and_corrections() -> None:
    routes = (
        [
            rec(
                f"bad{i}",
                ("x",),
                execution_result="failed" if i % 4 else "success",
                triggers=(("x", "deploy"),),
            )
            for i in range(20)
        ]
        + [
            rec(f"ok{i}", ("y",), execution_result="success", triggers=(("y", "review"),))
            for i in range(20)
        ]
        + [
            rec(f"rare{i}", ("z",), execution_result="failed", triggers=(("z", "rare"),))
            for i in range(3)
        ]
    )
    fb = {f"ok{i}": Feedback(f"ok{i}", ("w",)) for i in range(10)}  # y corrected 10/10 rated
    stats = {
        (t.skill, t.trigger): t
        for t in trigger_stats(
            routes, fb, min_fires=10, max_success_rate=0.5, min_correction_rate=0.3
        )
    }
    assert stats[("x", "deploy")].prune and stats[("x", "deploy")].success_rate == 0.25
    assert stats[("y", "review")].prune and stats[("y", "review")].correction_rate == 1.0
    assert not stats[("z", "rare")].prune  # fails, but fired too rarely to judge
    ordered = trigger_stats(routes, fb, min_fires=10, max_success_rate=0.5, min_correction_rate=0.3)
    assert [t.prune for t in ordered][:2] == [True, True]


@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=200))
def test_percentile_bounds(values: list[float]) -> None:
    p50, p95 = percentile(values, 50), percentile(values, 95)
    assert p50 is not None and p95 is not None
    assert min(values) <= p50 <= p95 <= max(values)
    assert p50 in values and p95 in values


@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from("abc"), max_size=3),
            st.booleans(),
            st.sampled_from([None, "success", "failed"]),
        ),
        max_size=40,
    )
)
def test_rates_are_fractions(rows: list[tuple[list[str], bool, str | None]]) -> None:
    routes = [
        rec(f"r{i}", tuple(sel), fallback_used=fb, execution_result=res)
        for i, (sel, fb, res) in enumerate(rows)
    ]
    m = compute_metrics(routes, {})
    for value in (m.trigger_rate, m.success_rate, m.fallback_rate):
        assert value is None or 0.0 <= value <= 1.0
