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
from skillrt.routing.rerank import RERANK_DEPTH
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
    #: Token-matching score of every row (None without a token index).
    tok: np.ndarray | None = None


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
    )
    index = router.index
    vectors: list[Any] = [None] * len(queries)
    qtokens: list[Any] = [None] * len(queries)
    if index.semantic is not None and index.backend is not None:
        for n, q in enumerate(queries):
            encoded = index.backend.encode_query(q.query)
            vectors[n], qtokens[n] = encoded.vector, encoded.tokens
    out: list[QueryFeatures] = []
    for q, vec, qtok in zip(queries, vectors, qtokens, strict=True):
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
        tok = (
            index.tokens.score(qtok, rows)
            if index.tokens is not None and qtok is not None
            else None
        )
        out.append(
            QueryFeatures(gold, rows, doc, part, cent, lex.norm[rows], lex.unknown_share, tok)
        )
    store.close()
    return out


def fused(
    f: QueryFeatures, mix: tuple[float, float, float], lam: float, tok_w: float = 0.0
) -> np.ndarray:
    """The router's fused score (``Router._evidence``), token rerank included."""
    base = mix[0] * f.doc + mix[1] * f.part + mix[2] * f.cent + lam * f.lex
    if not tok_w or f.tok is None or not len(base):
        return base
    k = min(RERANK_DEPTH, len(base))
    top = np.argpartition(-base, k - 1)[:k]
    adj = np.full(len(base), float(f.tok[top].min()))
    adj[top] = f.tok[top]
    return base + tok_w * adj


def top1(
    data: list[QueryFeatures], mix: tuple[float, float, float], lam: float, tok_w: float = 0.0
) -> float:
    singles = [f for f in data if len(f.gold) == 1]
    if not singles:
        return float("nan")
    return float(np.mean([int(np.argmax(fused(f, mix, lam, tok_w))) in f.gold for f in singles]))


def top_rows(
    data: list[QueryFeatures], mix: tuple[float, float, float], lam: float, tok_w: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Calibration rows: (features of the top candidate, label, has_gold_expected)."""
    x, y, scope = [], [], []
    for f in data:
        s = fused(f, mix, lam, tok_w)
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
    ap.add_argument(
        "--tokens",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="fit token matching's weight too (the default model for small catalogues)",
    )
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)

    data: dict[str, list[QueryFeatures]] = {}
    for name in NAMES:
        started = time.time()
        saved = args.cache / f"features-v2-{name}-{args.backend}-{args.limit}.pkl"
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
    tok_w = 0.0
    if args.tokens and all(f.tok is not None for d in data.values() for f in d):
        # Token matching on top of that fusion: its weight, and the lexical weight again.
        best_t = (float(np.mean([top1(d, mix, lam) for d in data.values()])), 0.0, lam)
        for w in (0.2, 0.4, 0.6, 0.8, 1.0, 1.2):
            for lam_t in lams:
                score = float(np.mean([top1(d, mix, lam_t, w) for d in data.values()]))
                if score > best_t[0]:
                    best_t = (score, w, lam_t)
        _, tok_w, lam = best_t
        print(f"token matching: token_weight={tok_w} lexical_weight={lam}")
        for name, d in data.items():
            print(f"  {name:10s} top1 {top1(d, mix, lam, tok_w):.3f}")

    xs, ys, scopes, labels = [], [], [], []
    for d in data.values():
        x, y, scope = top_rows(d, mix, lam, tok_w)
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
                s_ = fused(f, mix, lam, tok_w)
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
