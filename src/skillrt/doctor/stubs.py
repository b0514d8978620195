"""Stub skills: empty or placeholder skills, a finding of their own.

A stub gives a model nothing to act on and the router nothing to route by, so every
other finding about it (its risk, the skills said to "shadow" it, its reachability)
is noise: it is reported once, as a stub, and left out of the rest.

A skill is a stub when

* its description is empty, or holds template placeholders ("TODO", "TBD", "lorem
  ipsum", "[describe ...]"), or
* it has a SKILL.md whose body adds fewer than :data:`MIN_OWN_WORDS` words of its own
  (words its name and description do not already say) and its description is shorter
  than :data:`MIN_DESCRIPTION_WORDS` words ("Development skill from X" over a body of
  "Development skill skill."), or
* it has no body to read (a catalogue line) and its description says nothing its name
  does not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from skillrt.routing.fields import SkillFields
from skillrt.skills.model import Skill

__all__ = ["MIN_DESCRIPTION_WORDS", "MIN_OWN_WORDS", "Stub", "find_stubs"]

#: Words of its own a body needs to count as content.
MIN_OWN_WORDS = 5
#: A description this long is a skill even over an empty body.
MIN_DESCRIPTION_WORDS = 12
_WORD = re.compile(r"[^\W\d_]+")
_PLACEHOLDER = re.compile(
    r"\b(?:TODO|TBD|FIXME|XXX)\b|(?i:\blorem\s+ipsum\b)"
    r"|\[(?i:todo|insert|add|describe|your|fill|replace)[^\]]*\]"
)


@dataclass(frozen=True)
class Stub:
    """Skill ``position`` is a stub, and why."""

    position: int
    reason: str
    body_words: int


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def find_stubs(skills: Sequence[Skill], fields: Sequence[SkillFields]) -> list[Stub]:
    """The stubs among ``skills`` (``fields``: their body sections), in order."""
    out: list[Stub] = []
    for i, (skill, f) in enumerate(zip(skills, fields, strict=True)):
        description = " ".join(skill.description.split())
        said = set(_words(skill.name)) | set(_words(description))
        body = [w for s in f.sections for w in _words(s.text)]
        own = [w for w in body if w not in said]
        reason = ""
        if not description:
            reason = "its description is empty"
        elif _PLACEHOLDER.search(description):
            reason = f"its description is a placeholder ({description[:80]!r})"
        elif any(_PLACEHOLDER.search(s.text) for s in f.sections) and len(own) < 3 * MIN_OWN_WORDS:
            reason = "its body is a template placeholder"
        elif skill.skill_file is not None:
            if len(own) < MIN_OWN_WORDS and len(_words(description)) < MIN_DESCRIPTION_WORDS:
                reason = (
                    f"its body adds {len(own)} words of its own to a "
                    f"{len(_words(description))}-word description ({description[:80]!r})"
                )
        elif not set(_words(description)) - set(_words(skill.name)):
            reason = "its description only repeats its name"
        if reason:
            out.append(Stub(i, reason, len(body)))
    return out
