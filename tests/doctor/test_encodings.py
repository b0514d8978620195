"""Pseudo-request encodings: packed, cached in the store, handed to the router."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from skillrt.doctor.encodings import (
    CachedQueries,
    EncodingCache,
    cached_queries,
    pack,
    request_spans,
    unpack,
    unpack_vectors,
)
from skillrt.routing.embeddings.base import QueryEncoding
from skillrt.routing.embeddings.hashing import HashingBackend
from skillrt.store import open_location

DIM = 8


def unit(rows: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).normal(size=(rows, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_pack_round_trip_with_tokens_and_parts() -> None:
    enc = QueryEncoding(unit(1, 1)[0], unit(2, 2), unit(5, 3), (unit(3, 4), unit(2, 5)))
    back = unpack(pack(enc), DIM)
    assert back is not None and back.tokens is not None and back.part_tokens is not None
    np.testing.assert_allclose(back.vector, enc.vector, atol=2e-3)
    np.testing.assert_allclose(back.parts, enc.parts, atol=2e-3)
    np.testing.assert_allclose(back.tokens, enc.tokens, atol=2e-2)
    assert [len(p) for p in back.part_tokens] == [3, 2]


def test_pack_round_trip_without_tokens() -> None:
    enc = QueryEncoding(unit(1, 1)[0], np.zeros((0, DIM), np.float32))
    back = unpack(pack(enc), DIM)
    assert back is not None and back.tokens is None and back.parts.shape == (0, DIM)


@pytest.mark.parametrize("blob", [b"", b"\x01", b"\x00\x00\x05\x00" + b"\x00" * 7, b"x" * 100])
def test_a_corrupt_blob_is_not_an_encoding(blob: bytes) -> None:
    assert unpack(blob, DIM) is None


def test_a_blob_of_another_width_is_refused() -> None:
    enc = QueryEncoding(unit(1, 1)[0], np.zeros((0, DIM), np.float32))
    assert unpack(pack(enc), DIM * 2) is None


def test_encodings_are_computed_once_then_read_from_the_store(tmp_path: Path) -> None:
    backend = HashingBackend()
    texts = ["export the ledger to csv", "round the vat after summing, then email it"]
    store = open_location(tmp_path / "state.db")
    first = EncodingCache(store).encodings(backend, texts)
    assert set(first) == set(texts)
    again = EncodingCache(store)  # a new process: only the store remembers
    second = again.encodings(backend, texts)
    assert again.misses == 0 and again.hits == 2
    for text in texts:
        assert first[text] == second[text]
        decoded = unpack(second[text], backend.dim)
        assert decoded is not None and len(decoded.parts) == len(request_spans(text))
        rows = unpack_vectors(second[text], backend.dim)
        np.testing.assert_array_equal(rows[0], decoded.vector)
        assert len(rows) == 1 + len(decoded.parts)
    store.close()


def test_cached_queries_answers_from_its_encodings_and_keeps_the_backend_name() -> None:
    inner = HashingBackend()
    backend = cached_queries(inner)
    assert isinstance(backend, CachedQueries)
    assert backend.name == inner.name and backend.model_id == inner.model_id
    marker = QueryEncoding(np.ones(inner.dim, np.float32), np.zeros((0, inner.dim), np.float32))
    backend.encodings = {"hello there": pack(marker)}
    got = backend.encode_query("hello there")
    np.testing.assert_allclose(got.vector, marker.vector)
    # Asked for clause spans the cached encoding does not have: the real backend answers.
    real = backend.encode_query("hello there", [(0, 5), (6, 11)])
    assert len(real.parts) == 2
