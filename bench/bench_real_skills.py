"""Routing real SKILL.md skills (bodies included): skillrt against plain baselines.

    python bench/bench_real_skills.py [--datasets DIR] [--corpora DIR] [--queries FILE]
                                      [--cache DIR] [--per-query FILE]

Over the real-skills dev catalogue (213 real skills, bodies read from ``--corpora``) and
its dev requests (``bench/data/real-skills-dev.queries.jsonl``), in one run:

* **skillrt**: the router as shipped (fields, section vectors, rerank, calibrated
  threshold), each query routed on its own, query embedding included;
* **BM25 (name + description)**: plain BM25 (lowercase word tokens, no stemming) over
  each skill's name and description;
* **MiniLM cosine (name + description)**: the same encoder, cosine of the query with
  "name: description" (the usual semantic router).

It prints hit@1/3/5 (the expected skill or an ``also_ok`` one within the first k),
selected accuracy (the plan's primary skill is right; baselines always select their top
skill, so they never answer "no skill"), no-skill precision and recall, what is
*injected* (clean rate, injected precision, skills per one-need request, two-need
requests covered: ``skillrt.eval.harness``'s definitions; a baseline injects its top
skill), and p50/p95 latency per request, with each baseline's figures as a ratio of
skillrt's; then skillrt's figures per request style (``short``, ``long``,
``single-crowded``, ``multi-short``, ``multi-long``, ``no-skill``).

``--distractors N`` adds N generated skills (``bench/gen_skills.py``, seed 0, as a
JSONL catalogue) to the real ones: the decision must keep its meaning as a catalogue
grows (clean rate and no-skill recall within 5 points of the plain catalogue's).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # dev_data, gen_skills
from dev_data import ALL_REAL_QUERIES, add_data_arguments, queries_of, real_skills

from skillrt.config import RoutingConfig
from skillrt.eval.datasets import LabelledQuery, load_catalog
from skillrt.eval.harness import QueryOutcome, injection_metrics, percentile, style_metrics
from skillrt.routing.plan import RouteResult
from skillrt.routing.router import Router
from skillrt.routing.semantic import document_text
from skillrt.store import open_location

EVAL_CFG = RoutingConfig(use_stats=False, cold_start=False)
_WORD = re.compile(r"\w+")


@dataclass
class Run:
    """One method's answers: per query its ranking, its selection and its latency."""

    name: str
    rankings: list[list[str]] = field(default_factory=list)
    selected: list[str | None] = field(default_factory=list)
    #: Every skill the plan injects, the primary first.
    plans: list[tuple[str, ...]] = field(default_factory=list)
    #: The skills each route pointed to beside its plan.
    pointers: list[tuple[str, ...]] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)

    def record(self, result: RouteResult, ms: float) -> None:
        """One route's answer: its first five, its plan (the primary first), its
        pointers, and how long it took."""
        self.latency_ms.append(ms)
        self.rankings.append([c.name for c in result.candidates[:5]])
        plan, primary = result.plan.names, result.plan.primary
        self.selected.append(primary)
        self.plans.append(() if primary is None else (primary, *(n for n in plan if n != primary)))
        self.pointers.append(tuple(p.name for p in result.pointers))

    def outcomes(self, queries: list[LabelledQuery]) -> list[QueryOutcome]:
        return [
            QueryOutcome(
                q.query,
                q.expected,
                plan,
                tuple(ranking),
                ms,
                q.also_ok,
                (),
                str(q.meta.get("style") or ""),
                pointers,
            )  # fmt: skip
            for q, plan, ranking, ms, pointers in zip(
                queries,
                self.plans,
                self.rankings,
                self.latency_ms,
                self.pointers or [()] * len(queries),
                strict=True,
            )
        ]

    def metrics(self, queries: list[LabelledQuery]) -> dict[str, float]:
        hits = {1: 0, 3: 0, 5: 0}
        chosen_ok = n = 0
        none_tp = none_pred = none_gold = 0
        for q, ranking, sel in zip(queries, self.rankings, self.selected, strict=True):
            right = {*q.expected, *q.also_ok}
            if sel is None:
                none_pred += 1
            if not q.expected:
                none_gold += 1
                none_tp += sel is None
                continue
            n += 1
            for k in hits:
                hits[k] += any(name in right for name in ranking[:k])
            chosen_ok += sel in right
        injected = injection_metrics(self.outcomes(queries))
        return {
            "hit@1": hits[1] / n,
            "hit@3": hits[3] / n,
            "hit@5": hits[5] / n,
            "selected": chosen_ok / n,
            "no-skill P": none_tp / none_pred if none_pred else 0.0,
            "no-skill R": none_tp / none_gold if none_gold else 0.0,
            "clean": injected["clean_rate"] or 0.0,
            "inj. prec": injected["injected_precision"] or 0.0,
            "injected": injected["mean_injected"] or 0.0,
            "covered": injected["covered_rate"] or 0.0,
            "cov|ptd": injected["covered_or_pointed_rate"] or 0.0,
            "ptr rate": injected["pointer_rate"] or 0.0,
            "ptr prec": injected["pointer_precision"] or 0.0,
            "p50 ms": statistics.median(self.latency_ms),
            "p95 ms": percentile(self.latency_ms, 95),
        }


def run_skillrt(router: Router, queries: list[LabelledQuery]) -> Run:
    run = Run("skillrt")
    router.route("warm up the router and its caches")
    for q in queries:
        started = time.perf_counter()
        result = router.route(q.query, surface="eval")
        run.record(result, (time.perf_counter() - started) * 1000.0)
    return run


def run_bm25(router: Router, queries: list[LabelledQuery]) -> Run:
    skills = router.index.skills
    names = router.index.names
    texts = [_WORD.findall(document_text(s).lower()) for s in skills]
    n = len(texts)
    avg = sum(map(len, texts)) / n
    df = Counter(w for t in texts for w in set(t))
    tfs = [Counter(t) for t in texts]
    run = Run("BM25 (name + description)")
    for q in queries:
        started = time.perf_counter()
        scores = np.zeros(n)
        for w in set(_WORD.findall(q.query.lower())):
            if w not in df:
                continue
            idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
            for d in range(n):
                f = tfs[d].get(w)
                if f:
                    scores[d] += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len(texts[d]) / avg))
        order = np.argsort(-scores, kind="stable")[:5]
        run.latency_ms.append((time.perf_counter() - started) * 1000.0)
        run.rankings.append([names[i] for i in order])
        run.selected.append(names[int(order[0])])
        run.plans.append((names[int(order[0])],))
    return run


def run_cosine(router: Router, queries: list[LabelledQuery]) -> Run:
    index = router.index
    assert index.semantic is not None and index.backend is not None
    docs = index.semantic.doc_vectors
    run = Run("MiniLM cosine (name + description)")
    backend = index.backend
    backend.embed_query("warm up")
    for q in queries:
        started = time.perf_counter()
        scores = docs @ backend.embed_query(q.query)
        order = np.argsort(-scores, kind="stable")[:5]
        run.latency_ms.append((time.perf_counter() - started) * 1000.0)
        run.rankings.append([index.names[i] for i in order])
        run.selected.append(index.names[int(order[0])])
        run.plans.append((index.names[int(order[0])],))
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_data_arguments(ap)
    ap.add_argument(
        "--queries", type=Path, action="append", help="query files (default: both dev files)"
    )
    ap.add_argument("--per-query", type=Path, help="write skillrt's answers, one JSON line each")
    ap.add_argument(
        "--distractors", type=int, default=0, help="add N generated skills to the catalogue"
    )
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    skills = real_skills(args.datasets, args.corpora)
    if args.distractors:
        from gen_skills import iter_specs, write_jsonl

        extra = args.cache / f"distractors-{args.distractors}.jsonl"
        if not extra.exists():
            write_jsonl(extra, iter_specs(args.distractors, seed=0))
        skills = [*skills, *load_catalog(extra)]
    queries = queries_of(args.queries or ALL_REAL_QUERIES)
    store = open_location(args.cache / "vectors.db")
    started = time.perf_counter()
    router = Router.from_skills(skills, EVAL_CFG, store=store, backend="onnx-minilm")
    print(
        f"{len(skills)} real skills ({sum(bool(f.sections) for f in router.index.fields)} with "
        f"bodies), {len(queries)} requests; index built in {time.perf_counter() - started:.1f} s"
    )
    runs = [run_skillrt(router, queries), run_bm25(router, queries), run_cosine(router, queries)]
    table = {r.name: r.metrics(queries) for r in runs}
    keys = list(table["skillrt"])
    print(f"\n{'method':38s} " + " ".join(f"{k:>10s}" for k in keys))
    for name, row in table.items():
        print(f"{name:38s} " + " ".join(f"{row[k]:10.3f}" for k in keys))
    ours = table["skillrt"]
    for name, row in list(table.items())[1:]:
        ratio = ", ".join(
            f"{k} {row[k] / ours[k]:.2f}x" for k in ("hit@1", "hit@5", "p95 ms") if ours[k]
        )
        print(f"  {name} / skillrt: {ratio}")
    outcomes = runs[0].outcomes(queries)
    styles = sorted({o.style for o in outcomes if o.style})
    if styles:
        columns = ["hit_at_1", "hit_at_5", "clean_rate", "mean_injected", "injected_precision"]
        columns += ["covered_rate", "no_skill_recall", "pointer_rate", "pointer_precision"]
        columns += ["covered_or_pointed_rate"]
        print(
            f"\nskillrt by request style\n{'style':16s} {'n':>4s} "
            + " ".join(f"{c:>18s}" for c in columns)
        )
        for style in styles:
            m = style_metrics([o for o in outcomes if o.style == style])
            cells = " ".join(
                "{:>18s}".format("-" if m[c] is None else f"{m[c]:.3f}") for c in columns
            )
            print(f"{style:16s} {m['queries']:4.0f} {cells}")
    if args.per_query:
        with args.per_query.open("w", encoding="utf-8") as fh:
            run = runs[0]
            for q, o, sel in zip(queries, run.outcomes(queries), run.selected, strict=True):
                line = {"query": q.query, "expected": list(q.expected), "also_ok": list(q.also_ok)}
                line.update({"style": o.style, "ranking": list(o.ranking), "selected": sel})
                line.update({"plan": list(o.selected), "pointers": list(o.pointers)})
                line["latency_ms"] = round(o.latency_ms, 3)
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    store.close()


if __name__ == "__main__":
    main()
