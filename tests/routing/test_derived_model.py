"""The dynamic-int8 query model: derived once, cached, verified, and never required."""

from __future__ import annotations

import hashlib
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from skillrt.routing.embeddings import derived
from skillrt.routing.embeddings.base import EmbeddingModelError
from skillrt.routing.embeddings.derived import RECIPE, DerivationError, dynamic_int8_model
from skillrt.routing.embeddings.onnx_minilm import (
    MODEL_SHA256,
    OnnxMiniLMBackend,
    default_model_path,
)

QUERIES = [
    "what will the weather be like in paris tomorrow",
    "open a pull request for my branch",
    "how do i say good morning in italian",
]
DOCS = [
    "weather forecast: current conditions and forecasts for any city",
    "github pull requests: create, review and merge pull requests",
    "translate: translate text between languages",
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("models")
    OnnxMiniLMBackend(cache_dir=folder, num_threads=1)  # derive once for the module
    return folder


@pytest.fixture(scope="module")
def original() -> OnnxMiniLMBackend:
    return OnnxMiniLMBackend(variant="original", num_threads=1)


def _entries(folder: Path) -> tuple[Path, Path]:
    (model,) = folder.glob(f"*{RECIPE}*.onnx")
    (meta,) = folder.glob(f"*{RECIPE}*.json")
    return model, meta


def test_derived_model_is_cached_with_its_digest(cache: Path) -> None:
    model, meta = _entries(cache)
    record = json.loads(meta.read_text())
    assert record["source_sha256"] == MODEL_SHA256
    assert record["recipe"] == RECIPE
    assert hashlib.sha256(model.read_bytes()).hexdigest() == record["sha256"]
    # No temp files are left behind.
    assert sorted(p.name for p in cache.iterdir()) == sorted([model.name, meta.name])


def test_queries_are_close_to_the_original_and_rank_the_same(
    cache: Path, original: OnnxMiniLMBackend
) -> None:
    fast = OnnxMiniLMBackend(cache_dir=cache, num_threads=1)
    assert fast.variant == "dynamic-int8"
    q_fast, q_orig = fast.embed_queries(QUERIES), original.embed_queries(QUERIES)
    assert (np.einsum("ij,ij->i", q_fast, q_orig) > 0.98).all()
    docs = original.embed_documents(DOCS)
    assert (q_fast @ docs.T).argmax(axis=1).tolist() == [0, 1, 2]
    # Documents always come from the original model: the cache is shared by variants.
    np.testing.assert_allclose(fast.embed_documents(DOCS), docs, atol=1e-6)
    assert fast.model_id == original.model_id
    assert fast.query_model_id == f"{original.model_id}+q:{RECIPE}"
    assert original.query_model_id == original.model_id


def test_a_query_vector_does_not_depend_on_its_batch(cache: Path) -> None:
    fast = OnnxMiniLMBackend(cache_dir=cache, num_threads=1)
    texts = [*QUERIES, "x " * 200, "a much longer request about deploying services " * 5]
    together = fast.embed_queries(texts)
    alone = np.stack([fast.embed_query(t) for t in texts])
    np.testing.assert_array_equal(together, alone)


def test_the_derived_model_is_fused(cache: Path) -> None:
    import onnx

    model, _ = _entries(cache)
    ops = {node.op_type for node in onnx.load(str(model)).graph.node}
    assert "SkipLayerNormalization" in ops  # residual add + layer norm, one node
    assert "MatMulInteger" in ops


def test_a_failing_fuser_keeps_the_unfused_graph(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    original: OnnxMiniLMBackend,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import onnx
    import onnxruntime.transformers.optimizer as optimizer

    def broken(*_: object, **__: object) -> None:
        raise ValueError("fuser fell over")

    monkeypatch.setattr(optimizer, "optimize_model", broken)
    with caplog.at_level("WARNING", logger="skillrt.routing.embeddings"):
        data, _ = dynamic_int8_model(default_model_path().read_bytes(), MODEL_SHA256, tmp_path)
    # The fallback is not silent: the log says it happened and why.
    assert any(
        "unfused" in r.getMessage() and "ValueError: fuser fell over" in r.getMessage()
        for r in caplog.records
    ), caplog.records
    ops = {node.op_type for node in onnx.load_from_string(data).graph.node}
    assert "SkipLayerNormalization" not in ops and "MatMulInteger" in ops
    fast = OnnxMiniLMBackend(cache_dir=tmp_path, num_threads=1)
    assert fast.variant == "dynamic-int8"
    assert (
        np.einsum("ij,ij->i", fast.embed_queries(QUERIES), original.embed_queries(QUERIES)) > 0.98
    ).all()


def test_without_the_fusers_dependency_the_unfused_recipe_has_its_own_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnx

    monkeypatch.setitem(sys.modules, "sympy", None)
    monkeypatch.setattr(derived, "recipe", lambda: derived.RECIPE_UNFUSED)
    data, _ = dynamic_int8_model(default_model_path().read_bytes(), MODEL_SHA256, tmp_path)
    ops = {node.op_type for node in onnx.load_from_string(data).graph.node}
    assert "SkipLayerNormalization" not in ops
    (entry,) = tmp_path.glob("*.json")
    assert json.loads(entry.read_text())["recipe"] == derived.RECIPE_UNFUSED
    assert f"-{derived.RECIPE_UNFUSED}-" in entry.name and RECIPE not in entry.name


def test_a_cached_model_is_reused_without_deriving(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: object) -> bytes:
        raise AssertionError("derived again")

    monkeypatch.setattr(derived, "_derive", refuse)
    assert OnnxMiniLMBackend(cache_dir=cache, num_threads=1).variant == "dynamic-int8"


def test_a_corrupt_cached_model_is_derived_again(cache: Path, tmp_path: Path) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    for path in _entries(cache):
        (folder / path.name).write_bytes(path.read_bytes())
    model, meta = _entries(folder)
    good = model.read_bytes()
    model.write_bytes(good[: len(good) // 2])  # a torn write
    source = default_model_path().read_bytes()
    data, digest = dynamic_int8_model(source, MODEL_SHA256, folder)
    assert len(data) == len(good)
    assert json.loads(meta.read_text())["sha256"] == digest
    assert model.read_bytes() == data


def test_unwritable_cache_falls_back_to_the_original(
    tmp_path: Path, original: OnnxMiniLMBackend
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    with pytest.warns(RuntimeWarning, match="unoptimised"):
        backend = OnnxMiniLMBackend(cache_dir=blocker / "models", num_threads=1)
    assert backend.variant == "original"
    assert backend.query_model_id == backend.model_id
    np.testing.assert_allclose(
        backend.embed_queries(QUERIES), original.embed_queries(QUERIES), atol=1e-6
    )


def test_missing_onnx_package_falls_back_with_a_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime.quantization", None)
    with pytest.raises(DerivationError, match="pip install onnx") as info:
        dynamic_int8_model(b"unused", "0" * 64, tmp_path)
    assert info.value.code == "E_MODEL_DERIVATION"
    with pytest.warns(RuntimeWarning, match="pip install onnx"):
        backend = OnnxMiniLMBackend(cache_dir=tmp_path, num_threads=1)
    assert backend.variant == "original"


def test_a_garbage_model_still_fails_cleanly(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00garbage" * 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(EmbeddingModelError, match="onnxruntime cannot load"):
            OnnxMiniLMBackend(model_path=garbage, sha256=None, cache_dir=tmp_path / "c")
    assert not any((tmp_path / "c").glob("*.onnx"))


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(EmbeddingModelError, match="unknown model variant"):
        OnnxMiniLMBackend(variant="fp16")
