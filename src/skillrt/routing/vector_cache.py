"""Skill vectors cached by (model_id, text hash), so an unchanged skill is never re-embedded.

Two layers: a dict in memory for the life of the process, and the store's
:attr:`~skillrt.store.base.Store.embedding_cache` across processes. The store is an optimisation
only: when it is locked, read-only or broken, lookups miss and writes are skipped with
a :class:`VectorCacheWarning`; callers always get their vectors.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from skillrt.errors import StoreError

if TYPE_CHECKING:
    from skillrt.routing.embeddings.base import EmbeddingBackend, Matrix
    from skillrt.store.base import Store

__all__ = ["VectorCache", "VectorCacheWarning", "text_hash"]

EMBED_BATCH = 256


class VectorCacheWarning(RuntimeWarning):
    """The persistent vector cache could not be read or written; vectors were still returned."""


def text_hash(text: str) -> str:
    """A content hash for callers that have no skill content hash at hand."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: Texts embedded between two saves to the store.
SAVE_CHUNK = 256
#: ``(what, done, total)``: how far an index build has come (a progress bar's input).
BuildProgress = Callable[[str, int, int], None]


class VectorCache:
    """Embeds only what neither memory nor the store holds; ``store=None`` is memory-only.

    Subclasses cache other per-text arrays in the same table under their own model key
    (:attr:`suffix`) by overriding :meth:`_compute`, :meth:`_encode` and :meth:`_decode`.
    """

    #: Appended to the backend's ``model_id`` to key this cache's rows.
    suffix: str = ""
    #: What the warnings call the cached arrays.
    what: str = "vectors"

    def __init__(
        self,
        store: Store | None = None,
        *,
        embed_batch: int = EMBED_BATCH,
        progress: BuildProgress | None = None,
    ) -> None:
        self.store = store
        self.embed_batch = embed_batch
        #: Told ``(what, done, total)`` while new texts are embedded.
        self.progress = progress
        self._memory: dict[str, dict[str, Matrix]] = {}  # model key -> text_hash -> array
        #: Cumulative counts of unique hashes found in a cache layer / embedded anew.
        self.hits = 0
        self.misses = 0

    def get_or_embed(self, backend: EmbeddingBackend, items: Sequence[tuple[str, str]]) -> Matrix:
        """Document vectors for ``(text_hash, text)`` items, as a matrix in input order."""
        import numpy as np

        if not items:
            return np.zeros((0, backend.dim), dtype=np.float32)
        return np.stack(self.lookup(backend, items)).astype(np.float32, copy=False)

    def lookup(
        self, backend: EmbeddingBackend, items: Sequence[tuple[str, str]], *, keep: bool = True
    ) -> list[Matrix]:
        """The cached array of each ``(text_hash, text)`` item, in input order.

        ``keep=False``: the caller keeps its own copy, so the memory layer drops these.
        """
        key = backend.model_id + self.suffix
        memory = self._memory.setdefault(key, {})
        wanted = {h: text for h, text in items if h not in memory}  # unique, first text wins
        self.hits += len({h for h, _ in items}) - len(wanted)
        if wanted and self.store is not None:
            found = self._load(key, backend.dim, list(wanted))
            memory.update(found)
            self.hits += len(found)
            wanted = {h: t for h, t in wanted.items() if h not in found}
        self._embed_new(backend, key, memory, wanted)
        out = [memory[h] for h, _ in items]
        if not keep:
            for h, _ in items:
                memory.pop(h, None)
        return out

    def ensure(self, backend: EmbeddingBackend, items: Sequence[tuple[str, str]]) -> int:
        """Embed and store what neither memory nor the store holds, without loading the
        rest (a later :meth:`lookup` reads those). Returns how many were embedded."""
        key = backend.model_id + self.suffix
        memory = self._memory.setdefault(key, {})
        return self._embed_new(backend, key, memory, self._wanted(backend, items))

    def missing(self, backend: EmbeddingBackend, items: Sequence[tuple[str, str]]) -> set[str]:
        """The hashes of ``items`` neither memory nor the store holds (what a
        :meth:`lookup` would embed), without loading or embedding anything."""
        return set(self._wanted(backend, items))

    def _wanted(
        self, backend: EmbeddingBackend, items: Sequence[tuple[str, str]]
    ) -> dict[str, str]:
        key = backend.model_id + self.suffix
        memory = self._memory.get(key, {})
        wanted = {h: text for h, text in items if h not in memory}
        if wanted and self.store is not None:
            present = self._present(key, backend.dim, list(wanted))
            wanted = {h: t for h, t in wanted.items() if h not in present}
        return wanted

    def _embed_new(
        self,
        backend: EmbeddingBackend,
        key: str,
        memory: dict[str, Matrix],
        wanted: dict[str, str],
    ) -> int:
        """Embed ``wanted`` into ``memory`` and the store; how many were embedded.

        Saved chunk by chunk: an interrupted build of a large catalogue keeps what it
        embedded, and the next build embeds only the rest. Progress counts characters
        (a long section costs more than a short clause), so a bar's estimate of the time
        left holds whatever the order of the texts.
        """
        if not wanted:
            return 0
        items = list(wanted.items())
        what = f"embedding {self.what} of {len(items):,} text{'s' if len(items) != 1 else ''}"
        total = sum(len(t) for _, t in items) or 1
        chars = 0
        done = 0
        if self.progress is not None:
            self.progress(what, 0, total)
        for start in range(0, len(items), SAVE_CHUNK):
            chunk = dict(items[start : start + SAVE_CHUNK])
            fresh = self._embed(backend, chunk)
            memory.update(fresh)
            self.misses += len(fresh)
            if self.store is not None:
                self._save(key, backend.dim, fresh)
            done += len(fresh)
            chars += sum(len(t) for t in chunk.values())
            if self.progress is not None:
                self.progress(what, chars if done < len(items) else total, total)
        return done

    def clear_memory(self) -> None:
        """Drop the in-memory layer (the store keeps its rows)."""
        self._memory.clear()

    def _compute(self, backend: EmbeddingBackend, texts: list[str]) -> list[Matrix]:
        vectors = backend.embed_documents(texts)
        if vectors.shape != (len(texts), backend.dim):
            raise ValueError(f"{backend!r} returned shape {vectors.shape} for {len(texts)} texts")
        return list(vectors)

    def _encode(self, array: Matrix) -> bytes:
        import numpy as np

        return np.asarray(array, dtype=np.float32).tobytes()

    def _decode(self, blob: bytes, dim: int) -> Matrix | None:
        """The stored array, or None when the row is stale or corrupt (a miss)."""
        import numpy as np

        if len(blob) != dim * 4:
            return None
        return np.frombuffer(blob, dtype=np.float32).copy()

    def _embed(self, backend: EmbeddingBackend, wanted: dict[str, str]) -> dict[str, Matrix]:
        hashes, texts = list(wanted), list(wanted.values())
        fresh: dict[str, Matrix] = {}
        for start in range(0, len(texts), self.embed_batch):
            batch = texts[start : start + self.embed_batch]
            arrays = self._compute(backend, batch)
            fresh.update(zip(hashes[start : start + len(batch)], arrays, strict=True))
        return fresh

    def _load(self, key: str, dim: int, hashes: list[str]) -> dict[str, Matrix]:
        assert self.store is not None
        found: dict[str, Matrix] = {}
        try:
            rows = self.store.embedding_cache.get(key, hashes)
        except StoreError as exc:
            _warn(f"cannot read cached {self.what} ({exc}); embedding them again", stacklevel=3)
            return found
        for text_hash_, row_dim, blob in rows:
            array = self._decode(blob, dim) if row_dim == dim else None
            if array is not None:
                found[text_hash_] = array
        return found

    def _present(self, key: str, dim: int, hashes: list[str]) -> set[str]:
        """Which of ``hashes`` the store has a row of the right width for."""
        assert self.store is not None
        try:
            rows = self.store.embedding_cache.dims(key, hashes)
        except StoreError as exc:
            _warn(f"cannot read cached {self.what} ({exc}); embedding them again", stacklevel=4)
            return set()
        return {h for h, row_dim in rows if row_dim == dim}

    def _save(self, key: str, dim: int, fresh: dict[str, Matrix]) -> None:
        assert self.store is not None
        rows = [(h, dim, self._encode(v)) for h, v in fresh.items()]
        try:
            self.store.embedding_cache.put(key, rows, at=time.time())
        except StoreError as exc:
            _warn(f"cannot save {len(rows)} {self.what} to the state store ({exc}); continuing")


def _warn(message: str, stacklevel: int = 4) -> None:
    """Warn, pointing at the line of a public :class:`VectorCache` method that led to
    the store."""
    warnings.warn(message, VectorCacheWarning, stacklevel=stacklevel)
