"""Train and measure the second-need model (``skillrt.routing.second_need``).

Training data, never the dev requests: the doctor's pseudo-requests of every real skill
(``skillrt.doctor.pseudo``), in each leave-out fold (``skillrt.doctor.folds``):

* **two-need** requests: a pseudo-request of one skill and one of another skill of other
  content (document similarity under ``--other``), joined as people join two asks ("X,
  then Y", "X. Also, Y", "X; separately, Y", ...);
* **one-need** requests: one pseudo-request, or two of the same skill joined the same way
  (a request in several clauses that still needs one skill).

Each is routed through the fold's router, which has not indexed the texts it came from;
the planner's view of the primary's first three runners-up gives one example each
(:func:`skillrt.routing.second_need.features`), labelled by whether the runner-up is a
skill the request was made from. A logistic model (L2, standardised features, Newton's
method; numpy only) is fitted on them.

Measured on the real-skills dev requests (routed by the full router, never trained on):
the AUC of the runner-ups that are expected or ``also_ok`` against the others, and the
plan's pointers replayed at each ``pointer_second_need`` (on top of the shipped pointer
rules): requests with a pointer, pointer precision, two-need requests covered or pointed
to. ``--write PATH`` writes the weights with their model card (the shipped file is
``src/skillrt/routing/second_need.json``)::

    python bench/train_second_need.py [--datasets DIR] [--corpora DIR] [--cache DIR]
                                      [--seed 29] [--write PATH]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from dev_data import IMPLICIT_QUERIES, REAL_QUERIES, add_data_arguments, queries_of, real_skills
from tune_pointers import capture, outcomes

from skillrt.config import RoutingConfig
from skillrt.doctor.folds import fold_router, section_terms
from skillrt.doctor.pseudo import FOLDS, pseudo_requests
from skillrt.eval.datasets import LabelledQuery
from skillrt.eval.harness import injection_metrics
from skillrt.routing.planner import SECOND_NEED_DEPTH, build_plan
from skillrt.routing.router import Router
from skillrt.routing.second_need import FEATURES, SecondNeedModel, features
from skillrt.store import open_location

#: Routed with the model off: the features never depend on the weights being trained.
CONFIG = RoutingConfig(use_stats=False, cold_start=False, pointer_second_need=1.01)
#: How two asks are joined in a two-need request (and two parts of one ask in a one-need).
JOINS = (
    "{a}, then {b}",
    "{a}. Also, {b}",
    "{a} and {b}",
    "{a}. After that, {b}",
    "{a}; separately, {b}",
    "{a}. Once that's done, {b}",
)
THRESHOLDS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.5)


def _join(rng: random.Random, a: str, b: str, joins: Sequence[str] = JOINS) -> str:
    b = b.rstrip(" .")
    return rng.choice(joins).format(a=a.rstrip(" ."), b=b[:1].lower() + b[1:])


def examples(seen: Sequence[dict[str, Any]], expected: Sequence[set[str]]) -> tuple[Any, Any]:
    """Per routed request (the planner's inputs, ``tune_pointers.capture``): the features
    of the primary's first runners-up, and whether each is an ``expected`` skill."""
    xs: list[tuple[float, ...]] = []
    ys: list[bool] = []
    for kw, right in zip(seen, expected, strict=True):
        args = dict(kw)
        cands = args.pop("candidates")
        plan = build_plan(cands, **args)
        primary = next((c for c in cands if c.name == plan.plan.primary), None)
        if primary is None or primary.forced:
            continue
        chosen = {c.idx for c in plan.selected}
        usable = [c for c in cands if not c.blocked and c is not primary]
        asking = [clause.asks for clause in kw["clauses"]]
        ranked = sorted(usable, key=lambda c: -c.total)[:SECOND_NEED_DEPTH]
        for rank, c in enumerate(ranked, 1):
            if c.idx in chosen or c.forced or c.anti:
                continue
            xs.append(features(primary, c, rank, asking, kw["overlap"]))
            ys.append(c.name in right)
    return np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)


def fit(x: Any, y: Any, l2: float) -> tuple[Any, Any, Any, float]:
    """Logistic regression on standardised ``x`` (Newton's method); the intercept is not
    penalised. Returns mean, scale, coefficients, intercept."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0) + 1e-6
    z = np.hstack([(x - mean) / scale, np.ones((len(x), 1))])
    w = np.zeros(z.shape[1])
    penalty = np.full(z.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(z @ w, -60, 60)))
        grad = z.T @ (p - y) + penalty * w
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(penalty) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return mean, scale, w[:-1], float(w[-1])


def auc(scores: Any, labels: Any) -> float:
    """The probability that a positive outscores a negative (ties count half)."""
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    for value in np.unique(scores):  # average the ranks of ties
        tied = scores == value
        ranks[tied] = ranks[tied].mean()
    pos = labels == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / max(1, n_pos * n_neg))


def synthetic(args: argparse.Namespace, store: Any) -> tuple[list[dict[str, Any]], list[set[str]]]:
    """Two-need and one-need pseudo-requests, each through its leave-out fold's router."""
    rng = random.Random(args.seed)
    skills = real_skills(args.datasets, args.corpora)
    full = Router.from_skills(skills, CONFIG, caches=store)
    index = full.index
    requests = [
        r
        for i, (s, f) in enumerate(zip(index.skills, index.fields, strict=True))
        for r in pseudo_requests(i, s, f, limit=args.per_skill)
    ]
    terms = section_terms(index.fields)
    seen: list[dict[str, Any]] = []
    expected: list[set[str]] = []
    for fold in range(FOLDS):
        by_skill: dict[int, list[str]] = {}
        for r in requests:
            if r.fold == fold:
                by_skill.setdefault(r.skill, []).append(r.text)
        skills_here = sorted(by_skill)
        texts: list[LabelledQuery] = []
        for _ in range(args.pairs):
            a, b = rng.sample(skills_here, 2)
            if index.overlap(a, b) >= args.other:
                continue
            text = _join(rng, rng.choice(by_skill[a]), rng.choice(by_skill[b]))
            texts.append(LabelledQuery(text, (index.names[a], index.names[b])))
        for _ in range(args.singles):
            a = rng.choice(skills_here)
            own = by_skill[a]
            if len(own) > 1 and rng.random() < 0.5:
                first, second = rng.sample(own, 2)
                text = _join(rng, first, second, JOINS[:3])
            else:
                text = rng.choice(own)
            texts.append(LabelledQuery(text, (index.names[a],)))
        router = fold_router(index.skills, index.fields, fold, backend=index.backend,
                             config=CONFIG, store=store, terms_of=terms)  # fmt: skip
        started = time.time()
        seen += capture(router, texts)
        expected += [set(q.expected) for q in texts]
        print(f"fold {fold}: {len(texts)} requests ({time.time() - started:.0f}s)", flush=True)
    return seen, expected


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--per-skill", type=int, default=12)
    ap.add_argument("--pairs", type=int, default=250, help="two-need tries per fold")
    ap.add_argument("--singles", type=int, default=250, help="one-need requests per fold")
    ap.add_argument("--other", type=float, default=0.5, help="a two-need pair's similarity, under")
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--write", type=Path, help="write the weights and their model card here")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    started = time.time()
    store = open_location(args.cache / "vectors.db")
    seen, expected = synthetic(args, store)
    x, y = examples(seen, expected)
    mean, scale, coef, intercept = fit(x, y, args.l2)
    model = SecondNeedModel(tuple(mean), tuple(scale), tuple(coef), intercept, {})
    print(f"{len(seen)} pseudo-requests, {len(y)} runner-ups ({int(y.sum())} a second need); "
          f"{time.time() - started:.0f}s")  # fmt: skip
    print("training AUC", round(auc(np.asarray([model.probability(v) for v in x]), y), 3))
    full = Router.from_skills(real_skills(args.datasets, args.corpora), CONFIG, caches=store)
    figures: dict[str, Any] = {}
    for label, files in (("dev", REAL_QUERIES), ("implicit", IMPLICIT_QUERIES)):
        queries = queries_of(files)
        dev_seen = capture(full, queries)
        dx, dy = examples(dev_seen, [{*q.expected, *q.also_ok} for q in queries])
        dev_auc = auc(np.asarray([model.probability(v) for v in dx]), dy)
        print(f"\n{label}: {len(queries)} requests, AUC {dev_auc:.3f}")
        print(f"{'threshold':>9s} {'rate':>6s} {'prec':>6s} {'cov|ptd':>7s}")
        rows = {}
        for t in (1.01, *THRESHOLDS):
            outs = outcomes(queries, dev_seen, second_need=model.probability,
                            pointer_second_need=t)  # fmt: skip
            m = injection_metrics(outs)
            rows[t] = {k: m[k] for k in ("pointer_rate", "pointer_precision",
                                         "covered_or_pointed_rate")}  # fmt: skip
            print(f"{t:9.2f} {m['pointer_rate'] or 0:6.3f} {m['pointer_precision'] or 0:6.3f} "
                  f"{m['covered_or_pointed_rate'] or 0:7.3f}")  # fmt: skip
        figures[label] = {"auc": round(dev_auc, 4), "by_threshold": rows}
    store.close()
    if args.write:
        weights = {
            "features": list(FEATURES),
            "mean": [float(v) for v in mean],
            "scale": [float(v) for v in scale],
            "coef": [float(v) for v in coef],
            "intercept": intercept,
        }
        digest = hashlib.sha256(json.dumps(weights, sort_keys=True).encode()).hexdigest()
        card = {
            "model": "logistic regression over skillrt.routing.second_need.FEATURES",
            "data": f"{len(seen)} pseudo-requests (two-need: two real skills' doctor "
            f"pseudo-requests joined; one-need: one, or two of one skill), leave-out routed; "
            f"{len(y)} runner-ups, {int(y.sum())} a second need",
            "seed": args.seed,
            "command": " ".join(["python", *(a for a in sys.argv if a)]),
            "weights_sha256": digest,
            "figures": figures,
            "python": platform.python_version(),
            "numpy": np.__version__,
        }
        args.write.write_text(json.dumps({**card, "weights": weights}, indent=1) + "\n")
        print(f"wrote {args.write} (sha256 of the weights {digest[:16]})")


if __name__ == "__main__":
    main()
