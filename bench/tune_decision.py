"""Fit the companion model of the decision stage on the DEV splits (never the test ones).

A second skill joins a plan for a clause of the request that asks for something, on
which it is the best candidate, when its probability of being needed there reaches
``routing.companion_threshold`` (default 0.9, a policy: see docs/evaluation.md). That
probability is ``σ(companion_bias + Σ coefficient · signal)`` over the companion signals
of ``skillrt.routing.signals.COMPANION_SIGNALS``; this script fits it:

1. routes every dev request with the router as shipped (the plan's primary skill, the
   clauses, the candidates and their clause totals are captured from the planner);
2. keeps the requests whose primary skill is right, and every skill that could join it
   (the planner's own gates: an asking clause where it is the best candidate, no
   overlap with the primary);
3. labels it 1 when the request needs it (one of the expected skills of a two-need
   request), 0 otherwise (any skill beside a one-need request's, or beside a two-need
   request's parts); a skill that only stands in for a part (``also_ok``) is left out;
4. fits a weighted logistic regression, each split weighing the same: real-skills
   (``bench/data/real-skills-dev*.jsonl``: one-need, crowded and two-need requests) and
   MetaTool (its single- and multi-tool dev queries).

It prints the coefficients and what they give at the threshold: per split, the clean
rate, skills per one-need request, two-need requests covered and MetaTool's multi-tool
set F1. Only these few numbers are copied by hand into ``calibration.py``::

    python bench/tune_decision.py [--datasets DIR] [--corpora DIR] [--cache DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from dev_data import REAL_QUERIES, add_data_arguments, queries_of, real_skills

from skillrt.config import RoutingConfig
from skillrt.eval.datasets import LabelledQuery, load_catalog, load_queries
from skillrt.routing import decide as decide_module
from skillrt.routing.calibration import fit_logistic, model_for, sigmoid
from skillrt.routing.candidate import Candidate
from skillrt.routing.planner import Clause, PlanRules, companion_input
from skillrt.routing.router import Router
from skillrt.routing.signals import COMPANION_SIGNALS, companion_signals
from skillrt.store import open_location

THRESHOLD = 0.5


@dataclasses.dataclass
class Seen:
    """One request: its primary, and each skill that could join it with its signals."""

    query: LabelledQuery
    primary: str | None
    joiners: list[tuple[str, dict[str, float]]]


def capture(router: Router, queries: Sequence[LabelledQuery]) -> list[Seen]:
    """Route each query; keep what the planner saw (its gates, for the primary alone)."""
    seen: list[Seen] = []
    original = decide_module.build_plan
    box: dict[str, Any] = {}

    def spy(candidates: Sequence[Candidate], **kw: Any) -> Any:
        box.update(candidates=list(candidates), **kw)
        return original(candidates, **kw)

    decide_module.build_plan = spy
    try:
        for q in queries:
            result = router.route(q.query, candidates=q.candidates, surface="eval")
            joiners: list[tuple[str, dict[str, float]]] = []
            primary = result.plan.primary
            cands: list[Candidate] = box["candidates"]
            clauses: list[Clause] = box["clauses"]
            rules: PlanRules = box["rules"]
            overlap: Callable[[int, int], float] = box["overlap"]
            first = next((c for c in cands if c.name == primary), None)
            if first is not None and not first.forced:
                for c in cands:
                    if c is first or c.blocked or c.forced:
                        continue
                    best: dict[str, float] | None = None
                    for k, clause in enumerate(clauses):
                        if not clause.asks or k >= len(c.clause_first) or not c.clause_first[k]:
                            continue
                        inp = companion_input(c, k, [first], overlap)
                        if inp.overlap >= rules.overlap_threshold:
                            continue
                        if best is None or inp.own > best["_own"]:
                            best = {**companion_signals(inp), "_own": inp.own}
                    if best is not None:
                        best.pop("_own")
                        joiners.append((c.name, best))
            seen.append(Seen(q, primary, joiners))
    finally:
        decide_module.build_plan = original
    return seen


def rows(seen: Sequence[Seen]) -> tuple[np.ndarray, np.ndarray]:
    names = [s.name for s in COMPANION_SIGNALS]
    x: list[list[float]] = []
    y: list[float] = []
    for s in seen:
        right = {*s.query.expected, *s.query.also_ok}
        if s.primary is None or s.primary not in right:
            continue
        two = len(s.query.expected) > 1
        for name, signals in s.joiners:
            if two and name in s.query.also_ok and name not in s.query.expected:
                continue
            x.append([signals[n] for n in names])
            y.append(1.0 if two and name in s.query.expected and name != s.primary else 0.0)
    return np.asarray(x), np.asarray(y)


def plans(
    seen: Sequence[Seen], beta: np.ndarray, threshold: float = THRESHOLD
) -> list[tuple[str, ...]]:
    names = [s.name for s in COMPANION_SIGNALS]
    out: list[tuple[str, ...]] = []
    for s in seen:
        if s.primary is None:
            out.append(())
            continue
        scored = [
            (sigmoid(float(beta[0] + np.dot(beta[1:], [sig[n] for n in names]))), name)
            for name, sig in s.joiners
        ]
        best = max(scored, default=None)
        out.append((s.primary, best[1]) if best and best[0] >= threshold else (s.primary,))
    return out


def report(name: str, seen: Sequence[Seen], planned: Sequence[tuple[str, ...]]) -> str:
    one = [(s, p) for s, p in zip(seen, planned, strict=True) if len(s.query.expected) == 1]
    two = [(s, p) for s, p in zip(seen, planned, strict=True) if len(s.query.expected) > 1]

    def right(s: Seen) -> set[str]:
        return {*s.query.expected, *s.query.also_ok}

    clean = np.mean([bool(p) and all(n in right(s) for n in p) for s, p in one])
    injected = np.mean([len(p) for _, p in one])
    covered = []
    inter = pred = gold = 0
    for s, p in two:
        missing = sum(e not in p for e in s.query.expected)
        covered.append(sum(a in p for a in s.query.also_ok) >= missing)
        inter += len(set(s.query.expected) & set(p))
        pred += len(set(p))
        gold += len(s.query.expected)
    f1 = 2 * inter / (pred + gold) if pred + gold else float("nan")
    return (
        f"  {name:12s} clean {clean:.3f}  injected {injected:.2f}  "
        f"covered {np.mean(covered):.3f}  set F1 {f1:.3f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_data_arguments(ap)
    ap.add_argument(
        "--signals", default="need", help="the companion signals to fit (comma-separated)"
    )
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    config = RoutingConfig(use_stats=False, cold_start=False)
    splits = {
        "real-skills": (
            real_skills(args.datasets, args.corpora),
            queries_of(REAL_QUERIES),
        ),
        "metatool": (
            load_catalog(args.datasets / "metatool" / "skills.jsonl"),
            load_queries(args.datasets / "metatool" / "queries.dev.jsonl"),
        ),
    }
    seen: dict[str, list[Seen]] = {}
    for name, (skills, queries) in splits.items():
        store = open_location(args.cache / "vectors.db")
        router = Router.from_skills(skills, config, caches=store)  # vectors only: no stats
        seen[name] = capture(router, queries)
        store.close()
        print(f"{name}: {len(queries)} dev requests routed")
    data = [rows(s) for s in seen.values()]
    x = np.vstack([d[0] for d in data])
    y = np.concatenate([d[1] for d in data])
    w = np.concatenate([np.full(len(d[1]), len(y) / (len(data) * len(d[1]))) for d in data])
    names = [s.name for s in COMPANION_SIGNALS]
    print(f"{int(y.sum())} needed of {len(y)} candidate companions")
    shipped = model_for("onnx-minilm", tokens=True)
    default = np.asarray(
        [shipped.companion_bias, *(shipped.companion_coefficient(n) for n in names)]
    )
    print("the shipped model, by companion_threshold:")
    for threshold in (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 1.01):
        print(f" {threshold}")
        for name, s in seen.items():
            print(report(name, s, plans(s, default, threshold)))
    for fit in (args.signals.split(","), names):
        cols = [names.index(n) for n in fit]
        beta = fit_logistic(x[:, cols], y, sample_weight=w)
        full = np.zeros(len(names) + 1)
        full[0] = beta[0]
        full[[c + 1 for c in cols]] = beta[1:]
        coefficients = ", ".join(f'"{n}": {v:.3f}' for n, v in zip(fit, beta[1:], strict=True))
        print(f"fitted: companion_bias={beta[0]:.3f}, companion_coefficients={{{coefficients}}}")
        for name, s in seen.items():
            print(report(name, s, plans(s, full)))


if __name__ == "__main__":
    main()
