"""Lookup structures over a registry's skills, built once (seed 004 §3; SPEC I2, I5).

Exact lookups are dict hits. Fuzzy lookups never scan skills one by one in Python:
prefixes use a sorted key list and :func:`bisect`, substrings and subsequences run in C
over one newline-joined blob of lowercase qualified names, initials are a dict.
That keeps resolution and completion well under a millisecond at 10,000 skills.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

from skillrt.skills.model import Skill

_PARTS = re.compile(r"[-_.]+")
#: Fuzzy tiers, best first.
Tier = Literal["exact", "prefix", "substring", "initials", "namespace", "subsequence"]


@dataclass(frozen=True)
class Lookup:
    """Result of an exact lookup: one skill, several (ambiguous bare name), or none."""

    kind: Literal["exact", "ambiguous", "none"]
    indices: tuple[int, ...] = ()


@dataclass(frozen=True)
class FuzzyHits:
    """Fuzzy candidates (skill indices) best first, with the tier each came from."""

    indices: tuple[int, ...]
    tiers: tuple[Tier, ...]
    #: More matched than were collected.
    truncated: bool = False


class SkillIndex:
    """Dicts and sorted keys over a fixed list of skills (enable state is not cached)."""

    def __init__(self, skills: Iterable[Skill]) -> None:
        self.skills: tuple[Skill, ...] = tuple(skills)
        self.by_qualified: dict[str, int] = {}
        self.by_bare: dict[str, list[int]] = {}
        self._by_bare_lower: dict[str, list[int]] = {}
        self._initials: dict[str, list[int]] = {}
        keys: list[tuple[str, int]] = []
        lowered: list[str] = []
        for i, skill in enumerate(self.skills):
            qn = skill.qualified_name
            self.by_qualified[qn] = i
            self.by_bare.setdefault(skill.name, []).append(i)
            low_name = skill.name.lower()
            self._by_bare_lower.setdefault(low_name, []).append(i)
            low_qn = qn.lower()
            lowered.append(low_qn)
            keys.append((low_qn, i))
            if skill.namespace:
                keys.append((low_name, i))
            parts = [p for p in _PARTS.split(low_name) if p]
            if len(parts) >= 2:
                self._initials.setdefault("".join(p[0] for p in parts), []).append(i)
        keys.sort()
        self._keys = [k for k, _ in keys]
        self._key_idx = [i for _, i in keys]
        self._blob = "\n".join(lowered) + "\n"
        self._offsets: list[int] = []
        pos = 0
        for low in lowered:
            self._offsets.append(pos)
            pos += len(low) + 1
        self._typed = [self._typed_id(i) for i in range(len(self.skills))]

    def __len__(self) -> int:
        return len(self.skills)

    # -- exact ------------------------------------------------------------------------
    def lookup(self, ident: str) -> Lookup:
        """Exact name, then namespaced exact (004 §3 steps 1-2); case-sensitive."""
        hit = self.by_qualified.get(ident)
        if hit is not None:
            return Lookup("exact", (hit,))
        if ":" in ident:
            return Lookup("none")
        same = self.by_bare.get(ident, ())
        if len(same) == 1:
            return Lookup("exact", (same[0],))
        if same:
            return Lookup("ambiguous", tuple(same))
        return Lookup("none")

    def typed_id(self, i: int) -> str:
        """The shortest id that resolves exactly to skill ``i``: bare when unique."""
        return self._typed[i]

    def _typed_id(self, i: int) -> str:
        skill = self.skills[i]
        if skill.namespace is None:
            return skill.name
        if skill.name not in self.by_qualified and len(self.by_bare[skill.name]) == 1:
            return skill.name
        return skill.qualified_name

    # -- fuzzy ------------------------------------------------------------------------
    def prefix(self, query: str) -> Iterator[int]:
        """Skills whose lowercase qualified or bare name starts with ``query``, in key order."""
        lo = bisect_left(self._keys, query)
        seen: set[int] = set()
        for k in range(lo, len(self._keys)):
            if not self._keys[k].startswith(query):
                break
            i = self._key_idx[k]
            if i not in seen:
                seen.add(i)
                yield i

    def count_prefix(self, query: str) -> int:
        """How many keys start with ``query`` (an upper bound on matching skills)."""
        lo = bisect_left(self._keys, query)
        hi = bisect_left(self._keys, query + "\U0010ffff", lo)
        return hi - lo

    def substring(self, query: str) -> Iterator[int]:
        """Skills whose lowercase qualified name contains ``query``, in registry order."""
        blob = self._blob
        pos = blob.find(query)
        while pos >= 0:
            i = bisect_right(self._offsets, pos) - 1
            yield i
            pos = blob.find(query, self._line_end(i) + 1)

    def _line_end(self, i: int) -> int:
        nxt = i + 1
        return (self._offsets[nxt] if nxt < len(self._offsets) else len(self._blob)) - 1

    def initials(self, query: str) -> list[int]:
        """Skills whose name parts start with the letters of ``query`` (``tdd``)."""
        return list(self._initials.get(query, ()))

    def same_bare_name(self, query: str) -> list[int]:
        return list(self._by_bare_lower.get(query, ()))

    def subsequence(self, query: str) -> Iterator[int]:
        """Skills whose lowercase qualified name holds ``query``'s letters in order."""
        if not query:
            return
        # Possessive "skip to the next wanted letter" steps: linear per line, no backtracking.
        pattern = re.compile(
            "^" + "".join(f"[^{re.escape(c)}\n]*+{re.escape(c)}" for c in query), re.MULTILINE
        )
        for m in pattern.finditer(self._blob):
            yield bisect_right(self._offsets, m.start()) - 1

    def fuzzy(self, ident: str, *, cap: int = 50) -> FuzzyHits:
        """Case-insensitive candidates for an id with no exact hit (004 §3 step 3).

        Tiers, best first: case-insensitive equality, prefix, substring, initials
        (``tdd`` for ``test-driven-development``), and for ``ns:name`` the same bare
        name in another namespace. Within a tier: un-namespaced first, then shorter, then
        alphabetical. At most ``cap`` are returned.
        """
        query = ident.lower()
        bare = query.rpartition(":")[2]
        tiers: list[tuple[Tier, Iterable[int]]] = [("prefix", self.prefix(query))]
        if len(query) >= 2:
            tiers.append(("substring", self.substring(query)))
            tiers.append(("initials", self.initials(query)))
        if bare != query:
            tiers.append(("namespace", self.same_bare_name(bare)))
        seen: set[int] = set()
        out: list[int] = []
        out_tiers: list[Tier] = []
        truncated = False
        for tier, hits in tiers:
            batch: list[int] = []
            for i in hits:
                if i in seen:
                    continue
                if len(seen) >= cap:
                    truncated = True
                    break
                seen.add(i)
                batch.append(i)
            batch.sort(key=self._rank_key)
            if tier == "prefix":
                exact = [i for i in batch if self._is_ci_equal(i, query)]
                rest = [i for i in batch if i not in exact]
                out.extend(exact)
                out_tiers.extend(["exact"] * len(exact))
                batch = rest
            out.extend(batch)
            out_tiers.extend([tier] * len(batch))
            if truncated:
                break
        return FuzzyHits(tuple(out), tuple(out_tiers), truncated)

    def _is_ci_equal(self, i: int, query: str) -> bool:
        s = self.skills[i]
        return s.qualified_name.lower() == query or s.name.lower() == query

    def _rank_key(self, i: int) -> tuple[bool, int, str]:
        s = self.skills[i]
        return (s.namespace is not None, len(s.qualified_name), s.qualified_name)
