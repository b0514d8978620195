"""A no-model fallback backend: signed feature hashing of words, word pairs and char n-grams.

It captures lexical overlap only (shared words, shared word stems through character
n-grams), which is what the router needs when no model is installed. Hashing uses
blake2b, never Python's salted ``hash()``, so vectors are identical across processes
and can be cached on disk.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache
from hashlib import blake2b
from typing import TYPE_CHECKING, ClassVar

from skillrt.routing.embeddings.base import EmbeddingBackend, l2_normalise

if TYPE_CHECKING:
    from skillrt.routing.embeddings.base import Matrix

#: Bump when features or weights change: it is part of ``model_id`` and so of cache keys.
ALGORITHM_VERSION = 1
DEFAULT_DIM = 2048
#: Relative weight of each feature family after each is normalised on its own, so the
#: many character n-grams cannot drown out the few words.
WEIGHTS = {"w": 1.0, "b": 0.5, "c": 0.6}
CHAR_NGRAMS = (3, 4, 5)

_WORD = re.compile(r"\w+")
# Words so common that sharing them says nothing about intent.
_STOPWORD_TEXT = (
    "a an and are as at be by can do does for from how i in is it me my of on or please "
    "should so that the this to use using we what when with you your"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _tokens(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", text).casefold()
    return [w for w in _WORD.findall(text) if w not in _STOPWORDS]


def _features(words: Sequence[str]) -> dict[str, Counter[str]]:
    grams: Counter[str] = Counter()
    for word in words:
        padded = f"<{word}>"
        for n in CHAR_NGRAMS:
            grams.update(padded[i : i + n] for i in range(len(padded) - n + 1))
    return {
        "w": Counter(words),
        "b": Counter(f"{a} {b}" for a, b in zip(words, words[1:], strict=False)),
        "c": grams,
    }


@lru_cache(maxsize=1 << 16)
def _slot(feature: str, dim: int) -> tuple[int, float]:
    """Column and sign of a feature: two independent parts of one stable digest."""
    value = int.from_bytes(blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return value % dim, (1.0 if (value >> 63) & 1 else -1.0)


class HashingBackend(EmbeddingBackend):
    """Deterministic lexical vectors with sublinear tf (``1 + log tf``), numpy only."""

    name: ClassVar[str] = "hashing"

    def __init__(self, dim: int = DEFAULT_DIM) -> None:
        if dim < 16:
            raise ValueError(f"dim must be at least 16, got {dim}")
        self.dim = dim
        self.model_id = f"hashing-v{ALGORITHM_VERSION}-d{dim}"

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts)

    def _embed(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for family, counts in _features(_tokens(text)).items():
                self._add(out[row], family, counts.items())
        return l2_normalise(out)

    def _add(self, row: Matrix, family: str, counts: Iterable[tuple[str, int]]) -> None:
        """Add one feature family, normalised on its own and scaled by its weight."""
        import numpy as np

        cols: list[int] = []
        vals: list[float] = []
        for feature, tf in counts:
            # The family prefix keeps the word "abc" and the char gram "abc" apart.
            col, sign = _slot(f"{family}:{feature}", self.dim)
            cols.append(col)
            vals.append(sign * (1.0 + math.log(tf)))
        if not cols:
            return
        vector = np.zeros(self.dim, dtype=np.float32)
        np.add.at(vector, np.asarray(cols), np.asarray(vals, dtype=np.float32))
        norm = float(np.linalg.norm(vector))
        if norm > 0.0:
            row += vector * (WEIGHTS[family] / norm)
