"""Discovery: discover + parse + validate a generated catalogue, cold and warm; the CLI.

Figures (issue 2):

* 10,000 generated skills (10 roots of 1,000: S3 caps a root at 2,000 folders),
  discovered, parsed and validated with a fresh store (cold: every SKILL.md parsed and
  written to the index cache) and again with the tree unchanged (warm: every skill
  served by the index cache). Targets: cold <= 3 s, warm <= 0.5 s.
* A baseline: what a plain implementation does (read each whole file, ``yaml.safe_load``
  the frontmatter, validate), to put the cold figure in context.
* ``skillrt list --json`` over 1,000 skills with a warm cache, as a whole process, N
  times: p50/p95. Target <= 300 ms. And ``import skillrt.cli`` on its own.

Times are wall clock; each figure is the best (min) and the median of several runs, as
other processes on a shared 2-core machine add noise. "Cold" means a cold index cache;
the OS page cache is warm after generating the tree.

    python bench/bench_discovery.py [--skills 10000] [--runs 5] [--cli-runs 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    import skillrt  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_skills import generate_roots

from skillrt.config import DiscoveryConfig, RootConfig
from skillrt.skills.registry import SkillRegistry
from skillrt.store import Store, open_location

COLD_TARGET_S = 3.0
WARM_TARGET_S = 0.5
CLI_TARGET_MS = 300.0


def discover(roots: list[Path], store: Store | None) -> SkillRegistry:
    cfg = DiscoveryConfig(conventional_roots=False)
    explicit = tuple(RootConfig(r) for r in roots)
    return SkillRegistry.discover(
        cfg, project_dir=roots[0].parent, store=store, explicit_roots=explicit
    )


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, result)."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, time.process_time() - c0, out


def summary(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "min": ordered[0],
        "p50": statistics.median(ordered),
        "p95": p95,
        "runs": len(ordered),
    }


def naive_baseline(roots: list[Path]) -> float:
    """Read every SKILL.md whole, ``yaml.safe_load`` its frontmatter, validate it."""
    import yaml

    from skillrt.skills.validate import validate_frontmatter

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    t0 = time.perf_counter()
    count = 0
    for root in roots:
        for path in root.rglob("SKILL.md"):
            text = path.read_text(encoding="utf-8")
            _, fm, _body = text.split("---", 2)
            data = yaml.load(fm, Loader=loader)
            validate_frontmatter(data, path.parent.name)
            count += 1
    assert count > 0
    return time.perf_counter() - t0


def age(root: Path, seconds: int = 3600) -> None:
    """Backdate the generated files, as a real catalogue is not seconds old: files
    modified in the last 2 s are re-verified by content hash on every warm run."""
    past = time.time_ns() - seconds * 1_000_000_000
    for path in root.rglob("SKILL.md"):
        os.utime(path, ns=(past, past))


def pyyaml_only_cold(base: Path, roots: list[Path], n: int) -> float:
    """Our cold discovery with the fast frontmatter reader switched off (PyYAML only)."""
    from skillrt.skills import fastyaml

    real = fastyaml.parse
    fastyaml.parse = lambda _source: None  # type: ignore[assignment]
    try:
        store = open_location(base / "pyyaml-only" / "state.db")
        seconds, _cpu, reg = timed(lambda: discover(roots, store))
        store.close()
    finally:
        fastyaml.parse = real  # type: ignore[assignment]
    assert reg.cache_misses == n
    return seconds


def bench_library(base: Path, n: int, runs: int) -> dict[str, Any]:
    roots = generate_roots(base / "catalogue", n)
    age(base / "catalogue")
    cold: list[float] = []
    cold_cpu: list[float] = []
    for i in range(max(1, runs // 2)):
        db = base / f"cold-{i}" / "state.db"
        store = open_location(db)
        seconds, cpu, reg = timed(lambda s=store: discover(roots, s))  # type: ignore[misc]
        store.close()
        assert len(reg) == n and reg.cache_misses == n, (len(reg), reg.cache_misses)
        cold.append(seconds)
        cold_cpu.append(cpu)
    warm: list[float] = []
    warm_cpu: list[float] = []
    db = base / "cold-0" / "state.db"
    for _ in range(runs):
        store = open_location(db)  # a new handle, as a new process would open
        seconds, cpu, reg = timed(lambda s=store: discover(roots, s))  # type: ignore[misc]
        store.close()
        assert reg.cache_hits == n and reg.cache_misses == 0, (reg.cache_hits, reg.cache_misses)
        warm.append(seconds)
        warm_cpu.append(cpu)
    baseline = min(naive_baseline(roots) for _ in range(2))
    pyyaml_only = pyyaml_only_cold(base, roots, n)
    cold_s, warm_s = summary(cold), summary(warm)
    return {
        "skills": n,
        "roots": len(roots),
        "cold_s": cold_s,
        "warm_s": warm_s,
        "cold_cpu_s": min(cold_cpu),
        "warm_cpu_s": min(warm_cpu),
        "cold_over_warm": cold_s["min"] / warm_s["min"],
        "naive_baseline_s": baseline,
        "naive_over_cold": baseline / cold_s["min"],
        "pyyaml_only_cold_s": pyyaml_only,
        "pyyaml_only_over_cold": pyyaml_only / cold_s["min"],
        "cold_target_s": COLD_TARGET_S,
        "warm_target_s": WARM_TARGET_S,
        "cold_ok": cold_s["min"] <= COLD_TARGET_S,
        "warm_ok": warm_s["min"] <= WARM_TARGET_S,
    }


def skillrt_command() -> list[str]:
    script = Path(sys.executable).with_name("skillrt")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "skillrt"]


def bench_cli(base: Path, n: int, runs: int) -> dict[str, Any]:
    root = base / "cli-catalogue"
    from gen_skills import generate_catalogue

    generate_catalogue(root, n)
    age(root)
    workdir = base / "cli-project"
    workdir.mkdir()
    env = dict(os.environ, HOME=str(base))
    cmd = [*skillrt_command(), "list", "--root", str(root), "--json"]

    def once() -> float:
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - t0
        if proc.returncode != 0:
            raise SystemExit(f"skillrt list failed: {proc.stdout}{proc.stderr}")
        return elapsed

    first = json.loads(
        subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True).stdout
    )  # cold: fills the index cache
    assert len(first["skills"]) == n
    samples = [once() * 1000 for _ in range(runs)]

    def python_only() -> float:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        return time.perf_counter() - t0

    def import_cli() -> float:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import skillrt.cli"], check=True)
        return time.perf_counter() - t0

    interpreter = summary([python_only() * 1000 for _ in range(max(5, runs // 2))])
    imports = summary([import_cli() * 1000 for _ in range(max(5, runs // 2))])
    cli = summary(samples)
    return {
        "skills": n,
        "list_json_ms": cli,
        "python_startup_ms": interpreter,
        "import_skillrt_cli_ms": imports,
        "target_ms": CLI_TARGET_MS,
        "ok": cli["p50"] <= CLI_TARGET_MS,
        "hyperfine": f"hyperfine -w 3 -N '{' '.join(cmd)}'",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--skills", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5, help="warm runs (cold: half as many)")
    parser.add_argument("--cli-skills", type=int, default=1_000)
    parser.add_argument("--cli-runs", type=int, default=20)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--keep", type=Path, help="generate here and keep it (default: a temp dir)")
    args = parser.parse_args(argv)

    base = args.keep or Path(tempfile.mkdtemp(prefix="skillrt-bench-discovery-"))
    if args.keep and base.exists():
        shutil.rmtree(base)
    base.mkdir(parents=True, exist_ok=True)
    try:
        lib = bench_library(base, args.skills, args.runs)
        cli = bench_cli(base, args.cli_skills, args.cli_runs)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)

    if args.json:
        print(json.dumps({"library": lib, "cli": cli}, indent=2))
        return 0 if lib["cold_ok"] and lib["warm_ok"] and cli["ok"] else 1

    def mark(ok: bool) -> str:
        return "ok" if ok else "OVER TARGET"

    c, w = lib["cold_s"], lib["warm_s"]
    print(f"discover + parse + validate {lib['skills']:,} skills in {lib['roots']} roots")
    print(
        f"  cold (fresh store)      min {c['min']:.3f} s  p50 {c['p50']:.3f} s  "
        f"target <= {COLD_TARGET_S} s  {mark(lib['cold_ok'])}"
    )
    print(
        f"  warm (index cache)      min {w['min']:.3f} s  p50 {w['p50']:.3f} s  "
        f"target <= {WARM_TARGET_S} s  {mark(lib['warm_ok'])}"
    )
    print(
        f"  cold / warm             {lib['cold_over_warm']:.1f}x   "
        f"(CPU time: cold {lib['cold_cpu_s']:.3f} s, warm {lib['warm_cpu_s']:.3f} s)"
    )
    print(
        f"  baseline: cold with PyYAML only (fast reader off)      "
        f"{lib['pyyaml_only_cold_s']:.3f} s = {lib['pyyaml_only_over_cold']:.1f}x our cold"
    )
    print(
        f"  baseline: whole-file read + yaml.safe_load + validate   "
        f"{lib['naive_baseline_s']:.3f} s = {lib['naive_over_cold']:.1f}x our cold "
        "(no Skill objects, no cache)"
    )
    s, p, im = cli["list_json_ms"], cli["python_startup_ms"], cli["import_skillrt_cli_ms"]
    print(f"skillrt list --json over {cli['skills']:,} skills, warm, whole process")
    print(
        f"  p50 {s['p50']:.0f} ms  p95 {s['p95']:.0f} ms  min {s['min']:.0f} ms  "
        f"({s['runs']} runs)  target <= {CLI_TARGET_MS:.0f} ms  {mark(cli['ok'])}"
    )
    print(
        f"  of which: python start {p['p50']:.0f} ms, "
        f"python -c 'import skillrt.cli' {im['p50']:.0f} ms (p50)"
    )
    return 0 if lib["cold_ok"] and lib["warm_ok"] and cli["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
