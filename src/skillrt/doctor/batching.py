"""Semantic scores of many pseudo-requests at once, handed to the router one by one.

A route's semantic evidence is one product of the request's vectors with every skill's
vectors (:meth:`SemanticIndex.score_many`); with ~10,000 section vectors that product
is most of a route's time, and it is bound by reading the skill vectors, not by the
number of request rows. The doctor knows every request of a chunk in advance, so
:class:`BatchedSemantic` computes the raw similarities of all of them in one product
(:meth:`BatchedSemantic.prepare`) and answers the router's ``score_many`` for each
request from them, combining them exactly as ``score_many`` does. A request it was not
prepared for is scored the usual way.

The raw similarities follow ``score_many`` step by step, including its part prefilter
(parts count only for a request's best ``PART_PREFILTER`` skills by document
similarity: every skill's best part is computed in the batch, and each request keeps
those of its own best skills); ``tests/doctor/test_batching.py`` checks both give the
same scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from skillrt.routing.semantic import (
    MAX_FULL_PARTS,
    PART_PREFILTER,
    SemanticIndex,
    SemanticScores,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Raw = tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32], NDArray[np.float32]]

__all__ = ["BatchedSemantic", "request_rows"]


def request_rows(vector: Any, parts: Any) -> Any:
    """The rows the router scores for a request: its vector, then its clauses' vectors
    when it has more than one clause (:meth:`Router.route`)."""
    import numpy as np

    if len(parts) > 1:
        return np.vstack([np.asarray(vector, dtype=np.float32)[None, :], parts])
    return np.asarray(vector, dtype=np.float32)[None, :]


class BatchedSemantic(SemanticIndex):
    """A :class:`SemanticIndex` (sharing another one's arrays) that answers
    ``score_many`` from similarities prepared for many requests at once."""

    #: row bytes -> (document, best part, best section, centroid) similarities.
    _ready: dict[bytes, Raw]
    #: Requests answered from prepared similarities / scored the usual way.
    hits: int
    misses: int

    @classmethod
    def over(cls, index: SemanticIndex) -> BatchedSemantic:
        batched = cls.from_arrays(index.backend, index.to_arrays(), mix=index.mix)
        assert isinstance(batched, BatchedSemantic)
        batched._ready = {}
        batched.hits = batched.misses = 0
        return batched

    @property
    def _prefiltered(self) -> bool:
        """Parts are scored only for each request's best skills (``score_many``)."""
        return len(self.part_vectors) > MAX_FULL_PARTS and self.n_skills > PART_PREFILTER

    def prepare(self, rows: Sequence[Any]) -> None:
        """Compute the similarities of every row of ``rows`` (one matrix per request)
        with every skill's document, best part, example centroid and best section."""
        import numpy as np

        self._ready = {}
        if not rows:
            return
        queries = np.ascontiguousarray(np.vstack(rows), dtype=np.float32)
        qt = queries.T
        doc = self.doc_vectors @ qt  # (skills, rows)
        # Every skill's best part; with prefiltered parts a request keeps only those of
        # its best skills by document similarity (:meth:`score_many`).
        part = doc.copy()
        if len(self.part_vectors):
            sims = self.part_vectors @ qt
            part[self.has_parts] = np.maximum.reduceat(
                sims, self.part_start[self.has_parts], axis=0
            )
        centroid = (
            self.centroid_vectors @ qt
            if len(self.centroid_vectors)
            else np.zeros((0, len(queries)), np.float32)
        )
        section = doc.copy()
        if len(self.section_vectors):
            sims = self.section_vectors @ qt
            has = self.has_sections
            section[has] = np.maximum(
                np.maximum.reduceat(sims, self.section_start[has], axis=0), doc[has]
            )
        for r, q in enumerate(queries):
            self._ready[q.tobytes()] = (
                doc[:, r].copy(),
                part[:, r].copy(),
                section[:, r].copy(),
                centroid[:, r].copy(),
            )

    def clear(self) -> None:
        self._ready = {}

    def score_many(
        self,
        query_vectors: NDArray[np.float32],
        mix: tuple[float, float, float] | None = None,
        section_weight: float = 0.0,
    ) -> list[SemanticScores]:
        """``score_many`` from the prepared similarities (else computed as usual)."""
        import numpy as np

        queries = np.ascontiguousarray(query_vectors, dtype=np.float32)
        found = [self._ready.get(q.tobytes()) for q in queries]
        raws = [r for r in found if r is not None]
        if len(raws) != len(queries):
            self.misses += 1
            return super().score_many(query_vectors, mix, section_weight)
        self.hits += 1
        doc = np.stack([r[0] for r in raws], axis=1)
        part = np.stack([r[1] for r in raws], axis=1)
        section = np.stack([r[2] for r in raws], axis=1)
        if self._prefiltered:
            # Parts count only for the request's best skills by document similarity
            # (the union over its rows); elsewhere a skill's part score is its document's.
            best = doc.copy()
            top = np.unique(np.argpartition(-doc, PART_PREFILTER - 1, axis=0)[:PART_PREFILTER])
            top = top[self.has_parts[top]]
            best[top] = part[top]
            part = best
        centroid = part.copy()
        if len(self.centroid_vectors):
            centroid[self.centroid_owner] = np.stack([r[3] for r in raws], axis=1)
        combined = self.combine(doc, part, centroid, mix, section, section_weight)
        columns = [
            np.ascontiguousarray(a.T, dtype=np.float32)
            for a in (doc, part, centroid, section, combined)
        ]
        return [
            SemanticScores(
                columns[0][r], columns[1][r], columns[2][r], columns[3][r], columns[4][r]
            )
            for r in range(len(queries))
        ]
