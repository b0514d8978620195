"""Why a skill is not what a request selects (``skillrt route "..." --why-not SKILL``).

Read-only and additive: it routes the request once with ``explain=True`` and reads what
the router exposes (its candidates, their six terms and signals, their status and
reason, the threshold), plus the index for a skill that was never recalled. Nothing
here changes a routing decision, and nothing is recorded.

Each reason has a stable ``code``. A candidate's status maps to its reason through
:data:`STATUS_REASONS`: one entry per status the decision stage gives, with the
decision's own explanation (``candidate.reason``) as the message; a new status needs one
entry, nothing else. The planner's ``covered`` is told apart by its reason: covered by
the primary (``covered_by_primary``), too similar to a planned skill (``overlaps``); a
companion that was the best for a clause but below its own threshold is
``companion_below_threshold``; a skill that passed but was only pointed to because the
request asks a quick question of fact about what it shows is ``quick_fact``.

Why the skill lost is said in words: the winner and the part of the score that decided
between them (:mod:`skillrt.routing.margins`: the part with the largest gap in
log-odds; a part that favours the skill or moves nothing is never named), the request
words the skill's text lacks (``missing_words``) and those the winner's text has
(``winner_words``). Cold start is a reason only when it decided: when the skill,
undamped, would have beaten the winner (or passed the threshold). Penalties are said
as what happened ("an anti-trigger of X matched", "Y is cheaper"), never as a number
whose direction the reader must guess.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillrt.routing.plan import ScoredCandidate
from skillrt.routing.planner import QUICK_FACT_REASON
from skillrt.routing.signals import SCORE_TERMS

if TYPE_CHECKING:
    from skillrt.routing.router import Router

__all__ = ["STATUS_REASONS", "Reason", "WhyNot", "why_not"]

#: The six terms, in the seed's order (``signals.SCORE_TERMS``).
TERMS = tuple(t.name for t in SCORE_TERMS)


@dataclass(frozen=True)
class Reason:
    """One reason the skill was not selected: a stable ``code`` and a sentence."""

    code: str
    message: str


@dataclass(frozen=True)
class WhyNot:
    """``route --why-not SKILL --json`` prints ``{"why_not": <this>}``."""

    skill: str
    #: 1-based rank among the route's candidates (None: not recalled at all).
    rank: int | None
    #: Its calibrated total (None: not scored).
    score: float | None
    #: The skill the route selects first (None: no skill).
    winner: str | None
    reasons: tuple[Reason, ...]
    winner_score: float | None = None
    threshold: float = 0.0
    #: Its status in the route ("not_recalled" when it was not a candidate).
    status: str = ""
    #: Each of the six terms and the total, for the skill and the winner.
    terms: dict[str, dict[str, float]] = field(default_factory=dict)
    selected: tuple[str, ...] = ()
    query: str = ""
    #: The part of the score that decided against the skill (a score term, or
    #: ``cold_start``); None when it is selected or nothing was compared.
    decided_by: str | None = None
    #: The request's words the skill's text lacks, and those the winner's text has
    #: that the skill's does not (as the request writes them).
    missing_words: tuple[str, ...] = ()
    winner_words: tuple[str, ...] = ()


def _reason_from(code: str) -> Callable[[ScoredCandidate], Reason]:
    return lambda c: Reason(code, c.reason or code.replace("_", " "))


def _covered(c: ScoredCandidate) -> Reason:
    code = "overlaps" if c.reason.startswith("overlaps") else "covered_by_primary"
    return Reason(code, c.reason or "the plan already serves the request")


def _below(c: ScoredCandidate) -> Reason:
    code = "below_threshold"
    if c.reason.startswith("best for"):
        code = "companion_below_threshold"
    elif c.reason.startswith(QUICK_FACT_REASON):
        code = "quick_fact"
    return Reason(code, c.reason or "below the threshold")


#: candidate status -> its reason (see the module docstring: the decision stage's hook).
STATUS_REASONS: dict[str, Callable[[ScoredCandidate], Reason]] = {
    "excluded": _reason_from("excluded"),
    "disabled": _reason_from("disabled"),
    "manual_only": _reason_from("manual_only"),
    "unavailable": _reason_from("unavailable"),
    "anti_trigger": _reason_from("anti_trigger"),
    "below_threshold": _below,
    # Covered by the primary (it serves the request), or too similar to a planned skill.
    "covered": _covered,
}


def _terms(c: ScoredCandidate) -> dict[str, float]:
    s = c.score
    out = {name: float(getattr(s, name)) for name in TERMS}
    out["total"] = float(s.total)
    return out


def why_not(router: Router, query: str, skill: str) -> WhyNot:
    """Route ``query`` (explained, not recorded) and say why ``skill`` is not selected.

    Raises :class:`~skillrt.errors.SkillNotFound` for a name the catalogue lacks.
    """
    from skillrt.errors import SkillNotFound

    index = router.index
    rows, missing = index.rows_for([skill])
    if missing or not len(rows):
        raise SkillNotFound(f"no skill named {skill!r} in the catalogue routed over", name=skill)
    i = int(rows[0])
    name = index.names[i]
    result = router.route(query, explain=True, surface="cli", record=False)  # records nothing
    threshold = router.config.selection_threshold
    candidates = list(result.candidates)
    mine = next((c for c in candidates if c.name == name), None)
    winner = next((c for c in candidates if c.name == result.plan.primary), None)
    selected = result.plan.names
    reasons: list[Reason] = []
    terms: dict[str, dict[str, float]] = {}
    if mine is not None:
        terms["skill"] = _terms(mine)
    if winner is not None:
        terms["winner"] = _terms(winner)
    reasons += _gates(router, query, i, mine)
    decided: str | None = None
    lost = name not in selected
    if mine is None:
        reasons.append(_not_recalled(router, query, i, len(candidates)))
    elif not lost:
        damping = mine.score.signals.get("cold_start_factor", 1.0)
        damped = f", damped x{damping:.2f} by cold start" if damping < 1.0 else ""
        reasons.append(Reason("selected", f"it is selected ({mine.score.total:.2f}{damped})"))
    else:
        cold = _cold_start(router, mine, winner, threshold)
        if cold is not None:
            reasons.append(cold)
        explain = STATUS_REASONS.get(mine.status)
        if explain is not None:
            reason = explain(mine)
            if not any(r.code == reason.code for r in reasons):
                reasons.append(reason)
        if winner is not None and mine.status not in STATUS_REASONS:
            reasons.append(
                Reason(
                    "outranked",
                    f"{winner.name} scores {winner.score.total:.2f} against its "
                    f"{mine.score.total:.2f}; the plan covers the request without it",
                )
            )
    if winner is not None and winner.name != name and lost:
        reason, decided = _difference(router, name, mine, winner)
        reasons.append(reason)
    elif mine is not None and lost and winner is None:
        decided = _weakest(router, mine)
    missing, pulled = _words(router, query, i, winner)
    if lost and missing:
        reasons.append(
            Reason("missing_words", f"its text lacks the request's words: {', '.join(missing)}")
        )
    if lost and winner is not None and winner.name != name:
        reasons.append(_winner_words(winner, name, pulled))
    return WhyNot(
        skill=name,
        rank=candidates.index(mine) + 1 if mine is not None else None,
        score=round(mine.score.total, 4) if mine is not None else None,
        winner=winner.name if winner is not None else None,
        reasons=tuple(reasons),
        winner_score=round(winner.score.total, 4) if winner is not None else None,
        threshold=threshold,
        status=mine.status if mine is not None else "not_recalled",
        terms=terms,
        selected=selected,
        query=query,
        decided_by=decided,
        missing_words=tuple(missing) if lost else (),
        winner_words=tuple(pulled) if lost and winner is not None else (),
    )


def _gates(router: Router, query: str, i: int, mine: ScoredCandidate | None) -> list[Reason]:
    """The gates the skill fails whatever its score (and cold start, which damps it)."""
    index = router.index
    skill = index.skills[i]
    status = mine.status if mine is not None else ""
    out: list[Reason] = []
    if not index.enabled[i] and status != "disabled":
        out.append(
            Reason("disabled", f"disabled; enable it with `skillrt enable {index.names[i]}`")
        )
    if skill.disable_model_invocation and status != "manual_only":
        out.append(
            Reason("manual_only", "disable-model-invocation: only the user can invoke it ($name)")
        )
    missing = router.prereqs.missing(skill.routing.prerequisites)
    if missing and status != "unavailable":
        out.append(Reason("unavailable", f"missing prerequisites: {', '.join(missing)}"))
    anti = [m.phrase for m in index.anti_triggers.match(query) if m.owner == i]
    if anti and status != "anti_trigger":
        out.append(Reason("anti_trigger", f"anti-trigger hit: {', '.join(anti)}"))
    return out


def _cold_start(
    router: Router, mine: ScoredCandidate, winner: ScoredCandidate | None, threshold: float
) -> Reason | None:
    """Cold start, when it decided: undamped, the skill would have beaten the winner
    (or, with no winner, passed the threshold)."""
    from skillrt.routing.margins import undamped_total

    damping = mine.score.signals.get("cold_start_factor", 1.0)
    if damping >= 1.0:
        return None
    undamped = undamped_total(mine.score, router.config)
    bar = winner.score.total if winner is not None and winner.name != mine.name else threshold
    if undamped <= bar or undamped < threshold:
        return None
    return Reason(
        "cold_start",
        f"cold start: few routes have selected it yet, so its total is damped x{damping:.2f} "
        f"({undamped:.2f} -> {mine.score.total:.2f}); undamped it would be chosen",
    )


#: Each part of the score, said as what happened (``{w}``: the winner, ``{s}``: the
#: skill, ``{wv}`` / ``{sv}``: their values).
_PARTS = {
    "intent_match": "how well the request matches each text (intent_match {sv:.2f} against "
    "{w}'s {wv:.2f})",
    "trigger_match": "a trigger phrase of {w} is in the request",
    "success_rate": "{w} has succeeded more often (success rate {wv:.2f} against {sv:.2f})",
    "context_readiness": "{w} fits the conversation so far, or {s} misses a prerequisite "
    "(readiness {wv:.2f} against {sv:.2f})",
    "cost_penalty": "{w} is cheaper to run (cost_hint {wc} against {sc})",
    "conflict_penalty": "an anti-trigger of {s} is in the request (its total is cut)",
    "cold_start": "cold start: few routes have selected {s} yet (its total is damped)",
}
_COST = {1.0: "low", 0.5: "medium", 0.0: "high"}


def _part_text(part: str, name: str, mine: ScoredCandidate, winner: ScoredCandidate) -> str:
    wv = float(getattr(winner.score, part, 0.0))
    sv = float(getattr(mine.score, part, 0.0))
    return _PARTS.get(part, part).format(
        w=winner.name, s=name, wv=wv, sv=sv,
        wc=_COST.get(wv, f"{wv:.2f}"), sc=_COST.get(sv, f"{sv:.2f}"),
    )  # fmt: skip


def _difference(
    router: Router, name: str, mine: ScoredCandidate | None, winner: ScoredCandidate
) -> tuple[Reason, str | None]:
    """The winner, and the part of the score that decided between them (the largest
    gap in log-odds, :mod:`skillrt.routing.margins`)."""
    from skillrt.routing.margins import gaps

    if mine is None:
        return Reason("winner", f"{winner.name} is selected ({winner.score.total:.2f})"), None
    found = gaps(winner.score, mine.score, router.config)
    head = f"{winner.name} is selected ({winner.score.total:.2f} against {mine.score.total:.2f})"
    if not found:
        return Reason("winner", f"{head}; their totals are equal, the tie went to it"), None
    top = found[0]
    matched = (
        f"; {winner.name} matched on its {winner.score.matched}" if winner.score.matched else ""
    )
    return (
        Reason("winner", f"{head}; decided by {_part_text(top.part, name, mine, winner)}{matched}"),
        top.part,
    )


def _weakest(router: Router, mine: ScoredCandidate) -> str | None:
    """With no winner: the part that keeps the skill lowest (most negative weight)."""
    from skillrt.routing.margins import part_weights

    weights = part_weights(mine.score, router.config)
    part, weight = min(weights.items(), key=lambda kv: (kv[1], kv[0]))
    return part if weight < -1e-3 else None


def _words(
    router: Router, query: str, i: int, winner: ScoredCandidate | None
) -> tuple[list[str], list[str]]:
    """The request's words skill ``i``'s text lacks, and those of them the winner's
    text has (each as the request writes it, in its order)."""
    import re

    from skillrt.routing.text import terms

    lexical = router.index.lexical
    rival = router.index.position[winner.name] if winner is not None else None
    missing: dict[str, None] = {}
    pulled: dict[str, None] = {}
    for word in re.findall(r"\w[\w'-]*", query):
        found = terms(word)
        lacks = [t for t in found if not lexical.contains(t, i)]
        if not found or not lacks:
            continue
        missing.setdefault(word.lower())
        if rival is not None and any(lexical.contains(t, rival) for t in lacks):
            pulled.setdefault(word.lower())
    return list(missing), list(pulled)


def _winner_words(winner: ScoredCandidate, name: str, pulled: list[str]) -> Reason:
    if pulled:
        return Reason(
            "winner_words",
            f"words of the request in {winner.name}'s text and not in {name}'s: "
            + ", ".join(pulled),
        )
    signals = winner.score.signals
    closeness = f" (cosine {signals['cos_doc']:.2f})" if "cos_doc" in signals else ""
    return Reason(
        "winner_words",
        f"no request word is in {winner.name}'s text and not in {name}'s: it wins on "
        f"meaning{closeness}",
    )


def _not_recalled(router: Router, query: str, i: int, pool: int) -> Reason:
    """Where the skill stands by raw evidence, when it was not among the candidates."""
    import numpy as np

    from skillrt.routing.text import terms

    index = router.index
    lexical = index.lexical.score(terms(query)).norm
    lex_rank = int((lexical > lexical[i]).sum()) + 1
    parts = [f"#{lex_rank} of {len(index)} by word match ({float(lexical[i]):.2f})"]
    if index.semantic is not None and index.backend is not None:
        vector: Any = index.backend.embed_query(query)
        cos = index.semantic.doc_vectors @ np.asarray(vector, dtype=np.float32)
        sem_rank = int((cos > cos[i]).sum()) + 1
        parts.append(f"#{sem_rank} by meaning (cosine {float(cos[i]):.2f})")
    return Reason(
        "not_recalled",
        f"not among the {pool} candidates the router scored: it ranks " + " and ".join(parts),
    )
