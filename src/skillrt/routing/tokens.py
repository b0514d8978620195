"""Token matching: the query's content tokens against each skill's texts (late interaction).

A pooled sentence vector blurs a request into one point; a skill whose description
shares the request's *specific* words and concepts can lose to one that is only
generally close. Token matching keeps the encoder's contextual token states (the same
model run that pools the vector) and scores a query against a text by symmetric MaxSim:

    tokens(q, t) = ½ · mean over q's tokens of the best cosine with a token of t
                 + ½ · mean over t's tokens of the best cosine with a token of q

A skill's score is its best text: the document ("name in words: description") or an
example. It reranks only the best :data:`TOKEN_RERANK` skills of the fused ranking (it
reorders the top; it never recalls a skill from nowhere), so a route costs one small
matrix product. Measured on the dev splits, it adds 1-2.5 points of top-1 (see
docs/routing.md).

Token states are cached per text hash in the store, like vectors, as float16 rows.
A catalogue with more than ``token_match_max_texts`` texts is routed without token
matching (its memory grows with the text count: ~8 KB per text in memory).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from skillrt.routing.semantic import MAX_EXAMPLES, document_text
from skillrt.routing.vector_cache import VectorCache, text_hash
from skillrt.skills.model import Skill

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from skillrt.routing.embeddings.base import EmbeddingBackend, Matrix

__all__ = ["TOKEN_RERANK", "TokenCache", "TokenIndex", "token_texts"]

#: How many of the best fused candidates token matching reorders.
TOKEN_RERANK = 16


class TokenCache(VectorCache):
    """Token states of documents (float16 matrices) in the vector cache's table."""

    suffix = "+tokens-v1"
    what = "token states"

    def _compute(self, backend: EmbeddingBackend, texts: list[str]) -> list[Matrix]:
        return backend.embed_document_tokens(texts)

    def _encode(self, array: Matrix) -> bytes:
        import numpy as np

        return np.asarray(array, dtype=np.float16).tobytes()

    def _decode(self, blob: bytes, dim: int) -> Matrix | None:
        import numpy as np

        if not blob or len(blob) % (dim * 2):
            return None
        # float16 rows: a Matrix in all but width (TokenIndex keeps them at half size).
        return cast("Matrix", np.frombuffer(blob, dtype=np.float16).reshape(-1, dim).copy())


def token_texts(skill: Skill) -> list[str]:
    """The texts a skill is token-matched on: its document, then its examples."""
    examples = [e for e in skill.routing.examples if e.strip()][:MAX_EXAMPLES]
    return [document_text(skill), *examples]


class TokenIndex:
    """Every skill text's content-token states, in one int8 matrix (a scale per row)."""

    def __init__(self, texts_per_skill: Sequence[Sequence[Matrix]], dim: int) -> None:
        import numpy as np

        matrices = [m for texts in texts_per_skill for m in texts]
        lengths = np.asarray([len(m) for m in matrices], dtype=np.int64)
        self.dim = dim
        states = (
            np.concatenate(matrices).astype(np.float32)
            if matrices
            else np.zeros((0, dim), dtype=np.float32)
        )
        # int8 rows with a scale each: a quarter of float32's memory, and widening int8
        # is 7x faster than widening float16 (which numpy does element by element).
        # The rounding moves a cosine by about 0.002.
        scale = np.maximum(np.abs(states).max(axis=1, initial=0.0), 1e-12) / 127.0
        self.tokens: NDArray[np.int8] = np.round(states / scale[:, None]).astype(np.int8)
        self.scale: NDArray[np.float32] = scale.astype(np.float32)
        self.text_len = lengths
        self.text_start = np.cumsum(lengths) - lengths
        counts = np.asarray([len(t) for t in texts_per_skill], dtype=np.int64)
        #: Skill i's texts are text ids skill_start[i] : skill_start[i] + skill_count[i].
        self.skill_count = counts
        self.skill_start = np.cumsum(counts) - counts

    @classmethod
    def build(
        cls,
        skills: Sequence[Skill],
        backend: EmbeddingBackend,
        cache: TokenCache,
        *,
        max_texts: int,
    ) -> TokenIndex | None:
        """The index, or None when the backend has no token states or the catalogue is
        over ``max_texts`` texts."""
        if not backend.token_states or not skills:
            return None
        texts = [token_texts(s) for s in skills]
        if sum(len(t) for t in texts) > max_texts:
            return None
        flat = [t for ts in texts for t in ts]
        arrays = cache.lookup(backend, [(text_hash(t), t) for t in flat])
        per_skill: list[list[Matrix]] = []
        pos = 0
        for ts in texts:
            per_skill.append(arrays[pos : pos + len(ts)])
            pos += len(ts)
        return cls(per_skill, backend.dim)

    @property
    def nbytes(self) -> int:
        return int(self.tokens.nbytes + self.scale.nbytes)

    def score(self, query_tokens: Matrix, skills: NDArray[np.int64]) -> NDArray[np.float32]:
        """Each skill's best symmetric MaxSim against ``query_tokens`` (rows: unit vectors)."""
        import numpy as np

        if not len(skills):
            return np.zeros(0, dtype=np.float32)
        if not len(query_tokens):
            return np.zeros(len(skills), dtype=np.float32)
        counts = self.skill_count[skills]
        text_ids = np.repeat(self.skill_start[skills] - np.cumsum(counts) + counts, counts)
        text_ids += np.arange(int(counts.sum()))
        lengths = self.text_len[text_ids]
        rows = np.repeat(self.text_start[text_ids] - np.cumsum(lengths) + lengths, lengths)
        rows += np.arange(int(lengths.sum()))
        # einsum, not a BLAS matmul: BLAS threads started right after an onnxruntime run
        # fight its pool for the cores (milliseconds instead of microseconds).
        sims = np.einsum(
            "qd,td->qt",
            np.asarray(query_tokens, dtype=np.float32),
            self.tokens[rows].astype(np.float32),
        )
        sims *= self.scale[rows]
        starts = np.cumsum(lengths) - lengths
        query_side = np.maximum.reduceat(sims, starts, axis=1).mean(axis=0)
        text_side = np.add.reduceat(sims.max(axis=0), starts) / lengths
        per_text = 0.5 * (query_side + text_side)
        out: NDArray[np.float32] = np.maximum.reduceat(per_text, np.cumsum(counts) - counts).astype(
            np.float32
        )
        return out
