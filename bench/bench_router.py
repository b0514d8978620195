"""Router accuracy on the benchmark DEV splits, warm latency at 1k/10k skills, cold CLI.

    python bench/bench_router.py [--datasets DIR] [--cache DIR] [--limit N]
                                 [--sizes 1000,10000] [--skip-accuracy] [--skip-latency]

Accuracy: ``skillrt eval`` metrics per benchmark (dev split, full catalogue; BFCL within
each query's candidates), next to the two baselines of the issue on MetaTool: plain
MiniLM cosine over "name: description" and plain BM25 (lowercase word tokens, no
stemming, no stopwords) over the same text.

Latency: a warm process, distinct queries (no cache hits), query embedding included,
route events not recorded (``--record`` to include them); plus the lexical-only mode.
Cold: whole ``skillrt route`` processes over 1,000 skills whose index and vectors are
already cached in the state store.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import skillrt  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(HERE.parent / "src"))

from gen_skills import OBJECTS, VERBS, generate_catalogue, iter_specs, write_jsonl  # noqa: E402

from skillrt.config import RoutingConfig  # noqa: E402
from skillrt.eval.datasets import load_catalog, load_queries  # noqa: E402
from skillrt.eval.harness import evaluate, percentile  # noqa: E402
from skillrt.routing.router import Router  # noqa: E402
from skillrt.routing.semantic import document_text  # noqa: E402
from skillrt.routing.text import split_clauses  # noqa: E402
from skillrt.store.sqlite import Store  # noqa: E402

DEFAULT_DATASETS = HERE.parent.parent / "shared" / "datasets"
DATASETS = ("metatool", "clinc150", "seal-tools", "bfcl")
EVAL_CFG = RoutingConfig(use_stats=False, cold_start=False)


def fmt(v: float | None) -> str:
    return "  -  " if v is None else f"{v:.3f}"


# -- accuracy -----------------------------------------------------------------------------
def baselines(root: Path, store: Store, limit: int | None) -> dict[str, tuple[float, float]]:
    """MetaTool top-1 / top-5 of plain cosine and plain BM25 over name + description."""
    skills = load_catalog(root / "metatool" / "skills.jsonl")
    queries = load_queries(root / "metatool" / "queries.dev.jsonl", limit=limit)
    single = [q for q in queries if len(q.expected) == 1]
    names = [s.qualified_name for s in skills]
    gold = np.asarray([names.index(q.expected[0]) for q in single])
    router = Router.from_skills(skills, EVAL_CFG, store=store, backend="onnx-minilm")
    assert router.index.semantic is not None and router.index.backend is not None
    docs = router.index.semantic.doc_vectors
    qv = router.index.backend.embed_queries([q.query for q in single])
    cos = qv @ docs.T
    out = {"MiniLM cosine (name: description)": _topk(cos, gold)}
    tok = re.compile(r"\w+")
    texts = [tok.findall(document_text(s).lower()) for s in skills]
    n = len(texts)
    avg = sum(map(len, texts)) / n
    df = Counter(w for t in texts for w in set(t))
    tfs = [Counter(t) for t in texts]
    scores = np.zeros((len(single), n))
    for qi, q in enumerate(single):
        for w in set(tok.findall(q.query.lower())):
            if w not in df:
                continue
            idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
            for d in range(n):
                f = tfs[d].get(w)
                if f:
                    scores[qi, d] += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * len(texts[d]) / avg))
    out["BM25 (name + description)"] = _topk(scores, gold)
    return out


def _topk(scores: np.ndarray, gold: np.ndarray) -> tuple[float, float]:
    order = np.argsort(-scores, axis=1, kind="stable")
    return float(np.mean(order[:, 0] == gold)), float(
        np.mean((order[:, :5] == gold[:, None]).any(1))
    )


def accuracy(root: Path, cache: Path, limit: int | None) -> None:
    store = Store(cache / "vectors.db")
    print("## Accuracy (dev splits; full catalogue; BFCL within per-query candidates)")
    print(
        f"{'dataset':11s} {'skills':>6s} {'queries':>7s}  top1  r@3   r@5   sel.acc "
        "ns-P  ns-R  ns-F1 multi-r@5 route-p50 route-p95 (ms)"
    )
    for name in DATASETS:
        skills = load_catalog(root / name / "skills.jsonl")
        queries = load_queries(root / name / "queries.dev.jsonl", limit=limit)
        router = Router.from_skills(skills, EVAL_CFG, store=store, backend="onnx-minilm")
        r = evaluate(router, queries)
        print(
            f"{name:11s} {len(skills):6d} {len(queries):7d} {fmt(r.top1)} {fmt(r.recall_at_3)} "
            f"{fmt(r.recall_at_5)} {fmt(r.selected_accuracy)}   {fmt(r.no_skill_precision)} "
            f"{fmt(r.no_skill_recall)} {fmt(r.no_skill_f1)} {fmt(r.multi_recall_at_5)}     "
            f"{r.latency_ms['p50']:.2f}      {r.latency_ms['p95']:.2f}"
        )
    print("\nMetaTool baselines (top-1 / top-5), same dev queries:")
    for label, (t1, t5) in baselines(root, store, limit).items():
        print(f"  {label:36s} {t1:.3f} / {t5:.3f}")
    store.close()


# -- latency ------------------------------------------------------------------------------
def synthetic_queries(n: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    frames = (
        "please {v} the {o} for the team",
        "can you {v} {o} before friday",
        "I need to {v} our {o} and send a summary",
        "{v} {o} quickly, ticket {n}",
        "help me {v} these {o} from the last sprint",
    )
    return [
        rng.choice(frames).format(v=rng.choice(VERBS), o=rng.choice(OBJECTS), n=i) for i in range(n)
    ]


def latency(sizes: list[int], cache: Path, record: bool) -> None:
    print("\n## Warm latency (distinct queries, query embedding included)")
    queries = synthetic_queries(300)
    for n in sizes:
        path = cache / f"synthetic-{n}.jsonl"
        if not path.exists():
            write_jsonl(path, iter_specs(n, seed=0, flat=True))
        skills = load_catalog(path)
        store = Store(cache / "vectors.db")
        for backend in ("onnx-minilm", None):
            started = time.perf_counter()
            router = Router.from_skills(
                skills, RoutingConfig(), store=store, backend=backend, record=record, env={}
            )
            build = time.perf_counter() - started
            for q in queries[:20]:  # warm-up (thread pools, caches)
                router.route(q + " warm")
            single, multi = [], []
            for q in queries:
                t = time.perf_counter()
                router.route(q)
                ms = (time.perf_counter() - t) * 1000
                (multi if len(split_clauses(q)) > 1 else single).append(ms)
            label = "lexical-only"
            if backend:
                label = "semantic+lexical" + ("+tokens" if router.index.tokens else "")
            print(
                f"  {n:6d} skills {label:24s} one-request queries p50 "
                f"{percentile(single, 50):6.2f} ms p95 {percentile(single, 95):6.2f} ms | "
                f"multi-request p50 {percentile(multi, 50):6.2f} p95 {percentile(multi, 95):6.2f} "
                f"| all p95 {percentile(single + multi, 95):6.2f}  (build {build:.1f} s)"
            )
        store.close()
    from skillrt.routing.embeddings import get_backend

    backend = get_backend("onnx-minilm")
    times = []
    for q in queries:
        t = time.perf_counter()
        backend.embed_query(q + " x")
        times.append((time.perf_counter() - t) * 1000)
    print(
        f"  query embedding alone: p50 {percentile(times, 50):.2f} ms  "
        f"p95 {percentile(times, 95):.2f} ms"
    )


def cold_cli(cache: Path, runs: int = 5) -> None:
    print("\n## Cold `skillrt route` over 1,000 cached skills (whole process)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "skills"
        generate_catalogue(root, 1000, seed=0)
        state = Path(tmp) / "state"
        cmd = [
            sys.executable,
            "-m",
            "skillrt",
            "route",
            "please review the pull requests for the team",
            "--root",
            str(root),
            "--state",
            str(state),
            "--json",
        ]
        env = {**os.environ, "HOME": tmp}
        subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=tmp)  # fill caches
        walls = []
        for _ in range(runs):
            t = time.perf_counter()
            proc = subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=tmp)
            walls.append((time.perf_counter() - t) * 1000)
        data: Any = json.loads(proc.stdout)
        print(
            f"  wall: median {statistics.median(walls):.0f} ms, min {min(walls):.0f} ms "
            f"over {runs} runs; plan {list(data['plan']['skills'][0].values())[:1]}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    ap.add_argument("--cache", type=Path, default=Path(".bench-cache"))
    ap.add_argument("--limit", type=int, default=None, help="dev queries per dataset")
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--record", action="store_true", help="record route events while timing")
    ap.add_argument("--skip-accuracy", action="store_true")
    ap.add_argument("--skip-latency", action="store_true")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    if not args.skip_accuracy:
        accuracy(args.datasets, args.cache, args.limit)
    if not args.skip_latency:
        latency([int(s) for s in args.sizes.split(",")], args.cache, args.record)
        cold_cli(args.cache)


if __name__ == "__main__":
    main()
