"""The router's one record of a candidate skill, from recall through the plan.

Recall (:mod:`skillrt.routing.recall`) creates it with where it came from; the decision
(:mod:`skillrt.routing.decide`) fills in its score, status and planning facts; the
planner (:mod:`skillrt.routing.planner`) reads it; :meth:`Candidate.scored` is the one
conversion, to the public :class:`~skillrt.routing.plan.ScoredCandidate`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from skillrt.routing.plan import RecallSource, ScoreBreakdown, ScoredCandidate

__all__ = ["SOURCE_ORDER", "Candidate"]

SOURCE_ORDER: tuple[RecallSource, ...] = ("forced", "rule", "lexical", "semantic")


@dataclass(eq=False)
class Candidate:
    """One skill in the router's pool (``idx``: its position in the index)."""

    idx: int
    name: str
    # -- recall: why it is in the pool ---------------------------------------------------
    sources: set[str] = field(default_factory=set)
    #: Named by the user ("$x", "use the x skill"): skips the threshold, not safety.
    forced: bool = False
    forced_words: str = ""
    #: For a forced skill: the clause whose words named it (-1: the whole query).
    forced_clause: int = -1
    #: Trigger phrases of the skill found in the query.
    triggers: list[str] = field(default_factory=list)
    #: Anti-trigger phrases of the skill found in the query.
    anti: list[str] = field(default_factory=list)
    #: The conversation history names the skill.
    history_named: bool = False
    # -- decision: how it scored and what may happen to it -------------------------------
    cost_hint: str = "medium"
    parallel_safe: bool = False
    success_rate: float = 0.5
    #: Total judged on the whole request: the primary is chosen on it.
    total: float = 0.0
    #: Clause-level totals (one per clause of a multi-clause request; else empty).
    clause_totals: list[float] = field(default_factory=list)
    #: Per clause: it is the best candidate for that clause (a companion needs one).
    clause_first: list[bool] = field(default_factory=list)
    #: Raw fused evidence for the whole query (NaN: not scored; orders ties).
    fused: float = float("nan")
    #: Passed the threshold on the whole request and every safety check (or is forced
    #: and safe): it may be the primary.
    eligible: bool = False
    #: Blocked by safety or the user's words (``decide.BLOCKING``): never selected, never
    #: a fallback.
    blocked: bool = False
    status: str = ""
    reason: str = ""
    #: Unmet prerequisites (bins/env).
    missing: tuple[str, ...] = ()
    breakdown: ScoreBreakdown | None = None

    def scored(self) -> ScoredCandidate:
        """The public view of this candidate (after the decision)."""
        assert self.breakdown is not None, "scored() before the decision"
        return ScoredCandidate(
            name=self.name,
            sources=tuple(s for s in SOURCE_ORDER if s in self.sources),
            forced=self.forced,
            score=self.breakdown,
            status=self.status,
            reason=self.reason,
            missing=self.missing,
        )
