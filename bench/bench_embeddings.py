"""Embedding backends: model load time, warm single-query latency, batch throughput.

Also times the vector cache: embedding a catalogue cold versus reading it back from the
SQLite store. Text is synthetic (seeded), so runs are comparable across machines.

    PYTHONPATH=src python bench/bench_embeddings.py [--docs 1000] [--queries 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

try:
    import skillrt  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import gen_skills

from skillrt.routing.embeddings import BACKENDS, EmbeddingBackend, available_backends
from skillrt.routing.vector_cache import VectorCache, text_hash
from skillrt.store import open_location

VERBS = list(gen_skills.VERBS[:10])
OBJECTS = list(gen_skills.OBJECTS[:13])
CONTEXTS = [
    "for a team",
    "with a checklist",
    "before a release",
    "from raw data",
    "in plain English",
    "following the style guide",
    "with error handling",
    "on a schedule",
    "for compliance review",
]


def synthetic(n: int, seed: int) -> list[str]:
    """Skill-description-like sentences of 8-25 words."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        parts = [rng.choice(VERBS).capitalize(), rng.choice(OBJECTS), rng.choice(CONTEXTS)]
        if rng.random() < 0.5:
            parts += ["and", rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(CONTEXTS)]
        out.append(" ".join(parts) + ".")
    return out


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench(name: str, docs: list[str], queries: list[str]) -> dict[str, float]:
    start = time.perf_counter()
    backend: EmbeddingBackend = BACKENDS[name]()
    load_ms = (time.perf_counter() - start) * 1000

    for q in queries[:10]:  # warm-up: allocator arenas, caches
        backend.embed_query(q)
    latencies = []
    for q in queries:
        t = time.perf_counter()
        backend.embed_query(q)
        latencies.append((time.perf_counter() - t) * 1000)

    t = time.perf_counter()
    backend.embed_documents(docs)
    docs_per_s = len(docs) / (time.perf_counter() - t)

    items = [(text_hash(d), d) for d in docs]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "state.db"
        t = time.perf_counter()
        VectorCache(open_location(db)).get_or_embed(backend, items)
        cold_ms = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        VectorCache(open_location(db)).get_or_embed(backend, items)  # a new process's first call
        warm_ms = (time.perf_counter() - t) * 1000

    return {
        "load_ms": load_ms,
        "p50_ms": statistics.median(latencies),
        "p95_ms": percentile(latencies, 0.95),
        "docs_s": docs_per_s,
        "cache_cold_ms": cold_ms,
        "cache_warm_ms": warm_ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--backend", action="append", choices=sorted(BACKENDS))
    args = parser.parse_args()
    names = args.backend or [n for n in ("onnx-minilm", "hashing") if n in available_backends()]

    t = time.perf_counter()
    import numpy  # noqa: F401
    import onnxruntime  # noqa: F401
    import tokenizers  # noqa: F401

    import_ms = (time.perf_counter() - t) * 1000
    docs, queries = synthetic(args.docs, seed=1), synthetic(args.queries, seed=2)
    print(f"numpy + onnxruntime + tokenizers import: {import_ms:.0f} ms (once a process)")
    print(f"{args.docs} documents, {args.queries} warm single queries\n")
    header = (
        f"{'backend':<13} {'load ms':>8} {'q p50 ms':>9} {'q p95 ms':>9} {'docs/s':>8} "
        f"{'cache cold ms':>14} {'cache warm ms':>14}"
    )
    print(header)
    print("-" * len(header))
    for name in names:
        r = bench(name, docs, queries)
        print(
            f"{name:<13} {r['load_ms']:>8.0f} {r['p50_ms']:>9.2f} {r['p95_ms']:>9.2f} "
            f"{r['docs_s']:>8.0f} {r['cache_cold_ms']:>14.0f} {r['cache_warm_ms']:>14.1f}"
        )


if __name__ == "__main__":
    main()
