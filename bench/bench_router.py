"""Router accuracy on the benchmark DEV splits, warm latency on real and generated skills
with bodies, and the cold CLI.

    python bench/bench_router.py [--datasets DIR] [--cache DIR] [--limit N]
                                 [--real 1000] [--synthetic 10000]
                                 [--skip-accuracy] [--skip-latency]

Accuracy: ``skillrt eval`` metrics per benchmark (dev split, full catalogue; BFCL within
each query's candidates), next to the two baselines of the issue on MetaTool: plain
MiniLM cosine over "name: description" and plain BM25 (lowercase word tokens, no
stemming, no stopwords) over the same text.

Latency: a warm process, distinct queries (no cache hits), query embedding included,
route events not recorded: ``--real`` real SKILL.md skills with bodies
(``bench/real_catalogue.py``: the shared corpora, then remixes) routed with the
real-skills dev requests (short and long), and ``--synthetic`` generated skills with
bodies (``bench/gen_skills.py``) routed with short synthetic requests, semantic and
lexical-only, with the memory the vectors hold. The first run embeds every skill text
(minutes at 10,000; cached in ``--cache`` afterwards). Cold: whole ``skillrt route``
processes over 1,000 real skills whose vectors are cached (the first run reads every body,
builds the index and saves it; the next ones load it).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import shutil
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

from gen_skills import OBJECTS, VERBS, generate_roots  # noqa: E402

from skillrt.config import RoutingConfig  # noqa: E402
from skillrt.eval.datasets import load_catalog, load_queries  # noqa: E402
from skillrt.eval.harness import evaluate, percentile  # noqa: E402
from skillrt.routing.router import Router  # noqa: E402
from skillrt.routing.semantic import document_text  # noqa: E402
from skillrt.store import Store, open_location  # noqa: E402

DEFAULT_DATASETS = HERE.parent.parent / "shared" / "datasets"
DATASETS = ("metatool", "clinc150", "seal-tools", "bfcl")
REAL_QUERIES = HERE / "data" / "real-skills-dev.queries.jsonl"
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
    store = open_location(cache / "vectors.db")
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


def _tree_skills(*roots: Path) -> list[Any]:
    from skillrt.config import DiscoveryConfig, RootConfig
    from skillrt.skills.registry import SkillRegistry

    registry = SkillRegistry.discover(
        DiscoveryConfig(conventional_roots=False),
        project_dir=roots[0],
        store=None,
        explicit_roots=tuple(RootConfig(r, scope="flag") for r in roots),
    )
    return registry.skills()


def _timed(router: Router, queries: list[str]) -> list[float]:
    for q in synthetic_queries(20, seed=7):  # warm-up (thread pools, caches)
        router.route(q + " warm")
    out = []
    for q in queries:
        t = time.perf_counter()
        router.route(q)
        out.append((time.perf_counter() - t) * 1000)
    return out


def _line(label: str, times: list[float]) -> str:
    return (
        f"  {label:44s} p50 {percentile(times, 50):6.2f} ms  p95 {percentile(times, 95):6.2f} ms"
        f"  ({len(times)} requests)"
    )


def latency_real(size: int, cache: Path) -> None:
    """Real SKILL.md skills with bodies, routed with the real-skills dev requests."""
    from real_catalogue import build_real_catalogue

    print(f"\n## Warm latency, {size:,} real skills with bodies (query embedding included)")
    root = cache / f"real-{size}"
    if not root.exists():
        build_real_catalogue(root, size)
    skills = _tree_skills(root)
    store = open_location(cache / "vectors.db")
    started = time.perf_counter()
    router = Router.from_skills(skills, EVAL_CFG, store=store, backend="onnx-minilm")
    build = time.perf_counter() - started
    rows = [json.loads(line) for line in REAL_QUERIES.open(encoding="utf-8") if line.strip()]
    by_style: dict[str, list[float]] = {}
    times = _timed(router, [r["query"] for r in rows])
    for r, ms in zip(rows, times, strict=True):
        by_style.setdefault(r["style"], []).append(ms)
    sem = router.index.semantic
    assert sem is not None
    print(
        f"  {len(skills)} skills, {len(sem.section_vectors)} section vectors, "
        f"index built in {build:.1f} s (cached)"
    )
    print(_line("all requests", times))
    for style, values in sorted(by_style.items()):
        print(_line(f"{style} requests", values))
    store.close()


def latency_synthetic(size: int, cache: Path) -> None:
    """Generated skills with bodies (bench/gen_skills.py), short synthetic requests."""
    print(f"\n## Warm latency, {size:,} generated skills with bodies (query embedding included)")
    base = cache / f"gen-{size}"
    if not base.exists():
        generate_roots(base, size, seed=0)  # roots of 1,000: S3 caps a root at 2,000 folders
    skills = _tree_skills(*sorted(p for p in base.iterdir() if p.is_dir()))
    store = open_location(cache / "vectors.db")
    queries = synthetic_queries(300)
    for backend in ("onnx-minilm", None):
        started = time.perf_counter()
        router = Router.from_skills(skills, EVAL_CFG, store=store, backend=backend)
        build = time.perf_counter() - started
        times = _timed(router, queries)
        sem = router.index.semantic
        label = "lexical only"
        if sem is not None:
            label = "semantic+lexical" + ("+tokens" if router.index.tokens else "")
            held = sem.doc_vectors.nbytes + sem.part_vectors.nbytes + sem.section_vectors.nbytes
            print(
                f"  {len(skills)} skills: {len(sem.section_vectors)} section vectors = "
                f"{sem.section_vectors.nbytes / 1e6:.0f} MB; all vectors {held / 1e6:.0f} MB "
                f"(index built in {build:.1f} s)"
            )
        print(_line(label, times))
    store.close()


def query_embedding() -> None:
    from skillrt.routing.embeddings import get_backend

    backend = get_backend("onnx-minilm")
    rows = [json.loads(line) for line in REAL_QUERIES.open(encoding="utf-8") if line.strip()]
    for label, texts in (
        ("short synthetic requests", synthetic_queries(200)),
        ("real-skills dev requests", [r["query"] for r in rows]),
    ):
        backend.encode_query("warm up")
        times = []
        for q in texts:
            t = time.perf_counter()
            backend.encode_query(q + " x")
            times.append((time.perf_counter() - t) * 1000)
        print(_line(f"query embedding alone, {label}", times))


def cold_cli(cache: Path, size: int = 1000, runs: int = 5) -> None:
    from real_catalogue import build_real_catalogue

    print(f"\n## Cold `skillrt route` over {size:,} cached real skills (whole process)")
    root = cache / f"real-{size}"
    if not root.exists():
        build_real_catalogue(root, size)
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        state.mkdir()
        shutil.copy(cache / "vectors.db", state / "state.db")  # the embeddings, not the index
        cmd = [
            sys.executable,
            "-m",
            "skillrt",
            "route",
            "deploy my next.js app to vercel with the env vars from .env.production",
            "--root",
            str(root),
            "--state",
            str(state),
            "--json",
        ]
        env = {**os.environ, "HOME": tmp}
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=tmp)  # fill caches
        first = (time.perf_counter() - t) * 1000
        walls = []
        for _ in range(runs):
            t = time.perf_counter()
            proc = subprocess.run(cmd, check=True, capture_output=True, env=env, cwd=tmp)
            walls.append((time.perf_counter() - t) * 1000)
        data: Any = json.loads(proc.stdout)
        top = data["plan"]["skills"][0]["name"] if data["plan"]["skills"] else "(no skill)"
        print(
            f"  first run (reads every body, builds and saves the index): {first:.0f} ms\n"
            f"  cached: median {statistics.median(walls):.0f} ms, min {min(walls):.0f} ms over "
            f"{runs} runs; plan: {top}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    ap.add_argument("--cache", type=Path, default=Path(".bench-cache"))
    ap.add_argument("--limit", type=int, default=None, help="dev queries per dataset")
    ap.add_argument("--real", type=int, default=1000, help="real skills (0: skip)")
    ap.add_argument("--synthetic", type=int, default=10000, help="generated skills (0: skip)")
    ap.add_argument("--skip-accuracy", action="store_true")
    ap.add_argument("--skip-latency", action="store_true")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    if not args.skip_accuracy:
        accuracy(args.datasets, args.cache, args.limit)
    if not args.skip_latency:
        query_embedding()
        if args.real:
            latency_real(args.real, args.cache)
        if args.synthetic:
            latency_synthetic(args.synthetic, args.cache)
        cold_cli(args.cache)


if __name__ == "__main__":
    main()
