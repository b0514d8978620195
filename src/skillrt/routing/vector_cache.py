"""Skill vectors cached by (model_id, text hash), so an unchanged skill is never re-embedded.

Two layers: a dict in memory for the life of the process, and the SQLite store's
``embedding_cache`` table (migration 2) across processes. The store is an optimisation
only: when it is locked, read-only or broken, lookups miss and writes are skipped with
a :class:`VectorCacheWarning`; callers always get their vectors.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from skillrt.errors import StoreError

if TYPE_CHECKING:
    from skillrt.routing.embeddings.base import EmbeddingBackend, Matrix
    from skillrt.store.sqlite import Store

__all__ = ["VectorCache", "VectorCacheWarning", "text_hash"]

#: SQLite allows 999 host parameters in old builds; stay well below it.
LOOKUP_CHUNK = 500
EMBED_BATCH = 256


class VectorCacheWarning(RuntimeWarning):
    """The persistent vector cache could not be read or written; vectors were still returned."""


def text_hash(text: str) -> str:
    """A content hash for callers that have no skill content hash at hand."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VectorCache:
    """Embeds only what neither memory nor the store holds; ``store=None`` is memory-only."""

    def __init__(self, store: Store | None = None, *, embed_batch: int = EMBED_BATCH) -> None:
        self.store = store
        self.embed_batch = embed_batch
        self._memory: dict[str, dict[str, Matrix]] = {}  # model_id -> text_hash -> vector
        #: Cumulative counts of unique hashes found in a cache layer / embedded anew.
        self.hits = 0
        self.misses = 0

    def get_or_embed(self, backend: EmbeddingBackend, items: Sequence[tuple[str, str]]) -> Matrix:
        """Document vectors for ``(text_hash, text)`` items, as a matrix in input order."""
        import numpy as np

        if not items:
            return np.zeros((0, backend.dim), dtype=np.float32)
        memory = self._memory.setdefault(backend.model_id, {})
        wanted = {h: text for h, text in items if h not in memory}  # unique, first text wins
        self.hits += len({h for h, _ in items}) - len(wanted)
        if wanted and self.store is not None:
            found = self._load(backend, list(wanted))
            memory.update(found)
            self.hits += len(found)
            wanted = {h: t for h, t in wanted.items() if h not in found}
        if wanted:
            fresh = self._embed(backend, wanted)
            memory.update(fresh)
            self.misses += len(fresh)
            if self.store is not None:
                self._save(backend, fresh)
        return np.stack([memory[h] for h, _ in items]).astype(np.float32, copy=False)

    def clear_memory(self) -> None:
        """Drop the in-memory layer (the store keeps its rows)."""
        self._memory.clear()

    def _embed(self, backend: EmbeddingBackend, wanted: dict[str, str]) -> dict[str, Matrix]:
        hashes, texts = list(wanted), list(wanted.values())
        fresh: dict[str, Matrix] = {}
        for start in range(0, len(texts), self.embed_batch):
            batch = texts[start : start + self.embed_batch]
            vectors = backend.embed_documents(batch)
            if vectors.shape != (len(batch), backend.dim):
                raise ValueError(
                    f"{backend!r} returned shape {vectors.shape} for {len(batch)} texts"
                )
            fresh.update(zip(hashes[start : start + len(batch)], vectors, strict=True))
        return fresh

    def _load(self, backend: EmbeddingBackend, hashes: list[str]) -> dict[str, Matrix]:
        import numpy as np

        assert self.store is not None
        found: dict[str, Matrix] = {}
        try:
            conn = self.store.connection()
            for start in range(0, len(hashes), LOOKUP_CHUNK):
                chunk = hashes[start : start + LOOKUP_CHUNK]
                rows = conn.execute(
                    "SELECT text_hash, dim, vector FROM embedding_cache "
                    f"WHERE model_id = ? AND text_hash IN ({', '.join('?' * len(chunk))})",
                    (backend.model_id, *chunk),
                ).fetchall()
                for text_hash_, dim, blob in rows:
                    # A row of the wrong width is stale or corrupt: treat it as a miss.
                    if dim == backend.dim and len(blob) == dim * 4:
                        found[text_hash_] = np.frombuffer(blob, dtype=np.float32).copy()
        except (sqlite3.Error, StoreError) as exc:
            _warn(f"cannot read cached vectors ({exc}); embedding them again")
        return found

    def _save(self, backend: EmbeddingBackend, fresh: dict[str, Matrix]) -> None:
        import numpy as np

        assert self.store is not None
        now = time.time()
        rows = [
            (backend.model_id, h, backend.dim, np.asarray(v, dtype=np.float32).tobytes(), now)
            for h, v in fresh.items()
        ]
        try:
            with self.store.transaction() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO embedding_cache"
                    "(model_id, text_hash, dim, vector, created_at) VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
        except (sqlite3.Error, StoreError) as exc:
            _warn(f"cannot save {len(rows)} vectors to the state store ({exc}); continuing")


def _warn(message: str) -> None:
    warnings.warn(message, VectorCacheWarning, stacklevel=4)
