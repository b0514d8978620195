"""Raw evidence for one text (the query or one clause of it) against every skill.

Lexical (BM25 over each skill's fields) and semantic (cosines of the query vector with
each skill's vectors) scores are fused into one ranking score; a reranker then adds its
score to the best few (:mod:`skillrt.routing.rerank`). Everything is an array aligned
with ``rows`` (every skill, or the ``candidates`` a query was restricted to).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillrt.routing.signals import SignalInput, request_signals
from skillrt.routing.text import terms

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from skillrt.routing.calibration import ScoreModel
    from skillrt.routing.index import RouterIndex
    from skillrt.routing.lexical import LexicalScores
    from skillrt.routing.rerank import Reranker, RerankQuery
    from skillrt.routing.semantic import SemanticScores

__all__ = ["LEXICAL_FLOOR", "Evidence", "gather", "kth", "relative_lexical", "top"]

#: The fused score weighs BM25F relative to the query's best lexical match, so one
#: weight fits short tool descriptions and long skill bodies alike (a long body covers
#: more of a long request's words, which shrinks the absolute normalised score); below
#: this absolute level the best match is not scaled up, so a weak match stays weak.
LEXICAL_FLOOR = 0.1


@dataclass
class Evidence:
    """Scores of every considered skill for one text."""

    rows: NDArray[np.int64]  # skill positions, aligned with the arrays below
    fused: NDArray[np.float32]
    lexical: LexicalScores
    lex_norm: NDArray[np.float32]
    lex_raw: NDArray[np.float32]
    sem_doc: NDArray[np.float32] | None
    sem_part: NDArray[np.float32] | None
    sem_centroid: NDArray[np.float32] | None
    sem_combined: NDArray[np.float32] | None
    #: Best body-section similarity, or None.
    sem_section: NDArray[np.float32] | None
    #: The reranker's score of the reranked candidates (NaN elsewhere), or None.
    rerank: NDArray[np.float32] | None
    best: float
    second: float
    #: The evidence of P(scope): the best fused score with every skill weighed as one
    #: without a body (``body_*_weight`` reorder skills; they must not make a request look
    #: more like a skill request because the catalogue's skills have bodies).
    scope: float
    #: The text's request signals by name (:mod:`skillrt.routing.signals`), which P(scope)
    #: reads; a clause's form signals are 0.
    signals: dict[str, float] = field(default_factory=dict)
    #: The text's vector (None without a semantic backend), for ``--explain``.
    query_vector: Any = None
    #: True when ``rows`` is every skill in index order (row == position).
    full: bool = False

    _positions: dict[int, int] | None = None

    def margin(self, k: int) -> float:
        value = float(self.fused[k])
        other = self.second if value >= self.best else self.best
        return value - other

    def positions(self) -> dict[int, int]:
        """Skill position -> index into this evidence's arrays."""
        if self._positions is None:
            self._positions = {int(r): k for k, r in enumerate(self.rows.tolist())}
        return self._positions

    def index_of(self, i: int) -> int | None:
        """Where skill ``i`` is in this evidence's arrays (None: not scored)."""
        if self.full:
            return i if 0 <= i < len(self.rows) else None
        return self.positions().get(i)

    def values(self, array: NDArray[np.float32], members: Sequence[int]) -> NDArray[np.float32]:
        """``array`` at each member's position (NaN where the member is not scored)."""
        import numpy as np

        if len(self.rows) == len(array) and self.full:
            return np.asarray(array[np.asarray(members, dtype=np.int64)], dtype=np.float32)
        pos = self.positions()
        out = np.full(len(members), np.nan, dtype=np.float32)
        for m, i in enumerate(members):
            k = pos.get(i)
            if k is not None:
                out[m] = array[k]
        return out


def gather(
    index: RouterIndex,
    model: ScoreModel,
    text: str,
    qvec: Any,
    rows: NDArray[np.int64] | None,
    *,
    reranker: Reranker | None = None,
    rerank_query: RerankQuery | None = None,
    semantic: SemanticScores | None = None,
    clause: bool = False,
    reader: Reranker | None = None,
) -> Evidence:
    """The evidence of ``text`` (embedded as ``qvec``) over ``rows`` (None: every skill).

    ``semantic``: its semantic scores when already computed (a request and its clauses
    are scored in one pass, :meth:`SemanticIndex.score_many`). ``clause``: the text is
    one clause of a request (its form signals are left out). ``reader``: a second
    reranker after the first (:mod:`skillrt.routing.reader`), added with weight 1; it
    reorders the best candidates; P(scope)'s fused evidence is read before it (the best
    candidate's own signals, lexical and body, are those of the best after it).
    """
    import numpy as np

    lex = index.lexical.score(terms(text))
    if rows is None:
        rows_arr = np.arange(len(index), dtype=np.int64)
        lex_norm, lex_raw = lex.norm, lex.raw
    else:
        rows_arr = rows
        lex_norm, lex_raw = lex.norm[rows], lex.raw[rows]
    lam: Any = model.lexical_weight
    tok: Any = model.token_weight
    per_kind = False
    if index.has_body is not None:
        # Per-row weights: a skill with an indexed body weighs its evidence differently.
        body = index.has_body[rows_arr]
        if model.body_lexical_weight is not None:
            lam = np.where(body, model.body_lexical_weight, lam).astype(np.float32)
            per_kind = True
        if model.body_token_weight is not None:
            tok = np.where(body, model.body_token_weight, tok).astype(np.float32)
            per_kind = True
    rel_lex = relative_lexical(lex_norm)
    sem = semantic
    if sem is None and index.semantic is not None and qvec is not None:
        sem = (
            index.semantic.score(qvec, model.mix, model.section_weight)
            if rows is None
            else index.semantic.score_subset(qvec, rows, model.mix, model.section_weight)
        )
    combined = sem.combined if sem is not None else np.zeros(len(rel_lex), dtype=np.float32)
    fused = (combined + lam * rel_lex).astype(np.float32)
    neutral = (combined + model.lexical_weight * rel_lex).astype(np.float32) if per_kind else fused
    reranked = None
    if reranker is not None and rerank_query is not None and np.any(tok) and len(fused):
        from skillrt.routing.rerank import apply_rerank

        applied = apply_rerank(reranker, rerank_query, rows_arr, fused, tok)
        if applied is not None:
            fused, reranked = applied
            if per_kind:
                floor = float(np.nanmin(reranked)) if np.any(~np.isnan(reranked)) else 0.0
                bonus = np.where(np.isnan(reranked), floor, reranked)
                neutral = (neutral + model.token_weight * bonus).astype(np.float32)
    scope = float(neutral.max()) if per_kind and len(neutral) else 0.0
    if not per_kind and len(fused):
        scope = float(fused.max())
    if reader is not None and rerank_query is not None and len(fused):
        from skillrt.routing.rerank import apply_rerank

        read = apply_rerank(reader, rerank_query, rows_arr, fused, 1.0)
        if read is not None:
            fused = read[0]
    best = second = best_lexical = best_body = 0.0
    if len(fused):
        top2 = top(fused, 2)
        best = float(fused[top2[0]])
        second = float(fused[top2[1]]) if len(top2) > 1 else 0.0
        best_lexical = float(lex_norm[top2[0]])
        if index.has_body is not None:
            best_body = float(index.has_body[rows_arr[top2[0]]])
    signals = request_signals(
        SignalInput(text, scope, best_lexical, lex.unknown_share, best_body),
        clause=clause,
    )
    return Evidence(
        rows=rows_arr,
        fused=fused,
        lexical=lex,
        lex_norm=lex_norm,
        lex_raw=lex_raw,
        sem_doc=sem.doc if sem is not None else None,
        sem_part=sem.part if sem is not None else None,
        sem_centroid=sem.centroid if sem is not None else None,
        sem_combined=sem.combined if sem is not None else None,
        sem_section=sem.section if sem is not None else None,
        rerank=reranked,
        best=best,
        second=second,
        scope=scope,
        signals=signals,
        query_vector=qvec,
        full=rows is None,
    )


def relative_lexical(lex_norm: NDArray[np.float32]) -> NDArray[np.float32]:
    """BM25F relative to the best match of the query (see :data:`LEXICAL_FLOOR`)."""
    import numpy as np

    if not len(lex_norm):
        return lex_norm
    scale = max(float(lex_norm.max()), LEXICAL_FLOOR)
    out: NDArray[np.float32] = (lex_norm / np.float32(scale)).astype(np.float32)
    return out


def top(values: Any, k: int) -> list[int]:
    """Indices of the ``k`` largest values, best first (ties: lower index first)."""
    import numpy as np

    n = len(values)
    if n == 0 or k <= 0:
        return []
    if k >= n:
        order = np.argsort(-values, kind="stable")
    else:
        part = np.argpartition(-values, k - 1)[:k]
        order = part[np.lexsort((part, -values[part]))]
    return [int(i) for i in order]


def kth(values: Any, k: int) -> float:
    """The k-th largest value (the smallest value when there are fewer than k)."""
    import numpy as np

    n = len(values)
    if n == 0:
        return float("inf")
    if k >= n:
        return float(np.min(values))
    return float(np.partition(values, n - k)[n - k])
