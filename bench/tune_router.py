"""Fit the router's general score model on the DEV splits (never the test splits).

Reproduces the defaults in ``skillrt.routing.calibration.MODELS``:

1. **Fusion** (``mix``, ``lexical_weight``): grid search maximising top-1, averaged
   over the four benchmarks (each weighs the same, whatever its size).
2. **Calibration** (``bias``, ``fused``, ``margin``, ``lexical``, ``unknown``): a
   weighted logistic regression on the best-ranked candidate of every dev query,
   labelled 1 when it is an expected skill. Each benchmark weighs the same. This makes
   ``intent_match`` the probability that the top-ranked skill is a right one, so the
   0.65 threshold means "select when at least 65% of such cases were right".

Usage (a few minutes; vectors are cached in ``--cache``)::

    python bench/tune_router.py [--backend onnx-minilm] [--datasets DIR] [--cache DIR]

It prints the fitted parameters and the dev metrics they give at the 0.65 threshold.
Nothing from the datasets is written into the package: only these few numbers are
copied by hand into ``calibration.py``.
"""

from __future__ import annotations

import argparse
import itertools
import pickle
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

try:
    import skillrt  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from skillrt.config import RoutingConfig
from skillrt.eval.datasets import load_catalog, load_queries
from skillrt.routing.calibration import FEATURES, fit_logistic
from skillrt.routing.router import Router
from skillrt.routing.text import terms
from skillrt.store.sqlite import Store

DEFAULT_DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
NAMES = ("metatool", "clinc150", "seal-tools", "bfcl")
THRESHOLD = 0.65


@dataclass
class QueryFeatures:
    """Per-skill raw evidence for one query (over its candidate set)."""

    gold: set[int]  # positions within ``rows``
    rows: np.ndarray
    doc: np.ndarray
    part: np.ndarray
    cent: np.ndarray
    lex: np.ndarray
    unknown: float


def collect(
    name: str, root: Path, cache: Path, backend: str, limit: int | None
) -> list[QueryFeatures]:
    skills = load_catalog(root / name / "skills.jsonl")
    queries = load_queries(root / name / "queries.dev.jsonl", limit=limit)
    store = Store(cache / "vectors.db")
    router = Router.from_skills(
        skills,
        RoutingConfig(use_stats=False, cold_start=False),
        backend=backend,
        store=store,
        record=False,
    )
    index = router.index
    vectors: list[Any] = [None] * len(queries)
    if index.semantic is not None and index.backend is not None:
        texts = [q.query for q in queries]
        for s in range(0, len(texts), 64):
            vectors[s : s + 64] = list(index.backend.embed_queries(texts[s : s + 64]))
    out: list[QueryFeatures] = []
    for q, vec in zip(queries, vectors, strict=True):
        if q.candidates is not None:
            rows, _ = index.rows_for(q.candidates)
        else:
            rows = np.arange(len(index), dtype=np.int64)
        lex = index.lexical.score(terms(q.query))
        if index.semantic is not None:
            sem = (
                index.semantic.score_subset(vec, rows)
                if q.candidates is not None
                else index.semantic.score(vec)
            )
            doc, part, cent = sem.doc, sem.part, sem.centroid
        else:
            doc = part = cent = np.zeros(len(rows), dtype=np.float32)
        pos = {int(r): k for k, r in enumerate(rows.tolist())}
        gold = {
            pos[index.position[e]]
            for e in q.expected
            if e in index.position and index.position[e] in pos
        }
        out.append(QueryFeatures(gold, rows, doc, part, cent, lex.norm[rows], lex.unknown_share))
    store.close()
    return out


def fused(f: QueryFeatures, mix: tuple[float, float, float], lam: float) -> np.ndarray:
    return mix[0] * f.doc + mix[1] * f.part + mix[2] * f.cent + lam * f.lex


def top1(data: list[QueryFeatures], mix: tuple[float, float, float], lam: float) -> float:
    singles = [f for f in data if len(f.gold) == 1]
    if not singles:
        return float("nan")
    return float(np.mean([int(np.argmax(fused(f, mix, lam))) in f.gold for f in singles]))


def top_rows(
    data: list[QueryFeatures], mix: tuple[float, float, float], lam: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Calibration rows: (features of the top candidate, label, has_gold_expected)."""
    x, y, scope = [], [], []
    for f in data:
        s = fused(f, mix, lam)
        order = np.argsort(-s)
        best = order[0]
        x.append([s[best], f.lex[best], f.unknown])
        y.append(float(int(best) in f.gold))
        scope.append(bool(f.gold))
    return np.asarray(x), np.asarray(y), np.asarray(scope)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    ap.add_argument("--cache", type=Path, default=Path(".bench-cache"))
    ap.add_argument("--backend", default="onnx-minilm")
    ap.add_argument("--limit", type=int, default=None, help="queries per dataset (debug)")
    ap.add_argument(
        "--target",
        choices=("scope", "correct"),
        default="scope",
        help="calibrate P(a skill should fire) or P(the top skill is right)",
    )
    ap.add_argument("--features", default="fused,lexical,unknown")
    ap.add_argument("--balance", action="store_true", help="balance classes per dataset")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)

    data: dict[str, list[QueryFeatures]] = {}
    for name in NAMES:
        started = time.time()
        saved = args.cache / f"features-{name}-{args.backend}-{args.limit}.pkl"
        if saved.exists():
            data[name] = pickle.loads(saved.read_bytes())
        else:
            data[name] = collect(name, args.datasets, args.cache, args.backend, args.limit)
            saved.write_bytes(pickle.dumps(data[name]))
        print(f"{name}: {len(data[name])} dev queries ({time.time() - started:.0f}s)")

    semantic = args.backend not in ("none", "lexical")
    steps = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    mixes = (
        [(a, b, round(1.0 - a - b, 2)) for a, b in itertools.product(steps, steps) if a + b <= 1.0]
        if semantic
        else [(0.0, 0.0, 0.0)]
    )
    lams = [0.0, 0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.3] if semantic else [1.0]
    best: tuple[float, tuple[float, float, float], float] | None = None
    for mix in mixes:
        for lam in lams:
            score = float(np.mean([top1(d, mix, lam) for d in data.values()]))
            if best is None or score > best[0]:
                best = (score, mix, lam)
    assert best is not None
    _, mix, lam = best
    print(f"fusion: mix={mix} lexical_weight={lam}")
    for name, d in data.items():
        print(f"  {name:10s} top1 {top1(d, mix, lam):.3f}")

    xs, ys, scopes, labels = [], [], [], []
    for d in data.values():
        x, y, scope = top_rows(d, mix, lam)
        xs.append(x)
        ys.append(y)
        scopes.append(scope)
        label = scope.astype(float) if args.target == "scope" else y
        if args.target == "scope":
            if scope.all() or not scope.any():
                continue  # no reject class: says nothing about "should a skill fire"
            if args.balance:
                # Balance the classes within each dataset: a prior-free evidence ratio.
                w = np.where(scope, 0.5 / scope.sum(), 0.5 / (~scope).sum())
            else:
                w = np.full(len(y), 1.0 / len(y))
        else:
            w = np.full(len(y), 1.0 / len(y))
        labels.append((x, label, w))
    x_all = np.vstack([t[0] for t in labels])
    y_all = np.concatenate([t[1] for t in labels])
    w_all = np.concatenate([t[2] for t in labels])
    cols = [FEATURES.index(f) for f in args.features.split(",")]
    beta_sub = fit_logistic(x_all[:, cols], y_all, sample_weight=w_all * len(y_all) / len(labels))
    beta = np.zeros(1 + len(FEATURES))
    beta[0] = beta_sub[0]
    for j, c in enumerate(cols):
        beta[1 + c] = beta_sub[1 + j]
    names = ("bias", *FEATURES)
    print("calibration: " + ", ".join(f"{k}={v:.3f}" for k, v in zip(names, beta, strict=True)))

    # Sharpness: how fast a candidate's intent decays with its gap to the best one,
    # i.e. the softmax temperature that best predicts which candidate is right.
    best_tau, best_ll = 0.0, -np.inf
    for tau in [5, 10, 15, 20, 25, 30, 40, 50, 60, 80, 100]:
        ll = []
        for d in data.values():
            vals = []
            for f in d:
                if len(f.gold) != 1:
                    continue
                s_ = fused(f, mix, lam)
                z = tau * (s_ - s_.max())
                g = next(iter(f.gold))
                vals.append(z[g] - np.log(np.exp(z).sum()))
            ll.append(np.mean(vals))
        if np.mean(ll) > best_ll:
            best_tau, best_ll = float(tau), float(np.mean(ll))
    print(f"sharpness={best_tau}")

    for n, name in enumerate(data):
        x, y, scope = xs[n], ys[n], scopes[n]
        p = 1 / (1 + np.exp(-(beta[0] + x @ beta[1:])))
        select = p >= THRESHOLD
        tp = np.sum(~select & ~scope)
        ns_p = tp / max(1, np.sum(~select))
        ns_r = tp / max(1, np.sum(~scope)) if np.any(~scope) else float("nan")
        f1 = 2 * ns_p * ns_r / (ns_p + ns_r) if ns_p + ns_r > 0 else 0.0
        acc = float(np.mean((y == 1) & select)) if np.any(scope) else float("nan")
        in_scope_acc = float(np.mean(((y == 1) & select)[scope])) if np.any(scope) else float("nan")
        # Reliability: among selected, share correct (should be >= 0.65 on average).
        prec = float(np.mean(y[select])) if np.any(select) else float("nan")
        print(
            f"  {name:10s} selected-correct {prec:.3f} in-scope acc {in_scope_acc:.3f} "
            f"no-skill P {ns_p:.3f} R {ns_r:.3f} F1 {f1:.3f} (overall acc {acc:.3f})"
        )


if __name__ == "__main__":
    main()
