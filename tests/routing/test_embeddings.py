"""Embedding backends: the real ONNX MiniLM model, the hashing fallback, the optional ST one."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from skillrt.errors import ConfigError
from skillrt.routing.embeddings import (
    EmbeddingBackend,
    EmbeddingBackendUnavailable,
    EmbeddingModelError,
    HashingBackend,
    OnnxMiniLMBackend,
    available_backends,
    get_backend,
)
from skillrt.routing.embeddings.onnx_minilm import MODEL_SIZE, default_model_path

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def minilm() -> EmbeddingBackend:
    return get_backend("onnx-minilm")


def _cos(backend: EmbeddingBackend, query: str, doc: str) -> float:
    return float(backend.embed_documents([doc])[0] @ backend.embed_query(query))


def _run_python(code: str, **env: str) -> str:
    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), *sys.path]), **env}
    done = subprocess.run(
        [sys.executable, "-c", code], env=full_env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


# --- the default ONNX MiniLM backend ------------------------------------------------


def test_minilm_shapes_dtype_and_unit_rows(minilm: EmbeddingBackend) -> None:
    matrix = minilm.embed_documents(["git commit and push", "resize an image", ""])
    assert matrix.shape == (3, 384) and matrix.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    assert minilm.embed_query("hello").shape == (384,)
    assert minilm.embed_documents([]).shape == (0, 384)
    assert minilm.embed_queries([]).shape == (0, 384)
    assert minilm.name == "onnx-minilm" and minilm.dim == 384
    assert minilm.model_id.startswith("all-MiniLM-L6-v2-onnx-int8@8199be6f699a")


@pytest.mark.parametrize(
    ("query", "related", "unrelated"),
    [
        (
            "How do I reset my password?",
            "Steps to recover account login credentials",
            "The weather in Paris is sunny today",
        ),
        (
            "turn this spreadsheet into a PDF report",
            "Generate printable documents from Excel workbooks",
            "Play relaxing jazz music",
        ),
        (
            "commit my changes and push them to GitHub",
            "Git workflow: stage, commit and push changes to a remote repository",
            "Convert images between PNG and JPEG formats",
        ),
        (
            "my python tests are failing",
            "Debug and fix failing pytest unit tests",
            "Book a flight and a hotel for a trip",
        ),
    ],
)
def test_minilm_related_beats_unrelated(
    minilm: EmbeddingBackend, query: str, related: str, unrelated: str
) -> None:
    assert _cos(minilm, query, related) > _cos(minilm, query, unrelated) + 0.2


def test_minilm_batching_does_not_change_vectors(minilm: EmbeddingBackend) -> None:
    # 70 texts of varied length: two batches, sorted by length and padded per batch.
    texts = [" ".join(["word"] * (i % 23) + [f"topic {i}"]) for i in range(70)]
    batched = minilm.embed_documents(texts)
    singles = np.stack([minilm.embed_documents([t])[0] for t in texts])
    np.testing.assert_allclose(batched, singles, atol=1e-4)
    np.testing.assert_array_equal(minilm.embed_documents(texts), batched)


def test_minilm_truncates_long_text(minilm: EmbeddingBackend) -> None:
    long_text = "deploy the service to kubernetes " * 500
    vector = minilm.embed_documents([long_text])[0]
    assert np.isfinite(vector).all() and abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_model_path_override_with_same_file_has_same_model_id(minilm: EmbeddingBackend) -> None:
    backend = OnnxMiniLMBackend(model_path=default_model_path(), num_threads=1)
    assert backend.model_id == minilm.model_id
    np.testing.assert_allclose(
        backend.embed_query("hello world"), minilm.embed_query("hello world"), atol=1e-5
    )


def test_model_with_wrong_size_is_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(EmbeddingModelError, match="expected 22928619") as info:
        OnnxMiniLMBackend(model_path=bad)
    assert info.value.code == "E_EMBEDDING_MODEL"
    assert isinstance(info.value, ConfigError)


def test_model_with_wrong_digest_is_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "model.onnx"
    with bad.open("wb") as fh:  # right size, wrong bytes (sparse: costs no disk)
        fh.truncate(MODEL_SIZE)
    with pytest.raises(EmbeddingModelError, match="sha256") as info:
        OnnxMiniLMBackend(model_path=bad)
    assert info.value.context["expected_sha256"].startswith("8199be6f")


def test_missing_or_unloadable_model(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingModelError, match="cannot read"):
        OnnxMiniLMBackend(model_path=tmp_path / "absent.onnx")
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00garbage" * 100)
    with pytest.raises(EmbeddingModelError, match="onnxruntime cannot load"):
        OnnxMiniLMBackend(model_path=garbage, sha256=None)


# --- backend selection ----------------------------------------------------------------


def test_get_backend_shares_one_instance(minilm: EmbeddingBackend) -> None:
    assert get_backend("onnx-minilm") is minilm
    assert get_backend() is get_backend("auto")
    assert isinstance(get_backend(), OnnxMiniLMBackend)


def test_unknown_backend_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown embedding backend 'nope'"):
        get_backend("nope")


def test_auto_falls_back_to_hashing_with_a_warning(tmp_path: Path) -> None:
    with pytest.warns(RuntimeWarning, match="falls back to the lexical 'hashing' backend"):
        backend = get_backend("auto", model_path=tmp_path / "absent.onnx")
    assert isinstance(backend, HashingBackend)
    with pytest.raises(EmbeddingModelError):
        get_backend("onnx-minilm", model_path=tmp_path / "absent.onnx")


def test_available_backends() -> None:
    names = available_backends()
    assert "onnx-minilm" in names and "hashing" in names


def test_importing_the_package_loads_no_heavy_module() -> None:
    out = _run_python(
        "import sys, skillrt.routing.embeddings, skillrt.routing.vector_cache\n"
        "print(sorted(m for m in ('numpy', 'onnxruntime', 'tokenizers') if m in sys.modules))"
    )
    assert out == "[]"


# --- the hashing fallback -----------------------------------------------------------


def test_hashing_lexical_similarity() -> None:
    backend = HashingBackend()
    docs = [
        "Convert PDF files to Word documents",
        "Deploy the web application to a Kubernetes cluster",
        "Write unit tests for Python code",
    ]
    matrix = backend.embed_documents(docs)
    scores = matrix @ backend.embed_query("convert this pdf into a word document")
    assert int(np.argmax(scores)) == 0 and scores[0] > scores[1] + 0.3
    scores = matrix @ backend.embed_query("kubernetes deployment")  # shared stem "deploy"
    assert int(np.argmax(scores)) == 1


def test_hashing_shapes_and_degenerate_text() -> None:
    backend = HashingBackend(dim=256)
    matrix = backend.embed_documents(["", "the a of", "résumé ＰＤＦ"])
    assert matrix.shape == (3, 256) and matrix.dtype == np.float32
    assert not matrix[0].any() and not matrix[1].any()  # nothing to hash: zero, not NaN
    assert abs(float(np.linalg.norm(matrix[2])) - 1.0) < 1e-5
    assert backend.embed_queries([]).shape == (0, 256)
    assert backend.model_id == "hashing-v1-d256"


def test_hashing_is_stable_across_processes() -> None:
    code = (
        "import hashlib; from skillrt.routing.embeddings import HashingBackend\n"
        "v = HashingBackend().embed_documents(['Summarise meeting notes into action items'])\n"
        "print(hashlib.sha256(v.tobytes()).hexdigest())"
    )
    assert _run_python(code, PYTHONHASHSEED="1") == _run_python(code, PYTHONHASHSEED="2")


# --- the optional sentence-transformers backend ---------------------------------------


@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is not None,
    reason="sentence-transformers is installed; only the missing-package path is tested",
)
def test_sentence_transformers_missing_gives_install_hint() -> None:
    with pytest.raises(EmbeddingBackendUnavailable, match=r"skillrt\[sentence-transformers\]"):
        get_backend("sentence-transformers")
    assert "sentence-transformers" not in available_backends()


# --- query parts: the query and its clauses from one pass ----------------------------
PARTS_QUERY = "Review this pull request for security bugs, then write the release notes"


def _spans(text: str, *pieces: str) -> list[tuple[int, int]]:
    return [(text.index(p), text.index(p) + len(p)) for p in pieces]


def test_minilm_query_parts_come_from_one_model_run(
    minilm: EmbeddingBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert isinstance(minilm, OnnxMiniLMBackend)
    spans = _spans(
        PARTS_QUERY, "Review this pull request for security bugs", "write the release notes"
    )
    runs: list[int] = []
    real = minilm._hidden

    def counting(*args: object) -> object:
        runs.append(1)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(minilm, "_hidden", counting)
    encoded = minilm.encode_query(PARTS_QUERY, spans)
    query, parts = encoded.vector, encoded.parts
    assert len(runs) == 1
    assert parts.shape == (2, minilm.dim) and parts.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(parts, axis=1), 1.0, atol=1e-5)
    # The query's vector is exactly the single-query path's.
    np.testing.assert_allclose(query, minilm.embed_query(PARTS_QUERY), atol=1e-6)
    # Each part means what its own text means: closest to its own standalone vector
    # and to the skill that does it.
    alone = minilm.embed_queries([PARTS_QUERY[a:b] for a, b in spans])
    assert ((parts @ alone.T).argmax(axis=1) == [0, 1]).all()
    assert (np.einsum("ij,ij->i", parts, alone) > 0.7).all()
    docs = minilm.embed_documents(
        ["code review: review pull requests for bugs", "release notes: write release notes"]
    )
    assert (parts @ docs.T).argmax(axis=1).tolist() == [0, 1]


def test_minilm_query_parts_past_the_window_are_embedded_alone(
    minilm: EmbeddingBackend,
) -> None:
    assert isinstance(minilm, OnnxMiniLMBackend)
    text = "word " * 400 + "translate this sentence into french"
    tail = "translate this sentence into french"
    spans = [(0, 20), (text.index(tail), len(text))]
    parts = minilm.encode_query(text, spans).parts
    np.testing.assert_allclose(parts[1], minilm.embed_query(tail), atol=1e-6)
    assert minilm.encode_query(text, []).parts.shape == (0, minilm.dim)


def test_default_query_parts_embed_each_span_as_text() -> None:
    backend = HashingBackend()
    text = "deploy the service and then page the on-call engineer"
    spans = _spans(text, "deploy the service", "page the on-call engineer")
    encoded = backend.encode_query(text, spans)
    query, parts = encoded.vector, encoded.parts
    np.testing.assert_array_equal(query, backend.embed_query(text))
    np.testing.assert_array_equal(
        parts, backend.embed_queries(["deploy the service", "page the on-call engineer"])
    )
