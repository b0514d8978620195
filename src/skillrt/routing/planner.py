"""From scored candidates to an ActivationPlan (seed 001 §6.2 end, §7, §8, §10).

What a user gets is what the plan injects, so the plan holds the fewest skills that
serve the request (the *minimal cover set*, R4):

* **Forced** skills (the user's explicit words) come first and skip the threshold; they
  were already safety-checked by the router. Each covers the clause that named it.
* Otherwise the **primary** skill is the best candidate that passes the threshold on
  the *whole* request. **Ties** (totals within :data:`TIE_EPSILON`): lower
  ``cost_hint`` first, then higher success rate (seed 001 §7).
* A **companion** joins only on its own evidence for a part of the request the plan
  does not serve yet: a clause that *asks* for something
  (:func:`~skillrt.routing.request_form.asks`), on which it is the best candidate. Its
  own calibrated probability of being needed there (``needed``: the score model's
  :meth:`~skillrt.routing.calibration.ScoreModel.companion` over the companion
  signals — its total on the clause, how well the plan already serves the clause, its
  similarity to the planned skills, its total on the whole request) must reach
  ``companion_threshold``. Passing the threshold on the whole request is not enough,
  and a skill that *overlaps* one already planned (similar documents: the same
  procedure, or one a variant of the other) never joins: the tie rules chose among
  them. At most ``max_parallel_skills`` skills in all (forced ones excepted).
* **Order and groups**: forced skills first, then in the order the request asks for
  their parts; consecutive ``parallel_safe`` skills without a conflict between them
  share a group of at most ``max_parallel_skills``; everything else runs alone. The plan
  names its ``primary`` skill (the forced one, else the one chosen on the whole
  request): a context budget serves it first.
* **Fallback path**: per selected skill, the next-best candidates that passed or came
  close, then ``no-skill``, then ``ask-user`` (seed 001 §10).
* **Pointers**: where the decision is uncertain, up to :data:`MAX_POINTERS` skills the
  plan does not inject are named for the user's own model to weigh: the best skill of
  an asking clause that stayed under ``companion_threshold`` but reached
  ``pointer_companion`` (a second need the plan may miss), then the primary's close
  runners-up: a total of at least ``pointer_runner_up`` of the primary's (the softmax
  odds that the tie went the wrong way), or of ``pointer_floor`` of it for a near
  neighbour of the primary (document similarity ``pointer_similar`` or more: two
  variants of one procedure, where the request's words rarely settle which). Either
  kind must reach ``pointer_floor`` of the primary's total. Then one of the primary's
  first three runners-up that a learned model (:mod:`skillrt.routing.second_need`) reads
  as serving a second need of the request, at probability ``pointer_second_need`` or
  more. A no-skill plan and a forced one have none (nothing is uncertain enough to name,
  or the user chose).
* **A quick question of fact about what the request shows**
  (:func:`~skillrt.routing.request_form.fact_about_material`: "is that First Load JS
  number gzipped or raw?" under a pasted build table) wants an answer, not a procedure:
  the skills the plan would inject are named as pointers instead, and the plan injects
  nothing (``quick_fact``; only with pointers on, and never over a forced skill). The
  user's model loads one if the answer needs it.

Every candidate left out gets a reason for ``--explain``: covered by the plan (it
overlaps a planned skill, or has no part of the request of its own), or below its own
threshold for the clause it would serve.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from skillrt.routing.candidate import Candidate
from skillrt.routing.plan import ActivationPlan, PlannedSkill, Pointer
from skillrt.routing.signals import CompanionInput

__all__ = ["MAX_POINTERS", "Clause", "PlanOutcome", "PlanRules", "build_plan", "estimate_cost"]

#: Pointers a route carries, at most (each a few dozen tokens).
MAX_POINTERS = 2

TIE_EPSILON = 0.05
#: A candidate within this much under the threshold may still be a fallback.
NEAR_MARGIN = 0.15
MAX_FALLBACKS_PER_SKILL = 3
#: The primary's runners-up the second-need model reads.
SECOND_NEED_DEPTH = 3
#: A clause's words quoted in a reason, at most.
QUOTE_CHARS = 60
_COST_RANK = {"low": 0, "medium": 1, "high": 2}
_COST_POINTS = {"low": 1, "medium": 2, "high": 3}


@dataclass(frozen=True)
class Clause:
    """One clause of a multi-clause request, as the planner sees it."""

    text: str
    #: It asks for something (a task or a question), rather than giving context.
    asks: bool


@dataclass(frozen=True)
class PlanRules:
    """The thresholds and limits the plan is built under (from ``RoutingConfig``)."""

    threshold: float
    companion_threshold: float
    max_parallel: int
    overlap_threshold: float
    #: P(a skill is needed for a clause) from what the planner sees of it there.
    needed: Callable[[CompanionInput], float]
    #: Pointers (see the module docstring); ``pointers=False`` makes none.
    pointers: bool = False
    #: A runner-up is pointed to at this share of the primary's total...
    pointer_runner_up: float = 1.0
    #: ... or at ``pointer_floor`` of it when its document is at least
    #: ``pointer_similar`` like the primary's (a near neighbour: the tie is a coin toss).
    pointer_floor: float = 0.2
    pointer_similar: float = 0.6
    #: A clause's best skill under the companion threshold is pointed to at this
    #: probability of being needed there (and ``pointer_floor`` of the primary's total).
    pointer_companion: float = 1.0
    #: P(a runner-up serves a second need of the request) from its
    #: :data:`~skillrt.routing.second_need.FEATURES`; None: not read.
    second_need: Callable[[Sequence[float]], float] | None = None
    #: A runner-up is pointed to when that probability reaches this (above 1: never).
    pointer_second_need: float = 1.01
    #: The request ends in a quick question of fact about what it shows
    #: (``request_form.fact_about_material``): its skills are pointed to, not injected.
    quick_fact: bool = False
    #: The request is a brief ask, not a question (``request_form``): a best candidate
    #: within ``ask_margin`` under the threshold whose total is at least ``1 / ask_lead``
    #: times the runner-up's is selected (its brevity alone kept it out).
    brief_ask: bool = False
    ask_margin: float = 0.0
    ask_lead: float = 0.0


@dataclass(frozen=True)
class PlanOutcome:
    plan: ActivationPlan
    #: idx -> (status, reason) for candidates that were considered but not selected.
    covered: dict[int, tuple[str, str]]
    #: Selected candidates, in plan (execution) order.
    selected: tuple[Candidate, ...]
    #: idx -> why a selected candidate is in the plan.
    reasons: dict[int, str]
    #: Skills named beside the plan for the user's model (best first).
    pointers: tuple[Pointer, ...] = ()


def estimate_cost(skills: Sequence[Candidate]) -> str:
    """``none`` / ``low`` / ``medium`` / ``high`` from the summed cost hints."""
    if not skills:
        return "none"
    points = sum(_COST_POINTS.get(c.cost_hint, 2) for c in skills)
    return "low" if points <= 1 else "medium" if points <= 3 else "high"


def build_plan(
    candidates: Sequence[Candidate],
    *,
    clauses: Sequence[Clause],
    rules: PlanRules,
    overlap: Callable[[int, int], float],
    conflicts: Callable[[int, int], bool],
) -> PlanOutcome:
    """Select the primary (or forced) skills and their companions; lay them out as a plan."""
    selected: list[Candidate] = []
    reasons: dict[int, str] = {}
    covered: dict[int, tuple[str, str]] = {}
    usable = [c for c in candidates if not c.blocked]

    for c in usable:
        if c.forced and c.eligible:
            selected.append(c)
            reasons[c.idx] = f"forced by the user ({c.forced_words})"
    if not selected:
        passing = [c for c in usable if c.eligible and not c.forced]
        if not passing and rules.brief_ask and rules.ask_margin > 0:
            clear = _clear_ask(usable, rules)
            if clear is not None:
                selected.append(clear)
                reasons[clear.idx] = (
                    f"a brief ask whose best skill leads by a wide margin ({clear.total:.2f}, "
                    f"within {rules.ask_margin:.2f} of the threshold {rules.threshold:.2f})"
                )
        elif passing:
            pick = _tie_pick(passing)
            selected.append(pick)
            reasons[pick.idx] = "passes the threshold on the whole request"
            best = max(passing, key=lambda c: c.total)
            if best is not pick:
                reasons[pick.idx] += (
                    f"; ties with {best.name} ({best.total:.2f}): lower cost or higher "
                    "success rate first"
                )
    primary = selected[0] if selected else None
    clause_of: dict[int, int] = {}
    near_companion: list[tuple[Candidate, str]] = []
    if selected:
        clause_of = _add_companions(
            selected, usable, clauses, rules, overlap, reasons, covered, near_companion
        )

    chosen = {c.idx for c in selected}
    near = rules.threshold - NEAR_MARGIN
    for c in usable:
        if c.idx in chosen or c.idx in covered:
            continue
        # Only a close runner-up whose total alone kept it out (not a gate such as the
        # semantic top-k) is told about the plan.
        close = c.total >= near and c.status == "below_threshold" and c.reason.startswith("total")
        if not (c.eligible or close):
            continue
        # A close runner-up is told why it is out: it overlaps a planned skill, or (when
        # it passes) the plan already serves the request; else it stays below_threshold.
        clash = _overlapping(c, selected, overlap, rules.overlap_threshold)
        if clash is not None:
            covered[c.idx] = ("covered", _overlap_reason(clash, overlap(clash.idx, c.idx), rules))
        elif c.eligible:
            names = ", ".join(s.name for s in selected)
            covered[c.idx] = ("covered", f"passes, but {names} already serve the request")

    selected.sort(key=lambda c: (not c.forced, clause_of.get(c.idx, _home_clause(c))))
    answered: tuple[Pointer, ...] = ()
    if rules.quick_fact and rules.pointers and selected and not any(c.forced for c in selected):
        answered = _quick_fact_pointers(selected, reasons, covered, rules)
        selected, primary = [], None
    groups = _groups(selected, rules.max_parallel, conflicts)
    plan = ActivationPlan(
        skills=tuple(
            PlannedSkill(
                name=c.name,
                forced=c.forced,
                score=round(c.total, 4),
                cost_hint=c.cost_hint,
                parallel_safe=c.parallel_safe,
            )
            for c in selected
        ),
        groups=groups,
        estimated_cost=estimate_cost(selected),
        fallback_path=_fallback_path(selected, candidates, rules.threshold),
        primary=primary.name if primary is not None else None,
    )
    pointers = (
        answered or _pointers(primary, selected, usable, near_companion, clauses, rules, overlap)
        if rules.pointers
        else ()
    )
    return PlanOutcome(
        plan=plan, covered=covered, selected=tuple(selected), reasons=reasons, pointers=pointers
    )


#: How the reason of a skill pointed to for a quick question of fact begins (``explain``
#: and ``why_not`` read it).
QUICK_FACT_REASON = "a quick question of fact about what the request shows"
#: Why a quick question of fact gets pointers (see the module docstring).
QUICK_FACT_WHY = (
    "the request asks a quick question of fact about what it shows: load this only if "
    "the answer needs its procedure"
)


def _quick_fact_pointers(
    selected: Sequence[Candidate],
    reasons: dict[int, str],
    covered: dict[int, tuple[str, str]],
    rules: PlanRules,
) -> tuple[Pointer, ...]:
    """The skills the plan would inject, as pointers; each is told why it is out."""
    for c in selected:
        reasons.pop(c.idx, None)
        covered[c.idx] = (
            "below_threshold",
            f"{QUICK_FACT_REASON}: pointed to, not injected (total {c.total:.2f}; "
            f"threshold {rules.threshold:.2f})",
        )
    return tuple(
        Pointer(name=c.name, why=QUICK_FACT_WHY, load=f"skillrt show {c.name}")
        for c in selected[:MAX_POINTERS]
    )


def _clear_ask(usable: Sequence[Candidate], rules: PlanRules) -> Candidate | None:
    """The best candidate of a brief ask when it nearly passes and leads clearly."""
    ranked = sorted((c for c in usable if not c.forced), key=lambda c: -c.total)
    if not ranked:
        return None
    best = ranked[0]
    # Only a total kept it out: not a gate (top-k, anti-trigger, safety).
    if best.status != "below_threshold" or not best.reason.startswith("total") or best.anti:
        return None
    if best.total < rules.threshold - rules.ask_margin:
        return None
    runner_up = ranked[1].total if len(ranked) > 1 else 0.0
    return best if runner_up <= rules.ask_lead * best.total else None


def _pointers(
    primary: Candidate | None,
    selected: Sequence[Candidate],
    usable: Sequence[Candidate],
    near_companion: Sequence[tuple[Candidate, str]],
    clauses: Sequence[Clause],
    rules: PlanRules,
    overlap: Callable[[int, int], float],
) -> tuple[Pointer, ...]:
    """The skills the user's model should weigh itself (see the module docstring)."""
    if primary is None or primary.forced or primary.total <= 0:
        return ()
    chosen = {c.idx for c in selected}
    out: list[tuple[Candidate, str]] = [
        (c, why) for c, why in near_companion if c.total >= rules.pointer_floor * primary.total
    ]
    others = sorted(
        (c for c in usable if c.idx not in chosen and not c.forced and not c.anti),
        key=lambda c: -c.total,
    )
    for c in others[:MAX_POINTERS]:
        share = c.total / primary.total
        similar = overlap(primary.idx, c.idx)
        if share >= rules.pointer_runner_up or (
            share >= rules.pointer_floor and similar >= rules.pointer_similar
        ):
            why = (
                f"close runner-up to {primary.name} ({c.total:.2f} against "
                f"{primary.total:.2f}; similarity {similar:.2f}): the model may weigh both"
            )
            out.append((c, why))
    out += _second_needs(primary, chosen, usable, clauses, rules, overlap)
    seen: set[int] = set()
    pointers: list[Pointer] = []
    for c, why in out:
        if c.idx in seen or c.idx in chosen:
            continue
        seen.add(c.idx)
        pointers.append(Pointer(name=c.name, why=why, load=f"skillrt show {c.name}"))
        if len(pointers) == MAX_POINTERS:
            break
    return tuple(pointers)


def _second_needs(
    primary: Candidate,
    chosen: set[int],
    usable: Sequence[Candidate],
    clauses: Sequence[Clause],
    rules: PlanRules,
    overlap: Callable[[int, int], float],
) -> list[tuple[Candidate, str]]:
    """The primary's first :data:`SECOND_NEED_DEPTH` runners-up that the learned model
    reads as serving a second need, most likely first."""
    if rules.second_need is None or rules.pointer_second_need > 1.0:
        return []
    from skillrt.routing.second_need import features

    asking = [clause.asks for clause in clauses]
    ranked = sorted((c for c in usable if c is not primary), key=lambda c: -c.total)
    found: list[tuple[float, Candidate]] = []
    for rank, c in enumerate(ranked[:SECOND_NEED_DEPTH], 1):
        if c.idx in chosen or c.forced or c.anti:
            continue
        p = rules.second_need(features(primary, c, rank, asking, overlap))
        if p >= rules.pointer_second_need:
            found.append((p, c))
    found.sort(key=lambda pc: -pc[0])
    return [
        (c, f"may serve a second part of the request (probability {p:.2f} beside {primary.name})")
        for p, c in found
    ]


def companion_input(
    c: Candidate, clause: int, planned: Sequence[Candidate], overlap: Callable[[int, int], float]
) -> CompanionInput:
    """What the planner sees of ``c`` for ``clause`` beside the ``planned`` skills (a
    forced skill serves the clause that named it, or every clause)."""
    served = 0.0
    for s in planned:
        if s.forced and s.forced_clause in (clause, -1):
            served = 1.0
        elif clause < len(s.clause_totals):
            served = max(served, s.clause_totals[clause])
    own = c.clause_totals[clause] if clause < len(c.clause_totals) else 0.0
    similar = max((overlap(s.idx, c.idx) for s in planned), default=0.0)
    return CompanionInput(own=own, served=served, overlap=similar, request=c.total)


def _home_clause(c: Candidate) -> int:
    """The part of the request a skill serves best (-1: the whole request)."""
    if c.forced:
        return c.forced_clause
    if not c.clause_totals:
        return -1
    return max(range(len(c.clause_totals)), key=c.clause_totals.__getitem__)


def _add_companions(
    selected: list[Candidate],
    usable: Sequence[Candidate],
    clauses: Sequence[Clause],
    rules: PlanRules,
    overlap: Callable[[int, int], float],
    reasons: dict[int, str],
    covered: dict[int, tuple[str, str]],
    near: list[tuple[Candidate, str]] | None = None,
) -> dict[int, int]:
    """Add companions to ``selected``; returns the clause each one joined for. The
    best clause skill that stays under the threshold but reaches ``pointer_companion``
    goes into ``near`` (a pointer)."""
    joined: dict[int, int] = {}
    if len(clauses) < 2:
        return joined
    limit = max(1, rules.max_parallel)
    others = [c for c in usable if c not in selected and not c.forced]
    while len(selected) < limit and others:
        best: tuple[float, Candidate, int, CompanionInput] | None = None
        for c in others:
            for k, clause in enumerate(clauses):
                if not clause.asks or k >= len(c.clause_first) or not c.clause_first[k]:
                    continue
                seen = companion_input(c, k, selected, overlap)
                if seen.overlap >= rules.overlap_threshold:
                    continue
                p = rules.needed(seen)
                if best is None or p > best[0]:
                    best = (p, c, k, seen)
        if best is None:
            break
        p, pick, k, seen = best
        others.remove(pick)
        quote = _quote(clauses[k].text)
        if p < rules.companion_threshold:
            covered[pick.idx] = (
                "below_threshold",
                f"best for {quote}, but needed there {p:.2f} < {rules.companion_threshold:.2f} "
                f"(its total there {seen.own:.2f}; the plan serves it {seen.served:.2f})",
            )
            if near is not None and p >= rules.pointer_companion:
                why = (
                    f"may serve {quote}: needed there {p:.2f}, under the companion "
                    f"threshold {rules.companion_threshold:.2f}"
                )
                near.append((pick, why))
            break
        selected.append(pick)
        joined[pick.idx] = k
        reasons[pick.idx] = (
            f"joins for {quote}: needed there {p:.2f} >= {rules.companion_threshold:.2f} "
            f"(its total there {seen.own:.2f}; "
            f"{', '.join(s.name for s in selected[:-1])} serves it {seen.served:.2f})"
        )
    return joined


def _overlapping(
    c: Candidate, selected: Sequence[Candidate], overlap: Callable[[int, int], float], at: float
) -> Candidate | None:
    return next((s for s in selected if s is not c and overlap(s.idx, c.idx) >= at), None)


def _overlap_reason(clash: Candidate, similarity: float, rules: PlanRules) -> str:
    return (
        f"overlaps {clash.name}, already selected (similarity {similarity:.2f} >= "
        f"{rules.overlap_threshold:.2f})"
    )


def _quote(text: str) -> str:
    words = " ".join(text.split())
    if len(words) > QUOTE_CHARS:
        words = words[: QUOTE_CHARS - 3].rstrip() + "..."
    return f'"{words}"'


def _tie_pick(pool: Sequence[Candidate]) -> Candidate:
    best_total = max(c.total for c in pool)
    tied = [c for c in pool if c.total >= best_total - TIE_EPSILON]
    return min(
        tied,
        key=lambda c: (_COST_RANK.get(c.cost_hint, 1), -c.success_rate, -c.total, c.name),
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
    ordered: Sequence[Candidate], candidates: Sequence[Candidate], threshold: float
) -> tuple[str, ...]:
    if not ordered:
        return ("ask-user",)
    chosen = {c.idx for c in ordered}
    near = threshold - NEAR_MARGIN
    alts = sorted(
        (
            c
            for c in candidates
            if c.idx not in chosen and not c.blocked and not c.forced and c.total >= near
        ),
        key=lambda c: -c.total,
    )
    out = [c.name for c in alts[: MAX_FALLBACKS_PER_SKILL * len(ordered)]]
    return (*out, "no-skill", "ask-user")
