"""The minimal cover set: primary, companions, ties, overlap, groups, fallbacks (R4, §7-8)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from hypothesis import given
from hypothesis import strategies as st

from skillrt.routing.candidate import Candidate
from skillrt.routing.planner import (
    Clause,
    PlanOutcome,
    PlanRules,
    build_plan,
    companion_input,
    estimate_cost,
)
from skillrt.routing.signals import CompanionInput


def need(seen: CompanionInput) -> float:
    """The shipped model's probability: its clause total times what the plan leaves."""
    return seen.own * (1.0 - seen.served)


RULES = PlanRules(
    threshold=0.65, companion_threshold=0.7, max_parallel=2, overlap_threshold=0.55, needed=need
)
NO_OVERLAP = lambda a, b: 0.1  # noqa: E731


def choice(idx: int, total: float, **kw) -> Candidate:  # type: ignore[no-untyped-def]
    kw.setdefault("cost_hint", "medium")
    kw.setdefault("parallel_safe", False)
    kw.setdefault("success_rate", 0.5)
    kw.setdefault("eligible", total >= 0.65)
    return Candidate(idx=idx, name=f"s{idx}", total=total, **kw)


def plan(
    choices: Sequence[Candidate],
    clauses: Sequence[Clause] = (),
    rules: PlanRules = RULES,
    overlap: Callable[[int, int], float] | None = None,
    conflicts: Callable[[int, int], bool] | None = None,
) -> PlanOutcome:
    return build_plan(
        choices,
        clauses=clauses,
        rules=rules,
        overlap=overlap or NO_OVERLAP,
        conflicts=conflicts or (lambda a, b: False),
    )


ASKING = [Clause("fix the flaky test", True), Clause("then write the release notes", True)]


def test_ties_prefer_lower_cost_then_higher_success() -> None:
    out = plan([choice(0, 0.80, cost_hint="high"), choice(1, 0.78, cost_hint="low")])
    assert out.plan.names == ("s1",)
    assert out.covered[0][0] == "covered"
    assert "ties with s0" in out.reasons[1]
    out = plan([choice(0, 0.80, success_rate=0.4), choice(1, 0.79, success_rate=0.9)])
    assert out.plan.names == ("s1",)
    # Outside the tie window the better total wins whatever the cost.
    out = plan([choice(0, 0.95, cost_hint="high"), choice(1, 0.70, cost_hint="low")])
    assert out.plan.names == ("s0",)


def test_a_one_part_request_gets_one_skill_however_many_pass() -> None:
    out = plan([choice(0, 0.9), choice(1, 0.88), choice(2, 0.8)])
    assert out.plan.names == ("s0",)
    assert {out.covered[1][0], out.covered[2][0]} == {"covered"}
    assert "already serve the request" in out.covered[1][1]


def test_a_companion_joins_for_an_asking_clause_the_primary_does_not_serve() -> None:
    a = choice(0, 0.9, clause_totals=[0.9, 0.05], clause_first=[True, False])
    b = choice(1, 0.4, clause_totals=[0.1, 0.85], clause_first=[False, True])
    out = plan([a, b], ASKING)
    assert out.plan.names == ("s0", "s1") and out.plan.primary == "s0"
    assert 'joins for "then write the release notes"' in out.reasons[1]
    # The plan runs the parts in the order the request asks for them.
    b.clause_first, a.clause_first = [True, False], [False, True]
    b.clause_totals, a.clause_totals = [0.85, 0.1], [0.05, 0.9]
    out = plan([a, b], ASKING)
    assert out.plan.names == ("s1", "s0") and out.plan.primary == "s0"
    seen = companion_input(b, 0, [a], NO_OVERLAP)
    assert seen.served == 0.05 and abs(need(seen) - 0.85 * 0.95) < 1e-12


def test_no_companion_for_a_clause_that_only_gives_context() -> None:
    a = choice(0, 0.9, clause_totals=[0.9, 0.05], clause_first=[True, False])
    b = choice(1, 0.4, clause_totals=[0.1, 0.95], clause_first=[False, True])
    context = [ASKING[0], Clause("it runs from Jenkins on Ubuntu", False)]
    assert plan([a, b], context).plan.names == ("s0",)


def test_a_companion_must_be_the_best_candidate_of_its_clause() -> None:
    a = choice(0, 0.9, clause_totals=[0.9, 0.05], clause_first=[True, False])
    b = choice(1, 0.4, clause_totals=[0.1, 0.85], clause_first=[False, False])
    assert plan([a, b], ASKING).plan.names == ("s0",)


def test_a_companion_below_its_own_threshold_is_named_with_its_clause() -> None:
    a = choice(0, 0.9, clause_totals=[0.9, 0.5], clause_first=[True, False])
    b = choice(1, 0.7, clause_totals=[0.2, 0.8], clause_first=[False, True])
    out = plan([a, b], ASKING)
    assert out.plan.names == ("s0",)
    status, reason = out.covered[1]
    assert status == "below_threshold" and "0.40 < 0.70" in reason
    assert "its total there 0.80; the plan serves it 0.50" in reason


def test_an_overlapping_skill_never_joins() -> None:
    a = choice(0, 0.9, clause_totals=[0.9, 0.05], clause_first=[True, False])
    b = choice(1, 0.8, clause_totals=[0.1, 0.9], clause_first=[False, True])
    out = plan([a, b], ASKING, overlap=lambda x, y: 0.8)
    assert out.plan.names == ("s0",)
    assert out.covered[1][0] == "covered"
    assert "overlaps s0" in out.covered[1][1] and "0.80 >= 0.55" in out.covered[1][1]


def test_at_most_max_parallel_skills_unless_configured() -> None:
    clauses = [Clause(f"do part {k}", True) for k in range(3)]
    cs = [
        choice(
            i,
            0.9 if i == 0 else 0.3,
            parallel_safe=True,
            clause_totals=[0.9 if k == i else 0.0 for k in range(3)],
            clause_first=[k == i for k in range(3)],
        )
        for i in range(3)
    ]
    out = plan(cs, clauses)
    assert out.plan.names == ("s0", "s1") and out.plan.groups == (("s0", "s1"),)
    three = PlanRules(0.65, 0.7, 3, 0.55, need)
    out = plan(cs, clauses, rules=three)
    assert out.plan.groups == (("s0", "s1", "s2"),)


def test_conflicting_or_unsafe_skills_run_alone() -> None:
    clauses = [Clause(f"do part {k}", True) for k in range(3)]
    cs = [
        choice(0, 0.9, parallel_safe=True, clause_totals=[0.9, 0, 0], clause_first=[1, 0, 0]),
        choice(1, 0.3, parallel_safe=True, clause_totals=[0, 0.9, 0], clause_first=[0, 1, 0]),
        choice(2, 0.3, parallel_safe=False, clause_totals=[0, 0, 0.9], clause_first=[0, 0, 1]),
    ]
    rules = PlanRules(0.65, 0.7, 3, 0.55, need)
    out = plan(cs, clauses, rules=rules, conflicts=lambda a, b: {a, b} == {0, 1})
    assert out.plan.groups == (("s0",), ("s1",), ("s2",))


def test_forced_comes_first_and_a_companion_serves_another_clause() -> None:
    forced = choice(
        0, 0.1, forced=True, eligible=True, forced_clause=0, clause_totals=[0.1, 0.1],
        forced_words="$s0",
    )  # fmt: skip
    other = choice(1, 0.9, clause_totals=[0.9, 0.8], clause_first=[True, True])
    out = plan([other, forced], ASKING)
    assert out.plan.names == ("s0", "s1")
    assert out.plan.skills[0].forced and out.reasons[0] == "forced by the user ($s0)"
    # The forced skill serves the clause that named it: nothing joins for that one.
    assert need(companion_input(other, 0, [forced], NO_OVERLAP)) == 0.0


def test_blocked_skills_are_never_selected_nor_fallbacks() -> None:
    out = plan([choice(0, 0.95, eligible=False, blocked=True), choice(1, 0.6)])
    assert out.plan.no_skill
    assert out.plan.fallback_path == ("ask-user",)


def test_fallbacks_are_the_next_best_that_came_close() -> None:
    out = plan([choice(0, 0.9), choice(1, 0.7), choice(2, 0.55), choice(3, 0.3)])
    assert out.plan.fallback_path == ("s1", "s2", "no-skill", "ask-user")


def test_estimated_cost() -> None:
    assert estimate_cost([]) == "none"
    assert estimate_cost([choice(0, 1, cost_hint="low")]) == "low"
    assert estimate_cost([choice(0, 1), choice(1, 1, cost_hint="low")]) == "medium"
    assert estimate_cost([choice(0, 1, cost_hint="high"), choice(1, 1)]) == "high"


@st.composite
def pools(draw: st.DrawFn) -> tuple[list[Candidate], list[Clause], dict[tuple[int, int], float]]:
    n_clauses = draw(st.integers(0, 4))
    clauses = [Clause(f"c{k}", draw(st.booleans())) for k in range(n_clauses)]
    n = draw(st.integers(0, 6))
    unit = st.floats(0, 1)
    cands = []
    for i in range(n):
        totals = [draw(unit) for _ in range(n_clauses)]
        forced = draw(st.booleans()) and draw(st.booleans())
        total = draw(unit)
        cands.append(
            choice(
                i,
                total,
                clause_totals=totals,
                forced=forced,
                eligible=forced or total >= 0.65,
                blocked=draw(st.booleans()) and draw(st.booleans()),
            )
        )
    for k in range(n_clauses):  # each clause has one best candidate (maybe none in the pool)
        best = max(range(n), key=lambda i: cands[i].clause_totals[k], default=None)
        for c in cands:
            c.clause_first.append(best is not None and c.idx == best)
    sims = {(a, b): draw(unit) for a in range(n) for b in range(n) if a < b}
    return cands, clauses, sims


@given(pools())
def test_plan_invariants(data: tuple[list[Candidate], list[Clause], dict]) -> None:  # type: ignore[type-arg]
    cands, clauses, sims = data

    def overlap(a: int, b: int) -> float:
        return 1.0 if a == b else sims[(min(a, b), max(a, b))]

    out = plan(cands, clauses, overlap=overlap)
    chosen = out.selected
    forced = [c for c in cands if c.forced and c.eligible and not c.blocked]
    assert not any(c.blocked for c in chosen)
    assert len(chosen) <= max(RULES.max_parallel, len(forced))
    if not forced and not any(c.eligible and not c.blocked for c in cands):
        assert out.plan.no_skill
    routed = [c for c in chosen if not c.forced]
    primary = next((c for c in chosen if c.name == out.plan.primary), None)
    assert (primary is None) == out.plan.no_skill
    if not forced and primary is not None:  # the primary passes on the whole request
        assert primary.eligible
    for c in (c for c in routed if c is not primary):
        # A companion serves an asking clause where it is the best, and overlaps nothing.
        assert any(
            clauses[k].asks and c.clause_first[k] and c.clause_totals[k] >= 0.7
            for k in range(len(clauses))
        )
        assert all(overlap(s.idx, c.idx) < 0.55 for s in chosen if s is not c)
    pointed = plan(cands, clauses, rules=POINTING, overlap=overlap)
    assert pointed.plan == out.plan  # pointers never change the plan
    names = [p.name for p in pointed.pointers]
    assert len(names) <= 2 and len(set(names)) == len(names)
    assert not set(names) & set(out.plan.names)
    assert not any(c.blocked for c in cands if c.name in names)


POINTING = dataclasses.replace(
    RULES,
    pointers=True,
    pointer_runner_up=0.5,
    pointer_floor=0.1,
    pointer_similar=0.5,
    pointer_companion=0.3,
)


def test_a_close_runner_up_is_pointed_to_not_injected() -> None:
    out = plan([choice(0, 0.9), choice(1, 0.5), choice(2, 0.2)], rules=POINTING)
    assert out.plan.names == ("s0",)
    assert [p.name for p in out.pointers] == ["s1"]
    pointer = out.pointers[0]
    assert "close runner-up to s0" in pointer.why and pointer.load == "skillrt show s1"
    # A distant runner-up is not named, unless it is a near neighbour of the primary.
    assert plan([choice(0, 0.9), choice(1, 0.2)], rules=POINTING).pointers == ()
    near = plan([choice(0, 0.9), choice(1, 0.2)], rules=POINTING, overlap=lambda a, b: 0.7)
    assert [p.name for p in near.pointers] == ["s1"]
    # Under the floor even a neighbour is left out.
    far = plan([choice(0, 0.9), choice(1, 0.05)], rules=POINTING, overlap=lambda a, b: 0.7)
    assert far.pointers == ()


def test_a_clause_skill_under_the_companion_threshold_is_pointed_to() -> None:
    a = choice(0, 0.9, clause_totals=[0.9, 0.5], clause_first=[True, False])
    b = choice(1, 0.3, clause_totals=[0.2, 0.8], clause_first=[False, True])
    out = plan([a, b], ASKING, rules=POINTING)
    assert out.plan.names == ("s0",)
    assert [p.name for p in out.pointers] == ["s1"]
    assert out.pointers[0].why.startswith('may serve "then write the release notes"')


def test_pointers_are_at_most_two_and_never_for_forced_no_skill_or_switched_off() -> None:
    many = [choice(0, 0.9), *(choice(i, 0.85 - i / 100) for i in range(1, 6))]
    assert len(plan(many, rules=POINTING).pointers) == 2
    assert plan(many, rules=RULES).pointers == ()  # pointers: false
    forced = [choice(0, 0.3, forced=True, eligible=True), choice(1, 0.9)]
    assert plan(forced, rules=POINTING).pointers == ()
    assert plan([choice(0, 0.6), choice(1, 0.55)], rules=POINTING).pointers == ()
    # Blocked skills and anti-trigger hits are never pointed to.
    blocked = [choice(0, 0.9), choice(1, 0.8, blocked=True), choice(2, 0.8, anti=["x"])]
    assert plan(blocked, rules=POINTING).pointers == ()


ASKING_BRIEFLY = dataclasses.replace(RULES, brief_ask=True, ask_margin=0.15, ask_lead=0.1)


def below(idx: int, total: float) -> Candidate:
    return choice(idx, total, status="below_threshold", reason=f"total {total:.2f} < 0.65")


def test_a_brief_ask_whose_best_skill_leads_widely_gets_it() -> None:
    out = plan([below(0, 0.53), below(1, 0.01)], rules=ASKING_BRIEFLY)
    assert out.plan.names == ("s0",)
    assert out.reasons[0].startswith("a brief ask whose best skill leads by a wide margin")
    # Not when the runner-up is close, the best is too far under, or it is not a brief ask.
    assert plan([below(0, 0.53), below(1, 0.2)], rules=ASKING_BRIEFLY).plan.no_skill
    assert plan([below(0, 0.45), below(1, 0.01)], rules=ASKING_BRIEFLY).plan.no_skill
    assert plan([below(0, 0.53), below(1, 0.01)], rules=RULES).plan.no_skill
    # A gate (top-k, anti-trigger) is not lifted.
    gated = choice(0, 0.6, status="below_threshold", reason="outside the semantic top-k")
    assert plan([gated, below(1, 0.01)], rules=ASKING_BRIEFLY).plan.no_skill
    anti = choice(0, 0.6, status="below_threshold", reason="total 0.60 < 0.65", anti=["x"])
    assert plan([anti, below(1, 0.01)], rules=ASKING_BRIEFLY).plan.no_skill


def test_a_quick_question_of_fact_gets_its_skills_as_pointers_not_bodies() -> None:
    from skillrt.routing.planner import QUICK_FACT_WHY

    quick = dataclasses.replace(POINTING, quick_fact=True)
    cands = [choice(0, 0.9), choice(1, 0.5), choice(2, 0.2)]
    out = plan(cands, rules=quick)
    assert out.plan.no_skill and out.plan.primary is None and out.selected == ()
    assert [p.name for p in out.pointers] == ["s0"]
    assert out.pointers[0].why == QUICK_FACT_WHY
    status, reason = out.covered[0]
    assert status == "below_threshold" and reason.startswith("a quick question of fact")
    # Without pointers the plan is as before (the rule never drops a skill unnamed)...
    assert plan(cands, rules=dataclasses.replace(RULES, quick_fact=True)).plan.names == ("s0",)
    # ... and the user's own choice of a skill stands.
    forced = [choice(0, 0.3, forced=True, eligible=True), choice(1, 0.9)]
    assert plan(forced, rules=quick).plan.names == ("s0",)
    # Nothing passes: nothing to point to beyond what the usual rules name.
    assert plan([choice(0, 0.6), choice(1, 0.55)], rules=quick).pointers == ()
