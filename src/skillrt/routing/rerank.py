"""The second stage over the best candidates: a small :class:`Reranker` extension point.

The first stage ranks every skill by fused lexical + semantic evidence. A reranker
then scores only the best ``depth`` of them with something costlier (it reorders the
top; it never recalls a skill from nowhere). The router adds ``weight x score`` to
those candidates and the lowest of their scores to the rest, so the scale the
calibration was fitted on holds for every candidate and the reranked ones keep their
lead over the tail.

The default, :class:`TokenReranker`, is offline and cheap: symmetric MaxSim of the
query's contextual token states against each skill's texts (see
:mod:`skillrt.routing.tokens`). Other second stages plug in with the same two members,
``name`` and ``score(query, rows)``: a cross-encoder scoring ``(query, skill text)``
pairs, or a model asked through a runner to grade the candidates. The weight comes from
the score model (``routing.options.score_model.token_weight``); see docs/routing.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from skillrt.routing.embeddings.base import Matrix
    from skillrt.routing.tokens import TokenIndex

__all__ = ["RERANK_DEPTH", "RerankQuery", "Reranker", "TokenReranker", "apply_rerank"]

#: How many of the best fused candidates a reranker reorders by default.
RERANK_DEPTH = 16


@dataclass(frozen=True)
class RerankQuery:
    """What a reranker may use of one query (or one clause of it)."""

    text: str
    #: The pooled query vector (None without a semantic backend).
    vector: Matrix | None = None
    #: Unit-length states of the query's content tokens (None when the backend has none).
    tokens: Matrix | None = None


class Reranker(Protocol):
    """Scores the best candidates of one query; higher is better."""

    #: Names the reranker in ``--explain`` signals.
    name: str
    #: How many of the best fused candidates it scores.
    depth: int

    def score(self, query: RerankQuery, rows: NDArray[np.int64]) -> NDArray[np.float32] | None:
        """One score per index row of ``rows``, or None when it has nothing to say."""
        ...


class TokenReranker:
    """The default reranker: token matching (late interaction) over each skill's texts."""

    name = "tokens"

    def __init__(self, tokens: TokenIndex, *, depth: int = RERANK_DEPTH) -> None:
        self.tokens = tokens
        self.depth = depth

    def score(self, query: RerankQuery, rows: NDArray[np.int64]) -> NDArray[np.float32] | None:
        if query.tokens is None:
            return None
        return self.tokens.score(query.tokens, rows)


def apply_rerank(
    reranker: Reranker,
    query: RerankQuery,
    rows: NDArray[np.int64],
    fused: NDArray[np.float32],
    weight: float | NDArray[np.float32],
) -> tuple[NDArray[np.float32], NDArray[np.float32]] | None:
    """``fused`` plus ``weight`` x the reranker's score of the best ``depth`` rows.

    ``weight`` is one number, or one per row (see ``ScoreModel.body_token_weight``).

    Returns the new scores and the per-row rerank score (NaN where not reranked), or
    None when the reranker had nothing to say. The rest get the lowest reranked score,
    so the scale is the same for every candidate and the reranked ones keep their lead.
    """
    import numpy as np

    from skillrt.routing.topk import top

    best = top(fused, reranker.depth)
    raw = reranker.score(query, rows[best])
    if raw is None:
        return None
    scores = np.nan_to_num(np.asarray(raw, dtype=np.float32), nan=0.0)
    per_row = np.full(len(fused), np.nan, dtype=np.float32)
    per_row[best] = scores
    floor = float(scores.min()) if len(scores) else 0.0
    out = (fused + weight * np.where(np.isnan(per_row), floor, per_row)).astype(np.float32)
    return out, per_row
