"""skillrt's router vs semantic-router, same encoder, same catalogue, one run.

    pip install "skillrt[bench]"      # semantic-router
    python bench/bench_vs_semantic_router.py [--limit 800] [--datasets DIR] [--cache DIR]

semantic-router (``IndexedRouter``, its defaults: top_k=5, mean aggregation) gets our
ONNX MiniLM wrapped as a ``DenseEncoder``, and one route per skill whose utterances
are the skill's "name: description" text plus its examples — exactly what skillrt
embeds. Two semantic-router variants: raw (no threshold: it always answers a route)
and calibrated (its own Platt ``fit`` on the same dev queries, threshold 0.5: a
favourable setting, since it is evaluated on what it was fitted on). skillrt runs
with its shipped defaults. Per-query latency includes the query embedding for both.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
try:
    import skillrt  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(HERE.parent / "src"))

from skillrt.config import RoutingConfig  # noqa: E402
from skillrt.eval.datasets import LabelledQuery, load_catalog, load_queries  # noqa: E402
from skillrt.eval.harness import percentile  # noqa: E402
from skillrt.routing.embeddings import get_backend  # noqa: E402
from skillrt.routing.router import Router  # noqa: E402
from skillrt.routing.semantic import document_text  # noqa: E402
from skillrt.store import open_location  # noqa: E402

DEFAULT_DATASETS = HERE.parent.parent / "shared" / "datasets"


def semantic_router_encoder(backend: Any) -> Any:
    from semantic_router.encoders import DenseEncoder

    class SkillrtMiniLM(DenseEncoder):  # type: ignore[misc]
        """skillrt's ONNX MiniLM as a semantic-router encoder."""

        name: str = "skillrt-onnx-minilm"
        backend: Any = None

        def __call__(self, docs: list[Any]) -> list[list[float]]:
            return self.backend.embed_queries([str(d) for d in docs]).tolist()  # type: ignore[no-any-return]

        async def acall(self, docs: list[Any]) -> list[list[float]]:
            return self(docs)

    return SkillrtMiniLM(backend=backend)


def metrics(
    pred_top: list[str | None], pred_sel: list[str | None], qs: list[LabelledQuery]
) -> dict[str, float]:
    single = [i for i, q in enumerate(qs) if len(q.expected) == 1]
    none = [i for i, q in enumerate(qs) if not q.expected]
    top1 = float(np.mean([pred_top[i] == qs[i].expected[0] for i in single]))
    said_none = [i for i in range(len(qs)) if pred_sel[i] is None]
    tp = sum(1 for i in said_none if not qs[i].expected)
    p = tp / len(said_none) if said_none else 0.0
    r = tp / len(none) if none else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    sel = float(np.mean([pred_sel[i] == qs[i].expected[0] for i in single]))
    return {"top1": top1, "selected_acc": sel, "no_skill_f1": f1}


def run(name: str, root: Path, cache: Path, limit: int) -> None:
    from semantic_router import IndexedRouter, Route

    skills = load_catalog(root / name / "skills.jsonl")
    queries = [q for q in load_queries(root / name / "queries.dev.jsonl") if len(q.expected) <= 1]
    rng = np.random.default_rng(0)
    queries = [
        queries[i]
        for i in sorted(rng.choice(len(queries), min(limit, len(queries)), replace=False))
    ]
    backend = get_backend("onnx-minilm")
    store = open_location(cache / "vectors.db")
    ours = Router.from_skills(
        skills,
        RoutingConfig(use_stats=False, cold_start=False),
        caches=store,  # vectors only: no stats
        backend=backend,
    )

    routes = [
        Route(
            name=s.qualified_name,
            utterances=[document_text(s), *[e for e in s.routing.examples if e.strip()]],
        )
        for s in skills
    ]
    started = time.perf_counter()
    sr = IndexedRouter(encoder=semantic_router_encoder(backend), routes=routes)
    sr_build = time.perf_counter() - started

    def timed(fn: Any, q: str) -> tuple[Any, float]:
        t = time.perf_counter()
        out = fn(q)
        return out, (time.perf_counter() - t) * 1000

    for q in queries[:10]:  # warm both
        ours.route(q.query + " warm")
        sr(q.query + " warm")
    our_top, our_sel, our_ms = [], [], []
    sr_top, sr_ms = [], []
    for q in queries:
        res, ms = timed(lambda text: ours.route(text), q.query)
        our_top.append(res.candidates[0].name if res.candidates else None)
        best = max(res.plan.skills, key=lambda s: s.score).name if res.plan.skills else None
        our_sel.append(best)
        our_ms.append(ms)
        choice, ms = timed(lambda text: sr(text, limit=1, threshold=0.0), q.query)
        sr_top.append(choice.name)
        sr_ms.append(ms)
    # Calibrated semantic-router: Platt fit on these very queries, threshold 0.5.
    sr.fit([q.query for q in queries], [q.expected[0] if q.expected else None for q in queries])
    sr_cal = [sr(q.query, limit=1, threshold=0.5).name for q in queries]

    m_ours = metrics(our_top, our_sel, queries)
    m_raw = metrics(sr_top, sr_top, queries)
    m_cal = metrics(sr_top, sr_cal, queries)
    p95_ours, p95_sr = percentile(our_ms, 95), percentile(sr_ms, 95)
    print(
        f"\n## {name}: {len(skills)} skills, {len(queries)} dev queries "
        f"(semantic-router index build {sr_build:.1f} s)"
    )
    print(f"{'router':34s} top1   sel.acc no-skill-F1  p50 ms  p95 ms")
    for label, m, ms in (
        ("skillrt (defaults)", m_ours, our_ms),
        ("semantic-router (raw)", m_raw, sr_ms),
        ("semantic-router (Platt fit, 0.5)", m_cal, sr_ms),
    ):
        print(
            f"{label:34s} {m['top1']:.3f}  {m['selected_acc']:.3f}   {m['no_skill_f1']:.3f}"
            f"      {percentile(ms, 50):6.2f}  {percentile(ms, 95):6.2f}"
        )
    ratio50 = percentile(sr_ms, 50) / percentile(our_ms, 50)
    print(
        f"latency ratio semantic-router / skillrt: p50 {ratio50:.2f}x, p95 {p95_sr / p95_ours:.2f}x"
    )
    store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    ap.add_argument("--cache", type=Path, default=Path(".bench-cache"))
    ap.add_argument("--limit", type=int, default=800, help="dev queries per dataset")
    ap.add_argument("--only", default="metatool,clinc150")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    try:
        import semantic_router

        version = semantic_router.__version__
    except ImportError:
        sys.exit('semantic-router is not installed: pip install "skillrt[bench]"')
    print(f"semantic-router {version}; encoder: skillrt onnx-minilm (shared instance)")
    for name in args.only.split(","):
        run(name, args.datasets, args.cache, args.limit)


if __name__ == "__main__":
    main()
