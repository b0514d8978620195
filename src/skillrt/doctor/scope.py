"""Text of a skill that is not a request for it: negative scope, set-up and licences.

A pseudo-request stands for what a user who needs the skill would ask. Some of a
skill's own text says the opposite or says nothing about its job:

* **negative scope**: "Do not use this skill when ...", "When NOT to use", "Not for
  ..." (a section so headed, or a sentence so worded): a request drawn from it is a
  request for some *other* skill;
* **set-up and licence text**: a section headed "Prerequisites", "Requirements",
  "Installation", "Setup", "License" (or a sentence about a licence or copyright): the
  same steps recur in every skill of a tool (``gh auth status``), so two skills with
  different jobs look alike on them.

Rules on wording and layout only (English headings and phrases), no catalogue data.
Sentences that are mostly code are kept: measured on the dev catalogue, leaving them out
lost three of the misroutes the shadowing pairs explained (docs/doctor.md).
"""

from __future__ import annotations

import re

__all__ = [
    "is_negative_scope",
    "is_not_a_request",
    "is_setup_heading",
]

#: A heading or sentence that says when *not* to use the skill.
_NEGATIVE = re.compile(
    r"^\W*(?:do\s+not|don'?t|never|avoid)\s+(?:use|using|invoke|trigger|apply)\b"
    r"|^\W*when\s+not\s+to\b"
    r"|\bwhen\s+not\s+to\s+use\b"
    r"|^\W*(?:this\s+skill\s+is\s+)?not\s+(?:for|suitable|intended|meant|appropriate)\b"
    r"|^\W*(?:out\s+of\s+scope|non-?goals?|anti-?triggers?)\b",
    re.IGNORECASE,
)
#: A section heading made only of set-up or licence words ("Prerequisites",
#: "Installation", "Environment Setup", "License").
_SETUP_WORDS = frozenset(
    {
        "prerequisite", "prerequisites", "requirement", "requirements", "install",
        "installation", "installing", "setup", "set-up", "set", "up", "dependencies",
        "dependency", "environment", "license", "licence", "licensing", "copyright",
    }
)  # fmt: skip
#: Words a heading may hold besides those ("Step 4: Install Dependencies").
_HEADING_NOISE = frozenset({"and", "the", "your", "of", "step"})
_LICENCE = re.compile(
    r"\b(?:licen[cs]ed?\s+under|all\s+rights\s+reserved|copyright\s+(?:\(c\)|©|\d{4})"
    r"|apache\s+license|mit\s+license|gnu\s+(?:general|lesser)|SPDX-License)",
    re.IGNORECASE,
)


def is_negative_scope(text: str) -> bool:
    """A heading or sentence that says when not to use the skill."""
    return bool(_NEGATIVE.search(text.strip()))


def is_setup_heading(heading: str) -> bool:
    """A heading made only of set-up, requirement or licence words."""
    words = [w for w in re.split(r"[\s:/()&,.-]+", heading.lower()) if w]
    words = [w for w in words if w not in _HEADING_NOISE and not w.isdigit()]
    return bool(words) and all(w in _SETUP_WORDS for w in words)


def is_not_a_request(text: str) -> bool:
    """A sentence no user would write to ask for the skill: negative scope or licence
    text (see the module docstring)."""
    return is_negative_scope(text) or bool(_LICENCE.search(text))
