"""The minimal cover set, ties, parallel groups and fallback path (R4, seed 001 §7-8)."""

from __future__ import annotations

from skillrt.routing.candidate import Candidate
from skillrt.routing.planner import build_plan, estimate_cost


def choice(idx: int, total: float, **kw) -> Candidate:  # type: ignore[no-untyped-def]
    kw.setdefault("cost_hint", "medium")
    kw.setdefault("parallel_safe", False)
    kw.setdefault("success_rate", 0.5)
    kw.setdefault("eligible", total >= 0.65)
    return Candidate(idx=idx, name=f"s{idx}", total=total, **kw)


def plan(choices, n_clauses=1, max_parallel=2, overlaps=None, conflicts=None):  # type: ignore[no-untyped-def]
    return build_plan(
        choices,
        n_clauses=n_clauses,
        threshold=0.65,
        max_parallel=max_parallel,
        overlaps=overlaps or (lambda a, b: False),
        conflicts=conflicts or (lambda a, b: False),
    )


def test_ties_prefer_lower_cost_then_higher_success() -> None:
    out = plan([choice(0, 0.80, cost_hint="high"), choice(1, 0.78, cost_hint="low")])
    assert out.plan.names == ("s1",)
    assert out.covered[0][0] == "covered"
    out = plan([choice(0, 0.80, success_rate=0.4), choice(1, 0.79, success_rate=0.9)])
    assert out.plan.names == ("s1",)
    # Outside the tie window the better total wins whatever the cost.
    out = plan([choice(0, 0.95, cost_hint="high"), choice(1, 0.70, cost_hint="low")])
    assert out.plan.names == ("s0",)


def test_second_skill_only_for_an_uncovered_clause() -> None:
    a = choice(0, 0.9, clause_totals=[0.9, 0.1])
    b = choice(1, 0.85, clause_totals=[0.85, 0.2])  # same clause as a: redundant
    c = choice(2, 0.8, clause_totals=[0.1, 0.8])
    out = plan([a, b, c], n_clauses=2)
    assert out.plan.names == ("s0", "s2")
    assert out.covered[1][0] == "covered"
    assert out.plan.fallback_path == ("s1", "no-skill", "ask-user")


def test_one_skill_covering_both_clauses_is_enough() -> None:
    both = choice(0, 0.9, clause_totals=[0.9, 0.8])
    one = choice(1, 0.95, clause_totals=[0.95, 0.1])
    out = plan([both, one], n_clauses=2)
    assert out.plan.names == ("s0",)


def test_overlapping_skills_are_not_both_selected() -> None:
    a = choice(0, 0.9, clause_totals=[0.9, 0.1])
    b = choice(1, 0.8, clause_totals=[0.1, 0.8])
    out = plan([a, b], n_clauses=2, overlaps=lambda x, y: True)
    assert out.plan.names == ("s0",)
    assert "overlaps s0" in out.covered[1][1]


def test_parallel_groups_hold_at_most_max_parallel() -> None:
    cs = [
        choice(i, 0.9, parallel_safe=True, clause_totals=[0.9 if k == i else 0.0 for k in range(3)])
        for i in range(3)
    ]
    out = plan(cs, n_clauses=3)
    assert out.plan.groups == (("s0", "s1"), ("s2",))
    out = plan(cs, n_clauses=3, max_parallel=3)
    assert out.plan.groups == (("s0", "s1", "s2"),)


def test_conflicting_or_unsafe_skills_run_alone() -> None:
    cs = [
        choice(0, 0.9, parallel_safe=True, clause_totals=[0.9, 0, 0]),
        choice(1, 0.9, parallel_safe=True, clause_totals=[0, 0.9, 0]),
        choice(2, 0.9, parallel_safe=False, clause_totals=[0, 0, 0.9]),
    ]
    out = plan(cs, n_clauses=3, conflicts=lambda a, b: {a, b} == {0, 1})
    assert out.plan.groups == (("s0",), ("s1",), ("s2",))


def test_forced_comes_first_and_skips_threshold() -> None:
    forced = choice(0, 0.1, forced=True, eligible=True, forced_clause=1, clause_totals=[0.1, 0.1])
    other = choice(1, 0.9, clause_totals=[0.9, 0.2])
    out = plan([other, forced], n_clauses=2)
    assert out.plan.names == ("s0", "s1")
    assert out.plan.skills[0].forced


def test_blocked_skills_are_never_selected_nor_fallbacks() -> None:
    out = plan([choice(0, 0.95, eligible=False, blocked=True), choice(1, 0.6)])
    assert out.plan.no_skill
    assert out.plan.fallback_path == ("ask-user",)


def test_estimated_cost() -> None:
    assert estimate_cost([]) == "none"
    assert estimate_cost([choice(0, 1, cost_hint="low")]) == "low"
    assert estimate_cost([choice(0, 1), choice(1, 1, cost_hint="low")]) == "medium"
    assert estimate_cost([choice(0, 1, cost_hint="high"), choice(1, 1)]) == "high"
