"""Sweep the pointer settings of the decision stage on the real-skills DEV requests.

A route names up to two skills beside its plan for the user's own model to weigh (docs
/routing.md, *Pointers*): a clause's best skill that stayed under the companion
threshold (``pointer_companion``), close runners-up of the primary
(``pointer_runner_up``: a share of the primary's total; ``pointer_floor`` of it for a
near neighbour, document similarity ``pointer_similar`` or more). This script routes every dev
request once with the router as shipped, keeps what the planner saw, then plans again
under each setting of a grid and prints, per setting: requests with a pointer, pointer
precision (pointers that are expected or ``also_ok``), two-need requests covered or
pointed to, and pointers on the requests that need no skill::

    python bench/tune_pointers.py [--datasets DIR] [--corpora DIR] [--cache DIR]
                                  [--queries FILE ...]

Only the chosen defaults are copied by hand into ``skillrt.config.RoutingConfig``.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dev_data import ALL_REAL_QUERIES, add_data_arguments, queries_of, real_skills

from skillrt.config import RoutingConfig
from skillrt.eval.datasets import LabelledQuery
from skillrt.eval.harness import QueryOutcome, injection_metrics
from skillrt.routing import decide as decide_module
from skillrt.routing.planner import PlanOutcome, build_plan
from skillrt.routing.router import Router
from skillrt.store import open_location


def capture(router: Router, queries: Sequence[LabelledQuery]) -> list[dict[str, Any]]:
    """Route each query; keep the planner's inputs (candidates, clauses, rules...)."""
    seen: list[dict[str, Any]] = []
    box: dict[str, Any] = {}

    def spy(candidates: Sequence[Any], **kw: Any) -> PlanOutcome:
        box.clear()
        # Copies: the decision rewrites each candidate's status after planning.
        box.update(candidates=[copy.copy(c) for c in candidates], **kw)
        return build_plan(candidates, **kw)

    decide_module.build_plan = spy  # type: ignore[assignment]
    try:
        for q in queries:
            router.route(q.query, candidates=q.candidates, surface="eval")
            seen.append(dict(box))
    finally:
        decide_module.build_plan = build_plan
    return seen


def outcomes(
    queries: Sequence[LabelledQuery], seen: Sequence[dict[str, Any]], **rules: Any
) -> list[QueryOutcome]:
    out = []
    for q, kw in zip(queries, seen, strict=True):
        args = dict(kw)
        cands = args.pop("candidates")
        rules.setdefault("pointers", True)
        args["rules"] = dataclasses.replace(args["rules"], **rules)
        plan = build_plan(cands, **args)
        names = plan.plan.names
        primary = plan.plan.primary
        if primary is not None and len(names) > 1:
            names = (primary, *(n for n in names if n != primary))
        out.append(
            QueryOutcome(
                q.query,
                q.expected,
                names,
                (),
                0.0,
                q.also_ok,
                style=str(q.meta.get("style") or ""),
                pointers=tuple(p.name for p in plan.pointers),
            )
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--queries", type=Path, action="append")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    queries = queries_of(args.queries or ALL_REAL_QUERIES)
    store = open_location(args.cache / "vectors.db")
    router = Router.from_skills(
        real_skills(args.datasets, args.corpora),
        RoutingConfig(use_stats=False, cold_start=False),
        caches=store,  # vectors only: no stats
    )
    seen = capture(router, queries)
    print(f"{len(queries)} dev requests routed")
    print(
        f"{'runner-up':>9s} {'floor':>5s} {'similar':>7s} {'companion':>9s} {'rate':>6s} "
        f"{'prec':>6s} {'cov|ptd':>7s} {'covered':>7s} {'none w/ ptr':>11s}"
    )
    for runner_up, floor, similar, companion in itertools.product(
        (0.5, 0.8, 1.01), (0.1, 0.2, 0.3), (0.5, 0.6, 0.7, 1.01), (0.1, 0.3, 0.5, 1.01)
    ):
        outs = outcomes(
            queries,
            seen,
            pointer_runner_up=runner_up,
            pointer_floor=floor,
            pointer_similar=similar,
            pointer_companion=companion,
        )
        m = injection_metrics(outs)
        none = [o for o in outs if not o.expected]
        print(
            f"{runner_up:9.2f} {floor:5.2f} {similar:7.2f} {companion:9.2f} "
            f"{m['pointer_rate'] or 0:6.3f} "
            f"{m['pointer_precision'] or 0:6.3f} {m['covered_or_pointed_rate'] or 0:7.3f} "
            f"{m['covered_rate'] or 0:7.3f} {sum(bool(o.pointers) for o in none):11d}"
        )
    print("\nbrief asks (pointers as configured):")
    print(f"{'margin':>6s} {'lead':>5s} {'clean':>6s} {'inj.prec':>8s} {'ns P':>6s} {'ns R':>6s} "
          f"{'look-alikes none':>16s} {'skill->none':>11s}")  # fmt: skip
    for margin, lead in itertools.product((0.0, 0.05, 0.1, 0.15, 0.2), (0.05, 0.1, 0.2)):
        outs = outcomes(queries, seen, pointers=True, ask_margin=margin, ask_lead=lead)
        m = injection_metrics(outs)
        none = [o for o in outs if not o.expected]
        said_none = [o for o in outs if not o.selected]
        alike = [o for o in none if o.style == "implicit-none"]
        tp = sum(not o.expected for o in said_none)
        print(
            f"{margin:6.2f} {lead:5.2f} {m['clean_rate'] or 0:6.3f} "
            f"{m['injected_precision'] or 0:8.3f} {tp / max(1, len(said_none)):6.3f} "
            f"{tp / max(1, len(none)):6.3f} "
            f"{sum(not o.selected for o in alike) / max(1, len(alike)):16.3f} "
            f"{sum(bool(o.expected) for o in said_none):11d}"
        )
    store.close()


if __name__ == "__main__":
    main()
