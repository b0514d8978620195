"""Route a labelled query set and measure it (SPEC E3; seed 001 §14 metrics).

Metrics (fractions in 0..1):

* ``top1`` / ``recall_at_k``: on queries with exactly one expected skill, whether it
  is the first / among the first k candidates of the router's ranking (threshold-free:
  how well the router *ranks*). ``macro_top1`` averages ``top1`` per expected skill.
* ``hit_at_1`` / ``hit_at_3`` / ``hit_at_5``: the same, where the expected skill *or
  any of the query's* ``also_ok`` skills counts as a hit (equal to ``recall_at_k`` on
  data without ``also_ok``).
* ``selected_accuracy``: on the same queries, whether the plan's primary skill (the
  selected skill ranked highest for the whole request; a multi-request plan adds skills
  for single clauses) is the expected one, or one of its ``also_ok`` (a "no skill"
  answer counts as wrong): ranking *and* the threshold. This is CLINC150's "in-scope
  accuracy".
* ``set_precision`` / ``set_recall`` / ``set_f1`` (micro): plan vs expected set on
  queries with several expected skills; ``multi_recall_at_5`` / ``multi_recall_at_10``:
  share of their expected skills in the first 5 / 10 candidates.
* ``no_skill_precision`` / ``no_skill_recall`` / ``no_skill_f1``: "no skill" answers
  vs queries whose expected list is empty.
* What is *injected* (the plan, not the ranking): ``clean_rate`` (single-need queries
  whose plan is not empty and holds only expected or ``also_ok`` skills),
  ``injected_precision`` (planned skills that are expected or ``also_ok``, over every
  skill query), ``mean_injected`` (planned skills per single-need query) and
  ``covered_rate`` (queries with several expected skills whose every part is planned:
  its expected skill, or an ``also_ok`` skill standing in for it).
* Pointers (skills named beside the plan for the user's model, docs/routing.md):
  ``pointer_rate`` (queries with at least one pointer, over all queries),
  ``pointer_precision`` (pointers that are expected or ``also_ok``, over all pointers)
  and ``covered_or_pointed_rate`` (queries with several expected skills whose every
  part is planned or pointed to, as ``covered_rate`` counts them).
* ``by_style``: these metrics (and ``hit_at_5``) per query ``style`` (a key of the query
  lines, such as ``short``, ``long``, ``multi-short``, ``single-crowded``, ``no-skill``).
* ``latency_ms``: the router's own time per query with the query vector given (all
  queries are embedded up front, in batches); ``embed_ms_per_query`` is that batch
  embedding time divided by the number of queries.

Eval never records telemetry and never reads skill stats (no cold start): it measures
the routing model, not one installation's history.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillrt.eval.datasets import LabelledQuery
from skillrt.routing.plan import RouteResult
from skillrt.routing.router import Router

__all__ = ["EvalReport", "QueryOutcome", "evaluate", "percentile"]

Progress = Callable[[int, int], None]
EMBED_BATCH = 64
CONFUSION_TOP = 10
#: Candidates kept per outcome (recall@10 needs ten).
RANKING_KEPT = 10


@dataclass(frozen=True)
class QueryOutcome:
    """One routed query: what was expected, what the router ranked and selected."""

    query: str
    expected: tuple[str, ...]
    selected: tuple[str, ...]
    ranking: tuple[str, ...]
    latency_ms: float
    also_ok: tuple[str, ...] = ()
    #: Each ranked candidate's total score, aligned with ``ranking``.
    scores: tuple[float, ...] = ()
    #: The query line's ``style`` ("" when it has none).
    style: str = ""
    #: The skills the route pointed to beside its plan (best first).
    pointers: tuple[str, ...] = ()

    def hit_at(self, k: int) -> bool:
        """The expected skill (or an ``also_ok`` one) is among the first ``k`` ranked."""
        right = {*self.expected, *self.also_ok}
        return any(name in right for name in self.ranking[:k])

    @property
    def injected(self) -> int:
        """How many skills the plan injects."""
        return len(self.selected)

    @property
    def right_injected(self) -> int:
        """Planned skills that are expected or ``also_ok``."""
        right = {*self.expected, *self.also_ok}
        return sum(name in right for name in self.selected)

    @property
    def clean(self) -> bool | None:
        """A skill query's plan is not empty and holds only right skills (None: a
        no-skill query, whose right answer is the empty plan)."""
        if not self.expected:
            return None
        return bool(self.selected) and self.right_injected == len(self.selected)

    @property
    def covered(self) -> bool | None:
        """Every expected part is planned, as itself or through an ``also_ok`` skill
        standing in for it (None: fewer than two expected skills)."""
        if len(self.expected) < 2:
            return None
        return _covers(set(self.selected), self.expected, self.also_ok)

    @property
    def covered_or_pointed(self) -> bool | None:
        """Every expected part is planned or pointed to (None: fewer than two expected)."""
        if len(self.expected) < 2:
            return None
        return _covers({*self.selected, *self.pointers}, self.expected, self.also_ok)

    @property
    def right_pointers(self) -> int:
        """Pointers to skills that are expected or ``also_ok``."""
        right = {*self.expected, *self.also_ok}
        return sum(name in right for name in self.pointers)

    def to_dict(self) -> dict[str, Any]:
        """The ``--per-query`` line: every field, so a person can read each miss."""
        return {
            "query": self.query,
            "expected": list(self.expected),
            "also_ok": list(self.also_ok),
            "ranking": list(self.ranking),
            "scores": [round(s, 4) for s in self.scores],
            "selected": list(self.selected),
            "style": self.style,
            "hit_at_1": self.hit_at(1) if self.expected else None,
            "clean": self.clean,
            "injected": self.injected,
            "covered": self.covered,
            "pointers": list(self.pointers),
            "latency_ms": round(self.latency_ms, 3),
        }


def _covers(planned: set[str], expected: Sequence[str], also_ok: Sequence[str]) -> bool:
    """Each expected part is in ``planned``, or an ``also_ok`` skill stands in for it."""
    missing = sum(name not in planned for name in expected)
    stand_ins = sum(name in planned for name in also_ok if name not in expected)
    return stand_ins >= missing


@dataclass(frozen=True)
class Confusion:
    expected: str
    predicted: str
    count: int


@dataclass(frozen=True)
class EvalReport:
    """What ``skillrt eval --json`` prints (see the module docstring for definitions)."""

    top1: float | None
    recall_at_1: float | None
    recall_at_3: float | None
    recall_at_5: float | None
    hit_at_1: float | None
    hit_at_3: float | None
    hit_at_5: float | None
    macro_top1: float | None
    selected_accuracy: float | None
    set_precision: float | None
    set_recall: float | None
    set_f1: float | None
    multi_recall_at_5: float | None
    multi_recall_at_10: float | None
    no_skill_precision: float | None
    no_skill_recall: float | None
    no_skill_f1: float | None
    clean_rate: float | None
    injected_precision: float | None
    mean_injected: float | None
    covered_rate: float | None
    pointer_rate: float | None
    pointer_precision: float | None
    covered_or_pointed_rate: float | None
    latency_ms: dict[str, float]
    embed_ms_per_query: float
    counts: dict[str, int]
    confusion: tuple[Confusion, ...]
    backend: str
    catalog_size: int
    threshold: float
    #: Per query style: ``queries``, ``hit_at_1``, ``clean_rate``, ``mean_injected``,
    #: ``injected_precision``, ``covered_rate``, ``no_skill_recall`` (None: not defined
    #: for that style's queries).
    by_style: dict[str, dict[str, float | None]] = field(default_factory=dict)
    outcomes: tuple[QueryOutcome, ...] = field(default=(), repr=False)

    def to_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        data = asdict(self)
        data.pop("outcomes")
        return data


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _f1(p: float | None, r: float | None) -> float | None:
    if p is None or r is None:
        return None
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def evaluate(
    router: Router,
    queries: Sequence[LabelledQuery],
    *,
    progress: Progress | None = None,
    keep_outcomes: bool = False,
    route: Callable[..., RouteResult] | None = None,
) -> EvalReport:
    """Route every query (within its ``candidates`` when given) and compute the metrics."""
    vectors: list[Any] = [None] * len(queries)
    embed_total = 0.0
    backend = router.index.backend
    # With token matching each route needs the query's token states, which only its own
    # run gives; otherwise vectors are embedded up front (the same vectors, batched).
    if (
        backend is not None
        and router.index.semantic is not None
        and router.index.tokens is None
        and queries
    ):
        texts = [q.query for q in queries]
        started = time.perf_counter()
        for start in range(0, len(texts), EMBED_BATCH):
            batch = backend.embed_queries(texts[start : start + EMBED_BATCH])
            vectors[start : start + len(batch)] = list(batch)
        embed_total = (time.perf_counter() - started) * 1000.0
    route_fn = route or router.route

    outcomes: list[QueryOutcome] = []
    for n, q in enumerate(queries):
        result = route_fn(q.query, candidates=q.candidates, query_vector=vectors[n], surface="eval")
        # The plan's primary skill first (the one chosen for the whole request), then the
        # rest in plan order.
        names = result.plan.names
        primary = result.plan.primary
        if primary is not None and len(names) > 1:
            names = (primary, *(n for n in names if n != primary))
        ranked = result.candidates[:RANKING_KEPT]
        outcomes.append(
            QueryOutcome(
                query=q.query,
                expected=q.expected,
                selected=names,
                ranking=tuple(c.name for c in ranked),
                latency_ms=result.latency_ms,
                also_ok=q.also_ok,
                scores=tuple(c.score.total for c in ranked),
                style=str(q.meta.get("style") or ""),
                pointers=tuple(p.name for p in result.pointers),
            )
        )
        if progress is not None:
            progress(n + 1, len(queries))
    return summarise(
        outcomes,
        embed_ms_per_query=embed_total / len(queries) if queries else 0.0,
        backend=router.index.model_id,
        catalog_size=len(router.index),
        threshold=router.config.selection_threshold,
        with_candidates=sum(q.candidates is not None for q in queries),
        keep_outcomes=keep_outcomes,
    )


def summarise(
    outcomes: Sequence[QueryOutcome],
    *,
    embed_ms_per_query: float = 0.0,
    backend: str = "",
    catalog_size: int = 0,
    threshold: float = 0.0,
    with_candidates: int = 0,
    keep_outcomes: bool = False,
) -> EvalReport:
    """Metrics over routed outcomes (pure; exposed for tests and custom loops)."""
    single = [o for o in outcomes if len(o.expected) == 1]
    multi = [o for o in outcomes if len(o.expected) > 1]
    none = [o for o in outcomes if not o.expected]

    hits = {1: 0, 3: 0, 5: 0}
    lenient = {1: 0, 3: 0, 5: 0}
    selected_ok = 0
    per_skill: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for o in single:
        e = o.expected[0]
        for k in hits:
            hits[k] += e in o.ranking[:k]
            lenient[k] += o.hit_at(k)
        per_skill[e][0] += bool(o.ranking[:1] == (e,))
        per_skill[e][1] += 1
        selected_ok += bool(o.selected) and o.selected[0] in (e, *o.also_ok)

    inter = pred = gold = 0
    recall5: list[float] = []
    recall10: list[float] = []
    for o in multi:
        exp = set(o.expected)
        inter += len(exp & set(o.selected))
        pred += len(set(o.selected))
        gold += len(exp)
        recall5.append(len(exp & set(o.ranking[:5])) / len(exp))
        recall10.append(len(exp & set(o.ranking[:10])) / len(exp))
    set_p = _ratio(inter, pred) if multi else None
    set_r = _ratio(inter, gold) if multi else None

    predicted_none = [o for o in outcomes if not o.selected]
    tp = sum(1 for o in predicted_none if not o.expected)
    ns_p = _ratio(tp, len(predicted_none)) if none or predicted_none else None
    ns_r = _ratio(tp, len(none)) if none else None

    confusion: Counter[tuple[str, str]] = Counter()
    for o in outcomes:
        if len(o.expected) > 1:
            continue
        e = o.expected[0] if o.expected else "(none)"
        p = o.selected[0] if o.selected else "(none)"
        if e != p and p not in o.also_ok:
            confusion[(e, p)] += 1

    latencies = [o.latency_ms for o in outcomes]
    n_single = len(single)
    injection = injection_metrics(outcomes)
    styles = sorted({o.style for o in outcomes if o.style})
    return EvalReport(
        top1=_ratio(hits[1], n_single),
        recall_at_1=_ratio(hits[1], n_single),
        recall_at_3=_ratio(hits[3], n_single),
        recall_at_5=_ratio(hits[5], n_single),
        hit_at_1=_ratio(lenient[1], n_single),
        hit_at_3=_ratio(lenient[3], n_single),
        hit_at_5=_ratio(lenient[5], n_single),
        macro_top1=(
            statistics.fmean(ok / total for ok, total in per_skill.values()) if per_skill else None
        ),
        selected_accuracy=_ratio(selected_ok, n_single),
        set_precision=set_p,
        set_recall=set_r,
        set_f1=_f1(set_p, set_r) if multi else None,
        multi_recall_at_5=statistics.fmean(recall5) if recall5 else None,
        multi_recall_at_10=statistics.fmean(recall10) if recall10 else None,
        no_skill_precision=ns_p,
        no_skill_recall=ns_r,
        no_skill_f1=_f1(ns_p, ns_r) if none else None,
        **injection,
        latency_ms={
            "p50": round(percentile(latencies, 50), 3),
            "p95": round(percentile(latencies, 95), 3),
            "mean": round(statistics.fmean(latencies), 3) if latencies else 0.0,
            "max": round(max(latencies), 3) if latencies else 0.0,
        },
        embed_ms_per_query=round(embed_ms_per_query, 3),
        counts={
            "queries": len(outcomes),
            "single": n_single,
            "multi": len(multi),
            "no_skill": len(none),
            "predicted_no_skill": len(predicted_none),
            "with_candidates": with_candidates,
        },
        confusion=tuple(Confusion(e, p, n) for (e, p), n in confusion.most_common(CONFUSION_TOP)),
        backend=backend,
        catalog_size=catalog_size,
        threshold=threshold,
        by_style={
            style: style_metrics([o for o in outcomes if o.style == style]) for style in styles
        },
        outcomes=tuple(outcomes) if keep_outcomes else (),
    )


def injection_metrics(outcomes: Sequence[QueryOutcome]) -> dict[str, float | None]:
    """``clean_rate``, ``injected_precision``, ``mean_injected`` and ``covered_rate``
    (see the module docstring) over ``outcomes``."""
    single = [o for o in outcomes if len(o.expected) == 1]
    wanted = [o for o in outcomes if o.expected]
    multi = [o for o in outcomes if len(o.expected) > 1]
    planned = sum(o.injected for o in wanted)
    pointed = sum(len(o.pointers) for o in outcomes)
    return {
        "clean_rate": _ratio(sum(bool(o.clean) for o in single), len(single)),
        "injected_precision": _ratio(sum(o.right_injected for o in wanted), planned),
        "mean_injected": _ratio(sum(o.injected for o in single), len(single)),
        "covered_rate": _ratio(sum(bool(o.covered) for o in multi), len(multi)),
        "pointer_rate": _ratio(sum(bool(o.pointers) for o in outcomes), len(outcomes)),
        "pointer_precision": _ratio(sum(o.right_pointers for o in outcomes), pointed),
        "covered_or_pointed_rate": _ratio(
            sum(bool(o.covered_or_pointed) for o in multi), len(multi)
        ),
    }


def style_metrics(outcomes: Sequence[QueryOutcome]) -> dict[str, float | None]:
    """The injection and pointer metrics, hit@1 and no-skill recall of one group of
    queries."""
    wanted = [o for o in outcomes if o.expected]
    none = [o for o in outcomes if not o.expected]
    return {
        "queries": float(len(outcomes)),
        "hit_at_1": _ratio(sum(o.hit_at(1) for o in wanted), len(wanted)),
        "hit_at_5": _ratio(sum(o.hit_at(5) for o in wanted), len(wanted)),
        **injection_metrics(outcomes),
        "no_skill_recall": _ratio(sum(not o.selected for o in none), len(none)),
    }
