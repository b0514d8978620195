"""Benchmark: scan + resolve a 20 KB message against 10,000 skills (issue 4 target).

Target: p95 <= 2 ms warm for scanning + resolving (SPEC I1-I2; docs/performance.md).

The registry is built from generated ``Skill`` objects directly (no files), and body
loading uses a stub loader that returns a fixed string: this measures the scanner, the
code mask, the shell-line rule, the resolution order (exact, namespaced, enabled check,
fuzzy) and the several-mentions rule, not disk reads (the loader has its own bench).

Scenarios (each 20 KB of Markdown-ish chat text with prose, fenced code holding ``$VAR``s,
inline code, shell lines and money):

* ``typical``: one exact mention (activates), one namespaced exact mention of the same
  skill, one no-match and one ambiguous fuzzy mention (``$review``: hundreds of hits,
  capped) -- the target scenario;
* ``no-mentions``: no ``$`` outside code (the scanner's common case);
* ``dense``: 100 mentions, mostly unresolved (stress; no target).

A naive resolver (the same scanner, then linear scans of the skill list instead of the
index) is timed on ``typical`` as the baseline. Completion latency at 10,000 skills is
printed too.

    python bench/bench_invocation.py [--skills 10000] [--runs 400] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gen_skills  # bench/ is on sys.path when run as a script

from skillrt.invocation import InvocationResolver, scan_mentions
from skillrt.skills.model import Skill
from skillrt.skills.registry import SkillRegistry

VERBS = gen_skills.VERBS[:15]
OBJECTS = (
    "pull-requests",
    "pdf-reports",
    "k8s-manifests",
    "spreadsheets",
    "meeting-notes",
    "unit-tests",
    "sql-queries",
    "release-notes",
    "docker-images",
    "api-docs",
    "slide-decks",
    "log-files",
    "invoices",
    "terraform-plans",
    "css-styles",
)
TARGET_P95_MS = 2.0


@dataclass
class StubBody:
    text: str
    report: dict[str, Any]


def stub_loader(skill: Skill) -> StubBody:
    return StubBody("# Body\n\nStub guidance.\n", {"skill": skill.qualified_name})


def make_skills(n: int, seed: int = 0) -> list[Skill]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        name = f"{rng.choice(VERBS)}-{rng.choice(OBJECTS)}-{i:05d}"
        ns = f"plugin-{i % 40:02d}" if rng.random() < 0.1 else None
        out.append(
            Skill(
                name=name,
                description=f"Use when you need to {name.replace('-', ' ')}.",
                path=Path("/bench") / name,
                skill_file=None,
                namespace=ns,
                allowed_tools=("Read", "Grep"),
            )
        )
    return out


FILLER = [
    "The deploy failed again last night, and the logs show a timeout in the auth service.",
    "We pay about $3.50 per run, or $1,000 a month, which is under the $5k budget.",
    "Set the variable with `export TOKEN=$SECRET` before you start the worker.",
    "Please check whether the cache key includes the tenant id; it did not in v1.",
    "I think the regression came in with the retry change, but I have no proof yet.",
    "echo $PATH | tr ':' '\\n'",
    "export KUBECONFIG=$HOME/.kube/config",
    "The report should list each failing job with its first error line.",
]
CODE = (
    '```bash\nfor f in "$@"; do\n  echo "$f" >> "$LOG"\n  cp "$f" ${DEST}/\ndone\n'
    "echo $(date) $USER $1\n```\n"
)


def build_message(mentions: list[str], size: int = 20_000, seed: int = 1) -> str:
    """~``size`` chars of chat text with ``mentions`` spread through the prose."""
    rng = random.Random(seed)
    parts: list[str] = []
    length = 0
    slots = list(mentions)
    while length < size:
        if rng.random() < 0.15:
            block = CODE
        else:
            line = rng.choice(FILLER)
            if slots and rng.random() < 0.5 and not line.startswith(("echo", "export")):
                line = f"{line} Use {slots.pop(0)} for this."
            block = line + "\n"
        parts.append(block)
        length += len(block)
    text = "".join(parts)
    if slots:  # anything left goes at the end, in prose
        text += "\nAlso: " + " and ".join(slots) + ".\n"
    return text


def _p95(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(0.95 * len(ordered))) - 1)]


def timed(
    fn: Callable[[], object], runs: int, warmup: int = 30, rounds: int = 1
) -> tuple[float, float, float, float]:
    """(p50, p95, max, cpu p95) in ms; with ``rounds`` > 1, the round with the lowest p95.

    Noise from other processes only ever adds time, so the quietest round (as
    ``timeit`` takes the minimum) is the best estimate of the code's own cost. The CPU
    p95 (this thread's CPU time) is printed too: it does not count time the scheduler
    gave to other processes, so it stays meaningful on a busy machine.
    """
    for _ in range(warmup):
        fn()
    best: tuple[float, float, float, float] | None = None
    for _ in range(rounds):
        wall: list[float] = []
        cpu: list[float] = []
        for _ in range(runs):
            c0 = time.thread_time()
            t0 = time.perf_counter()
            fn()
            wall.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.thread_time() - c0) * 1000)
        stats = (statistics.median(wall), _p95(wall), max(wall), _p95(cpu))
        if best is None or stats[1] < best[1]:
            best = stats
    assert best is not None
    return best


def naive_resolve(skills: list[Skill], text: str) -> list[tuple[str, int]]:
    """The baseline: same scanner, linear scans instead of the index."""
    out = []
    for m in scan_mentions(text):
        hits = [s for s in skills if s.qualified_name == m.id or s.name == m.id]
        if not hits:
            q = m.id.lower()
            hits = [
                s
                for s in skills
                if s.qualified_name.lower().startswith(q) or q in s.qualified_name.lower()
            ]
        out.append((m.id, len(hits)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--skills", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=3, help="report the quietest of N rounds")
    args = ap.parse_args(argv)

    skills = make_skills(args.skills)
    registry = SkillRegistry(skills, disabled=frozenset())
    t0 = time.perf_counter()
    resolver = InvocationResolver(registry, load_body=stub_loader)
    build_ms = (time.perf_counter() - t0) * 1000
    plain = next(s for s in skills if s.namespace is None)
    namespaced = next(s for s in skills if s.namespace is not None)

    scenarios = {
        "typical": build_message(
            [f"${plain.name}", f"${plain.qualified_name}", "$nope-not-a-skill", "$review"]
        ),
        "no-mentions": build_message([]),
        "dense": build_message(
            [f"$missing-{i}" for i in range(90)]
            + [f"${namespaced.qualified_name}"] * 5
            + ["$debug", "$audit-", "$xyz", "$tdd", "$a"]
        ),
    }
    print(f"skills: {len(skills):,}  index build: {build_ms:.1f} ms (once per registry)")
    print("body loading: stub loader (fixed string); disk reads are the loader's bench")
    load1, load5, _ = os.getloadavg()
    print(
        f"runs: {args.runs} per round, quietest of {args.rounds} rounds; "
        f"load average {load1:.2f} / {load5:.2f} on {os.cpu_count()} CPUs"
    )
    print(
        f"{'scenario':<12} {'bytes':>7} {'mentions':>8} {'activated':>9} "
        f"{'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu p95':>8}"
    )
    results: dict[str, tuple[float, float, float, float]] = {}
    for name, text in scenarios.items():
        res = resolver.resolve(text)
        stats = timed(lambda text=text: resolver.resolve(text), args.runs, rounds=args.rounds)
        results[name] = stats
        print(
            f"{name:<12} {len(text.encode()):>7,} {len(res.mentions):>8} "
            f"{len(res.activated):>9} {stats[0]:>8.3f} {stats[1]:>8.3f} {stats[2]:>8.3f} "
            f"{stats[3]:>8.3f}"
        )
    scan = timed(lambda: scan_mentions(scenarios["typical"]), args.runs, rounds=args.rounds)
    print(
        f"{'scan only':<12} {'':>7} {'':>8} {'':>9} {scan[0]:>8.3f} {scan[1]:>8.3f} "
        f"{scan[2]:>8.3f} {scan[3]:>8.3f}   (typical message)"
    )

    base = timed(
        lambda: naive_resolve(skills, scenarios["typical"]), max(20, args.runs // 10), warmup=3
    )
    ours = results["typical"]
    print(
        f"baseline (linear scans) typical: p50 {base[0]:.3f} ms  p95 {base[1]:.3f} ms  "
        f"-> index is {base[0] / ours[0]:.1f}x faster at p50"
    )

    print("completion at the end of a short message:")
    for partial in ("$rev", "$plugin-07:aud", "$deploy-docker", "$dkrimg", "$"):
        text = f"please run {partial}"
        items = resolver.complete(text)
        stats = timed(lambda text=text: resolver.complete(text), args.runs)
        print(
            f"  {partial:<18} {len(items):>3} items  p50 {stats[0]:.3f} ms  p95 {stats[1]:.3f} ms"
        )

    p95, cpu95 = results["typical"][1], results["typical"][3]
    verdict = "PASS" if p95 <= TARGET_P95_MS else "FAIL"
    print(
        f"target: typical p95 <= {TARGET_P95_MS} ms -> {p95:.3f} ms wall "
        f"({cpu95:.3f} ms CPU) {verdict}"
    )
    if p95 > TARGET_P95_MS and cpu95 <= TARGET_P95_MS:
        print("  (wall p95 above target while CPU p95 is within it: the machine is busy)")
    return 0 if p95 <= TARGET_P95_MS else 1


if __name__ == "__main__":
    sys.exit(main())
