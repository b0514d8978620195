"""The embedding backend interface: texts in, unit-length float32 vectors out.

numpy is only imported for type checking here so that importing the package stays
cheap; backends import it when they first embed.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from skillrt.errors import EmbeddingBackendUnavailable, EmbeddingModelError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Matrix = NDArray[np.float32]

__all__ = [
    "EmbeddingBackend",
    "EmbeddingBackendUnavailable",
    "EmbeddingModelError",
    "QueryEncoding",
    "l2_normalise",
]


@dataclass(frozen=True)
class QueryEncoding:
    """Everything the router takes from one query: its vector, its clauses', its tokens'.

    ``tokens`` holds the unit-length states of the query's content tokens (rows) and
    ``part_tokens`` the rows of ``tokens`` inside each span; both are None for a backend
    without token states (:attr:`EmbeddingBackend.token_states`).
    """

    vector: Matrix
    parts: Matrix
    tokens: Matrix | None = None
    part_tokens: tuple[Matrix, ...] | None = None


class EmbeddingBackend(ABC):
    """Turns texts into L2-normalised float32 rows of width ``dim``.

    ``model_id`` identifies the exact model and preprocessing; it is part of every cache
    key, so it must change whenever the vectors a backend produces would change.
    Documents and queries have separate methods because asymmetric models embed them
    differently; symmetric models use the same path for both.
    """

    name: ClassVar[str]
    model_id: str
    dim: int

    @abstractmethod
    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        """Embed documents (skill descriptions): shape ``(len(texts), dim)``."""

    @abstractmethod
    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        """Embed queries (user requests): shape ``(len(texts), dim)``."""

    @property
    def query_model_id(self) -> str:
        """What embeds queries (route events report it); ``model_id`` unless they differ."""
        return self.model_id

    def embed_query(self, text: str) -> Matrix:
        """Embed one query: shape ``(dim,)``."""
        vector: Matrix = self.embed_queries([text])[0]
        return vector

    #: Whether :meth:`embed_document_tokens` works and :meth:`encode_query` fills tokens
    #: (an instance may say no, e.g. an ONNX export that pools its own output).
    token_states: bool = False

    def embed_document_tokens(self, texts: Sequence[str]) -> list[Matrix]:
        """Unit-length states of each document's content tokens (one matrix per text).

        Only backends with :attr:`token_states`; the rest raise ``NotImplementedError``.
        """
        raise NotImplementedError(f"{self.name} has no token states")

    def encode_query(self, text: str, spans: Sequence[tuple[int, int]] = ()) -> QueryEncoding:
        """The query's vector, one per ``(start, end)`` character span of it, and its tokens.

        The query's vector equals :meth:`embed_query`'s. This default embeds each span as
        a text of its own and has no tokens; a contextual encoder can instead pool each
        span's tokens from one pass over the whole query (one run instead of one per span).
        """
        vectors = self.embed_queries([text, *(text[a:b] for a, b in spans)])
        return QueryEncoding(vectors[0], vectors[1:])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model_id={self.model_id!r}, dim={self.dim})"


def l2_normalise(matrix: Matrix) -> Matrix:
    """Scale each row to unit length; an all-zero row stays zero instead of becoming NaN."""
    import numpy as np

    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: Matrix = (matrix / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return unit
