"""The reader: a learned second stage that reads the request against each of the best
candidates' texts together and reorders them (issue "a decision that reads").

It sits behind the :class:`~skillrt.routing.rerank.Reranker` protocol: for the best
``depth`` candidates of the fused ranking it computes :data:`FEATURES` (what the router's
evidence says of each, relative to the best of them; how the request's contextual token
states meet each skill's token states, by level; how the skill's body sections meet the
request; the request's form) and a small network turns them into a score. The weights
are trained offline (``bench/train_reader.py``: its data recipe and seed are in the
repository; ``--write`` saves them with their model card), never at run time, and the
runtime needs numpy only. ``routing.reader_weights`` names the file. No weights ship in
the package: trained as the issue asks (pseudo-requests from real skill bodies, leave-out
routed, hard negatives from the router's top candidates), the reader did not beat the
router on the held-out dev requests (docs/evaluation.md, *The reader*).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.routing.request_form import brevity, own_words, quick_question, request_words
from skillrt.routing.text import terms

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from skillrt.routing.calibration import ScoreModel
    from skillrt.routing.index import RouterIndex
    from skillrt.routing.rerank import RerankQuery

__all__ = [
    "FEATURES",
    "READER_DEPTH",
    "TOKEN_LEVELS",
    "ReaderModel",
    "ReaderReranker",
    "features",
]

#: How many of the best candidates the reader reorders.
READER_DEPTH = 10

#: Cosine levels at which the share of the request's tokens met by a skill is counted.
TOKEN_LEVELS = (0.9, 0.8, 0.7, 0.6, 0.5)
#: How many body sections' similarities are read per skill (best first).
SECTION_TOP = 3

FEATURES: tuple[str, ...] = (
    "doc",
    "part",
    "centroid",
    "section",
    "section_2",
    "section_3",
    "sections_over_half",
    "lexical",
    "lexical_relative",
    "tokens_query",
    "tokens_text",
    *(f"tokens_at_{level}" for level in TOKEN_LEVELS),
    "has_body",
    "rank",
    "doc_gap",
    "section_gap",
    "lexical_gap",
    "tokens_gap",
    "paste",
    "question",
    "brevity",
    "length",
    "fused",
    "fused_gap",
)


def features(
    index: RouterIndex, model: ScoreModel, query: RerankQuery, rows: NDArray[np.int64]
) -> NDArray[np.float32]:
    """One row of :data:`FEATURES` per index row of ``rows`` (given best first)."""
    import numpy as np

    from skillrt.routing.evidence import LEXICAL_FLOOR

    n = len(rows)
    out = np.zeros((n, len(FEATURES)), dtype=np.float32)
    if not n:
        return out
    col = {name: k for k, name in enumerate(FEATURES)}
    if index.semantic is not None and query.vector is not None:
        sem = index.semantic.score_subset(query.vector, rows, model.mix, model.section_weight)
        out[:, col["doc"]] = sem.doc
        out[:, col["part"]] = sem.part
        out[:, col["centroid"]] = sem.centroid
        q = np.asarray(query.vector, dtype=np.float32)
        semantic = index.semantic
        for k, i in enumerate(rows.tolist()):
            if semantic.has_sections[i]:
                start, end = int(semantic.section_start[i]), int(semantic.section_end[i])
                sims = np.sort(semantic.section_vectors[start:end] @ q)[::-1]
            else:
                sims = np.asarray([sem.doc[k]], dtype=np.float32)
            top = np.concatenate([sims[:SECTION_TOP], np.full(SECTION_TOP, sims[-1])])
            out[k, col["section"] : col["section"] + SECTION_TOP] = top[:SECTION_TOP]
            out[k, col["sections_over_half"]] = float(np.mean(sims >= 0.5))
    lex = index.lexical.score(terms(query.text))
    out[:, col["lexical"]] = lex.norm[rows]
    out[:, col["lexical_relative"]] = lex.norm[rows] / max(float(lex.norm.max()), LEXICAL_FLOOR)
    token_score = np.zeros(n, dtype=np.float32)
    if index.tokens is not None and query.tokens is not None and len(query.tokens):
        profile = index.tokens.profile(query.tokens, rows, TOKEN_LEVELS)
        first = col["tokens_query"]
        out[:, first : first + profile.shape[1]] = profile
        token_score = index.tokens.score(query.tokens, rows)
    body = np.zeros(n, dtype=bool)
    if index.has_body is not None:
        body = index.has_body[rows]
        out[:, col["has_body"]] = body
    # The router's own fused score of each row (evidence.gather, token rerank included).
    lam = np.where(body, _or(model.body_lexical_weight, model.lexical_weight), model.lexical_weight)
    tok = np.where(body, _or(model.body_token_weight, model.token_weight), model.token_weight)
    combined = sem.combined if index.semantic is not None and query.vector is not None else 0.0
    out[:, col["fused"]] = combined + lam * out[:, col["lexical_relative"]] + tok * token_score
    out[:, col["rank"]] = np.arange(n, dtype=np.float32) / max(1, n - 1)
    for name, source in (
        ("doc_gap", "doc"),
        ("section_gap", "section"),
        ("lexical_gap", "lexical_relative"),
        ("tokens_gap", "tokens_query"),
        ("fused_gap", "fused"),
    ):
        values = out[:, col[source]]
        out[:, col[name]] = values - values.max()
    text = query.text
    out[:, col["paste"]] = float(own_words(text) != text)
    out[:, col["question"]] = quick_question(text)
    out[:, col["brevity"]] = brevity(text)
    out[:, col["length"]] = math.log1p(request_words(text)) / 5.0
    return out


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


@dataclass(frozen=True)
class ReaderModel:
    """A one-hidden-layer network over standardised :data:`FEATURES` (no hidden layer:
    a linear score, ``out_weights`` one per feature). Features a model does not use
    have weight 0."""

    names: tuple[str, ...]
    mean: Sequence[float]
    scale: Sequence[float]
    hidden_weights: Sequence[Sequence[float]]  # (features, hidden)
    hidden_bias: Sequence[float]
    out_weights: Sequence[float]  # (hidden,)
    card: Mapping[str, Any]
    #: Fused-score units per unit of the network's output (centred over the candidates).
    gain: float = 0.0

    @classmethod
    def load(cls, path: Path) -> ReaderModel:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            names=tuple(data["features"]),
            mean=data["mean"],
            scale=data["scale"],
            hidden_weights=data["hidden_weights"],
            hidden_bias=data["hidden_bias"],
            out_weights=data["out_weights"],
            card=data.get("card", {}),
            gain=float(data.get("gain", 0.0)),
        )

    def score(self, x: NDArray[np.float32]) -> NDArray[np.float32]:
        import numpy as np

        if tuple(self.names) != FEATURES:
            raise ValueError("the reader's weights were trained on other features")
        z = (x - np.asarray(self.mean, np.float32)) / np.asarray(self.scale, np.float32)
        if len(self.hidden_weights) and len(self.hidden_weights[0]):
            z = np.tanh(
                z @ np.asarray(self.hidden_weights, np.float32)
                + np.asarray(self.hidden_bias, np.float32)
            )
        out: NDArray[np.float32] = (z @ np.asarray(self.out_weights, np.float32)).astype(np.float32)
        return out


class ReaderReranker:
    """The reader as a :class:`~skillrt.routing.rerank.Reranker`: its centred score times
    the model's gain, added to the fused score of the best :data:`READER_DEPTH`
    candidates (after token matching). It reorders; the evidence of P(scope) is read
    before it (:func:`skillrt.routing.evidence.gather`)."""

    name = "reader"

    def __init__(
        self,
        index: RouterIndex,
        model: ScoreModel,
        weights: ReaderModel,
        *,
        depth: int = READER_DEPTH,
    ) -> None:
        self.index = index
        self.model = model
        self.weights = weights
        self.depth = depth

    def score(self, query: RerankQuery, rows: NDArray[np.int64]) -> NDArray[np.float32] | None:
        import numpy as np

        if not len(rows) or query.vector is None:
            return None
        r = self.weights.score(features(self.index, self.model, query, rows))
        out: NDArray[np.float32] = (self.weights.gain * (r - r.mean())).astype(np.float32)
        return out
