"""Are ``skillrt doctor``'s findings right? Its predictions against real misroutes.

    python bench/doctor_accuracy.py [--datasets DIR] [--corpora DIR] [--queries FILE]
                                    [--cache DIR] [--samples N] [--naive]

Over the real-skills dev catalogue (213 real skills, bodies from ``--corpora``) and its
dev requests (``bench/data/real-skills-dev.queries.jsonl``):

1. route every single-skill request with the real router (as ``skillrt eval``) and
   derive the **misroutes**: the pair (expected skill, skill ranked first) when the
   first is neither the expected skill nor one of the request's ``also_ok``;
2. run the doctor's analysis on the catalogue;
3. print the AUC of the ``risk`` ranking for "this skill has a misrouted request"
   (over the skills that have requests), and the share of misroutes that the first 100
   ``shadowing`` pairs explain: directed (the pair is (skill, shadowed_by)) and
   unordered (either way round, as similarity pairs are counted);
4. with ``--naive``, the issue's naive predictors on the same data: each skill's nearest
   neighour's similarity, the share of its body sentences that the unchanged router
   sends elsewhere, and the 100 most similar pairs.

The held-out catalogue decides; this one is for measuring ideas, never for tuning on
names. The first run embeds the catalogue and the pseudo-requests (cached in
``--cache``; later runs reuse them).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from dev_data import REAL_QUERIES, add_data_arguments, queries_of, real_skills

from skillrt.config import RoutingConfig
from skillrt.doctor.analysis import analyse
from skillrt.store import open_location

TOP_PAIRS = 100


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float:
    """Probability that a positive outscores a negative (ties count half)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def explained(
    pairs: Sequence[tuple[str, str]], misroutes: Sequence[tuple[str, str]]
) -> tuple[float, float]:
    """Shares of misroutes whose pair is among ``pairs``: (directed, unordered)."""
    directed = set(pairs)
    unordered = {frozenset(p) for p in pairs}
    d = sum(m in directed for m in misroutes) / len(misroutes)
    u = sum(frozenset(m) in unordered for m in misroutes) / len(misroutes)
    return d, u


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--queries", type=Path, default=REAL_QUERIES[0])
    ap.add_argument("--samples", type=int, help="pseudo-requests per skill (default: doctor's)")
    ap.add_argument("--naive", action="store_true", help="also measure the naive predictors")
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    skills = real_skills(args.datasets, args.corpora)
    queries = [q for q in queries_of([args.queries]) if len(q.expected) == 1]
    store = open_location(args.cache / "vectors.db")
    config = RoutingConfig()

    started = time.perf_counter()
    result = analyse(skills, config, store, samples=args.samples)
    print(
        f"doctor: {len(skills)} skills, {result.summary['pseudo_requests']} pseudo-requests "
        f"({result.summary['per_skill']}/skill), {time.perf_counter() - started:.1f} s"
    )
    router = result.router
    misroutes: list[tuple[str, str]] = []
    misrouted: Counter[str] = Counter()
    with_requests: set[str] = set()
    for q in queries:
        expected = q.expected[0]
        with_requests.add(expected)
        ranked = router.route(q.query, surface="eval").candidates
        if ranked and ranked[0].name != expected and ranked[0].name not in q.also_ok:
            misroutes.append((expected, ranked[0].name))
            misrouted[expected] += 1
    names = sorted(with_requests)
    labels = [misrouted[n] > 0 for n in names]
    print(
        f"dev requests: {len(queries)} single-skill, {len(misroutes)} misrouted at top-1, "
        f"{sum(labels)} of {len(names)} skills with a misroute"
    )

    def report(label: str, scores: dict[str, float], pairs: Sequence[tuple[str, str]]) -> None:
        a = auc([scores.get(n, 0.0) for n in names], labels)
        d, u = explained(pairs[:TOP_PAIRS], misroutes)
        print(f"  {label:44s} risk AUC {a:.3f}   first 100 pairs explain {d:.1%} directed, "
              f"{u:.1%} unordered")  # fmt: skip

    print("\nskillrt doctor")
    risk = {r.skill: r.score for r in result.risk}
    pairs = [(p.skill, p.shadowed_by) for p in result.shadowing]
    report("risk / shadowing", risk, pairs)
    routed = {r.skill: r.routed_elsewhere or 0.0 for r in result.risk}
    crowd = {r.skill: r.crowding for r in result.risk}
    report("  risk from held-out routing only", routed, pairs)
    report("  risk from crowding only", crowd, pairs)
    generic = {r.skill: r.genericness for r in result.risk}
    report("  risk from genericness only", generic, pairs)
    if args.naive:
        print("\nnaive predictors")
        hood = result.neighbourhood
        all_names = result.names
        nn = {all_names[i]: near[0][1] if near else 0.0 for i, near in enumerate(hood.nearest)}
        similar = sorted(
            {
                (min(all_names[i], all_names[j]), max(all_names[i], all_names[j])): s
                for i, near in enumerate(hood.nearest)
                for j, s in near
            }.items(),
            key=lambda kv: -kv[1],
        )
        report("nearest neighbour's similarity / similar pairs", nn, [p for p, _ in similar])
        report(
            "own sentences routed elsewhere (no leave-out)",
            _naive_elsewhere(result),
            [p for p, _ in similar],
        )
    store.close()


def _naive_elsewhere(result: object) -> dict[str, float]:
    """Share of each skill's body sentences the unchanged router ranks elsewhere."""
    from skillrt.doctor.analysis import Analysis
    from skillrt.doctor.confusion import route_requests
    from skillrt.doctor.encodings import CachedQueries, EncodingCache

    assert isinstance(result, Analysis)
    router = result.router
    requests = [o.request for o in result.held_out if o.request.source.startswith("section")]
    backend = router.index.backend
    cached = backend if isinstance(backend, CachedQueries) else None
    store = router.index.cache.store
    observed = route_requests(router, cached, EncodingCache(store), requests)
    lost: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for o in observed:
        name = result.names[o.request.skill]
        seen[name] += 1
        lost[name] += o.lost
    return {n: lost[n] / seen[n] for n in seen}


if __name__ == "__main__":
    main()
