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
   sends elsewhere, and the 100 most similar pairs;
5. the **accuracy check** of issue 30: of the first ``--findings`` (20) findings of
   the doctor's act-first list (stubs, duplicates, then shadowing pairs), how many a
   reader would agree with, by this rule, fixed before the check was run:

   - a **stub** is right when its SKILL.md body, headings left out, has fewer than
     20 words, or its description is empty;
   - a **duplicate** ("A is a copy of B") is right when the two SKILL.md files, each
     with its ``name:`` line removed and its name written as a placeholder, match at
     0.9 or more by ``difflib`` (characters);
   - a **shadowing pair** (A shadowed by B) is right when B wins a real request for A:
     a dev request expecting A (and not listing B in ``also_ok``) that the router
     ranks B first on. A pair whose skill has no dev request cannot be checked and is
     counted as not agreed (the count says how many could be checked);
   - a **name collision** is right when both files exist and carry the same name.

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
from skillrt.doctor.analysis import Analysis, analyse
from skillrt.doctor.commands import CommandLine
from skillrt.doctor.findings import shadow_pairs, skill_text
from skillrt.doctor.model import Finding
from skillrt.doctor.priorities import copy_entries, findings, stub_entries
from skillrt.doctor.words import TermStats
from skillrt.routing.fields import load_fields
from skillrt.skills.model import Skill
from skillrt.store import open_location

TOP_PAIRS = 100
#: The rule's constants (module docstring).
STUB_WORDS = 20
COPY_RATIO = 0.9


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
    ap.add_argument("--findings", type=int, default=20, help="findings the check reads (20)")
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
    store_fields = load_fields(skills, store)
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
    report(f"risk / shadowing ({len(pairs)} pairs)", risk, pairs)
    every = _every_pair(skills, store_fields, result)
    report(f"  every candidate pair ({len(every)}, no rule)", risk, every)
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
    listed = findings(
        [],
        stub_entries(skills, result.stubs, CommandLine()),
        copy_entries(skills, result.copies, CommandLine()),
        result.shadowing,
    )
    wins = set(misroutes)
    check(skills, listed[: args.findings], wins, with_requests)
    store.close()


def _every_pair(
    skills: list[Skill], fields: list[object], result: Analysis
) -> list[tuple[str, str]]:
    """The shadowing pairs without the several-requests-over-the-threshold rule."""
    from skillrt.routing.fields import SkillFields

    typed = [f for f in fields if isinstance(f, SkillFields)]
    texts = [
        " ".join([s.description, *(x.text for x in f.sections)])
        for s, f in zip(skills, typed, strict=True)
    ]
    own = [
        skill_text(s.description, [x.text for x in f.sections])
        for s, f in zip(skills, typed, strict=True)
    ]
    pairs = shadow_pairs(
        skills,
        result.held_out,
        result.neighbourhood,
        TermStats(typed, texts),
        own,
        threshold=RoutingConfig().selection_threshold,
        exclude=frozenset(x.position for x in result.stubs),
        copies=frozenset(frozenset((c.position, c.original)) for c in result.copies),
        min_strong=0,
    )
    return [(p.skill, p.shadowed_by) for p in pairs]


def _body(skill: Skill) -> str:
    text = skill.skill_file.read_text(encoding="utf-8") if skill.skill_file else ""
    parts = text.split("---", 2)
    return parts[2] if text.startswith("---") and len(parts) == 3 else text


def _normalised(skill: Skill) -> str:
    import re

    text = skill.skill_file.read_text(encoding="utf-8") if skill.skill_file else skill.description
    text = re.sub(r"(?m)^name:.*$", "", text)
    for name in (skill.name, skill.name.replace("-", " ")):
        text = re.sub(re.escape(name), "<name>", text, flags=re.IGNORECASE)
    return text


def agreed(
    finding: Finding,
    by_name: dict[str, Skill],
    wins: set[tuple[str, str]],
    with_requests: set[str],
) -> tuple[bool, bool]:
    """(a reader agrees, the finding could be checked), by the module docstring's rule."""
    import difflib

    if finding.kind == "stub":
        skill = by_name[finding.skill]
        lines = [ln for ln in _body(skill).splitlines() if not ln.lstrip().startswith("#")]
        words = len(" ".join(lines).split())
        return (words < STUB_WORDS or not skill.description.strip()), True
    if finding.kind == "duplicate":
        a, b = _normalised(by_name[finding.skill]), _normalised(by_name[finding.other])
        return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= COPY_RATIO, True
    if finding.kind == "shadowing":
        checkable = finding.skill in with_requests
        return (finding.skill, finding.other) in wins, checkable
    if finding.kind == "collision":
        return True, True  # found by the registry from the two files themselves
    return False, False


def check(
    skills: list[Skill],
    listed: list[Finding],
    wins: set[tuple[str, str]],
    with_requests: set[str],
) -> None:
    by_name = {s.qualified_name: s for s in skills}
    print(f"\naccuracy check: the first {len(listed)} findings (rule in the module docstring)")
    kinds: Counter[str] = Counter()
    agree: Counter[str] = Counter()
    checkable: Counter[str] = Counter()
    for k, f in enumerate(listed, start=1):
        ok, can = agreed(f, by_name, wins, with_requests)
        kinds[f.kind] += 1
        agree[f.kind] += ok
        checkable[f.kind] += can
        mark = "agree" if ok else ("cannot check" if not can else "disagree")
        other = f" / {f.other}" if f.other else ""
        print(f"  {k:2d}. {f.kind:10s} {f.skill}{other}: {mark}")
    total = sum(agree.values())
    detail = ", ".join(
        f"{kind} {agree[kind]}/{kinds[kind]} ({checkable[kind]} checkable)" for kind in kinds
    )
    print(f"  agreed: {total} of {len(listed)} ({detail})")


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
