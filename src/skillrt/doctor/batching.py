"""Semantic scores of many pseudo-requests at once, handed to the router one by one.

A route's semantic evidence is one product of the request's vectors with every skill's
vectors (:meth:`SemanticIndex.score_many`); with ~10,000 section vectors that product
is most of a route's time, and it is bound by reading the skill vectors, not by the
number of request rows. The doctor knows every request of a chunk in advance, so
:class:`BatchedSemantic` computes the raw similarities of all of them in one product
(:meth:`BatchedSemantic.prepare`, :meth:`SemanticIndex.similarities` over every row)
and answers the router's ``score_many`` for each request by handing its rows'
similarities to :meth:`SemanticIndex.scores`, the step ``score_many`` itself ends with.
A request it was not prepared for is scored the usual way.

With a part prefilter (parts count only for a request's best ``PART_PREFILTER`` skills
by document similarity) the batch scores every skill's parts, and ``scores`` keeps
those of the request's own best skills; ``tests/doctor/test_batching.py`` checks both
ways give the same scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from skillrt.routing.semantic import SemanticIndex, SemanticScores, Similarities

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

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

    #: row bytes -> that row's similarities (every part scored).
    _ready: dict[bytes, Similarities]
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

    def prepare(self, rows: Sequence[Any]) -> None:
        """Compute the similarities of every row of ``rows`` (one matrix per request)
        with every skill's document, parts, example centroid and sections."""
        import numpy as np

        self._ready = {}
        if not rows:
            return
        queries = np.ascontiguousarray(np.vstack(rows), dtype=np.float32)
        sims = self.similarities(queries, every_part=True)
        for r, q in enumerate(queries):
            self._ready[q.tobytes()] = sims.column(r)

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
        ready = [f for f in found if f is not None]
        if len(ready) != len(queries):
            self.misses += 1
            return super().score_many(query_vectors, mix, section_weight)
        self.hits += 1
        return self.scores(Similarities.join(ready), mix, section_weight)
