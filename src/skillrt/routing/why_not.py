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
``companion_below_threshold``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillrt.routing.plan import ScoredCandidate
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


def _reason_from(code: str) -> Callable[[ScoredCandidate], Reason]:
    return lambda c: Reason(code, c.reason or code.replace("_", " "))


def _covered(c: ScoredCandidate) -> Reason:
    code = "overlaps" if c.reason.startswith("overlaps") else "covered_by_primary"
    return Reason(code, c.reason or "the plan already serves the request")


def _below(c: ScoredCandidate) -> Reason:
    code = "companion_below_threshold" if c.reason.startswith("best for") else "below_threshold"
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
    if mine is None:
        reasons.append(_not_recalled(router, query, i, len(candidates)))
    else:
        if name in selected:
            reasons.append(Reason("selected", f"it is selected ({mine.score.total:.2f})"))
        else:
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
        if winner is not None and winner.name != name:
            reasons.append(_difference(mine, winner))
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
    if mine is not None:
        damping = mine.score.signals.get("cold_start_factor", 1.0)
        if damping < 1.0:
            out.append(
                Reason(
                    "cold_start",
                    f"cold start: few routes have selected it yet, so its total is damped "
                    f"x{damping:.2f}",
                )
            )
    return out


def _difference(mine: ScoredCandidate | None, winner: ScoredCandidate) -> Reason:
    """Where the winner's terms beat the skill's, largest gap first."""
    if mine is None:
        return Reason("winner", f"{winner.name} is selected ({winner.score.total:.2f})")
    gaps = sorted(
        ((float(getattr(winner.score, t)) - float(getattr(mine.score, t)), t) for t in TERMS),
        reverse=True,
    )
    parts = [f"{t} {getattr(winner.score, t):.2f} vs {getattr(mine.score, t):.2f}"
             for gap, t in gaps if gap > 0.005][:3]  # fmt: skip
    matched = f"; {winner.name} matched its {winner.score.matched}" if winner.score.matched else ""
    detail = ", ".join(parts) if parts else "equal terms"
    return Reason("winner", f"{winner.name} wins on {detail}{matched}")


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
