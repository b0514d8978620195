"""Token matching: the query's content tokens against each skill's texts (late interaction).

A pooled sentence vector blurs a request into one point; a skill whose description
shares the request's *specific* words and concepts can lose to one that is only
generally close. Token matching keeps the encoder's contextual token states (the same
model run that pools the vector) and scores a query against a text by symmetric MaxSim:

    tokens(q, t) = ½ · mean over q's tokens of the best cosine with a token of t
                 + ½ · mean over t's tokens of the best cosine with a token of q

A skill's score is its best text: the document ("name in words: description") or an
example. It is the default second stage (:class:`~skillrt.routing.rerank.TokenReranker`):
it scores only the best few skills of the fused ranking (it reorders the top; it never
recalls a skill from nowhere), so a route costs one small matrix product. Measured on
the dev splits, it adds 1-2.5 points of top-1 (see docs/routing.md).

Token states are cached per text hash in the store, like vectors, as float16 rows.
A catalogue with more than ``token_match_max_texts`` texts is routed without token
matching (a long-lived process ends up holding ~8 KB per text).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, cast

from skillrt.routing.semantic import MAX_EXAMPLES, document_text
from skillrt.routing.vector_cache import VectorCache, text_hash
from skillrt.skills.model import Skill

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from skillrt.routing.embeddings.base import EmbeddingBackend, Matrix

__all__ = ["TokenCache", "TokenIndex", "quantise", "token_texts"]


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
        rows = np.frombuffer(blob, dtype=np.float16).reshape(-1, dim)
        if not np.isfinite(rows).all():  # a corrupt row must not poison every score
            return None
        # float16 rows: a Matrix in all but width (TokenIndex keeps them as int8).
        return cast("Matrix", rows.copy())


def token_texts(skill: Skill) -> list[str]:
    """The texts a skill is token-matched on: its document, then its examples."""
    examples = [e for e in skill.routing.examples if e.strip()][:MAX_EXAMPLES]
    return [document_text(skill), *examples]


class TokenIndex:
    """Each skill text's content-token states as int8 rows with a scale each.

    Loaded lazily: building only makes sure every text's states are in the cache
    (embedding what is missing); a route reads the states of the skills it reranks, so
    a one-shot CLI route reads a few dozen rows, and a long-lived process ends up with
    the catalogue in memory (:meth:`preload` does it up front).
    """

    def __init__(
        self,
        texts_per_skill: Sequence[Sequence[str]],
        backend: EmbeddingBackend,
        cache: TokenCache,
    ) -> None:
        self.dim = backend.dim
        self._backend = backend
        self._cache = cache
        self._items = [[(text_hash(t), t) for t in texts] for texts in texts_per_skill]
        self._states: dict[str, tuple[NDArray[np.int8], NDArray[np.float32]]] = {}

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
        index = cls(texts, backend, cache)
        try:
            cache.ensure(backend, [item for items in index._items for item in items])
        except NotImplementedError:  # the backend said yes but its model says no
            return None
        return index

    def preload(self) -> None:
        """Read every text's states now (a server does this once, not per route)."""
        self._load(range(len(self._items)))

    @property
    def nbytes(self) -> int:
        """Memory held by the states read so far."""
        return sum(int(t.nbytes + s.nbytes) for t, s in self._states.values())

    def _load(self, skills: Iterable[int]) -> None:
        missing = {h: t for i in skills for h, t in self._items[i] if h not in self._states}
        if not missing:
            return
        # The int8 copy is the one kept: the cache need not hold the float16 rows too.
        arrays = self._cache.lookup(self._backend, list(missing.items()), keep=False)
        for h, array in zip(missing, arrays, strict=True):
            self._states[h] = quantise(array)

    def score(self, query_tokens: Matrix, skills: NDArray[np.int64]) -> NDArray[np.float32]:
        """Each skill's best symmetric MaxSim against ``query_tokens`` (rows: unit vectors)."""
        import numpy as np

        if not len(skills):
            return np.zeros(0, dtype=np.float32)
        if not len(query_tokens):
            return np.zeros(len(skills), dtype=np.float32)
        wanted = skills.tolist()
        self._load(wanted)
        texts = [self._states[h] for i in wanted for h, _ in self._items[i]]
        counts = np.asarray([len(self._items[i]) for i in wanted], dtype=np.int64)
        lengths = np.asarray([len(t) for t, _ in texts], dtype=np.int64)
        tokens = np.concatenate([t for t, _ in texts])
        scale = np.concatenate([s for _, s in texts])
        # einsum, not a BLAS matmul: BLAS threads started right after an onnxruntime run
        # fight its pool for the cores (milliseconds instead of microseconds).
        sims = np.einsum(
            "qd,td->qt", np.asarray(query_tokens, dtype=np.float32), tokens.astype(np.float32)
        )
        sims *= scale
        starts = np.cumsum(lengths) - lengths
        query_side = np.maximum.reduceat(sims, starts, axis=1).mean(axis=0)
        text_side = np.add.reduceat(sims.max(axis=0), starts) / lengths
        per_text = 0.5 * (query_side + text_side)
        out: NDArray[np.float32] = np.maximum.reduceat(per_text, np.cumsum(counts) - counts).astype(
            np.float32
        )
        return out

    def profile(
        self, query_tokens: Matrix, skills: NDArray[np.int64], levels: Sequence[float]
    ) -> NDArray[np.float32]:
        """How each skill's texts meet the query's tokens, for a reader to weigh
        (:mod:`skillrt.routing.reader`): per skill, the mean over query tokens of their
        best cosine with any of its texts' tokens, the mean over its best text's tokens of
        their best cosine with a query token, then the share of query tokens whose best
        cosine reaches each of ``levels``. Shape ``(len(skills), 2 + len(levels))``."""
        import numpy as np

        out = np.zeros((len(skills), 2 + len(levels)), dtype=np.float32)
        if not len(skills) or not len(query_tokens):
            return out
        wanted = skills.tolist()
        self._load(wanted)
        texts = [self._states[h] for i in wanted for h, _ in self._items[i]]
        counts = np.asarray([len(self._items[i]) for i in wanted], dtype=np.int64)
        lengths = np.asarray([len(t) for t, _ in texts], dtype=np.int64)
        tokens = np.concatenate([t for t, _ in texts])
        scale = np.concatenate([s for _, s in texts])
        sims = np.einsum(
            "qd,td->qt", np.asarray(query_tokens, dtype=np.float32), tokens.astype(np.float32)
        )
        sims *= scale
        starts = np.cumsum(lengths) - lengths
        per_text = np.maximum.reduceat(sims, starts, axis=1)  # (query tokens, texts)
        first = np.cumsum(counts) - counts
        best = np.maximum.reduceat(per_text, first, axis=1)  # (query tokens, skills)
        out[:, 0] = best.mean(axis=0)
        text_side = np.add.reduceat(sims.max(axis=0), starts) / lengths
        out[:, 1] = np.maximum.reduceat(text_side, first)
        for k, level in enumerate(levels):
            out[:, 2 + k] = (best >= level).mean(axis=0)
        return out


def quantise(states: Matrix) -> tuple[NDArray[np.int8], NDArray[np.float32]]:
    """int8 rows and a scale each: a quarter of float32's memory, and widening int8 is
    7x faster than widening float16 (which numpy does element by element). The rounding
    moves a cosine by about 0.002. An empty matrix becomes one zero row (a text always
    has at least one row, so reductions over it are defined)."""
    import numpy as np

    values = np.nan_to_num(np.asarray(states, dtype=np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    if not len(values):
        values = np.zeros((1, values.shape[1] if values.ndim == 2 else 1), dtype=np.float32)
    scale = np.maximum(np.abs(values).max(axis=1), 1e-12) / 127.0
    scaled = values / scale[:, None]
    return np.rint(scaled, out=scaled).astype(np.int8), scale.astype(np.float32)
