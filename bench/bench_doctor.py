"""``skillrt doctor`` over 1,000 real skills with a warm cache: wall time and peak memory.

    python bench/bench_doctor.py [--skills 1000] [--cache DIR] [--runs 3]

Builds a catalogue of real SKILL.md skills (``bench/real_catalogue.py``: the shared
corpora's skills, then remixes), runs ``skillrt doctor --root <catalogue> --json`` once
to fill the cache (reading and embedding every skill and pseudo-request; minutes), then
``--runs`` more times with the cache warm, each a fresh process, and prints each warm
run's wall time and peak resident memory (the process's own ``ru_maxrss``, from
``wait4``). Targets (issue 23): <= 60 s and <= 300 MB on the 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from real_catalogue import build_real_catalogue  # noqa: E402

TARGET_S = 60.0
TARGET_MB = 300.0


def run_doctor(
    root: Path, state: Path, samples: int | None = None
) -> tuple[float, float, dict[str, Any]]:
    """One ``skillrt doctor`` process: (wall seconds, peak RSS MB, its JSON report)."""
    extra = ["--samples", str(samples)] if samples is not None else []
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "skillrt", "doctor", "--root", str(root),
             "--state", str(state), "--json", *extra],
            stdout=out,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )  # fmt: skip
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        raw = out.read()
    if proc.returncode != 0:
        raise SystemExit(f"skillrt doctor failed ({proc.returncode}): {raw[:500]!r}")
    return elapsed, usage.ru_maxrss / 1024.0, json.loads(raw)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--skills", type=int, default=1_000)
    ap.add_argument("--cache", type=Path, default=Path(".bench-cache"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--samples", type=int, default=None, help="doctor --samples")
    args = ap.parse_args()
    root = args.cache / f"doctor-catalogue-{args.skills}"
    state = args.cache / f"doctor-state-{args.skills}"
    if not root.exists():
        build_real_catalogue(root, args.skills, seed=0)
    cold_s, cold_mb, cold = run_doctor(root, state, args.samples)
    a = cold["analysis"]
    print(
        f"{a['skills']} real skills, {a['pseudo_requests']} pseudo-requests "
        f"({a['per_skill']}/skill) + {a['probes']} probes; first run {cold_s:.1f} s, "
        f"{cold_mb:.0f} MB ({a['texts_embedded']} texts embedded, "
        f"{a['encodings_computed']} requests encoded)"
    )
    times, peaks = [], []
    for n in range(args.runs):
        elapsed, peak, warm = run_doctor(root, state, args.samples)
        w = warm["analysis"]
        times.append(elapsed)
        peaks.append(peak)
        print(
            f"  warm run {n + 1}: {elapsed:.1f} s wall (analysis {w['seconds']:.1f} s), "
            f"peak RSS {peak:.0f} MB, {w['texts_embedded']} texts embedded, "
            f"{w['encodings_computed']} requests encoded"
        )
    if times:
        t, m = statistics.median(times), max(peaks)
        print(
            f"doctor, warm cache, {a['skills']} skills: median {t:.1f} s "
            f"(target <= {TARGET_S:.0f} s: {'met' if t <= TARGET_S else 'NOT met'}), "
            f"peak {m:.0f} MB (target <= {TARGET_MB:.0f} MB: "
            f"{'met' if m <= TARGET_MB else 'NOT met'}); load average "
            f"{os.getloadavg()[0]:.2f}"
        )


if __name__ == "__main__":
    main()
