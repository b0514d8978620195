"""Which words pull a request to a skill, and which words tell two skills apart.

Terms are the router's own (:func:`skillrt.routing.text.terms`: case-folded, lightly
stemmed, stopwords out) over each skill's lexical fields (name, description, examples
and triggers, body sections). A word weighs by its rarity across the catalogue (IDF):
"pdf" says more than "file".
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

from skillrt.routing.fields import SkillFields
from skillrt.routing.text import terms

_WORD = re.compile(r"\w+")

__all__ = ["TermStats"]


class TermStats:
    """Each skill's terms and the catalogue's document frequencies."""

    def __init__(self, fields: Sequence[SkillFields], texts: Sequence[str] = ()) -> None:
        """``texts``: each skill's text (description and body), to show words as written
        rather than as stems."""
        #: Every term of each skill (all fields).
        self.bags: list[Counter[str]] = [
            Counter(t for f in fs.field_terms for t in f) for fs in fields
        ]
        #: Terms of each skill's description, as the router's lexical field has them.
        self.description: list[tuple[str, ...]] = [fs.field_terms[1] for fs in fields]
        #: Terms of each skill's name and description (what a listing shows).
        self.heads: list[frozenset[str]] = [
            frozenset(t for f in fs.field_terms[:3] for t in f) for fs in fields
        ]
        self.df: Counter[str] = Counter()
        for bag in self.bags:
            self.df.update(bag.keys())
        self.n = max(1, len(fields))
        self._texts = list(texts)
        self._surface: dict[str, str] | None = None

    def _words(self, found: Sequence[str]) -> tuple[str, ...]:
        """``found`` terms as the catalogue writes them (each term's most frequent form;
        the map is built once, from every skill's text)."""
        if self._surface is None:
            counts: Counter[str] = Counter()
            for text in self._texts:
                counts.update(_WORD.findall(text.lower()))
            forms: dict[str, tuple[int, str]] = {}
            for word, n in counts.items():
                for t in terms(word):
                    if n > forms.get(t, (0, ""))[0]:
                        forms[t] = (n, word)
            self._surface = {t: w for t, (_, w) in forms.items()}
        surface = self._surface
        return tuple(dict.fromkeys(surface.get(t, t) for t in found))

    def idf(self, term: str) -> float:
        return math.log((self.n + 1) / (self.df.get(term, 0) + 1)) + 1.0

    def genericness(self, skill: int) -> float:
        """How common its description's words are in this catalogue, in 0..1: 1 minus
        their mean ``log(n / df) / log(n)``. A description made of words every skill
        uses ("expert", "code", "best practices") gives the router nothing to tell the
        skill apart by; one naming its tools and situations does."""
        words = self.description[skill] if skill < len(self.description) else ()
        if self.n < 2 or not words:
            return 1.0 if self.n >= 2 else 0.0
        scale = math.log(self.n)
        specific = sum(math.log(self.n / max(1, self.df.get(t, 1))) for t in words) / len(words)
        return max(0.0, min(1.0, 1.0 - specific / scale))

    def pull(self, texts: Iterable[str], toward: int, *, limit: int = 6) -> tuple[str, ...]:
        """The rarest words of ``texts`` that skill ``toward`` also has."""
        texts = list(texts)
        seen = Counter(t for text in texts for t in terms(text))
        bag = self.bags[toward]
        scored = [(n * self.idf(t), t) for t, n in seen.items() if t in bag and len(t) > 2]
        found = [t for _, t in sorted(scored, key=lambda x: (-x[0], x[1]))[:limit]]
        forms: dict[str, str] = {}
        for word in _WORD.findall(" ".join(texts).lower()):
            for t in terms(word):
                forms.setdefault(t, word)
        return tuple(dict.fromkeys(forms.get(t, t) for t in found))

    def separating(self, skill: int, other: int, *, limit: int = 5) -> tuple[str, ...]:
        """Words frequent in ``skill``'s text that ``other``'s text never uses, rarest
        first: what a description could say to tell them apart."""
        bag, theirs = self.bags[skill], self.bags[other]
        scored = [
            (n * self.idf(t), t)
            for t, n in bag.items()
            if t not in theirs and len(t) > 2 and not t.isdigit() and self.df[t] > 1
        ]
        return self._words([t for _, t in sorted(scored, key=lambda x: (-x[0], x[1]))][:limit])

    def missing_from_head(self, skill: int, *, limit: int = 6) -> tuple[str, ...]:
        """The body's most telling words that its name and description do not say."""
        bag, head = self.bags[skill], self.heads[skill]
        scored = [
            (n * self.idf(t), t)
            for t, n in bag.items()
            if t not in head and len(t) > 2 and not t.isdigit() and n > 1
        ]
        return self._words([t for _, t in sorted(scored, key=lambda x: (-x[0], x[1]))][:limit])
