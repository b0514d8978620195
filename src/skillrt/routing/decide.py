"""Stage 2 (seed 001 §6.2, §7, §9): score the pool, judge each member, build the plan.

Each candidate gets the six terms of §6.2 (:data:`~skillrt.routing.signals.SCORE_TERMS`,
combined by :mod:`skillrt.routing.scoring`), judged on the whole request and on each
clause of a multi-clause request; then its status by the conflict order of R5, highest
first:

1. the user's explicit words: "don't use X" excludes X whatever else says; ``$x`` /
   "use the x skill" forces x past the threshold;
2. safety and permissions: missing prerequisites (``unavailable``), a disabled skill,
   ``disable-model-invocation`` unless the user named it on a user surface;
3. system policy: the threshold on the whole request, the semantic top-k, anti-trigger
   penalties;
4. skill defaults: cost hints and parallel safety shape the plan
   (:mod:`skillrt.routing.planner`: the primary skill, then companions that each serve a
   part of the request of their own).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from skillrt.config import RoutingConfig
from skillrt.routing.candidate import Candidate
from skillrt.routing.directives import Directives
from skillrt.routing.evidence import Evidence
from skillrt.routing.explain import matched_part, signals
from skillrt.routing.plan import ScoreBreakdown
from skillrt.routing.planner import Clause, PlanOutcome, PlanRules, build_plan
from skillrt.routing.recall import Pool
from skillrt.routing.request_form import (
    asks,
    brevity,
    fact_about_material,
    is_question,
    own_words,
)
from skillrt.routing.scoring import COST_VALUE, Terms, cold_start_factor, combine, success_term
from skillrt.routing.signals import TermInput, companion_signals, term_values

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from skillrt.routing.calibration import ScoreModel
    from skillrt.routing.index import RouterIndex
    from skillrt.routing.prereqs import PrerequisiteChecker
    from skillrt.skills.model import Skill
    from skillrt.store.stats import SkillStats

__all__ = ["USER_SURFACES", "Decision", "decide", "intents", "overlap_threshold"]

#: Surfaces where the text is the user's own words (``disable-model-invocation`` skills
#: may be forced from these; from "mcp"/"model" they may not).
USER_SURFACES = frozenset({"cli", "library", "user", "eval"})
#: Statuses that keep a skill out of the plan and its fallbacks: the user's words and
#: safety (R5 1-2).
BLOCKING = frozenset({"excluded", "disabled", "manual_only", "unavailable"})


@dataclass(frozen=True)
class Decision:
    """The judged pool: candidates in output order (selected first) and the plan."""

    candidates: tuple[Candidate, ...]
    outcome: PlanOutcome


def overlap_threshold(cfg: RoutingConfig, model: ScoreModel) -> float:
    """The document similarity at which two skills overlap: the config's, else the
    score model's (fitted per embedding backend)."""
    return model.overlap if cfg.overlap_threshold is None else cfg.overlap_threshold


def decide(
    index: RouterIndex,
    pool: Pool,
    ev: Evidence,
    clause_ev: Sequence[Evidence],
    directives: Directives,
    *,
    clauses: Sequence[str],
    query: str = "",
    model: ScoreModel,
    cfg: RoutingConfig,
    stats: Mapping[str, SkillStats],
    prereqs: PrerequisiteChecker,
    surface: str,
    damp_cold_start: bool,
    explain: bool,
) -> Decision:
    """Score and judge every pool member, then build the minimal covering plan."""
    members = list(pool.members)
    intents_q = intents(model, ev, members)
    intents_c = [intents(model, cev, members) for cev in clause_ev]
    fused_q = ev.values(ev.fused, members)
    # The best candidate of each clause (a companion must be one).
    firsts = [int(cev.rows[int(cev.fused.argmax())]) if len(cev.fused) else -1 for cev in clause_ev]
    threshold = cfg.selection_threshold
    for m, (i, cand) in enumerate(pool.members.items()):
        skill = index.skills[i]
        clause_intents = [float(ci[m]) for ci in intents_c]
        terms, damping = _score(
            cand,
            skill,
            pool,
            float(intents_q[m]),
            clause_intents,
            stats.get(cand.name),
            prereqs.missing(skill.routing.prerequisites),
            cfg,
            damp_cold_start,
        )
        cand.clause_first = [first == i for first in firsts]
        cand.fused = float(fused_q[m])
        cand.status, cand.reason = _status(
            cand,
            skill,
            index.enabled[i],
            threshold,
            directives,
            surface,
            i in pool.top_select or cand.forced or bool(cand.triggers) or "rule" in cand.sources,
        )
        cand.eligible = cand.status == "pass"
        # An anti-trigger hit on the whole request keeps a skill from being the primary;
        # it may still serve a clause without the hit (its clause total carries it).
        cand.blocked = cand.status in BLOCKING
        if explain and cand.breakdown is not None:
            sig = signals(
                ev, ev.index_of(i), float(intents_q[m]), clause_intents, terms, model, cfg, damping
            )
            matched = matched_part(index, ev, ev.index_of(i), i)
            cand.breakdown = replace(cand.breakdown, signals=sig, matched=matched)

    candidates = list(pool.members.values())
    rules = PlanRules(
        threshold=threshold,
        companion_threshold=cfg.companion_threshold,
        max_parallel=cfg.max_parallel_skills,
        overlap_threshold=overlap_threshold(cfg, model),
        needed=lambda seen: model.companion(companion_signals(seen)),
        pointers=cfg.pointers,
        pointer_runner_up=cfg.pointer_runner_up,
        pointer_floor=cfg.pointer_floor,
        pointer_similar=cfg.pointer_similar,
        pointer_companion=cfg.pointer_companion,
        second_need=_second_need(cfg),
        pointer_second_need=cfg.pointer_second_need,
        quick_fact=cfg.point_quick_facts and fact_about_material(query),
        brief_ask=brief_ask(query),
        ask_margin=cfg.brief_ask_margin,
        ask_lead=cfg.brief_ask_lead,
    )
    outcome = build_plan(
        candidates,
        clauses=[Clause(text, asks(text)) for text in clauses] if clause_ev else [],
        rules=rules,
        overlap=index.overlap,
        conflicts=lambda a, b: _conflict(index, a, b, rules.overlap_threshold),
    )
    chosen = {c.idx for c in outcome.selected}
    for c in candidates:
        if c.idx in chosen:
            c.status, c.reason = "selected", outcome.reasons[c.idx]
        elif c.idx in outcome.covered:
            c.status, c.reason = outcome.covered[c.idx]
    # The primary first, then the rest of the plan (in its order), then the others.
    primary = outcome.plan.primary
    order = {
        c.idx: n for n, c in enumerate(sorted(outcome.selected, key=lambda c: c.name != primary))
    }
    ordered = sorted(candidates, key=lambda c: (order.get(c.idx, len(order)), *_rank_key(c)))
    return Decision(tuple(ordered), outcome)


def _second_need(cfg: RoutingConfig) -> Callable[[Sequence[float]], float] | None:
    """The shipped second-need model's probability, when pointers read it."""
    if not cfg.pointers or cfg.pointer_second_need > 1.0:
        return None
    from skillrt.routing.second_need import shipped

    return shipped().probability


def brief_ask(query: str) -> bool:
    """A brief message that asks for work and is not a question (seed 001 §6.1's short,
    plain request; ``request_form``)."""
    return bool(query) and brevity(query) > 0 and asks(query) and not is_question(own_words(query))


def intents(model: ScoreModel, ev: Evidence, members: Sequence[int]) -> NDArray[np.float64]:
    """Calibrated intent of each member for one text (0 where it was not scored)."""
    import numpy as np

    if not members or not len(ev.fused):
        return np.zeros(len(members))
    fused = ev.values(ev.fused, members)
    p = model.intent(np.nan_to_num(fused, nan=-1e3), float(ev.fused.max()), ev.signals)
    out: NDArray[np.float64] = np.where(np.isnan(fused), 0.0, p)
    return out


def _score(
    cand: Candidate,
    skill: Skill,
    pool: Pool,
    intent_q: float,
    clause_intents: Sequence[float],
    st: SkillStats | None,
    missing: tuple[str, ...],
    cfg: RoutingConfig,
    damp_cold_start: bool,
) -> tuple[Terms, float]:
    """The six terms, the whole-request and clause totals, and the breakdown.

    Returns the terms of the whole request and the cold-start damping applied.
    """
    i = cand.idx
    success = success_term(st.successes, st.failures) if st is not None else 0.5
    readiness = 0.5
    if pool.history_lexical is not None:
        affinity = 1.0 if cand.history_named else 0.0
        affinity = max(affinity, min(1.0, 2.0 * float(pool.history_lexical[i])))
        readiness = 0.5 + 0.5 * affinity
    if missing:
        readiness = 0.0
    base = TermInput(
        intent=intent_q,
        triggers=bool(cand.triggers),
        anti=bool(cand.anti),
        success=success,
        readiness=readiness,
        cost=COST_VALUE.get(skill.routing.cost_hint, 0.5),
    )
    t = term_values(base)
    damping = 1.0
    if not cand.forced and damp_cold_start:
        damping = cold_start_factor(st.routes if st is not None else 0, cfg)
    total = combine(t, cfg, anti_trigger=bool(cand.anti), damping=damping)
    # Each clause is judged on its own words: its intent, its anti-triggers.
    clause_totals = [
        combine(
            term_values(TermInput(ci, base.triggers, i in anti, success, readiness, base.cost)),
            cfg,
            anti_trigger=i in anti,
            damping=damping,
        )
        for ci, anti in zip(clause_intents, pool.clause_anti, strict=True)
    ]
    cand.cost_hint = skill.routing.cost_hint
    cand.parallel_safe = skill.routing.parallel_safe
    cand.success_rate = success
    cand.total = total
    cand.clause_totals = clause_totals
    cand.missing = missing
    cand.breakdown = ScoreBreakdown.of(t, total)
    return t, damping


def _status(
    cand: Candidate,
    skill: Skill,
    enabled: bool,
    threshold: float,
    directives: Directives,
    surface: str,
    selectable: bool,
) -> tuple[str, str]:
    """``(status, reason)`` by the conflict order of R5; "pass" means eligible."""
    name = cand.name
    if name in directives.excluded:
        return "excluded", f"the user excluded it ({directives.excluded[name]})"
    if not enabled:
        return "disabled", f"disabled; enable it with `skillrt enable {name}`"
    if skill.disable_model_invocation and not (cand.forced and surface in USER_SURFACES):
        if cand.forced:
            return "manual_only", (
                f"disable-model-invocation: only the user can invoke it, not the {surface} surface"
            )
        return "manual_only", "disable-model-invocation: never selected automatically"
    if cand.missing:
        return "unavailable", f"missing prerequisites: {', '.join(cand.missing)}"
    if cand.forced:
        return "pass", ""
    if cand.anti and cand.total < threshold:
        return "anti_trigger", f"anti-trigger hit: {', '.join(cand.anti)}"
    if cand.total < threshold:
        return "below_threshold", f"total {cand.total:.2f} < threshold {threshold:.2f}"
    if not selectable:
        return "below_threshold", "outside the semantic top-k"
    return "pass", ""


def _conflict(index: RouterIndex, a: int, b: int, overlap_at: float) -> bool:
    """Two skills conflict when one's anti-triggers name the other, or they overlap."""
    sa, sb = index.skills[a], index.skills[b]
    for x, y in ((sa, sb), (sb, sa)):
        if x.routing.anti_triggers:
            from skillrt.routing.phrases import PhraseIndex

            p = PhraseIndex()
            p.add_all(x.routing.anti_triggers, 0)
            if p.match(f"{y.name} {y.description}"):
                return True
    return index.overlap(a, b) >= overlap_at


def _rank_key(c: Candidate) -> tuple[float, int, float, float, str]:
    # Candidates are listed selected first (in plan order), then by their whole-request
    # total; totals equal to three decimals tie: then cost (R4), success rate, raw
    # evidence.
    cost = {"low": 0, "medium": 1, "high": 2}.get(c.cost_hint, 1)
    fused = c.fused if c.fused == c.fused else -1.0  # NaN: not scored for the query
    return (-round(c.total, 3), cost, -c.success_rate, -fused, c.name)
