"""The two-stage router of seed 001 §6: recall, score, plan, record.

Stage 1 recalls candidates from four sources, tagged on each candidate:
``forced`` (the user's explicit words), ``rule`` (a trigger phrase, or a follow-up to
a skill named in the history), ``lexical`` (BM25 top-N) and ``semantic`` (vector
top-N). Stage 2 scores the pool with the six terms of §6.2 (see
:mod:`skillrt.routing.scoring`), applies the conflict order of §9 and builds a
minimal covering plan (:mod:`skillrt.routing.planner`).

Conflict order (R5), highest first, as applied to each candidate:

1. the user's explicit words: "don't use X" excludes X whatever else says; ``$x`` /
   "use the x skill" forces x past the threshold;
2. safety and permissions: missing prerequisites (``unavailable``), a disabled skill,
   ``disable-model-invocation`` unless the user named it on a user surface;
3. system policy: the threshold, the semantic top-k, anti-trigger penalties;
4. skill defaults: cost hints and parallel safety shape the plan.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from skillrt.config import RoutingConfig
from skillrt.routing.calibration import ScoreModel, model_for
from skillrt.routing.directives import Directives, find_directives
from skillrt.routing.history import HistoryInput, is_follow_up, message_texts
from skillrt.routing.index import RouterIndex
from skillrt.routing.plan import RecallSource, RouteResult, ScoreBreakdown, ScoredCandidate
from skillrt.routing.planner import Choice, build_plan
from skillrt.routing.prereqs import PrerequisiteChecker
from skillrt.routing.scoring import (
    COST_VALUE,
    Terms,
    cold_start_factor,
    combine,
    success_term,
    weighted_sum,
)
from skillrt.routing.text import clause_spans, terms
from skillrt.routing.tokens import TOKEN_RERANK

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from skillrt.routing.embeddings.base import EmbeddingBackend, QueryEncoding
    from skillrt.routing.lexical import LexicalScores
    from skillrt.routing.tokens import TokenIndex
    from skillrt.skills.model import Skill
    from skillrt.store.base import Store
    from skillrt.telemetry.stats import SkillStats

__all__ = ["USER_SURFACES", "Router", "backend_options", "resolve_backend"]

#: Surfaces where the text is the user's own words (``disable-model-invocation`` skills
#: may be forced from these; from "mcp"/"model" they may not).
USER_SURFACES = frozenset({"cli", "library", "user", "eval"})
QUERY_CACHE_SIZE = 256
#: Only this much of a query is read for routing (pasted documents add nothing to the
#: choice of a skill but cost time); the route event still hashes the full text.
MAX_QUERY_CHARS = 20_000
#: Queries longer than this are not split into clauses (one embedding, bounded cost).
MAX_CLAUSE_QUERY_CHARS = 800
SOURCE_ORDER: tuple[RecallSource, ...] = ("forced", "rule", "lexical", "semantic")
#: Candidates recalled per clause of a multi-clause query.
CLAUSE_POOL = 5


@dataclass
class _Evidence:
    """Scores of every considered skill for one text (the query or one clause)."""

    rows: NDArray[np.int64]  # skill positions, aligned with the arrays below
    fused: NDArray[np.float32]
    lexical: LexicalScores
    lex_norm: NDArray[np.float32]
    lex_raw: NDArray[np.float32]
    sem_doc: NDArray[np.float32] | None
    sem_part: NDArray[np.float32] | None
    sem_centroid: NDArray[np.float32] | None
    sem_combined: NDArray[np.float32] | None
    #: Token-matching score of the reranked candidates (NaN elsewhere), or None.
    tokens: NDArray[np.float32] | None
    best: float
    second: float
    #: True when ``rows`` is every skill in index order (row == position).
    _full: bool = False

    _positions: dict[int, int] | None = None

    def margin(self, k: int) -> float:
        value = float(self.fused[k])
        other = self.second if value >= self.best else self.best
        return value - other

    def positions(self) -> dict[int, int]:
        """Skill position -> index into this evidence's arrays."""
        if self._positions is None:
            self._positions = {int(r): k for k, r in enumerate(self.rows.tolist())}
        return self._positions

    def index_of(self, i: int) -> int | None:
        """Where skill ``i`` is in this evidence's arrays (None: not scored)."""
        if self._full:
            return i if 0 <= i < len(self.rows) else None
        return self.positions().get(i)

    def values(self, array: NDArray[np.float32], members: Sequence[int]) -> NDArray[np.float32]:
        """``array`` at each member's position (NaN where the member is not scored)."""
        import numpy as np

        if len(self.rows) == len(array) and self._full:
            return np.asarray(array[np.asarray(members, dtype=np.int64)], dtype=np.float32)
        pos = self.positions()
        out = np.full(len(members), np.nan, dtype=np.float32)
        for m, i in enumerate(members):
            k = pos.get(i)
            if k is not None:
                out[m] = array[k]
        return out


@dataclass
class _Candidate:
    idx: int
    sources: set[str] = field(default_factory=set)
    forced: bool = False
    forced_words: str = ""
    forced_clause: int = -1
    triggers: list[str] = field(default_factory=list)
    anti: list[str] = field(default_factory=list)
    history_named: bool = False


class Router:
    """Routes queries over a fixed catalogue index.

    Args:
        index: The catalogue (see :class:`RouterIndex`).
        config: Routing configuration (weights, threshold, pool sizes...).
        store: Where stats are read and route events written (None: neither).
        env / path: For prerequisite checks (the library never reads os.environ).
        routing_for: Gray release (seed 001 §15): ``route_id -> (config_id, config)``.
        record: Write T1 route events and per-skill route counts.
        surface: Default surface stamped on events (``cli``, ``library``, ``mcp``...).
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
        record: bool = True,
        surface: str = "library",
    ) -> None:
        self.index = index
        self.config = config or RoutingConfig()
        self.store = store
        self.record = record
        self.surface = surface
        self.routing_for = routing_for
        self.prereqs = PrerequisiteChecker(env=env, path=path or self.config.path)
        backend_name = index.backend.name if index.backend is not None else None
        self._models: dict[int, ScoreModel] = {}
        self._backend_name = backend_name
        self._qcache: OrderedDict[str, QueryEncoding] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def from_skills(
        cls,
        skills: Sequence[Skill],
        config: RoutingConfig | None = None,
        *,
        store: Store | None = None,
        backend: EmbeddingBackend | str | None = "config",
        is_enabled: Callable[[Skill], bool] | None = None,
        **kwargs: Any,
    ) -> Router:
        """Index ``skills`` and build a router. ``backend="config"`` follows
        ``config.embedding_backend``; pass a backend, a backend name, or None (lexical)."""
        from skillrt.routing.vector_cache import VectorCache

        config = config or RoutingConfig()
        if backend == "config":
            backend = config.embedding_backend
        if isinstance(backend, str):
            backend = resolve_backend(backend, config)
        index = RouterIndex(
            skills,
            backend=backend,
            cache=VectorCache(store),
            is_enabled=is_enabled,
            token_match_max_texts=config.token_match_max_texts,
        )
        return cls(index, config, store=store, **kwargs)

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
        unless token matching is on: then the query is still run once for its tokens.
        """
        started = time.perf_counter()
        route_id = uuid.uuid4().hex
        config_id, cfg = ("default", self.config)
        if self.routing_for is not None:
            config_id, cfg = self.routing_for(route_id)
        surface = surface or self.surface
        model = self._model(cfg)
        k_select = max(1, top_k or cfg.semantic_top_k)
        pool_size = max(cfg.candidate_pool, k_select)
        notes: list[str] = []

        index = self.index
        full_query, query = query, query[:MAX_QUERY_CHARS]
        directives = find_directives(query, index.resolve_key)
        rows = None
        if candidates is not None:
            rows, unknown_names = index.rows_for(candidates)
            if unknown_names:
                notes.append(f"unknown candidates ignored: {', '.join(unknown_names[:5])}")
        if directives.unknown_mentions:
            notes.append(f"no skill named {', '.join(directives.unknown_mentions)}")

        spans = clause_spans(query) if len(query) < MAX_CLAUSE_QUERY_CHARS else []
        clauses = [query[a:b] for a, b in spans] if len(spans) > 1 else [query]
        qvec: Any = None
        qtokens: Any = None
        clause_vecs: Any = [None] * len(clauses)
        clause_tokens: Any = [None] * len(clauses)
        if index.semantic is not None and index.backend is not None:
            if query_vector is not None and len(clauses) == 1 and index.tokens is None:
                qvec = query_vector
            else:
                # The query, its clauses and its tokens come from one model run.
                encoded = self._encode_query(query, spans if len(clauses) > 1 else ())
                qvec, qtokens = encoded.vector, encoded.tokens
                if len(clauses) > 1:
                    clause_vecs = encoded.parts
                    clause_tokens = encoded.part_tokens or clause_tokens
                if query_vector is not None:
                    qvec = query_vector
        ev = self._evidence(query, qvec, rows, model, qtokens)
        # Clause-level evidence for multi-request queries (minimal cover set, R4).
        clause_ev = (
            [
                self._evidence(c, v, rows, model, t)
                for c, v, t in zip(clauses, clause_vecs, clause_tokens, strict=True)
            ]
            if len(clauses) > 1
            else []
        )

        pool: dict[int, _Candidate] = {}

        def add(i: int, source: str | None = None) -> _Candidate:
            cand = pool.get(i)
            if cand is None:
                cand = pool[i] = _Candidate(i)
            if source is not None:
                cand.sources.add(source)
            return cand

        allowed = None if rows is None else set(rows.tolist())
        extra = max(1, pool_size // 4)
        for e, size in ((ev, pool_size), *((c, CLAUSE_POOL) for c in clause_ev)):
            for k in _top(e.fused, size):
                if e.fused[k] > 0:
                    add(int(e.rows[k]))
            for k in _top(e.lex_raw, extra):
                if e.lex_raw[k] > 0:
                    add(int(e.rows[k]))
            if e.sem_combined is not None:
                for k in _top(e.sem_combined, extra):
                    add(int(e.rows[k]))
        # Source tags: within the top-N of a recall list for the query or a clause.
        for e in (ev, *clause_ev):
            lex_cut = _kth(e.lex_raw, pool_size)
            sem_cut = _kth(e.sem_combined, pool_size) if e.sem_combined is not None else None
            for i, cand in pool.items():
                at = e.index_of(i)
                if at is None:
                    continue
                if e.lex_raw[at] > 0 and e.lex_raw[at] >= lex_cut:
                    cand.sources.add("lexical")
                if (
                    e.sem_combined is not None
                    and sem_cut is not None
                    and e.sem_combined[at] >= sem_cut
                ):
                    cand.sources.add("semantic")
        hits: dict[int, list[str]] = {}
        for hit in index.triggers.match(query):
            if allowed is None or hit.owner in allowed:
                hits.setdefault(hit.owner, []).append(hit.phrase)
        if len(hits) > pool_size:
            # A trigger shared by many skills: keep the best-evidenced of them.
            hits = dict(
                sorted(hits.items(), key=lambda kv: -float(ev.fused[ev.index_of(kv[0]) or 0]))[
                    :pool_size
                ]
            )
        for owner, phrases in hits.items():
            add(owner, "rule").triggers.extend(phrases)
        for name, words in directives.forced.items():
            i = index.position[name]
            if allowed is None or i in allowed:
                cand = add(i, "forced")
                cand.forced = True
                cand.forced_words = words
                cand.forced_clause = _clause_of(words, clauses)
        for name in directives.excluded:
            i = index.position[name]
            if i in pool or allowed is None or i in allowed:
                add(i, "forced")
        hist_texts = message_texts(history, turns=cfg.history_turns)
        hist_named: set[int] = set()
        hist_lex: NDArray[np.float32] | None = None
        if hist_texts:
            hist_named, hist_lex = self._history_evidence(hist_texts)
            if is_follow_up(query) and hist_named:
                for i in hist_named:
                    if allowed is None or i in allowed:
                        add(i, "rule")
            for i in hist_named:
                if i in pool:
                    pool[i].history_named = True
        for hit in index.anti_triggers.match(query):
            if hit.owner in pool:
                pool[hit.owner].anti.append(hit.phrase)
        clause_anti: list[set[int]] = []
        if clause_ev:
            clause_anti = [{h.owner for h in index.anti_triggers.match(c)} for c in clauses]

        # Which pool members are inside the selectable top-k (seed 001 §6.1 k=3).
        top_select = {int(ev.rows[k]) for k in _top(ev.fused, k_select)}
        for cev in clause_ev:
            top_select |= {int(cev.rows[k]) for k in _top(cev.fused, k_select)}

        members = list(pool)
        intents_q = self._intents(model, ev, members)
        intents_c = [self._intents(model, cev, members) for cev in clause_ev]
        fused_q = ev.values(ev.fused, members)
        stats = self._stats([index.names[i] for i in pool], cfg)
        threshold = cfg.selection_threshold
        choices: list[Choice] = []
        scored: dict[int, tuple[ScoreBreakdown, str, str, tuple[str, ...]]] = {}
        for m, (i, cand) in enumerate(pool.items()):
            skill = index.skills[i]
            name = index.names[i]
            at_q = ev.index_of(i)
            intent_q = float(intents_q[m])
            clause_intents = [float(ci[m]) for ci in intents_c]
            st = stats.get(name)
            success = success_term(st.successes, st.failures) if st is not None else 0.5
            readiness = 0.5
            if hist_texts:
                affinity = 1.0 if cand.history_named else 0.0
                if hist_lex is not None:
                    affinity = max(affinity, min(1.0, 2.0 * float(hist_lex[i])))
                readiness = 0.5 + 0.5 * affinity
            missing = self.prereqs.missing(skill.routing.prerequisites)
            if missing:
                readiness = 0.0
            t = Terms(
                intent_match=intent_q,
                trigger_match=1.0 if cand.triggers else 0.0,
                success_rate=success,
                context_readiness=readiness,
                cost_penalty=COST_VALUE.get(skill.routing.cost_hint, 0.5),
                conflict_penalty=0.0 if cand.anti else 1.0,
            )
            damping = 1.0
            if not cand.forced and cfg.use_stats and self.store is not None:
                damping = cold_start_factor(st.routes if st is not None else 0, cfg)
            total = combine(t, cfg, anti_trigger=bool(cand.anti), damping=damping)
            query_total = total
            # Each clause is judged on its own words: its intent, its anti-triggers.
            clause_totals = [
                combine(
                    replace(t, intent_match=ci, conflict_penalty=float(i not in anti)),
                    cfg,
                    anti_trigger=i in anti,
                    damping=damping,
                )
                for ci, anti in zip(clause_intents, clause_anti, strict=True)
            ]
            if clause_totals and max(clause_totals) > total:
                best_clause = max(range(len(clause_totals)), key=clause_totals.__getitem__)
                total = clause_totals[best_clause]
                t = replace(
                    t,
                    intent_match=clause_intents[best_clause],
                    conflict_penalty=float(i not in clause_anti[best_clause]),
                )
            clause_totals = clause_totals or [total]
            intent = t.intent_match

            status, reason = self._status(
                cand,
                skill,
                name,
                total,
                threshold,
                missing,
                directives,
                surface,
                i in top_select or cand.forced or bool(cand.triggers) or "rule" in cand.sources,
            )
            signals: dict[str, float] = {}
            if explain:
                signals = self._signals(ev, at_q, intent_q, clause_intents, t, cfg, damping)
            breakdown = ScoreBreakdown(
                intent_match=round(intent, 4),
                trigger_match=t.trigger_match,
                success_rate=round(success, 4),
                context_readiness=round(readiness, 4),
                cost_penalty=t.cost_penalty,
                conflict_penalty=t.conflict_penalty,
                total=round(total, 4),
                signals=signals,
            )
            scored[i] = (breakdown, status, reason, missing)
            choices.append(
                Choice(
                    idx=i,
                    name=name,
                    total=total,
                    cost_hint=skill.routing.cost_hint,
                    parallel_safe=skill.routing.parallel_safe,
                    success_rate=success,
                    forced=cand.forced,
                    eligible=status == "pass",
                    blocked=status not in ("pass", "below_threshold"),
                    clause_totals=clause_totals,
                    forced_clause=cand.forced_clause,
                    fused=float(fused_q[m]),
                    query_total=query_total,
                )
            )

        # Clauses refine a request that calls for skills; they never turn a request that
        # matches nothing as a whole into a skill request (the no-skill decision is made
        # on the whole query).
        if clause_ev and not any(
            c.eligible and not c.forced and c.query_total >= threshold for c in choices
        ):
            for c in choices:
                if c.eligible and not c.forced:
                    c.eligible = False
                    breakdown, _, _, missing_items = scored[c.idx]
                    scored[c.idx] = (
                        breakdown,
                        "below_threshold",
                        f"passes on one clause only; the whole request scores "
                        f"{c.query_total:.2f} < {threshold:.2f}",
                        missing_items,
                    )
        outcome = build_plan(
            choices,
            n_clauses=max(1, len(clause_ev)),
            threshold=threshold,
            max_parallel=cfg.max_parallel_skills,
            overlaps=lambda a, b: index.overlap(a, b) >= cfg.overlap_threshold,
            conflicts=lambda a, b: self._conflict(a, b, cfg),
        )
        chosen = {c.idx for c in outcome.selected}
        out: list[ScoredCandidate] = []
        for c in sorted(choices, key=lambda c: (c.idx not in chosen, *_rank_key(c))):
            breakdown, status, reason, missing = scored[c.idx]
            if c.idx in chosen:
                status, reason = "selected", reason or "passes the threshold"
                if c.forced:
                    reason = f"forced by the user ({pool[c.idx].forced_words})"
            elif c.idx in outcome.covered:
                status, reason = outcome.covered[c.idx]
            out.append(
                ScoredCandidate(
                    name=c.name,
                    sources=tuple(s for s in SOURCE_ORDER if s in pool[c.idx].sources),
                    forced=c.forced,
                    score=breakdown,
                    status=status,
                    reason=reason,
                    missing=missing,
                )
            )
        reason = _routing_reason(outcome.selected, out, threshold, len(clause_ev), notes)
        latency_ms = (time.perf_counter() - started) * 1000.0
        result = RouteResult(
            route_id=route_id,
            query=full_query,
            plan=outcome.plan,
            routing_reason=reason,
            candidates=tuple(out),
            latency_ms=latency_ms,
            config_id=config_id,
        )
        if self.record if record is None else record:
            result = self._record(result, surface, cfg)
        return result

    # -- evidence --------------------------------------------------------------------
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

    def _evidence(
        self,
        text: str,
        qvec: Any,
        rows: NDArray[np.int64] | None,
        model: ScoreModel,
        qtokens: Any = None,
    ) -> _Evidence:
        import numpy as np

        index = self.index
        lex = index.lexical.score(terms(text))
        if rows is None:
            rows_arr = np.arange(len(index), dtype=np.int64)
            lex_norm, lex_raw = lex.norm, lex.raw
        else:
            rows_arr = rows
            lex_norm, lex_raw = lex.norm[rows], lex.raw[rows]
        sem = None
        if index.semantic is not None and qvec is not None:
            sem = (
                index.semantic.score(qvec, model.mix)
                if rows is None
                else index.semantic.score_subset(qvec, rows, model.mix)
            )
            fused = (sem.combined + model.lexical_weight * lex_norm).astype(np.float32)
        else:
            fused = (model.lexical_weight * lex_norm).astype(np.float32)
        tok = None
        if index.tokens is not None and qtokens is not None and model.token_weight and len(fused):
            fused, tok = _token_rerank(index.tokens, qtokens, rows_arr, fused, model.token_weight)
        best = second = 0.0
        if len(fused):
            top2 = _top(fused, 2)
            best = float(fused[top2[0]])
            second = float(fused[top2[1]]) if len(top2) > 1 else 0.0
        return _Evidence(
            rows=rows_arr,
            fused=fused,
            lexical=lex,
            lex_norm=lex_norm,
            lex_raw=lex_raw,
            sem_doc=sem.doc if sem is not None else None,
            sem_part=sem.part if sem is not None else None,
            sem_centroid=sem.centroid if sem is not None else None,
            sem_combined=sem.combined if sem is not None else None,
            tokens=tok,
            best=best,
            second=second,
            _full=rows is None,
        )

    def _intents(
        self, model: ScoreModel, ev: _Evidence, members: Sequence[int]
    ) -> NDArray[np.float64]:
        """Calibrated intent of each member for one text (0 where it was not scored)."""
        import numpy as np

        if not members or not len(ev.fused):
            return np.zeros(len(members))
        fused = ev.values(ev.fused, members)
        best_k = int(np.argmax(ev.fused))
        p = model.intent(
            np.nan_to_num(fused, nan=-1e3),
            float(ev.fused[best_k]),
            float(ev.lex_norm[best_k]),
            ev.lexical.unknown_share,
        )
        out: NDArray[np.float64] = np.where(np.isnan(fused), 0.0, p)
        return out

    def _history_evidence(self, texts: Sequence[str]) -> tuple[set[int], NDArray[np.float32]]:
        from skillrt.routing.phrases import PhraseIndex
        from skillrt.routing.text import identifier_words

        index = self.index
        names = PhraseIndex()
        for i, skill in enumerate(index.skills):
            names.add(identifier_words(skill.name), i)
        joined = "\n".join(texts)
        named = {m.owner for m in names.match(joined)}
        for text in texts:
            named |= set(self._mentioned(text))
        lex = index.lexical.score(terms(joined))
        return named, lex.norm

    def _mentioned(self, text: str) -> list[int]:
        directives = find_directives(text, self.index.resolve_key)
        return [self.index.position[n] for n in directives.forced]

    def _stats(self, names: Sequence[str], cfg: RoutingConfig) -> dict[str, SkillStats]:
        if not cfg.use_stats or self.store is None or not names:
            return {}
        from skillrt.telemetry.stats import skill_stats

        try:
            return skill_stats(self.store, names)
        except Exception as exc:  # stats are an optimisation of scoring, never a failure
            import warnings

            from skillrt.telemetry.events import TelemetryWarning

            warnings.warn(f"skill stats unavailable: {exc}", TelemetryWarning, stacklevel=3)
            return {}

    # -- decisions -------------------------------------------------------------------
    def _status(
        self,
        cand: _Candidate,
        skill: Any,
        name: str,
        total: float,
        threshold: float,
        missing: tuple[str, ...],
        directives: Directives,
        surface: str,
        selectable: bool,
    ) -> tuple[str, str]:
        """``(status, reason)`` by the conflict order of R5; "pass" means eligible."""
        if name in directives.excluded:
            return "excluded", f"the user excluded it ({directives.excluded[name]})"
        i = cand.idx
        if not self.index.enabled[i]:
            how = f"`skillrt enable {name}`"
            return "disabled", f"disabled; enable it with {how}"
        if skill.disable_model_invocation and not (cand.forced and surface in USER_SURFACES):
            if cand.forced:
                return "manual_only", (
                    "disable-model-invocation: only the user can invoke it, "
                    f"not the {surface} surface"
                )
            return "manual_only", "disable-model-invocation: never selected automatically"
        if missing:
            return "unavailable", f"missing prerequisites: {', '.join(missing)}"
        if cand.forced:
            return "pass", ""
        if cand.anti and total < threshold:
            return "anti_trigger", f"anti-trigger hit: {', '.join(cand.anti)}"
        if total < threshold:
            return "below_threshold", f"total {total:.2f} < threshold {threshold:.2f}"
        if not selectable:
            return "below_threshold", "outside the semantic top-k"
        return "pass", ""

    def _conflict(self, a: int, b: int, cfg: RoutingConfig) -> bool:
        """Two skills conflict when one's anti-triggers name the other, or they overlap."""
        index = self.index
        sa, sb = index.skills[a], index.skills[b]
        for x, y in ((sa, sb), (sb, sa)):
            if x.routing.anti_triggers:
                from skillrt.routing.phrases import PhraseIndex

                p = PhraseIndex()
                p.add_all(x.routing.anti_triggers, 0)
                if p.match(f"{y.name} {y.description}"):
                    return True
        return index.overlap(a, b) >= cfg.overlap_threshold

    def _signals(
        self,
        ev: _Evidence,
        k: int | None,
        intent_q: float,
        clause_intents: Sequence[float],
        t: Terms,
        cfg: RoutingConfig,
        damping: float,
    ) -> dict[str, float]:
        out: dict[str, float] = {}
        if k is not None:
            out["fused"] = float(ev.fused[k])
            out["margin"] = ev.margin(k)
            best_k = int(ev.fused.argmax())
            out["p_scope"] = self._model(cfg).scope(
                float(ev.fused[best_k]), float(ev.lex_norm[best_k]), ev.lexical.unknown_share
            )
            out["bm25"] = float(ev.lex_raw[k])
            out["bm25_norm"] = float(ev.lex_norm[k])
            out["unknown_terms"] = ev.lexical.unknown_share
            if ev.sem_doc is not None:
                assert ev.sem_part is not None and ev.sem_centroid is not None
                out["cos_doc"] = float(ev.sem_doc[k])
                out["cos_part"] = float(ev.sem_part[k])
                out["cos_centroid"] = float(ev.sem_centroid[k])
            if ev.tokens is not None and not math.isnan(float(ev.tokens[k])):
                out["tokens"] = float(ev.tokens[k])
        out["intent_query"] = intent_q
        for n, ci in enumerate(clause_intents):
            out[f"intent_clause_{n + 1}"] = ci
        out["weighted_sum"] = weighted_sum(t, cfg.weights)
        out["cold_start_factor"] = damping
        return {key: round(v, 4) for key, v in out.items()}

    def _record(self, result: RouteResult, surface: str, cfg: RoutingConfig) -> RouteResult:
        from dataclasses import asdict

        from skillrt.telemetry.events import record_route, route_event

        event = record_route(
            self.store,
            result,
            surface=surface,
            model_id=self.index.model_id,
            record_query_text=cfg.record_query_text,
        )
        recorded = event is not None
        if event is None:
            event = route_event(result, surface=surface, model_id=self.index.model_id)
        data = asdict(event)
        data["selected_skills"] = list(event.selected_skills)
        data.pop("score_breakdown", None)  # the candidates carry it already
        data = {"event": "route", "table": "route_events", "recorded": recorded, **data}
        return replace(result, events=(data,))


def resolve_backend(name: str, config: RoutingConfig | None = None) -> EmbeddingBackend | None:
    """The embedding backend for a config name; ``"none"`` (or ``"lexical"``) is None."""
    if name in ("none", "lexical", ""):
        return None
    from skillrt.routing.embeddings import get_backend

    return get_backend(name, **backend_options(name, config or RoutingConfig()))


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


def _top(values: Any, k: int) -> list[int]:
    """Indices of the ``k`` largest values, best first (ties: lower index first)."""
    import numpy as np

    n = len(values)
    if n == 0 or k <= 0:
        return []
    if k >= n:
        order = np.argsort(-values, kind="stable")
    else:
        part = np.argpartition(-values, k - 1)[:k]
        order = part[np.lexsort((part, -values[part]))]
    return [int(i) for i in order]


def _kth(values: Any, k: int) -> float:
    """The k-th largest value (the smallest value when there are fewer than k)."""
    import numpy as np

    n = len(values)
    if n == 0:
        return float("inf")
    if k >= n:
        return float(np.min(values))
    return float(np.partition(values, n - k)[n - k])


def _rank_key(c: Choice) -> tuple[float, float, int, float, float, str]:
    # Candidates are listed selected first, then by their whole-query total (a clause
    # total ranks a skill for its clause, not for the request); totals equal to three
    # decimals tie: then cost (R4), success rate, raw evidence.
    cost = {"low": 0, "medium": 1, "high": 2}.get(c.cost_hint, 1)
    fused = c.fused if c.fused == c.fused else -1.0  # NaN: not scored for the query
    return (-round(c.query_total, 3), -round(c.total, 3), cost, -c.success_rate, -fused, c.name)


def _token_rerank(
    tokens: TokenIndex,
    query_tokens: Any,
    rows: NDArray[np.int64],
    fused: NDArray[np.float32],
    weight: float,
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """``fused`` plus ``weight`` x the token-matching score of the best few candidates.

    The rest get the lowest of those scores, so the scale (and the calibration fitted on
    it) is the same for every candidate and the reranked ones keep their lead.
    """
    import numpy as np

    top = _top(fused, TOKEN_RERANK)
    scores = np.nan_to_num(tokens.score(query_tokens, rows[top]), nan=0.0)
    per_row = np.full(len(fused), np.nan, dtype=np.float32)
    per_row[top] = scores
    floor = float(scores.min()) if len(scores) else 0.0
    out = (fused + weight * np.where(np.isnan(per_row), floor, per_row)).astype(np.float32)
    return out, per_row


def _clause_of(words: str, clauses: Sequence[str]) -> int:
    if len(clauses) <= 1:
        return -1
    low = words.lower()
    for n, clause in enumerate(clauses):
        if low and low in clause.lower():
            return n
    return -1


def _routing_reason(
    selected: Sequence[Choice],
    candidates: Sequence[ScoredCandidate],
    threshold: float,
    n_clauses: int,
    notes: Sequence[str],
) -> str:
    parts: list[str] = []
    if selected:
        described = []
        for c in selected:
            if c.forced:
                described.append(f"{c.name} (forced by the user)")
            else:
                described.append(f"{c.name} ({c.total:.2f} >= {threshold:.2f})")
        if len(selected) > 1 and n_clauses > 1:
            parts.append(
                f"{len(selected)} skills cover {n_clauses} request clauses: " + ", ".join(described)
            )
        else:
            parts.append("selected " + ", ".join(described))
    else:
        blocked = [
            c
            for c in candidates
            if c.status in ("unavailable", "disabled", "manual_only", "excluded")
        ]
        best = next((c for c in candidates if c.status not in ("excluded",)), None)
        if not candidates:
            parts.append("no skill: no candidate was recalled")
        elif best is not None and best.status == "below_threshold":
            parts.append(
                f"no skill: the best candidate {best.name} scores {best.score.total:.2f}, "
                f"under the threshold {threshold:.2f}"
            )
        else:
            parts.append("no skill: no candidate passes the threshold")
        if blocked:
            parts.append(
                "blocked: " + "; ".join(f"{c.name} ({c.status}: {c.reason})" for c in blocked[:3])
            )
    parts.extend(notes)
    return "; ".join(parts)
