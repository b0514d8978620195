"""From scored candidates to an ActivationPlan (seed 001 §6.2 end, §7, §8, §10).

* **Minimal cover set** (R4): the query is split into request clauses; a candidate
  covers the clauses where its clause-level total passes the threshold. Greedy set
  cover picks the candidate covering most uncovered clauses; a candidate whose
  description overlaps an already selected one is never added beside it. A one-clause
  query therefore gets one skill (the best), and a second skill is added only for a
  clause the first does not cover.
* **Ties** (totals within ``TIE_EPSILON``): lower ``cost_hint`` first, then higher
  success rate, then the higher total.
* **Forced** skills (the user's explicit words) come first, cover the clause that named
  them, and skip the threshold; they were already safety-checked by the router.
* **Groups**: consecutive ``parallel_safe`` skills without a conflict between them
  share a group of at most ``max_parallel_skills``; everything else runs alone, in
  clause order.
* **Fallback path**: per selected skill, the next-best candidates of the same clause
  that passed or came close, then ``no-skill``, then ``ask-user`` (seed 001 §10).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from skillrt.routing.candidate import Candidate
from skillrt.routing.plan import ActivationPlan, PlannedSkill

__all__ = ["PlanOutcome", "build_plan", "estimate_cost"]

TIE_EPSILON = 0.05
#: A candidate within this much under the threshold may still be a fallback.
NEAR_MARGIN = 0.15
MAX_FALLBACKS_PER_SKILL = 3
_COST_RANK = {"low": 0, "medium": 1, "high": 2}
_COST_POINTS = {"low": 1, "medium": 2, "high": 3}


@dataclass(frozen=True)
class PlanOutcome:
    plan: ActivationPlan
    #: idx -> (status, reason) for eligible candidates that were not selected.
    covered: dict[int, tuple[str, str]]
    #: Selected candidates, in execution order.
    selected: tuple[Candidate, ...]


def _tie_pick(pool: Sequence[Candidate], key_total: Callable[[Candidate], float]) -> Candidate:
    best_total = max(key_total(c) for c in pool)
    tied = [c for c in pool if key_total(c) >= best_total - TIE_EPSILON]
    return min(
        tied,
        key=lambda c: (_COST_RANK.get(c.cost_hint, 1), -c.success_rate, -key_total(c), c.name),
    )


def estimate_cost(skills: Sequence[Candidate]) -> str:
    """``none`` / ``low`` / ``medium`` / ``high`` from the summed cost hints."""
    if not skills:
        return "none"
    points = sum(_COST_POINTS.get(c.cost_hint, 2) for c in skills)
    return "low" if points <= 1 else "medium" if points <= 3 else "high"


def build_plan(
    candidates: Sequence[Candidate],
    *,
    n_clauses: int,
    threshold: float,
    max_parallel: int,
    overlaps: Callable[[int, int], bool],
    conflicts: Callable[[int, int], bool],
) -> PlanOutcome:
    """Select a minimal covering set and lay it out as a plan."""
    n_clauses = max(1, n_clauses)
    selected: list[Candidate] = []
    covered_by: dict[int, str] = {}
    uncovered = set(range(n_clauses))

    for c in candidates:
        if c.forced and c.eligible and not c.blocked:
            selected.append(c)
            clause = c.forced_clause if 0 <= c.forced_clause < n_clauses else None
            hit = {clause} if clause is not None else set(_covers(c, threshold, n_clauses))
            if not hit and n_clauses == 1:
                hit = {0}
            uncovered -= hit

    pool = [c for c in candidates if c.eligible and not c.blocked and not c.forced]
    while uncovered and pool:
        coverage = {c.idx: _covers(c, threshold, n_clauses) & uncovered for c in pool}
        useful = [c for c in pool if coverage[c.idx]]
        if not useful:
            break
        most = max(len(coverage[c.idx]) for c in useful)
        tier = [c for c in useful if len(coverage[c.idx]) == most]
        pick = _tie_pick(tier, lambda c: c.total)
        pool.remove(pick)
        clash = next((s for s in selected if overlaps(s.idx, pick.idx)), None)
        if clash is not None:
            covered_by[pick.idx] = clash.name
            # The overlapping skill is taken to serve those clauses too.
            uncovered -= coverage[pick.idx]
            continue
        selected.append(pick)
        uncovered -= coverage[pick.idx]

    chosen = {c.idx for c in selected}
    covered: dict[int, tuple[str, str]] = {}
    for c in candidates:
        if c.eligible and not c.blocked and c.idx not in chosen:
            other = covered_by.get(c.idx)
            if other is not None:
                covered[c.idx] = ("covered", f"overlaps {other}, already selected")
            elif selected:
                names = ", ".join(s.name for s in selected)
                covered[c.idx] = ("covered", f"passes, but {names} already cover the request")
            else:
                covered[c.idx] = ("covered", "passes, but the request is covered")

    ordered = _order(selected, threshold, n_clauses)
    groups = _groups(ordered, max_parallel, conflicts)
    fallback = _fallback_path(ordered, candidates, threshold, n_clauses)
    plan = ActivationPlan(
        skills=tuple(
            PlannedSkill(
                name=c.name,
                forced=c.forced,
                score=round(c.total, 4),
                cost_hint=c.cost_hint,
                parallel_safe=c.parallel_safe,
            )
            for c in ordered
        ),
        groups=groups,
        estimated_cost=estimate_cost(ordered),
        fallback_path=fallback,
    )
    return PlanOutcome(plan=plan, covered=covered, selected=tuple(ordered))


def _covers(c: Candidate, threshold: float, n_clauses: int) -> set[int]:
    if n_clauses == 1:
        return {0} if c.eligible else set()
    return {k for k, t in enumerate(c.clause_totals[:n_clauses]) if t >= threshold}


def _first_clause(c: Candidate, threshold: float, n_clauses: int) -> int:
    if c.forced and c.forced_clause >= 0:
        return c.forced_clause
    hit = sorted(_covers(c, threshold, n_clauses))
    return hit[0] if hit else n_clauses


def _order(selected: Sequence[Candidate], threshold: float, n_clauses: int) -> list[Candidate]:
    # Forced skills first (the user named them), then in the order the query asks.
    return sorted(
        selected,
        key=lambda c: (not c.forced, _first_clause(c, threshold, n_clauses)),
    )


def _groups(
    ordered: Sequence[Candidate], max_parallel: int, conflicts: Callable[[int, int], bool]
) -> tuple[tuple[str, ...], ...]:
    groups: list[list[Candidate]] = []
    for c in ordered:
        last = groups[-1] if groups else None
        if (
            last is not None
            and c.parallel_safe
            and all(g.parallel_safe for g in last)
            and len(last) < max(1, max_parallel)
            and not any(conflicts(g.idx, c.idx) for g in last)
        ):
            last.append(c)
        else:
            groups.append([c])
    return tuple(tuple(c.name for c in g) for g in groups)


def _fallback_path(
    ordered: Sequence[Candidate], candidates: Sequence[Candidate], threshold: float, n_clauses: int
) -> tuple[str, ...]:
    if not ordered:
        return ("ask-user",)
    chosen = {c.idx for c in ordered}
    near = threshold - NEAR_MARGIN
    out: list[str] = []
    for s in ordered:
        clause = _first_clause(s, threshold, n_clauses)

        def level(c: Candidate, clause: int = clause) -> float:
            if n_clauses > 1 and 0 <= clause < len(c.clause_totals):
                return c.clause_totals[clause]
            return c.total

        alts = sorted(
            (
                c
                for c in candidates
                if c.idx not in chosen and not c.blocked and not c.forced and level(c) >= near
            ),
            key=lambda c: -level(c),
        )
        for c in alts[:MAX_FALLBACKS_PER_SKILL]:
            if c.name not in out:
                out.append(c.name)
    return (*out, "no-skill", "ask-user")
