"""Phrase matching for triggers, anti-triggers and skill names.

Matching is on word boundaries, case-insensitive and Unicode-aware: the trigger
``git`` fires on "git rebase" and "git-flow" but never on "digital". Words are compared
after the light stemmer, so ``invoice`` also fires on "invoices". A multiword trigger
matches as a phrase (its words in order, adjacent). Triggers in a CJK script match as
substrings, since CJK text has no spaces between words. Triggers with symbols that
words drop (``c++``, ``.net``) use a boundary-guarded regex.

Lookup cost is proportional to the query's length, not the number of phrases: word
phrases are indexed by their whole stemmed word tuple, one table per phrase length.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from skillrt.routing.text import CJK_CHARS, has_cjk, normalise, stem

__all__ = ["PhraseIndex", "PhraseMatch"]

# Word runs, with every CJK character its own token ("用git" -> "用", "git").
_WORD = re.compile(f"[{CJK_CHARS}]|[^\\W{CJK_CHARS}]+")
_PLAIN = re.compile(r"[\w\s'’-]+")


@dataclass(frozen=True)
class PhraseMatch:
    """``phrase`` (as written) of ``owner`` occurs in the text."""

    owner: int
    phrase: str


class PhraseIndex:
    """Many phrases, each owned by an integer (a skill's position in the index)."""

    def __init__(self) -> None:
        # phrase length -> stemmed word tuple -> [(owner, phrase)]
        self._by_len: dict[int, dict[tuple[str, ...], list[tuple[int, str]]]] = defaultdict(
            lambda: defaultdict(list)
        )
        self._substrings: list[tuple[str, int, str]] = []
        self._patterns: list[tuple[re.Pattern[str], int, str]] = []
        self.size = 0

    def add(self, phrase: str, owner: int) -> None:
        norm = normalise(phrase).strip()
        if not norm:
            return
        self.size += 1
        if has_cjk(norm):
            # CJK has no word boundaries: substring match, spaces ignored.
            self._substrings.append(("".join(norm.split()), owner, phrase))
            return
        words = _WORD.findall(norm)
        if words and _PLAIN.fullmatch(norm):
            key = tuple(stem(w) for w in words)
            self._by_len[len(key)][key].append((owner, phrase))
            return
        body = r"\s+".join(re.escape(part) for part in norm.split())
        self._patterns.append((re.compile(rf"(?<!\w){body}(?!\w)"), owner, phrase))

    def add_all(self, phrases: Iterable[str], owner: int) -> None:
        for phrase in phrases:
            self.add(phrase, owner)

    def match(self, text: str) -> list[PhraseMatch]:
        """Every (owner, phrase) occurring in ``text``; each pair reported once."""
        if not self.size:
            return []
        norm = normalise(text)
        seen: set[tuple[int, str]] = set()
        out: list[PhraseMatch] = []

        def hit(owner: int, phrase: str) -> None:
            if (owner, phrase) not in seen:
                seen.add((owner, phrase))
                out.append(PhraseMatch(owner, phrase))

        if self._by_len:
            stems = [stem(w) for w in _WORD.findall(norm)]
            for length, table in self._by_len.items():
                for i in range(len(stems) - length + 1):
                    for owner, phrase in table.get(tuple(stems[i : i + length]), ()):
                        hit(owner, phrase)
        if self._substrings:
            compact = "".join(norm.split())
            for sub, owner, phrase in self._substrings:
                if sub in compact:
                    hit(owner, phrase)
        for pattern, owner, phrase in self._patterns:
            if pattern.search(norm):
                hit(owner, phrase)
        return out
