"""Copies: skills that are the same skill under another name, with the size of the diff.

Two skills are compared as their description and SKILL.md body, each skill's own name
written as a placeholder (a copy renamed in its ``name:`` line and title is still a
copy). They are a **copy** when the texts are equal (``identical``) or differ in at most
:data:`MAX_DIFF_SHARE` of their lines (at least :data:`MIN_DIFF_LINES` allowed) and
:data:`MIN_RATIO` of their characters match (in equal lines, or kept by an edited
line): one of them can go. The
name is also written as a placeholder in words ("error analysis" for
``error-analysis``).

Only likely pairs are compared in full: skills whose router sections (the first
sections of the body, :mod:`skillrt.routing.fields`) are equal for at least half of the
smaller skill's, or whose descriptions are equal. Sections most skills share (a boilerplate
"Resources" section) do not make a pair. Bodies are read through the loader's path
jail; a catalogue line without a SKILL.md is compared on what the router holds.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from skillrt.routing.fields import SkillFields
from skillrt.skills.model import Skill

__all__ = ["Copy", "find_copies"]

#: A copy differs in at most this share of its lines ...
MAX_DIFF_SHARE = 0.1
#: ... but a few lines are always allowed (a changed title, an added list).
MIN_DIFF_LINES = 5
#: ... and at least this share of its characters sit in equal lines.
MIN_RATIO = 0.9
#: A section text held by more skills than this is boilerplate, not a sign of a copy.
COMMON_SECTION = 8
_SPACE = re.compile(r"[ \t]+")
#: Edited blocks up to this size are compared character by character.
_EDIT_CHARS = 4_000

#: ``read(i)``: skill ``i``'s SKILL.md body, or None when it has none or cannot be read.
ReadBody = Callable[[int], "str | None"]


@dataclass(frozen=True)
class Copy:
    """Skill ``position`` is a copy of skill ``original``."""

    position: int
    original: int
    identical: bool
    #: Lines that differ (added, removed or changed, counted on the longer side).
    diff_lines: int
    #: Lines compared (the longer text's).
    lines: int


def _text(skill: Skill, body: str) -> list[str]:
    text = f"{' '.join(skill.description.split())}\n{body}"
    names = {skill.name, skill.qualified_name, re.sub(r"[-_]+", " ", skill.name)}
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(re.escape(name), "<name>", text, flags=re.IGNORECASE)
    lines = [_SPACE.sub(" ", ln).strip() for ln in text.splitlines()]
    return [ln for ln in lines if ln]


def _router_text(fields: SkillFields) -> str:
    return "\n".join(f"{s.heading}\n{s.text}" for s in fields.sections)


def _candidates(skills: Sequence[Skill], fields: Sequence[SkillFields]) -> set[tuple[int, int]]:
    """Pairs (a < b) that share half of the smaller one's sections, or a description."""
    holders: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(fields):
        for text in {s.text for s in f.sections if s.text}:
            holders[text].append(i)
    shared: dict[tuple[int, int], int] = defaultdict(int)
    for owners in holders.values():
        if 1 < len(owners) <= COMMON_SECTION:
            for k, a in enumerate(owners):
                for b in owners[k + 1 :]:
                    shared[(a, b)] += 1
    out = set()
    for (a, b), n in shared.items():
        smaller = min(len({s.text for s in fields[x].sections if s.text}) for x in (a, b))
        if n * 2 >= smaller:
            out.add((a, b))
    # Equal descriptions, or equal texts once each skill's name is a placeholder.
    alike: dict[str, list[int]] = defaultdict(list)
    for i, s in enumerate(skills):
        text = " ".join(s.description.split()).lower()
        if text:
            alike["d:" + text].append(i)
        alike["t:" + "\n".join(_text(s, _router_text(fields[i])))].append(i)
    for owners in alike.values():
        if 1 < len(owners) <= COMMON_SECTION:
            out |= {(a, b) for k, a in enumerate(owners) for b in owners[k + 1 :]}
    return out


def _compare(a: list[str], b: list[str]) -> tuple[int, float]:
    """(lines that differ, the share of both texts' characters that match: those of
    equal lines, and those an edited line kept)."""
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    differ = 0
    same = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            same += 2 * sum(len(x) for x in a[i1:i2])
            continue
        differ += max(i2 - i1, j2 - j1)
        if tag == "replace":  # an edited line: the characters it kept count
            old, new = "\n".join(a[i1:i2]), "\n".join(b[j1:j2])
            if len(old) + len(new) <= _EDIT_CHARS:
                chars = difflib.SequenceMatcher(None, old, new, autojunk=False)
                same += round(chars.ratio() * (len(old) + len(new)))
    total = sum(map(len, a)) + sum(map(len, b))
    return differ, (same / total) if total else 1.0


def find_copies(
    skills: Sequence[Skill],
    fields: Sequence[SkillFields],
    read_body: ReadBody,
    *,
    skip: frozenset[int] = frozenset(),
) -> list[Copy]:
    """Every copy among ``skills``: each names the first of its group (by name) as the
    original. ``skip``: skills not to compare (stubs are alike by having nothing)."""
    texts: dict[int, list[str]] = {}

    def text(i: int) -> list[str]:
        if i not in texts:
            body = read_body(i)
            texts[i] = _text(skills[i], body if body is not None else _router_text(fields[i]))
        return texts[i]

    original: dict[int, int] = {}
    found: dict[int, Copy] = {}
    for a, b in sorted(_candidates(skills, fields)):
        if a in skip or b in skip:
            continue
        first, second = sorted((a, b), key=lambda i: (skills[i].qualified_name, i))
        ta, tb = text(first), text(second)
        lines = max(len(ta), len(tb))
        differ, ratio = _compare(ta, tb)
        if differ > max(MIN_DIFF_LINES, MAX_DIFF_SHARE * lines) or ratio < MIN_RATIO:
            continue
        root = original.get(first, first)
        if second in found or second == root:
            continue
        original[second] = root
        found[second] = Copy(second, root, differ == 0, differ, lines)
    return [found[i] for i in sorted(found)]
