"""VectorCache: embed only what neither memory nor the SQLite store holds."""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from skillrt.routing.embeddings import EmbeddingBackend, HashingBackend, get_backend
from skillrt.routing.vector_cache import VectorCache, VectorCacheWarning, text_hash
from skillrt.store import open_location

if TYPE_CHECKING:
    from skillrt.routing.embeddings.base import Matrix


class CountingBackend(EmbeddingBackend):
    """Wraps a real backend and records every text it is asked to embed."""

    name = "counting"

    def __init__(self, inner: EmbeddingBackend) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.embedded: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        self.embedded.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self.inner.embed_queries(texts)


def _items(*texts: str) -> list[tuple[str, str]]:
    return [(text_hash(t), t) for t in texts]


SKILLS = _items("Create PDF reports", "Review pull requests", "Deploy to Kubernetes")


@pytest.fixture
def backend() -> CountingBackend:
    return CountingBackend(HashingBackend(dim=64))


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "state.db"
    store = open_location(path)
    store.connection()  # create and migrate
    store.close()
    yield path


def test_memory_cache_embeds_once_and_keeps_input_order(backend: CountingBackend) -> None:
    cache = VectorCache()
    first = cache.get_or_embed(backend, SKILLS)
    assert backend.embedded == [t for _, t in SKILLS]
    assert first.shape == (3, 64) and first.dtype == np.float32
    backend.embedded.clear()
    again = cache.get_or_embed(backend, list(reversed(SKILLS)))
    assert backend.embedded == []
    np.testing.assert_array_equal(again, first[::-1])
    np.testing.assert_array_equal(first, backend.inner.embed_documents([t for _, t in SKILLS]))


def test_duplicates_and_empty_input(backend: CountingBackend) -> None:
    cache = VectorCache()
    out = cache.get_or_embed(backend, [SKILLS[0], SKILLS[0], SKILLS[1]])
    assert backend.embedded == [SKILLS[0][1], SKILLS[1][1]]
    np.testing.assert_array_equal(out[0], out[1])
    assert cache.get_or_embed(backend, []).shape == (0, 64)


def test_store_survives_the_process(backend: CountingBackend, db: Path) -> None:
    VectorCache(open_location(db)).get_or_embed(backend, SKILLS)
    backend.embedded.clear()
    fresh = VectorCache(open_location(db))  # a new process: empty memory, same file
    out = fresh.get_or_embed(backend, SKILLS)
    assert backend.embedded == []
    assert fresh.hits == 3 and fresh.misses == 0
    np.testing.assert_array_equal(out, backend.inner.embed_documents([t for _, t in SKILLS]))


def test_changed_text_hash_re_embeds_only_that_skill(backend: CountingBackend, db: Path) -> None:
    VectorCache(open_location(db)).get_or_embed(backend, SKILLS)
    backend.embedded.clear()
    changed = [*SKILLS[:2], *_items("Deploy to Kubernetes with Helm charts")]
    VectorCache(open_location(db)).get_or_embed(backend, changed)
    assert backend.embedded == ["Deploy to Kubernetes with Helm charts"]


def test_model_change_re_embeds(backend: CountingBackend, db: Path) -> None:
    VectorCache(open_location(db)).get_or_embed(backend, SKILLS)
    other = CountingBackend(HashingBackend(dim=32))
    out = VectorCache(open_location(db)).get_or_embed(other, SKILLS)
    assert len(other.embedded) == 3 and out.shape == (3, 32)


def test_wrong_width_row_is_a_miss(backend: CountingBackend, db: Path) -> None:
    conn = sqlite3.connect(db)
    conn.execute(
        "INSERT INTO embedding_cache VALUES (?, ?, ?, ?, 0)",
        (backend.model_id, SKILLS[0][0], 64, b"\x00" * 12),
    )
    conn.commit()
    conn.close()
    out = VectorCache(open_location(db)).get_or_embed(backend, SKILLS[:1])
    assert backend.embedded == [SKILLS[0][1]]
    assert abs(float(np.linalg.norm(out[0])) - 1.0) < 1e-5


def test_many_items_chunk_the_lookup(db: Path) -> None:
    backend = CountingBackend(HashingBackend(dim=16))
    items = _items(*(f"skill number {i}" for i in range(1200)))
    VectorCache(open_location(db)).get_or_embed(backend, items)
    backend.embedded.clear()
    out = VectorCache(open_location(db)).get_or_embed(backend, items)
    assert backend.embedded == [] and out.shape == (1200, 16)


def test_read_only_store_still_returns_vectors(backend: CountingBackend, db: Path) -> None:
    VectorCache(open_location(db)).get_or_embed(backend, SKILLS[:2])
    backend.embedded.clear()
    cache = VectorCache(open_location(db, read_only=True))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # cached rows are read without complaint
        cache.get_or_embed(backend, SKILLS[:2])
    assert backend.embedded == []
    with pytest.warns(VectorCacheWarning, match="cannot save 1 vectors"):
        out = cache.get_or_embed(backend, SKILLS)
    assert backend.embedded == [SKILLS[2][1]] and out.shape == (3, 64)


def test_missing_database_read_only_degrades(backend: CountingBackend, tmp_path: Path) -> None:
    cache = VectorCache(open_location(tmp_path / "absent.db", read_only=True))
    with pytest.warns(VectorCacheWarning):
        out = cache.get_or_embed(backend, SKILLS)
    assert out.shape == (3, 64)


def test_locked_store_degrades_to_a_warning(backend: CountingBackend, db: Path) -> None:
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        with pytest.warns(VectorCacheWarning, match="cannot save"):
            out = VectorCache(open_location(db, busy_timeout_ms=50)).get_or_embed(backend, SKILLS)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert out.shape == (3, 64)


def test_schema_has_the_embedding_cache(db: Path) -> None:
    store = open_location(db)
    assert store.schema_version() >= 2
    columns = {r["name"] for r in store.connection().execute("PRAGMA table_info(embedding_cache)")}
    assert columns == {"model_id", "text_hash", "dim", "vector", "created_at"}


def test_with_the_real_model(db: Path) -> None:
    minilm = CountingBackend(get_backend("onnx-minilm"))
    first = VectorCache(open_location(db)).get_or_embed(minilm, SKILLS)
    minilm.embedded.clear()
    second = VectorCache(open_location(db)).get_or_embed(minilm, SKILLS)
    assert minilm.embedded == [] and second.shape == (3, 384)
    np.testing.assert_array_equal(first, second)
