"""BM25 over skill documents (name words, description, examples, triggers).

Postings hold precomputed BM25 term weights, so a query costs one vectorised add per
query term: a few microseconds per term even at 10,000 skills. Scores are also given
normalised to 0..1 against the query's own upper bound (every known query term
saturated in one document), which makes them comparable across catalogues.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["LexicalIndex", "LexicalScores"]

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class LexicalScores:
    """BM25 of every document for one query, plus the query's normalisers."""

    raw: NDArray[np.float32]
    #: ``raw`` / (sum over known query terms of idf * (k1 + 1)), in 0..1.
    norm: NDArray[np.float32]
    #: Share of the query's idf mass made of terms no skill document contains.
    unknown_share: float
    known_terms: int


class LexicalIndex:
    """An immutable BM25 index over term lists (one list per document)."""

    def __init__(self, docs: Sequence[Sequence[str]], *, k1: float = K1, b: float = B) -> None:
        import numpy as np

        self.k1 = k1
        self.b = b
        self.n_docs = len(docs)
        counts = [Counter(d) for d in docs]
        lengths = np.asarray([len(d) for d in docs], dtype=np.float32)
        avg = float(lengths.mean()) if len(docs) and float(lengths.mean()) > 0 else 1.0
        df: Counter[str] = Counter()
        for c in counts:
            df.update(c.keys())
        self.vocab: dict[str, int] = {t: i for i, t in enumerate(df)}
        n = max(self.n_docs, 1)
        self.idf = np.asarray(
            [math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in self.vocab],
            dtype=np.float32,
        )
        #: idf a term would have if no document contained it.
        self.unknown_idf = math.log(1.0 + (n + 0.5) / 0.5)
        ids: list[list[int]] = [[] for _ in self.vocab]
        tfs: list[list[float]] = [[] for _ in self.vocab]
        for doc_id, c in enumerate(counts):
            for term, tf in c.items():
                t = self.vocab[term]
                ids[t].append(doc_id)
                tfs[t].append(tf)
        self._postings: list[tuple[NDArray[np.int32], NDArray[np.float32]]] = []
        for t, (doc_ids, tf_list) in enumerate(zip(ids, tfs, strict=True)):
            d = np.asarray(doc_ids, dtype=np.int32)
            freq = np.asarray(tf_list, dtype=np.float32)
            norm = k1 * (1.0 - b + b * lengths[d] / avg)
            weight = self.idf[t] * freq * (k1 + 1.0) / (freq + norm)
            self._postings.append((d, weight.astype(np.float32)))

    def score(self, query_terms: Sequence[str]) -> LexicalScores:
        """BM25 of every document for the unique terms of the query."""
        import numpy as np

        raw = np.zeros(self.n_docs, dtype=np.float32)
        known = 0.0
        unknown = 0.0
        n_known = 0
        for term in dict.fromkeys(query_terms):
            t = self.vocab.get(term)
            if t is None:
                unknown += self.unknown_idf
                continue
            n_known += 1
            known += float(self.idf[t])
            doc_ids, weights = self._postings[t]
            raw[doc_ids] += weights
        bound = known * (self.k1 + 1.0)
        norm = raw / bound if bound > 0 else raw
        total = known + unknown
        return LexicalScores(
            raw=raw,
            norm=norm.astype(np.float32, copy=False),
            unknown_share=unknown / total if total > 0 else 0.0,
            known_terms=n_known,
        )

    def document_frequency(self, term: str) -> int:
        t = self.vocab.get(term)
        return 0 if t is None else len(self._postings[t][0])
