"""What ``skillrt doctor`` reports: frozen values, printed as JSON by the one serializer.

Every finding carries ``action``: what a catalogue owner can do about it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Collision",
    "Copy",
    "DoctorReport",
    "Environment",
    "Evidence",
    "Finding",
    "ListingClient",
    "ListingReport",
    "RiskEntry",
    "RootStatus",
    "ShadowPair",
    "SkillTrigger",
    "StubSkill",
    "TriggerEval",
    "Unreachable",
]


@dataclass(frozen=True)
class RootStatus:
    """One skill root: searched or not, present or not, how many skills it holds."""

    path: str
    scope: str
    searched: bool
    exists: bool
    skills: int
    note: str = ""


@dataclass(frozen=True)
class Environment:
    """Where skills come from and what serves them."""

    roots: tuple[RootStatus, ...]
    catalogs: tuple[str, ...]
    skills: int
    store: dict[str, Any]
    backend: str
    daemon: dict[str, Any]
    #: client -> {"installed": bool, "where": [config files with skillrt's hook]}.
    hooks: dict[str, Any]
    #: Optional extras that are not installed: ``{"extra", "for", "install"}``.
    missing_extras: tuple[dict[str, str], ...]
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class Evidence:
    """One pseudo-request behind a finding: its text, where it came from, the scores."""

    request: str
    source: str
    #: The competing skill's calibrated total on it, and the skill's own.
    score: float
    own_score: float


@dataclass(frozen=True)
class ShadowPair:
    """``skill``'s requests go to ``shadowed_by``."""

    skill: str
    shadowed_by: str
    #: ``skill``'s routed_elsewhere times ``taken`` (0..1): how much of ``skill``'s
    #: requests are at stake and how often ``shadowed_by`` is right behind on them.
    score: float
    evidence: tuple[Evidence, ...]
    #: Words of those requests that ``shadowed_by``'s text also has (the pull).
    words: tuple[str, ...]
    #: Share of ``skill``'s held-out requests on which ``shadowed_by`` is one of the
    #: three strongest other skills, and on how many requests that was measured.
    taken: float
    requests: int
    #: Each is the strongest other skill on some of the other's requests.
    mutual: bool
    #: Of ``skill``'s requests, those on which ``shadowed_by`` passes the selection
    #: threshold (it would be selected): a pair is listed only with several.
    over_threshold: int
    #: ``duplicate`` (near-identical texts), ``overlap`` otherwise.
    kind: str
    action: str


@dataclass(frozen=True)
class StubSkill:
    """An empty or placeholder skill (:mod:`skillrt.doctor.stubs`)."""

    skill: str
    reason: str
    description: str
    #: Words in its body (0: none, or no body).
    body_words: int
    action: str


@dataclass(frozen=True)
class Copy:
    """``skill`` is a copy of ``copy_of`` (:mod:`skillrt.doctor.copies`)."""

    skill: str
    copy_of: str
    #: Equal but for the name.
    identical: bool
    #: Lines that differ, out of ``lines`` (the longer text's).
    diff_lines: int
    lines: int
    action: str


@dataclass(frozen=True)
class Collision:
    """Two or more skills with one name: one is used, the others are hidden."""

    name: str
    #: Where the skill that is used lives.
    used: str
    #: Where the hidden ones live.
    hidden: tuple[str, ...]
    action: str


@dataclass(frozen=True)
class Finding:
    """One line of what to act on first (:attr:`DoctorReport.findings`)."""

    #: ``collision``, ``stub``, ``duplicate`` or ``shadowing``.
    kind: str
    skill: str
    #: The other skill of a duplicate or shadowing pair ("" otherwise).
    other: str
    summary: str
    action: str


@dataclass(frozen=True)
class Unreachable:
    """A skill that never comes first (or never passes the threshold) for its own text."""

    skill: str
    reason: str
    probes: int
    ranked_first: int
    best_score: float
    goes_to: tuple[str, ...]
    action: str


@dataclass(frozen=True)
class RiskEntry:
    """How likely a skill's requests go elsewhere (0..1), with the reasons."""

    skill: str
    score: float
    reasons: tuple[str, ...]
    #: Share of its held-out requests routed elsewhere, or decided unsure (None: it has
    #: no text to draw requests from).
    routed_elsewhere: float | None
    #: Mean similarity of its description to its nearest neighbours' (0..1).
    crowding: float
    #: How common its description's words are in the catalogue (0..1).
    genericness: float
    neighbours: tuple[str, ...]
    requests: int
    action: str


@dataclass(frozen=True)
class ListingClient:
    """What one client's skill listing keeps of the catalogue."""

    client: str
    budget_chars: int
    description_cap: int | None
    listed_chars: int
    #: Descriptions the client cuts to its per-description cap.
    truncated: tuple[str, ...]
    #: Skills listed by name only: their description does not fit the budget.
    dropped: tuple[str, ...]
    assumptions: str
    action: str


@dataclass(frozen=True)
class ListingReport:
    context_window_tokens: int
    clients: tuple[ListingClient, ...]


@dataclass(frozen=True)
class SkillTrigger:
    """One skill's trigger precision and recall on a labelled query set."""

    skill: str
    expected: int
    triggered: int
    correct: int
    precision: float | None
    recall: float | None
    #: Where its missed requests went, most frequent first.
    missed_to: tuple[str, ...]
    action: str = ""


@dataclass(frozen=True)
class TriggerEval:
    queries: str
    count: int
    precision: float | None
    recall: float | None
    skills: tuple[SkillTrigger, ...]


@dataclass(frozen=True)
class DoctorReport:
    """Everything ``skillrt doctor --json`` prints (docs/doctor.md lists every key)."""

    environment: Environment
    shadowing: tuple[ShadowPair, ...]
    unreachable: tuple[Unreachable, ...]
    risk: tuple[RiskEntry, ...]
    listing: ListingReport
    triggers: TriggerEval | None
    #: How the analysis ran: pseudo-requests routed, folds, seconds.
    analysis: dict[str, Any] = field(default_factory=dict)
    #: What to act on first: name collisions, stubs, duplicates, then the shadowing
    #: pairs, each once (:mod:`skillrt.doctor.priorities`).
    findings: tuple[Finding, ...] = ()
    stubs: tuple[StubSkill, ...] = ()
    duplicates: tuple[Copy, ...] = ()
    collisions: tuple[Collision, ...] = ()
    #: Skills switched off (``skillrt disable``): listed here only, diagnosed nowhere.
    disabled: tuple[str, ...] = ()
