"""Pseudo-requests: what a skill's own text says it is for, cut into requests to route.

Real requests for a skill are written by someone who read its SKILL.md and describes
their situation in their own words: they draw on the body (situations, tools, steps,
pitfalls) and avoid the skill's name and description phrases. The doctor imitates them
with the skill's own sentences:

* each **description clause** (a sentence of the description: "Use when ...",
  "Handles ..."), each **example** and each **trigger** phrase;
* from each **body section** (as the router splits it, :mod:`skillrt.routing.fields`):
  its first sentence and its second sentence (short requests) and the two together
  (a longer one).

Section headings alone are not used: measured on the real-skills dev catalogue, a
heading ("Overview", "Step 2") routes almost at random and says nothing about where the
skill's real requests go (docs/doctor.md). Nor is text that is no request for the skill
(:mod:`skillrt.doctor.scope`): "Do not use this skill when ..." (a request for another
skill), set-up, requirement and licence sections (the same steps recur in every skill
of a tool), and sentences that are mostly code.

Every pseudo-request belongs to one of :data:`FOLDS` leave-out folds, by the kind and
the position of the text it came from: folds 0 and 1 hold out the body sections at even
and odd positions, folds 2 and 3 the description clauses (and examples, triggers) at even
and odd positions. The doctor routes it through a router that has not indexed that text
(:mod:`skillrt.doctor.folds`). Routed against an index that holds its own words, a
sentence finds its own skill every time and says nothing; held out, it behaves like a
request in a user's words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from skillrt.doctor.scope import is_negative_scope, is_not_a_request, is_setup_heading
from skillrt.routing.fields import SkillFields
from skillrt.skills.model import Skill

__all__ = [
    "DESCRIPTION_FOLD",
    "FOLDS",
    "PseudoRequest",
    "description_clauses",
    "description_pieces",
    "pseudo_requests",
    "section_sentences",
]

#: Leave-out folds (see the module docstring): sections even/odd, description even/odd.
FOLDS = 4
#: The first fold of the description's texts (clauses, examples, triggers).
DESCRIPTION_FOLD = 2
#: Words a description clause needs to be a request of its own.
MIN_CLAUSE_WORDS = 3
#: Words a body sentence needs (shorter ones are list stubs, labels, code).
MIN_SENTENCE_WORDS = 5
SHORT_CHARS = 300
LONG_CHARS = 400
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_CLAUSE = re.compile(r"(?<=[.!?;])\s+")


@dataclass(frozen=True, slots=True)
class PseudoRequest:
    """One request drawn from skill ``skill`` (its position in the catalogue)."""

    skill: int
    text: str
    #: Where it came from: ``description``, ``example``, ``trigger`` or
    #: ``section: <heading>`` (``section: (opening text)`` before the first heading).
    source: str
    #: The leave-out fold that holds its source text out of the index.
    fold: int


def description_pieces(description: str) -> list[str]:
    """The description split at ``.!?;`` (white space collapsed), every piece kept."""
    text = " ".join(description.split())
    return [c.strip() for c in _CLAUSE.split(text) if c.strip()]


def description_clauses(description: str) -> list[str]:
    """The description's clauses: its pieces of 3+ words, in order (shorter pieces are
    not requests, and a leave-out fold keeps them: :func:`skillrt.doctor.folds.held_out`).
    """
    return [c for c in description_pieces(description) if len(c.split()) >= MIN_CLAUSE_WORDS]


def section_sentences(text: str) -> list[str]:
    """A section's sentences of 5+ words, in order."""
    return [s.strip() for s in _SENTENCE.split(text) if len(s.split()) >= MIN_SENTENCE_WORDS]


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit]


def pseudo_requests(
    position: int, skill: Skill, fields: SkillFields, *, limit: int
) -> list[PseudoRequest]:
    """At most ``limit`` pseudo-requests of one skill, spread over all of its sources.

    Sources take turns (the description, then each section in order), each giving its
    next request per turn, so a small ``limit`` still samples the whole skill.
    """
    sources: list[list[tuple[str, str, int]]] = []
    own: list[tuple[str, str, int]] = []
    for j, clause in enumerate(description_clauses(skill.description)):
        if not is_not_a_request(clause):
            own.append((clause, "description", DESCRIPTION_FOLD + j % 2))
    for kind, items in (("example", skill.routing.examples), ("trigger", skill.routing.triggers)):
        for j, text in enumerate(t for t in items if t.strip()):
            own.append((" ".join(text.split()), kind, DESCRIPTION_FOLD + j % 2))
    if own:
        sources.append(own)
    for j, section in enumerate(fields.sections):
        if is_negative_scope(section.heading) or is_setup_heading(section.heading):
            continue  # when not to use it, its set-up, its licence: no one asks for these
        sentences = [s for s in section_sentences(section.text) if not is_not_a_request(s)]
        if not sentences:
            continue
        label = f"section: {section.heading or '(opening text)'}"
        texts: list[str] = [_clip(sentences[0], SHORT_CHARS)]
        if len(sentences) > 1:
            texts.append(_clip(" ".join(sentences[:2]), LONG_CHARS))
            texts.append(_clip(sentences[1], SHORT_CHARS))
        sources.append([(t, label, j % 2) for t in texts])
    out: list[PseudoRequest] = []
    seen: set[str] = set()
    turn = 0
    while len(out) < limit and any(turn < len(s) for s in sources):
        for source in sources:
            if turn < len(source) and len(out) < limit:
                text, label, fold = source[turn]
                if text not in seen:
                    seen.add(text)
                    out.append(PseudoRequest(position, text, label, fold))
        turn += 1
    return out


def per_skill_limit(n_skills: int, samples: int | None, *, budget: int = 6_000) -> int:
    """Pseudo-requests per skill: ``samples`` when given, else ``budget`` spread over
    the catalogue (between 4 and 12), so a large catalogue stays within its time."""
    if samples is not None:
        return max(1, samples)
    return max(4, min(12, budget // max(1, n_skills)))


def by_fold(requests: Sequence[PseudoRequest]) -> list[list[PseudoRequest]]:
    """The requests of each fold, in order."""
    out: list[list[PseudoRequest]] = [[] for _ in range(FOLDS)]
    for r in requests:
        out[r.fold].append(r)
    return out
