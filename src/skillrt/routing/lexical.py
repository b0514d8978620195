"""BM25F over a skill's fields (name words, description, examples and triggers, body).

Each document is a few fields of terms. BM25F (the simple form: Robertson, Zaragoza and
Taylor 2004) weighs a term's frequency in each field by the field's weight and length
normalisation, sums them, then saturates once::

    tf~(t, d) = sum_f  w_f * tf_f(t, d) / (1 - b + b * len_f(d) / avg_len_f)
    score(q, d) = sum_{t in q}  idf(t) * tf~ * (k1 + 1) / (tf~ + k1)

so a word in a skill's name or description counts more than the same word deep in its
body, and a long body cannot win on sheer size. With one field it is plain BM25.

Postings hold the precomputed per-document weight of every term, so a query costs one
vectorised add per query term: a few microseconds per term even at 10,000 skills. The
index is built with numpy from term ids, not term by term in Python. Scores are also
given normalised to 0..1 against the query's own upper bound (every known query term
saturated in one document), which makes them comparable across catalogues.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["LexicalIndex", "LexicalScores"]

K1 = 1.2
B = 0.75
#: Bumped when scoring changes, so saved indices (``routing/snapshot.py``) are rebuilt.
#: 2: a field's average length is over the documents that have the field.
VERSION = 2


@dataclass(frozen=True)
class LexicalScores:
    """BM25F of every document for one query, plus the query's normalisers."""

    raw: NDArray[np.float32]
    #: ``raw`` / (sum over known query terms of idf * (k1 + 1)), in 0..1.
    norm: NDArray[np.float32]
    #: Share of the query's idf mass made of terms no skill document contains.
    unknown_share: float
    known_terms: int


class LexicalIndex:
    """An immutable BM25F index: one sequence of fields (term lists) per document.

    Args:
        docs: Per document, its fields' term lists (every document has the same fields).
        weights: One weight per field (default: 1 each).
    """

    def __init__(
        self,
        docs: Sequence[Sequence[Sequence[str]]],
        *,
        weights: Sequence[float] | None = None,
        k1: float = K1,
        b: float = B,
    ) -> None:
        import numpy as np

        self.k1 = k1
        self.b = b
        self.n_docs = len(docs)
        if weights is None:
            weights = (1.0,) * (len(docs[0]) if docs else 1)
        weights = tuple(weights)
        n_fields = len(weights)
        if any(len(fields) != n_fields for fields in docs):
            raise ValueError(f"every document needs {n_fields} fields (one per weight)")
        # Term ids in C-speed passes (dict.fromkeys, map): no Python step per term.
        field_terms = [[t for doc in docs for t in doc[f]] for f in range(n_fields)]
        every = [t for terms_ in field_terms for t in terms_]
        self.vocab: dict[str, int] = {t: i for i, t in enumerate(dict.fromkeys(every))}
        vocab = self.vocab
        keys_all: list[NDArray[np.int64]] = []
        tf_all: list[NDArray[np.float64]] = []
        for f in range(n_fields):
            lengths = np.asarray([len(doc[f]) for doc in docs], dtype=np.float64)
            if not field_terms[f] or weights[f] == 0:
                continue
            term_ids = np.fromiter(
                map(vocab.__getitem__, field_terms[f]), dtype=np.int64, count=len(field_terms[f])
            )
            doc_ids = np.repeat(np.arange(self.n_docs, dtype=np.int64), lengths.astype(np.int64))
            # The field's average over the documents that have it: a catalogue of many
            # skills without bodies must not make every body look long.
            present = lengths[lengths > 0]
            avg = float(present.mean()) if len(present) else 1.0
            # One key per (document, term) occurrence; counting keys gives tf_f.
            keys, counts = np.unique(doc_ids * (1 << 32) + term_ids, return_counts=True)
            norm = 1.0 - b + b * lengths[keys >> 32] / avg
            keys_all.append(keys)
            tf_all.append(weights[f] * counts / norm)
        n_terms = len(vocab)
        merged: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        tf: NDArray[np.float64] = np.zeros(0)
        if keys_all:
            merged, inverse = np.unique(np.concatenate(keys_all), return_inverse=True)
            tf = np.bincount(inverse, weights=np.concatenate(tf_all)).astype(np.float64)
        doc_of = (merged >> 32).astype(np.int32)
        term_of = (merged & 0xFFFFFFFF).astype(np.int64)
        df = np.bincount(term_of, minlength=n_terms)
        n = max(self.n_docs, 1)
        self.idf: NDArray[np.float32] = np.log1p((n - df + 0.5) / (df + 0.5)).astype(np.float32)
        #: idf a term would have if no document contained it.
        self.unknown_idf = math.log(1.0 + (n + 0.5) / 0.5)
        weight = self.idf[term_of] * tf * (k1 + 1.0) / (tf + k1)
        # Postings sorted by term: term t's documents are _docs[_start[t]:_start[t + 1]].
        order = np.argsort(term_of, kind="stable")
        self._docs: NDArray[np.int32] = doc_of[order]
        self._weights: NDArray[np.float32] = weight[order].astype(np.float32)
        self._start: NDArray[np.int64] = np.concatenate([[0], np.cumsum(df)]).astype(np.int64)
        self._df = df

    def score(self, query_terms: Sequence[str]) -> LexicalScores:
        """BM25F of every document for the unique terms of the query."""
        import numpy as np

        raw = np.zeros(self.n_docs, dtype=np.float32)
        known = 0.0
        unknown = 0.0
        n_known = 0
        for term in dict.fromkeys(query_terms):
            t = self.vocab.get(term)
            if t is None or not self._df[t]:
                unknown += self.unknown_idf
                continue
            n_known += 1
            known += float(self.idf[t])
            a, b = self._start[t], self._start[t + 1]
            raw[self._docs[a:b]] += self._weights[a:b]
        bound = known * (self.k1 + 1.0)
        norm = raw / bound if bound > 0 else raw
        total = known + unknown
        return LexicalScores(
            raw=raw,
            norm=norm.astype(np.float32, copy=False),
            unknown_share=unknown / total if total > 0 else 0.0,
            known_terms=n_known,
        )

    def contains(self, term: str, doc: int) -> bool:
        """Whether document ``doc`` has ``term`` in any field."""
        import numpy as np

        t = self.vocab.get(term)
        if t is None:
            return False
        docs = self._docs[self._start[t] : self._start[t + 1]]  # ascending
        k = int(np.searchsorted(docs, doc))
        return k < len(docs) and int(docs[k]) == doc

    def document_frequency(self, term: str) -> int:
        t = self.vocab.get(term)
        return 0 if t is None else int(self._df[t])

    # -- snapshots (skillrt.routing.snapshot) -------------------------------------------
    def to_arrays(self) -> dict[str, NDArray[Any]]:
        """Everything the index holds, as arrays (the vocabulary as newline-joined UTF-8)."""
        import numpy as np

        vocab = "\n".join(self.vocab).encode("utf-8")
        return {
            "vocab": np.frombuffer(vocab, dtype=np.uint8),
            "idf": self.idf,
            "docs": self._docs,
            "weights": self._weights,
            "start": self._start,
            "df": self._df,
            "params": np.asarray([self.k1, self.b, self.n_docs], dtype=np.float64),
        }

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, NDArray[Any]]) -> LexicalIndex:
        """The index :meth:`to_arrays` described, without rebuilding it."""
        self = cls.__new__(cls)
        k1, b, n_docs = (float(v) for v in arrays["params"])
        self.k1, self.b, self.n_docs = k1, b, int(n_docs)
        text = bytes(arrays["vocab"]).decode("utf-8")
        terms = text.split("\n") if text else []
        self.vocab = {t: i for i, t in enumerate(terms)}
        self.idf = arrays["idf"]
        self._docs = arrays["docs"]
        self._weights = arrays["weights"]
        self._start = arrays["start"]
        self._df = arrays["df"]
        self.unknown_idf = math.log(1.0 + (max(self.n_docs, 1) + 0.5) / 0.5)
        if len(self.vocab) != len(self._df) or len(self._start) != len(self._df) + 1:
            raise ValueError("inconsistent lexical snapshot")
        return self
