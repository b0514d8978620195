"""Token matching: MaxSim arithmetic, the token cache, the index limits, the router's use."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillrt.config import RoutingConfig
from skillrt.routing.calibration import model_for
from skillrt.routing.embeddings import HashingBackend, OnnxMiniLMBackend, get_backend
from skillrt.routing.embeddings.base import EmbeddingBackend, QueryEncoding
from skillrt.routing.embeddings.onnx_minilm import FUNCTION_WORDS
from skillrt.routing.rerank import RERANK_DEPTH as TOKEN_RERANK
from skillrt.routing.rerank import RerankQuery, TokenReranker, apply_rerank
from skillrt.routing.router import Router
from skillrt.routing.tokens import TokenCache, TokenIndex, quantise, token_texts
from skillrt.store.sqlite import Store

from .conftest import catalogue, make

DIM = 8


class TokenHashing(HashingBackend):
    """The hashing backend with token states: one hashed vector per word (counted calls)."""

    token_states = True

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.token_calls: list[int] = []

    def embed_document_tokens(self, texts: Sequence[str]) -> list[np.ndarray]:
        self.token_calls.append(len(texts))
        return [self.embed_documents(t.split() or [t]).astype(np.float16) for t in texts]

    def encode_query(self, text: str, spans: Sequence[tuple[int, int]] = ()) -> QueryEncoding:
        plain = super().encode_query(text, spans)
        return QueryEncoding(plain.vector, plain.parts, self.embed_queries(text.split() or [text]))


class TableBackend(EmbeddingBackend):
    """Token states looked up in a table: text -> matrix (no model)."""

    name: ClassVar[str] = "table"
    token_states = True

    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table = table
        self.dim = DIM
        self.model_id = f"table-{id(table)}"

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.zeros((len(texts), DIM), np.float32)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.zeros((len(texts), DIM), np.float32)

    def embed_document_tokens(self, texts: Sequence[str]) -> list[np.ndarray]:
        return [self.table[t].astype(np.float16) for t in texts]


def table_index(texts: list[list[np.ndarray]]) -> TokenIndex:
    """A token index over skills whose texts have exactly these token states."""
    table = {f"skill {i} text {j}": m for i, ms in enumerate(texts) for j, m in enumerate(ms)}
    names = [[f"skill {i} text {j}" for j in range(len(ms))] for i, ms in enumerate(texts)]
    return TokenIndex(names, TableBackend(table), TokenCache(None))


def _unit(rng: np.random.Generator, rows: int) -> np.ndarray:
    m = rng.normal(size=(rows, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def _maxsim(q: np.ndarray, t: np.ndarray) -> float:
    s = q @ t.T
    return 0.5 * (float(s.max(axis=1).mean()) + float(s.max(axis=0).mean()))


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.lists(st.integers(1, 6), min_size=1, max_size=4), min_size=1, max_size=6),
    query_rows=st.integers(1, 7),
    pick=st.lists(st.integers(0, 5), min_size=1, max_size=6),
    seed=st.integers(0, 2**16),
)
def test_score_is_each_skills_best_symmetric_maxsim(
    shape: list[list[int]], query_rows: int, pick: list[int], seed: int
) -> None:
    rng = np.random.default_rng(seed)
    texts = [[_unit(rng, n).astype(np.float16) for n in skill] for skill in shape]
    index = table_index(texts)
    query = _unit(rng, query_rows)
    skills = np.asarray([p % len(shape) for p in pick], dtype=np.int64)
    got = index.score(query, skills)
    want = [max(_maxsim(query, t.astype(np.float32)) for t in texts[i]) for i in skills]
    # Rows are stored as int8 with a scale each: cosines move by at most ~1/127.
    np.testing.assert_allclose(got, want, atol=8e-3)


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.lists(st.integers(1, 6), min_size=1, max_size=4), min_size=1, max_size=5),
    query_rows=st.integers(1, 7),
    seed=st.integers(0, 2**16),
)
def test_profile_reads_each_skills_token_matches_by_level(
    shape: list[list[int]], query_rows: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    texts = [[_unit(rng, n).astype(np.float16) for n in skill] for skill in shape]
    index = table_index(texts)
    query = _unit(rng, query_rows)
    skills = np.arange(len(shape), dtype=np.int64)
    levels = (0.9, 0.5, 0.0)
    got = index.profile(query, skills, levels)
    for i, ts in enumerate(texts):
        every = np.concatenate([t.astype(np.float32) for t in ts])
        best = (query @ every.T).max(axis=1)  # each query token's best match in the skill
        text_side = max(float((query @ t.astype(np.float32).T).max(axis=0).mean()) for t in ts)
        want = [best.mean(), text_side, *((best >= lv).mean() for lv in levels)]
        np.testing.assert_allclose(got[i, :2], want[:2], atol=8e-3)
        # A share can move only where a cosine sits within the int8 rounding of a level.
        for k, level in enumerate(levels):
            if np.all(np.abs(best - level) > 8e-3):
                assert got[i, 2 + k] == pytest.approx(want[2 + k])
    assert index.profile(query[:0], skills, levels).shape == (len(shape), 5)


def test_score_of_nothing() -> None:
    index = table_index([[np.ones((1, DIM), np.float16)]])
    assert index.score(np.ones((2, DIM), np.float32), np.zeros(0, np.int64)).shape == (0,)
    assert index.score(np.zeros((0, DIM), np.float32), np.asarray([0])).tolist() == [0.0]


def test_token_states_are_cached_in_the_store(tmp_path: Path) -> None:
    backend = TokenHashing()
    skills = catalogue()
    db = tmp_path / "state.db"
    store = Store(db)
    first = TokenIndex.build(skills, backend, TokenCache(store), max_texts=100)
    store.close()
    assert first is not None and sum(backend.token_calls) == len(skills)
    store = Store(db)
    cache = TokenCache(store)
    again = TokenIndex.build(skills, backend, cache, max_texts=100)
    store.close()
    assert again is not None and sum(backend.token_calls) == len(skills)  # nothing embedded
    assert cache.hits == 0 and cache.misses == 0 and again.nbytes == 0  # nothing read yet
    query = backend.embed_queries(["review", "pull", "request"])
    everyone = np.arange(len(skills))
    np.testing.assert_array_equal(first.score(query, everyone), again.score(query, everyone))
    assert cache.hits == len(skills) and again.nbytes > 0
    # Vectors and token states of the same text are separate rows.
    rows = sqlite3.connect(db).execute("SELECT DISTINCT model_id FROM embedding_cache").fetchall()
    assert [r[0] for r in rows] == [backend.model_id + TokenCache.suffix]


def test_a_torn_token_row_is_a_miss(tmp_path: Path) -> None:
    backend = TokenHashing()
    skills = catalogue()[:1]
    db = tmp_path / "state.db"
    store = Store(db)
    TokenIndex.build(skills, backend, TokenCache(store), max_texts=100)
    store.close()
    conn = sqlite3.connect(db)
    conn.execute("UPDATE embedding_cache SET vector = substr(vector, 1, 5)")
    conn.commit()
    conn.close()
    store = Store(db)
    cache = TokenCache(store)
    index = TokenIndex.build(skills, backend, cache, max_texts=100)
    assert index is not None and cache.misses == 0  # the row is there, not yet read
    index.preload()
    store.close()
    assert cache.misses == 1 and sum(backend.token_calls) == 2


def test_no_index_without_token_states_or_over_the_limit() -> None:
    skills = catalogue()
    assert TokenIndex.build(skills, HashingBackend(), TokenCache(None), max_texts=100) is None
    texts = sum(len(token_texts(s)) for s in skills)
    backend = TokenHashing()
    assert TokenIndex.build(skills, backend, TokenCache(None), max_texts=texts - 1) is None
    assert TokenIndex.build(skills, backend, TokenCache(None), max_texts=texts) is not None
    assert TokenIndex.build([], backend, TokenCache(None), max_texts=texts) is None


def test_token_texts_are_the_document_then_examples() -> None:
    s = make("pto-request", "pto request", examples=["can i take friday off", " ", "book leave"])
    assert token_texts(s) == ["pto request: pto request", "can i take friday off", "book leave"]


def test_rerank_adds_the_weighted_score_to_the_best_few_and_the_floor_to_the_rest() -> None:
    n = TOKEN_RERANK + 10
    rng = np.random.default_rng(0)
    texts = [[_unit(rng, 3).astype(np.float16)] for _ in range(n)]
    index = table_index(texts)
    fused = np.linspace(1.0, 0.0, n).astype(np.float32)  # row 0 best
    rows = np.arange(n, dtype=np.int64)
    query = _unit(rng, 4)
    applied = apply_rerank(TokenReranker(index), RerankQuery("q", None, query), rows, fused, 0.5)
    assert applied is not None
    out, per_row = applied
    scores = index.score(query, rows[:TOKEN_RERANK])
    np.testing.assert_allclose(per_row[:TOKEN_RERANK], scores, atol=1e-6)  # same arithmetic
    assert np.isnan(per_row[TOKEN_RERANK:]).all()
    np.testing.assert_allclose(out[:TOKEN_RERANK], fused[:TOKEN_RERANK] + 0.5 * scores, atol=1e-6)
    np.testing.assert_allclose(out[TOKEN_RERANK:], fused[TOKEN_RERANK:] + 0.5 * scores.min())
    # The tail keeps its order and never passes a reranked candidate.
    assert (np.diff(out[TOKEN_RERANK:]) < 0).all()
    assert out[TOKEN_RERANK:].max() <= out[:TOKEN_RERANK].min() + 1e-6


def test_router_reports_token_scores_and_uses_the_token_model() -> None:
    # The hashing backend has no fitted token model: give it a token weight.
    config = RoutingConfig(use_stats=False, options={"score_model": {"token_weight": 0.5}})
    router = Router.from_skills(catalogue(), config, backend=TokenHashing())
    assert router.index.tokens is not None
    result = router.route("please do a code review of my pull request", explain=True)
    best = result.candidates[0]
    assert best.name == "code-review"
    assert "tokens" in best.score.signals
    off = Router.from_skills(
        catalogue(),
        dataclasses.replace(config, token_match_max_texts=0),
        backend=TokenHashing(),
    )
    assert off.index.tokens is None
    signals = off.route("please do a code review of my pull request", explain=True)
    assert "tokens" not in signals.candidates[0].score.signals


def test_token_models_only_for_backends_that_have_one() -> None:
    assert model_for("onnx-minilm", tokens=True).token_weight > 0
    assert model_for("onnx-minilm", tokens=False).token_weight == 0
    assert model_for("hashing", tokens=True) == model_for("hashing")
    assert model_for("onnx-minilm", {"token_weight": 0.3}, tokens=True).token_weight == 0.3


# --- the real model ----------------------------------------------------------------
@pytest.fixture(scope="module")
def minilm() -> OnnxMiniLMBackend:
    backend = get_backend("onnx-minilm")
    assert isinstance(backend, OnnxMiniLMBackend)
    return backend


def test_minilm_token_states_skip_function_words_and_punctuation(
    minilm: OnnxMiniLMBackend,
) -> None:
    text = "Can you help me book a flight to Tokyo, please?"
    content = ["book", "flight", "tokyo"]
    (doc,) = minilm.embed_document_tokens([text])
    encoded = minilm.encode_query(text)
    assert doc.dtype == np.float16 and doc.shape == (len(content), minilm.dim)
    assert encoded.tokens is not None and encoded.tokens.shape == (len(content), minilm.dim)
    np.testing.assert_allclose(np.linalg.norm(encoded.tokens, axis=1), 1.0, atol=1e-5)
    assert {"can", "you", "a", "to", "please"} <= FUNCTION_WORDS
    # The same words give nearly the same states from the document and the query models.
    assert (np.einsum("ij,ij->i", doc.astype(np.float32), encoded.tokens) > 0.95).all()
    # Only function words: every word piece is kept rather than nothing.
    (only,) = minilm.embed_document_tokens(["can you help me"])
    assert len(only) == 4


def test_minilm_clause_tokens_are_the_clauses_own(minilm: OnnxMiniLMBackend) -> None:
    text = "book a flight to Tokyo and then translate the menu into French"
    second = text.index("translate")
    spans = [(0, len("book a flight to Tokyo")), (second, len(text))]
    encoded = minilm.encode_query(text, spans)
    assert encoded.tokens is not None and encoded.part_tokens is not None
    sizes = [len(t) for t in encoded.part_tokens]
    assert sizes == [3, 4]  # book flight tokyo | translate menu into french
    stacked = np.vstack(encoded.part_tokens)
    assert all(any(np.allclose(row, t) for t in encoded.tokens) for row in stacked)


def test_token_matching_ranks_the_skill_with_the_requests_words(
    minilm: OnnxMiniLMBackend,
) -> None:
    skills = [
        make("travel-planner", "Plan trips: itineraries, sights and travel tips for a city."),
        make("flight-booker", "Search and book airline flights between airports."),
    ]
    router = Router.from_skills(skills, RoutingConfig(use_stats=False), backend=minilm)
    result = router.route("book me a flight to Tokyo", explain=True)
    scores = {c.name: c.score.signals.get("tokens") for c in result.candidates}
    assert result.candidates[0].name == "flight-booker"
    assert scores["flight-booker"] is not None and scores["travel-planner"] is not None
    assert scores["flight-booker"] > scores["travel-planner"]


def test_only_the_reranked_skills_are_read(tmp_path: Path) -> None:
    backend = TokenHashing()
    skills = catalogue()
    store = Store(tmp_path / "state.db")
    TokenIndex.build(skills, backend, TokenCache(store), max_texts=100)
    cache = TokenCache(store)
    index = TokenIndex.build(skills, backend, cache, max_texts=100)
    assert index is not None
    index.score(backend.embed_queries(["git"]), np.asarray([1, 3]))
    assert cache.hits == 2
    index.score(backend.embed_queries(["git"]), np.asarray([3]))
    assert cache.hits == 2  # already in memory
    index.preload()
    assert cache.hits == len(skills)
    store.close()


def test_quantised_rows_keep_cosines() -> None:
    rng = np.random.default_rng(1)
    states = _unit(rng, 50)
    tokens, scale = quantise(states)
    restored = tokens.astype(np.float32) * scale[:, None]
    assert np.abs(np.einsum("ij,ij->i", restored, states) - 1).max() < 5e-3
    empty_tokens, empty_scale = quantise(np.zeros((0, DIM), np.float32))
    assert empty_tokens.shape == (1, DIM) and empty_scale.shape == (1,)


# --- hostile and odd inputs ----------------------------------------------------------
def _pooled_export(folder: Path) -> Path:
    """A copy of the model whose output is already pooled (batch, width): no tokens."""
    import onnx
    from onnx import helper

    from skillrt.routing.embeddings.onnx_minilm import default_model_path

    model = onnx.load(str(default_model_path()))
    states = model.graph.output[0].name
    if model.opset_import[0].version < 18:  # axes: an attribute before opset 18, then an input
        mean = helper.make_node("ReduceMean", [states], ["pooled"], axes=[1], keepdims=0)
    else:
        axes = helper.make_tensor("axes1", onnx.TensorProto.INT64, [1], [1])
        model.graph.initializer.append(axes)
        mean = helper.make_node("ReduceMean", [states, "axes1"], ["pooled"], keepdims=0)
    model.graph.node.append(mean)
    del model.graph.output[:]
    model.graph.output.append(
        helper.make_tensor_value_info("pooled", onnx.TensorProto.FLOAT, ["batch", 384])
    )
    path = folder / "pooled.onnx"
    onnx.save(model, str(path))
    return path


def test_an_export_that_pools_itself_routes_without_token_matching(tmp_path: Path) -> None:
    backend = OnnxMiniLMBackend(_pooled_export(tmp_path), sha256=None, cache_dir=tmp_path)
    assert backend.token_states is False
    router = Router.from_skills(catalogue(), RoutingConfig(use_stats=False), backend=backend)
    assert router.index.tokens is None
    multi = "review this pull request for bugs and then write the release notes for version 2"
    result = router.route(multi)
    assert result.plan.names  # clauses still get their own vectors, one text each
    encoded = backend.encode_query(multi, [(0, 30), (40, len(multi))])
    assert encoded.tokens is None and encoded.parts.shape == (2, backend.dim)


def test_a_corrupt_token_row_is_a_miss_not_a_nan_score(tmp_path: Path) -> None:
    backend = TokenHashing()
    skills = catalogue()
    db = tmp_path / "state.db"
    store = Store(db)
    TokenIndex.build(skills, backend, TokenCache(store), max_texts=100)
    store.close()
    nan_row = np.full((2, backend.dim), np.nan, dtype=np.float16).tobytes()
    conn = sqlite3.connect(db)
    conn.execute("UPDATE embedding_cache SET vector = ?", (nan_row,))
    conn.commit()
    conn.close()
    store = Store(db)
    cache = TokenCache(store)
    index = TokenIndex.build(skills, backend, cache, max_texts=100)
    assert index is not None
    scores = index.score(backend.embed_queries(["review", "pull"]), np.arange(len(skills)))
    store.close()
    assert np.isfinite(scores).all()
    assert cache.misses == len(skills)  # every poisoned row embedded again


def test_token_states_are_not_held_twice() -> None:
    backend = TokenHashing()
    cache = TokenCache(None)
    index = TokenIndex.build(catalogue(), backend, cache, max_texts=100)
    assert index is not None
    index.preload()
    assert index.nbytes > 0
    assert not cache._memory.get(backend.model_id + TokenCache.suffix)


def test_a_given_query_vector_scores_like_a_plain_route(minilm: OnnxMiniLMBackend) -> None:
    router = Router.from_skills(catalogue(), RoutingConfig(use_stats=False), backend=minilm)
    assert router.index.tokens is not None
    query = "please review my pull request for security bugs"
    plain = router.route(query)
    given = router.route(query, query_vector=minilm.embed_query(query))
    assert [c.name for c in given.candidates] == [c.name for c in plain.candidates]
    for a, b in zip(given.candidates, plain.candidates, strict=True):
        assert a.score.total == pytest.approx(b.score.total, abs=1e-6)
