"""Pseudo-request encodings, cached like skill vectors, so a warm doctor runs no model.

The router encodes each request once (:meth:`EmbeddingBackend.encode_query`: its vector,
its clauses' vectors and its content tokens). The doctor routes thousands of
pseudo-requests, which are the same texts from one run to the next while the skills do
not change, so their encodings are kept in the store's vector cache
(:class:`EncodingCache`, keyed by the query model and the text's hash) and handed to the
router by :class:`CachedQueries`, a backend that answers ``encode_query`` from them and
passes everything else to the real backend.

Stored compactly: vectors as float16, token states as int8 rows with a scale each (as the
router keeps skills' token states, :func:`skillrt.routing.tokens.quantise`), about
12 KB a request. A request is always routed with its decoded encoding, cold or warm, so
two runs over the same skills give the same findings.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from skillrt.routing.embeddings.base import EmbeddingBackend, QueryEncoding
from skillrt.routing.vector_cache import VectorCache

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from skillrt.routing.embeddings.base import Matrix

__all__ = [
    "CachedQueries",
    "EncodingCache",
    "cached_queries",
    "pack",
    "request_spans",
    "unpack",
    "unpack_vectors",
]

_NO_TOKENS = 0xFFFF


def request_spans(text: str) -> tuple[tuple[int, int], ...]:
    """The clause spans the router asks the backend for when it routes ``text``
    (:func:`skillrt.routing.router.request_spans`, imported when first needed)."""
    from skillrt.routing.router import request_spans as router_spans

    return router_spans(text)


def _quantised(rows: Matrix) -> bytes:
    import numpy as np

    from skillrt.routing.tokens import quantise

    values, scale = quantise(rows) if len(rows) else (np.zeros((0, 0), np.int8), np.zeros(0))
    return values.tobytes() + np.asarray(scale, dtype=np.float32).tobytes()


def pack(encoding: QueryEncoding) -> bytes:
    """``encoding`` as bytes: a uint16 header, float16 vectors, int8 token rows."""
    import numpy as np

    parts = np.asarray(encoding.parts, dtype=np.float32).reshape(-1, len(encoding.vector))
    tokens = encoding.tokens
    part_tokens = encoding.part_tokens if tokens is not None else None
    counts = [len(p) for p in part_tokens] if part_tokens else [0] * len(parts)
    header = [len(parts), _NO_TOKENS if tokens is None else len(tokens), *counts]
    out = struct.pack(f"<{len(header)}H", *header)
    out += np.vstack([encoding.vector[None, :], parts]).astype(np.float16).tobytes()
    if tokens is not None:
        out += _quantised(np.asarray(tokens, dtype=np.float32))
        for p in part_tokens or ():
            out += _quantised(np.asarray(p, dtype=np.float32))
    return out


def _rows(buf: bytes, at: int, n: int, dim: int) -> tuple[Matrix, int]:
    """``n`` int8 rows and their scales from ``buf[at:]``, dequantised; the next offset."""
    import numpy as np

    end = at + n * dim
    values = np.frombuffer(buf, dtype=np.int8, count=n * dim, offset=at).reshape(n, dim)
    scale = np.frombuffer(buf, dtype=np.float32, count=n, offset=end)
    rows: Matrix = values.astype(np.float32) * scale[:, None]
    return rows, end + 4 * n


def unpack(buf: bytes, dim: int) -> QueryEncoding | None:
    """The encoding :func:`pack` wrote (None when ``buf`` is not one of width ``dim``)."""
    import numpy as np

    try:
        n_parts, n_tokens = struct.unpack_from("<2H", buf)
        counts = struct.unpack_from(f"<{n_parts}H", buf, 4)
        at = 4 + 2 * n_parts
        half = np.frombuffer(buf, dtype=np.float16, count=(1 + n_parts) * dim, offset=at)
        vectors: Matrix = half.astype(np.float32).reshape(1 + n_parts, dim)
        at += half.size * 2
        tokens = None
        part_tokens = None
        if n_tokens != _NO_TOKENS:
            tokens, at = _rows(buf, at, n_tokens, dim)
            parts_out = []
            for count in counts:
                rows, at = _rows(buf, at, count, dim)
                parts_out.append(rows)
            part_tokens = tuple(parts_out)
        if at != len(buf) or not np.isfinite(vectors).all():
            return None
    except (struct.error, ValueError):
        return None
    return QueryEncoding(vectors[0], vectors[1:], tokens, part_tokens)


def unpack_vectors(buf: bytes, dim: int) -> Matrix:
    """Just the request's vector and its clauses' vectors from a :func:`pack` blob (rows:
    the vector first), without decoding its token states."""
    import numpy as np

    (n_parts,) = struct.unpack_from("<H", buf)
    at = 4 + 2 * n_parts
    half = np.frombuffer(buf, dtype=np.float16, count=(1 + n_parts) * dim, offset=at)
    rows: Matrix = half.astype(np.float32).reshape(1 + n_parts, dim)
    return rows


class _QuerySide(EmbeddingBackend):
    """The cache's view of a backend: keyed by its *query* model, computing encodings."""

    name: ClassVar[str] = "query-side"

    def __init__(self, inner: EmbeddingBackend) -> None:
        self.inner = inner
        self.model_id = inner.query_model_id
        self.dim = inner.dim

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self.inner.embed_queries(texts)

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self.inner.embed_queries(texts)


class EncodingCache(VectorCache):
    """Packed :class:`QueryEncoding` bytes per text, in the vector cache's table."""

    suffix = "+doctor-request-v1"
    what = "request encodings"

    def encodings(self, backend: EmbeddingBackend, texts: Sequence[str]) -> dict[str, bytes]:
        """Each text's packed encoding (:func:`unpack` reads it): from memory, the store,
        or the model (then stored). Kept packed, ~12 KB each, until a route asks."""
        from skillrt.routing.vector_cache import text_hash

        unique = list(dict.fromkeys(texts))
        side = _QuerySide(backend)
        blobs = self.lookup(side, [(text_hash(t), t) for t in unique], keep=False)
        out: dict[str, bytes] = {}
        for text, blob in zip(unique, blobs, strict=True):
            packed = blob.tobytes()
            if unpack(packed, backend.dim) is None:  # cannot happen for a row this cache wrote
                packed = pack(backend.encode_query(text, request_spans(text)))
            out[text] = packed
        return out

    def _compute(self, backend: EmbeddingBackend, texts: list[str]) -> list[Matrix]:
        import numpy as np

        inner = backend.inner if isinstance(backend, _QuerySide) else backend
        out: list[Matrix] = []
        for text in texts:
            blob = pack(inner.encode_query(text, request_spans(text)))
            out.append(np.frombuffer(blob, dtype=np.uint8).copy())  # type: ignore[arg-type]
        return out

    def _encode(self, array: Matrix) -> bytes:
        return array.tobytes()

    def _decode(self, blob: bytes, dim: int) -> Matrix | None:
        import numpy as np

        if len(blob) < 4:
            return None
        # Checked when decoded (:meth:`encodings`): a bad row is encoded again there.
        data: NDArray[np.uint8] = np.frombuffer(blob, dtype=np.uint8).copy()
        return data  # type: ignore[return-value]


class CachedQueries(EmbeddingBackend):
    """A backend answering ``encode_query`` from :attr:`encodings` (else the real one);
    everything else is the real backend's (same model id, same name)."""

    name: ClassVar[str] = "cached"

    def __init__(self, inner: EmbeddingBackend) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.token_states = inner.token_states
        #: text -> its packed encoding (:func:`pack`), for the requests about to be routed.
        self.encodings: dict[str, bytes] = {}

    @property
    def query_model_id(self) -> str:
        return self.inner.query_model_id

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self.inner.embed_queries(texts)

    def embed_document_tokens(self, texts: Sequence[str]) -> list[Matrix]:
        return self.inner.embed_document_tokens(texts)

    def encode_query(self, text: str, spans: Sequence[tuple[int, int]] = ()) -> QueryEncoding:
        packed = self.encodings.get(text)
        hit = unpack(packed, self.dim) if packed is not None else None
        if hit is not None and len(hit.parts) == len(spans):
            return hit
        return self.inner.encode_query(text, spans)


def cached_queries(inner: EmbeddingBackend) -> CachedQueries:
    """A :class:`CachedQueries` over ``inner`` that carries ``inner``'s name (the router
    picks its calibrated score model by the backend's name)."""
    cls = type(f"Cached{type(inner).__name__}", (CachedQueries,), {"name": inner.name})
    backend: CachedQueries = cls(inner)
    return backend
