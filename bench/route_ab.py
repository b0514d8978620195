"""Route latency of this checkout against another one, interleaved in one session.

Route figures move by 5-10 ms between quiet runs of the same code, so a change is held
against the code before it in the same session: rounds alternate between the two source
trees (``new, old, new, old, ...``), each a fresh process over the same 1,000 real
skills and the 240 real-skills dev requests (query embedding included, no cache hits),
and the medians of the rounds' p50 and p95 are compared::

    git worktree add /tmp/old <commit>
    python bench/route_ab.py --old-src /tmp/old/src [--cache DIR] [--rounds 3]

The catalogue is ``bench_router.py``'s (built under ``--cache`` on the first run); the
old tree keeps its own vector cache and saved index under ``--old-cache`` (default
``<cache>/old``; a cache key can change between versions, and the first round there
embeds the catalogue). Both trees run this checkout's ``bench/bench_router.py`` (its
catalogue and request helpers), with their own ``skillrt`` package.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: One round in a fresh process: ``sys.argv[1]`` the cache folder, prints p50 and p95.
_ROUND = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, {bench!r})
import bench_router as B
from skillrt.routing.router import Router
try:  # a tree from before the store was chosen by open_location
    from skillrt.store import open_location
except ImportError:
    from skillrt.store.sqlite import Store as open_location
cache = Path(sys.argv[1])
skills = B._tree_skills(cache / "real-1000")
router = Router.from_skills(skills, B.EVAL_CFG, store=open_location(Path(sys.argv[2])),
                            backend="onnx-minilm")
queries = [json.loads(l)["query"] for l in B.REAL_QUERIES.open(encoding="utf-8") if l.strip()]
for q in queries[:20]:
    router.route(q + " warm-up")
times = []
for q in queries:
    t = time.perf_counter()
    router.route(q + " " + sys.argv[3])
    times.append((time.perf_counter() - t) * 1000)
times.sort()
print(json.dumps([times[len(times) // 2], times[int(len(times) * 0.95)]]))
"""


def one_round(src: Path, cache: Path, vectors: Path, tag: str) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    code = _ROUND.format(bench=str(HERE))
    out = subprocess.run(
        [sys.executable, "-c", code, str(cache), str(vectors), tag],
        env=env, capture_output=True, text=True, timeout=3600,
    )  # fmt: skip
    if out.returncode != 0:
        sys.exit(f"a round under {src} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    p50, p95 = json.loads(out.stdout.strip().splitlines()[-1])
    return float(p50), float(p95)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old-src", type=Path, required=True, help="the other tree's src/")
    ap.add_argument("--new-src", type=Path, default=HERE.parent / "src")
    ap.add_argument("--cache", type=Path, default=Path(".bench-cache"))
    ap.add_argument("--old-cache", type=Path, default=None, help="default: <cache>/old")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if not (args.cache / "real-1000").is_dir():
        sys.exit(f"no catalogue under {args.cache}: run bench/bench_router.py --cache first")
    print(f"load average {os.getloadavg()[0]:.2f}; {args.rounds} rounds each, interleaved")
    results: dict[str, list[tuple[float, float]]] = {"new": [], "old": []}
    for k in range(args.rounds):
        for name, src in (("new", args.new_src), ("old", args.old_src)):
            folder = args.cache if name == "new" else (args.old_cache or args.cache / "old")
            folder.mkdir(parents=True, exist_ok=True)
            vectors = folder / "vectors.db"
            started = time.monotonic()
            p50, p95 = one_round(src.resolve(), args.cache, vectors, f"round {k}")
            results[name].append((p50, p95))
            print(f"  {name} round {k + 1}: p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  "
                  f"({time.monotonic() - started:.0f} s)", flush=True)  # fmt: skip
    med = {n: (statistics.median(a for a, _ in r), statistics.median(b for _, b in r))
           for n, r in results.items()}  # fmt: skip
    print(f"median p50 new {med['new'][0]:.1f} / old {med['old'][0]:.1f} ms; "
          f"median p95 new {med['new'][1]:.1f} / old {med['old'][1]:.1f} ms "
          f"(new - old: {med['new'][1] - med['old'][1]:+.1f} ms); "
          f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
