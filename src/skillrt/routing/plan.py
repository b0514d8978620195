"""What the router returns (seed 001 §4.2, §6-8): candidates, scores, the plan."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from skillrt.score_terms import SCORE_TERMS, term_fields

RecallSource = Literal["forced", "rule", "lexical", "semantic"]


@term_fields()
class ScoreBreakdown:
    """The six terms of seed 001 §6.2 (a field per :data:`~skillrt.score_terms.SCORE_TERMS`
    entry: ``intent_match``, ``trigger_match``, ``success_rate``, ``context_readiness``,
    ``cost_penalty``, ``conflict_penalty``), each in 0..1 before weighting, and the total."""

    if TYPE_CHECKING:  # the term fields are made with the class
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

        def __init__(self, *args: Any, **kwargs: Any) -> None: ...

        def __getattr__(self, name: str) -> float: ...

    #: Weighted sum after calibration, cold-start damping and penalties, in 0..1.
    total: float
    #: Raw signals behind intent_match (e.g. semantic cosine, bm25), for --explain.
    signals: dict[str, float] = field(default_factory=dict)
    #: For --explain: the part of the skill that matched best ("description",
    #: "example: ...", or "section: <heading>" of its body).
    matched: str = ""

    @classmethod
    def of(cls, terms: Mapping[str, float], total: float) -> ScoreBreakdown:
        """The breakdown of the six terms by name (``signals.SCORE_TERMS``), rounded."""
        return cls(**{t.name: round(terms[t.name], 4) for t in SCORE_TERMS}, total=round(total, 4))


@dataclass(frozen=True)
class ScoredCandidate:
    """One recalled skill with where it came from and how it scored."""

    name: str
    sources: tuple[RecallSource, ...]
    forced: bool
    score: ScoreBreakdown
    #: "selected", "below_threshold", "unavailable", "anti_trigger", "covered", "disabled".
    status: str
    reason: str = ""
    #: Unmet prerequisites (bins/env) when status is "unavailable".
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlannedSkill:
    """A skill the plan will run."""

    name: str
    forced: bool
    score: float
    cost_hint: str
    parallel_safe: bool


@dataclass(frozen=True)
class Pointer:
    """A skill the plan does not inject but names for the user's own model to weigh:
    the decision was uncertain (a close runner-up, or a part of the request whose best
    skill stayed under the companion threshold). Never a body: a few dozen tokens."""

    name: str
    #: One line on why it is pointed to.
    why: str
    #: How to load it: ``skillrt show NAME`` (a surface may name its client's own tool).
    load: str


@dataclass(frozen=True)
class ActivationPlan:
    """Skills to run, in order / parallel groups, with cost and the fallback path."""

    skills: tuple[PlannedSkill, ...]
    #: Execution order: each inner tuple runs in parallel (at most max_parallel_skills).
    groups: tuple[tuple[str, ...], ...]
    estimated_cost: str
    #: Where to go when a step fails: next-best skills, then "no-skill", then "ask-user".
    fallback_path: tuple[str, ...]
    #: The skill chosen for the request as a whole (or the user's forced one): a context
    #: budget gives it its whole body first. None for a no-skill plan.
    primary: str | None = None

    @property
    def no_skill(self) -> bool:
        return not self.skills

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.skills)


@dataclass(frozen=True)
class RouteResult:
    """The router's full answer; "no skill" is a valid plan with its reason."""

    route_id: str
    query: str
    plan: ActivationPlan
    routing_reason: str
    candidates: tuple[ScoredCandidate, ...]
    events: tuple[dict[str, Any], ...] = ()
    latency_ms: float = 0.0
    #: Which routing config served this route (gray release, seed 001 §15).
    config_id: str = "default"
    #: Skills beside the plan for the user's model to weigh (at most two; see
    #: :class:`Pointer`), best first.
    pointers: tuple[Pointer, ...] = ()
