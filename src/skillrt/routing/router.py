"""The two-stage router of seed 001 §6: encode, gather evidence, recall, decide, explain.

One route runs, in order:

1. **encode** the query once (its vector, its clauses' vectors and its token states
   come from one model run; :meth:`Router._encode_query`);
2. **evidence** for the query and each clause (:mod:`skillrt.routing.evidence`):
   lexical + semantic fused scores, reranked at the top (:mod:`skillrt.routing.rerank`);
3. **recall** (:mod:`skillrt.routing.recall`): forced / rule / lexical / semantic;
4. **decide** (:mod:`skillrt.routing.decide`): six terms, the conflict order of R5,
   the minimal covering plan (:mod:`skillrt.routing.planner`);
5. **explain** (:mod:`skillrt.routing.explain`): the routing reason and signals.

The router never writes: what hears of a route is given at construction
(``on_route``, :mod:`skillrt.routing.observe`) and called once the route is decided;
the runtime's recorder (:class:`skillrt.telemetry.recording.RouteRecorder`) writes the
T1 event. A router is complete when constructed: nothing sets its collaborators later.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from skillrt.config import RoutingConfig
from skillrt.errors import UsageError
from skillrt.routing.calibration import ScoreModel, model_for
from skillrt.routing.decide import USER_SURFACES, decide
from skillrt.routing.directives import find_directives
from skillrt.routing.embeddings import resolve_backend
from skillrt.routing.evidence import gather
from skillrt.routing.explain import routing_reason
from skillrt.routing.history import HistoryInput, message_texts
from skillrt.routing.index import RouterIndex
from skillrt.routing.observe import RouteObserver, RouteSeen
from skillrt.routing.plan import RouteResult
from skillrt.routing.prereqs import PrerequisiteChecker
from skillrt.routing.recall import recall
from skillrt.routing.rerank import Reranker, RerankQuery
from skillrt.routing.text import clause_spans
from skillrt.wellformed import well_formed

if TYPE_CHECKING:
    from skillrt.routing.embeddings.base import EmbeddingBackend, QueryEncoding
    from skillrt.routing.vector_cache import BuildProgress
    from skillrt.skills.model import Skill
    from skillrt.store.base import Store
    from skillrt.store.stats import SkillStats

__all__ = ["USER_SURFACES", "Router", "request_spans"]

QUERY_CACHE_SIZE = 256
#: Only this much of a query is read for routing (pasted documents add nothing to the
#: choice of a skill but cost time); the route event still hashes the full text.
MAX_QUERY_CHARS = 20_000
#: Queries longer than this are not split into clauses (one embedding, bounded cost).
MAX_CLAUSE_QUERY_CHARS = 800


def request_spans(query: str) -> tuple[tuple[int, int], ...]:
    """The clause spans :meth:`Router.route` splits ``query`` into (of its first
    ``MAX_QUERY_CHARS``): none for a single clause or a query too long to split."""
    query = query[:MAX_QUERY_CHARS]
    spans = clause_spans(query) if len(query) < MAX_CLAUSE_QUERY_CHARS else []
    return tuple(spans) if len(spans) > 1 else ()


class _Setup(NamedTuple):
    """What one route decides with, however many decisions it takes: its clock, id and
    config (gray release draws it once), and the index and reader it reads."""

    started: float
    route_id: str
    config_id: str
    cfg: RoutingConfig
    view: RouterIndex
    reader: Reranker | None


class _Asked(NamedTuple):
    """The request, as :meth:`Router.route` was given it."""

    query: str
    history: HistoryInput | None
    top_k: int | None
    candidates: Sequence[str] | None
    query_vector: Any


class Router:
    """Routes queries over a fixed catalogue index.

    Args:
        index: The catalogue (see :class:`RouterIndex`).
        config: Routing configuration (weights, threshold, pool sizes...).
        store: Where per-skill stats are read (None: no stats, no cold start).
        env / path: For prerequisite checks (the library never reads os.environ).
        routing_for: Gray release (seed 001 §15): ``route_id -> (config_id, config)``.
        surface: Default surface of a route (``cli``, ``library``, ``mcp``...).
        reranker: The second stage (default: token matching when the index has token
            states; see :mod:`skillrt.routing.rerank`).
        reader: A reranker after it, on the whole request (default: the reader with
            ``config.reader_weights`` when set and the index is semantic; see
            :mod:`skillrt.routing.reader`). Refused (``E_USAGE``) on an index that
            defers its sections: a reader passed in reads the index it was built on.
        on_route: Observers told of each route once it is decided (recording its T1
            event, say); what they return is attached to ``RouteResult.events``.
    """

    def __init__(
        self,
        index: RouterIndex,
        config: RoutingConfig | None = None,
        *,
        store: Store | None = None,
        env: Mapping[str, str] | None = None,
        path: str | None = None,
        routing_for: Callable[[str], tuple[str, RoutingConfig]] | None = None,
        surface: str = "library",
        reranker: Reranker | None = None,
        reader: Reranker | None = None,
        on_route: Sequence[RouteObserver] = (),
    ) -> None:
        if reader is not None and index.pending_sections:
            # A reader passed in reads the index it was built on; this one gains
            # sections as it routes, and the reader would go on without them.
            raise UsageError(
                "a reader passed to Router reads the index it was built on, and this "
                "index defers its section vectors (defer_sections=True): build the index "
                "whole, or let the router build its reader (routing.reader_weights)",
                argument="reader",
            )
        self.index = index
        self.config = config or RoutingConfig()
        self.store = store
        self.surface = surface
        self.routing_for = routing_for
        self.prereqs = PrerequisiteChecker(env=env, path=path or self.config.path)
        if reranker is None and index.tokens is not None:
            from skillrt.routing.rerank import TokenReranker

            reranker = TokenReranker(index.tokens)
        self.reranker = reranker
        self._models: dict[int, ScoreModel] = {}
        self._backend_name = index.backend.name if index.backend is not None else None
        weights = self.config.reader_weights
        #: Whether :attr:`reader` is the config's, built on :attr:`index` (rebuilt when
        #: a deferred index gains sections).
        self._own_reader = reader is None and weights is not None and index.semantic is not None
        if self._own_reader:
            from skillrt.routing.reader import ReaderModel, ReaderReranker

            assert weights is not None
            reader = ReaderReranker(index, self._model(self.config), ReaderModel.load(weights))
        self.reader = reader
        self.on_route = tuple(on_route)
        self._qcache: OrderedDict[str, QueryEncoding] = OrderedDict()
        self._lock = threading.Lock()
        #: Where this router's whole index is saved (:meth:`from_skills`; None: nowhere).
        self.saved_at: Path | None = None
        #: Held while a deferred index gains a request's sections (one fill at a time).
        self._fill_lock = threading.Lock()

    @classmethod
    def from_skills(
        cls,
        skills: Sequence[Skill],
        config: RoutingConfig | None = None,
        *,
        store: Store | None = None,
        caches: Store | None = None,
        backend: EmbeddingBackend | str | None = "config",
        query_backend: EmbeddingBackend | None = None,
        is_enabled: Callable[[Skill], bool] | None = None,
        progress: BuildProgress | None = None,
        defer_sections: bool = False,
        **kwargs: Any,
    ) -> Router:
        """Index ``skills`` and build a router. ``backend="config"`` follows
        ``config.embedding_backend``; pass a backend, a backend name, or None (lexical);
        ``query_backend`` encodes the requests instead (the same model behind a cache
        of its own, say: the skills are encoded by ``backend``).

        Per-skill stats are read from ``store``. Bodies are read (``config.read_bodies``)
        and every derived field and vector is cached in ``caches`` (default: ``store``;
        a shared store's runtime gives this machine's, ``store.local``; with no
        ``store``, a router reads no stats); ``progress(what, done, total)`` follows the
        work on skills that are new or changed (reading and splitting them, embedding
        their texts). ``defer_sections``: a catalogue whose sections are mostly not in
        the cache gets an index without them (see :class:`RouterIndex`), which each
        route fills for its candidate pool; such an index is not saved (and none is
        built with a ``reader`` passed in). The other keywords are :class:`Router`'s.
        """
        from skillrt.routing.fields import fields_key, load_fields
        from skillrt.routing.index_build import snapshot_location
        from skillrt.routing.snapshot import load_snapshot
        from skillrt.routing.vector_cache import VectorCache

        config = config or RoutingConfig()
        cached = caches if caches is not None else store
        if backend == "config":
            backend = config.embedding_backend
        if isinstance(backend, str):
            backend = resolve_backend(backend, config)
        keys = [fields_key(s) for s in skills] if config.read_bodies else None
        snapshot_at = snapshot_location(cached, keys, backend)
        snapshot = None
        if snapshot_at is not None and backend is not None:
            snapshot = load_snapshot(*snapshot_at, backend)
        fields = None
        if keys is not None and snapshot is None:
            fields = load_fields(skills, cached, progress=progress, keys=keys)
        index = RouterIndex(
            skills,
            backend=backend,
            query_backend=query_backend,
            cache=VectorCache(cached, progress=progress),
            is_enabled=is_enabled,
            token_match_max_texts=config.token_match_max_texts,
            fields=fields,
            snapshot=snapshot,
            # A reader passed in reads the index it is given: never a deferred one, so
            # the same call works on a cold cache and a warm one alike.
            defer_sections=defer_sections and kwargs.get("reader") is None,
        )
        saves = snapshot is None and snapshot_at is not None and not index.pending_sections
        if saves and index.semantic is not None:
            assert snapshot_at is not None
            from skillrt.routing.snapshot import save_snapshot

            save_snapshot(*snapshot_at, index.lexical, index.semantic, index.fields)
        router = cls(index, config, store=store, **kwargs)
        if snapshot_at is not None and not index.pending_sections and snapshot_at[0].exists():
            router.saved_at = snapshot_at[0]
        return router

    # -- public ----------------------------------------------------------------------
    def route(
        self,
        query: str,
        *,
        history: HistoryInput | None = None,
        top_k: int | None = None,
        candidates: Sequence[str] | None = None,
        explain: bool = False,
        surface: str | None = None,
        query_vector: Any = None,
        record: bool | None = None,
    ) -> RouteResult:
        """Route one query; see the module docstring. "No skill" is a valid result.

        ``candidates`` restricts routing to those skills (names as in the index);
        ``query_vector`` skips embedding (batch evaluation embeds all queries at once)
        unless a reranker needs the query's tokens: then the query is still run once.
        ``record`` is passed to the observers (:class:`RouteSeen`): False when the
        caller records the route itself.
        """
        # One id, config and clock for the route, however many decisions it takes.
        route_id = uuid.uuid4().hex
        config_id, cfg = ("default", self.config)
        if self.routing_for is not None:
            config_id, cfg = self.routing_for(route_id)
        setup = _Setup(time.perf_counter(), route_id, config_id, cfg, self.index, self.reader)
        asked = _Asked(query, history, top_k, candidates, query_vector)
        if setup.view.pending_sections:
            setup = self._fill_sections(setup, asked)
        result = self._decide(setup, asked, explain=explain, surface=surface)
        if self.on_route:
            seen = RouteSeen(
                surface=surface or self.surface, model_id=setup.view.model_id, record=record
            )
            events = tuple(e for observe in self.on_route for e in observe(result, seen))
            if events:
                result = replace(result, events=events)
        return result

    # -- internals -------------------------------------------------------------------
    def _fill_sections(self, setup: _Setup, asked: _Asked) -> _Setup:
        """Embed the pending sections of the skills this request may go to: the pool
        of a first decision without them (a skill's section evidence only adds to its
        description's, so the skills outside that pool do not need theirs to lose).

        Fills are made one at a time on the router's current index, so routes on
        several threads keep each other's sections; the route goes on with that index
        and its reader."""
        first = self._decide(setup, asked)
        names = [c.name for c in first.candidates]
        with self._fill_lock:
            index = self.index
            filled = index.with_sections(index.position[n] for n in names if n in index.position)
            if filled is not index:
                self.index = filled
                if self._own_reader and self.reader is not None:
                    from skillrt.routing.reader import ReaderReranker

                    assert isinstance(self.reader, ReaderReranker)
                    self.reader = ReaderReranker(filled, self.reader.model, self.reader.weights)
            return setup._replace(view=self.index, reader=self.reader)

    def _decide(
        self, setup: _Setup, asked: _Asked, *, explain: bool = False, surface: str | None = None
    ) -> RouteResult:
        """One decision on ``setup.view``, before the observers are told of it."""
        started, route_id, config_id, cfg, index = (
            setup.started, setup.route_id, setup.config_id, setup.cfg, setup.view
        )  # fmt: skip
        query, history, top_k, candidates, query_vector = asked
        surface = surface or self.surface
        model = self._model(cfg)
        k_select = max(1, top_k or cfg.semantic_top_k)
        pool_size = max(cfg.candidate_pool, k_select)
        notes: list[str] = []

        query = well_formed(query)  # a lone surrogate would crash the tokenizer
        full_query, query = query, query[:MAX_QUERY_CHARS]
        directives = find_directives(
            query, index.resolve_key, resolve_variant=index.resolve_variant
        )
        rows = None
        if candidates is not None:
            rows, unknown_names = index.rows_for(candidates)
            if unknown_names:
                notes.append(f"unknown candidates ignored: {', '.join(unknown_names[:5])}")
        if directives.unknown_mentions:
            notes.append(f"no skill named {', '.join(directives.unknown_mentions)}")

        spans = request_spans(query)
        clauses = [query[a:b] for a, b in spans] or [query]
        qvec: Any = None
        qtokens: Any = None
        clause_vecs: Any = [None] * len(clauses)
        clause_tokens: Any = [None] * len(clauses)
        if index.semantic is not None and index.backend is not None:
            if query_vector is not None and len(clauses) == 1 and index.tokens is None:
                qvec = query_vector
            else:
                # The query, its clauses and its tokens come from one model run.
                encoded = self._encode_query(query, spans)
                qvec, qtokens = encoded.vector, encoded.tokens
                if len(clauses) > 1:
                    clause_vecs = encoded.parts
                    clause_tokens = encoded.part_tokens or clause_tokens
                if query_vector is not None:
                    qvec = query_vector

        texts = [query, *clauses] if len(clauses) > 1 else [query]
        vectors = [qvec, *clause_vecs] if len(clauses) > 1 else [qvec]
        tokens = [qtokens, *clause_tokens] if len(clauses) > 1 else [qtokens]
        semantic: list[Any] = [None] * len(texts)
        if index.semantic is not None and rows is None and all(v is not None for v in vectors):
            import numpy as np

            # The request and its clauses in one pass over the skill vectors.
            semantic = index.semantic.score_many(np.stack(vectors), model.mix, model.section_weight)
        evidence = [
            gather(
                index,
                model,
                text,
                vector,
                rows,
                reranker=self.reranker,
                rerank_query=RerankQuery(text, vector, toks),
                semantic=sem,
                clause=n > 0,
                reader=setup.reader if n == 0 else None,
            )
            for n, (text, vector, toks, sem) in enumerate(
                zip(texts, vectors, tokens, semantic, strict=True)
            )
        ]
        ev = evidence[0]
        # Clause-level evidence for multi-request queries (minimal cover set, R4).
        clause_ev = evidence[1:]
        pool = recall(
            index,
            query,
            clauses,
            ev,
            clause_ev,
            directives,
            rows,
            pool_size=pool_size,
            k_select=k_select,
            history=message_texts(history, turns=cfg.history_turns),
        )
        decision = decide(
            index,
            pool,
            ev,
            clause_ev,
            directives,
            clauses=clauses,
            query=query,
            model=model,
            cfg=cfg,
            stats=self._stats([c.name for c in pool.members.values()], cfg),
            prereqs=self.prereqs,
            surface=surface,
            damp_cold_start=cfg.use_stats and self.store is not None,
            explain=explain,
        )
        selected = decision.outcome.selected
        reason = routing_reason(
            selected, decision.candidates, cfg.selection_threshold, len(clause_ev), notes
        )
        result = RouteResult(
            route_id=route_id,
            query=full_query,
            plan=decision.outcome.plan,
            routing_reason=reason,
            candidates=tuple(c.scored() for c in decision.candidates),
            latency_ms=(time.perf_counter() - started) * 1000.0,
            config_id=config_id,
            pointers=decision.outcome.pointers,
        )
        return result

    def _model(self, cfg: RoutingConfig) -> ScoreModel:
        key = id(cfg)
        model = self._models.get(key)
        if model is None:
            overrides = cfg.options.get("score_model") if cfg.options else None
            if overrides is not None and not isinstance(overrides, Mapping):
                from skillrt.errors import ConfigError

                raise ConfigError("routing.options.score_model must be a mapping")
            model = model_for(self._backend_name, overrides, tokens=self.index.tokens is not None)
            self._models[key] = model
        return model

    def _encode_query(self, query: str, spans: Sequence[tuple[int, int]]) -> QueryEncoding:
        # The spans are a function of the query, so the query alone is the cache key.
        with self._lock:
            hit: QueryEncoding | None = self._qcache.get(query)
            if hit is not None:
                self._qcache.move_to_end(query)
                return hit
        assert self.index.backend is not None
        encoded = self.index.backend.encode_query(query, spans)
        with self._lock:
            self._qcache[query] = encoded
            if len(self._qcache) > QUERY_CACHE_SIZE:
                self._qcache.popitem(last=False)
        return encoded

    def _stats(self, names: Sequence[str], cfg: RoutingConfig) -> dict[str, SkillStats]:
        if not cfg.use_stats or self.store is None or not names:
            return {}
        from skillrt.errors import StoreError
        from skillrt.store.counters import TelemetryWarning, skill_stats

        try:
            return skill_stats(self.store, names)
        except StoreError as exc:  # stats are an optimisation of scoring, never a failure
            import warnings

            warnings.warn(f"skill stats unavailable: {exc}", TelemetryWarning, stacklevel=3)
            return {}
