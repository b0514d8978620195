"""The state store on SQLite and on PostgreSQL, in one run (issue 14).

Three measurements, each on both backends:

1. **Concurrent writers.** 8 processes for 30 s each mix the writes a fleet makes:
   route events (60% of operations; queued to the process's ``RouteEventWriter``, as
   the MCP server and a runtime on a shared store do, which writes them in batches
   with the candidates' stats counts), execution stats (30%, ``record_execution``,
   one transaction each) and enable flips (10%, one transaction each). Every process
   counts what it submitted and wrote; afterwards the store is counted: route events,
   summed route and execution counters. Target: 0 errors, 0 lost events or counts.
   Throughput is reported for both.
2. **Route latency.** ``SkillRuntime.route`` over a 200-skill catalogue (hashing
   embeddings, so the store's share shows): SQLite writes each event in the request,
   PostgreSQL hands it to the background writer (batched, flushed at close) and reads
   the skills' stats from the server. Target: PostgreSQL's p95 within 3 ms of SQLite's.
3. **Kill -9.** 20 composite runs (4 phases), each driven by whichever of 3 worker
   processes holds its lease (1 s); while a run is under way its owner is SIGKILLed at
   a random moment and a fresh worker joins. Target: every run completes and each
   phase is verified exactly once.

    python bench/bench_store.py                       # starts a throwaway PostgreSQL
    python bench/bench_store.py --postgres-url URL    # or SKILLRT_TEST_POSTGRES_URL
    python bench/bench_store.py --quick               # 5 s writers, 5 kills
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

SKILLS = [f"skill-{i:02d}" for i in range(20)]
KINDS = ("sqlite", "postgresql")
TARGET_P95_DELTA_MS = 3.0
MEMORY = re.compile(r"^Memory file: (.+)$", re.M)
PHASE = re.compile(r"\| phase \d+/\d+: (\S+) \|")


# -- backends -------------------------------------------------------------------------
class Backend:
    """One backend under test: how to open a handle, and its config for a runtime."""

    def __init__(self, kind: str, location: str, schema: str | None, tmp: Path) -> None:
        self.kind, self.location, self.schema, self.tmp = kind, location, schema, tmp

    def open(self, **options: Any) -> Any:
        if self.kind == "sqlite":
            from skillrt.store.sqlite import SqliteStore

            return SqliteStore(self.location, **options)
        from skillrt.store.postgres import PostgresStore

        options.setdefault("cache_path", self.tmp / "cache.db")
        return PostgresStore(self.location, schema=self.schema, **options)

    def args(self) -> list[str]:
        return [self.kind, self.location, self.schema or "", str(self.tmp)]

    @classmethod
    def from_args(cls, args: list[str]) -> Backend:
        kind, location, schema, tmp = args
        return cls(kind, location, schema or None, Path(tmp))


def backend(kind: str, tmp: Path, url: str, name: str) -> Backend:
    """A fresh, empty store of ``kind`` for one measurement."""
    folder = tmp / f"{kind}-{name}"
    folder.mkdir()
    if kind == "sqlite":
        return Backend(kind, str(folder / "state.db"), None, folder)
    return Backend(kind, url, f"bench_{name}_{uuid.uuid4().hex[:8]}", folder)


@contextmanager
def postgres(url: str | None) -> Iterator[str]:
    """The given server, or a throwaway cluster (``.ci/postgres.sh``) for this run."""
    if url:
        yield url
        return
    out = subprocess.run(
        ["bash", str(REPO / ".ci" / "postgres.sh"), "start"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    env = dict(re.findall(r"export (\w+)='?([^'\n]*)'?", out))
    try:
        yield env["SKILLRT_TEST_POSTGRES_URL"]
    finally:
        subprocess.run(
            ["bash", str(REPO / ".ci" / "postgres.sh"), "stop", env["SKILLRT_PG_DIR"]],
            check=False,
        )


def drop_schema(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


# -- 1. concurrent writers ------------------------------------------------------------
def writer(args: list[str], seconds: float, seed: int) -> dict[str, Any]:
    """One process: mixed writes for ``seconds``; what it wrote, counted."""
    from skillrt.errors import SkillrtError
    from skillrt.store import skill_state
    from skillrt.store.counters import record_execution
    from skillrt.telemetry.events import RouteEvent
    from skillrt.telemetry.writer import RouteEventWriter

    rng = random.Random(seed)
    store = Backend.from_args(args).open()
    events = RouteEventWriter(store, write_timeout_ms=1000)
    counts = {"events": 0, "candidates": 0, "executions": 0, "flips": 0, "errors": 0}
    errors: list[str] = []
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        op = rng.random()
        try:
            if op < 0.6:
                candidates = rng.sample(SKILLS, 3)
                event = RouteEvent(
                    route_id=f"{seed}-{n}",
                    ts=time.time(),
                    surface="bench",
                    config_id="default",
                    query_hash="h",
                    query_chars=10,
                    query_text=None,
                    query_type="single",
                    candidate_count=3,
                    selected_skills=(candidates[0],),
                    score_breakdown={},
                    routing_reason="bench",
                    latency_ms=1.0,
                )
                events.submit_event(event, candidates)
                counts["events"] += 1
                counts["candidates"] += 3
            elif op < 0.9:
                record_execution(store, rng.choice(SKILLS), success=rng.random() < 0.8)
                counts["executions"] += 1
            else:
                skill_state.set_enabled(store, rng.choice(SKILLS), rng.random() < 0.5)
                counts["flips"] += 1
        except SkillrtError as exc:
            counts["errors"] += 1
            errors.append(exc.message[:200])
        n += 1
    counts["sync_writes"] = counts["executions"] + counts["flips"]
    events.close(timeout_s=120)  # what a process does at a clean shutdown: flush
    counts["dropped"] = events.dropped
    store.close()
    return {**counts, "sample_errors": errors[:3]}


def bench_writers(backend: Backend, procs: int, seconds: float) -> dict[str, Any]:
    from skillrt.store.counters import skill_stats

    backend.open().schema_version()  # migrate once, outside the timing
    ctx = mp.get_context("spawn")
    t0 = time.perf_counter()
    with ctx.Pool(procs) as pool:
        results = pool.starmap(writer, [(backend.args(), seconds, i) for i in range(procs)])
    wall = time.perf_counter() - t0
    total = {k: sum(r[k] for r in results) for k in ("events", "candidates", "executions")}
    total["flips"] = sum(r["flips"] for r in results)
    errors = sum(r["errors"] for r in results)
    dropped = sum(r["dropped"] for r in results)
    store = backend.open()
    conn = store.connection()
    stored_events = int(conn.execute("SELECT COUNT(*) FROM route_events").fetchone()[0])
    stats = skill_stats(store)
    store.close()
    stored_routes = sum(s.routes for s in stats.values())
    stored_execs = sum(s.executions for s in stats.values())
    ops = total["events"] + total["executions"] + total["flips"]
    return {
        "processes": procs,
        "seconds": seconds,
        "ops": ops,
        "ops_per_s": round(ops / seconds, 1),
        "events_per_s": round(stored_events / seconds, 1),
        "transactions_per_s": round((total["executions"] + total["flips"]) / seconds, 1),
        "dropped_by_writer": dropped,
        "wall_s": round(wall, 1),
        "errors": errors,
        "sample_errors": [e for r in results for e in r["sample_errors"]][:3],
        "events_written": total["events"],
        "events_stored": stored_events,
        "lost_events": total["events"] - stored_events,
        "lost_route_counts": total["candidates"] - stored_routes,
        "lost_execution_counts": total["executions"] - stored_execs,
    }


# -- 2. route latency -----------------------------------------------------------------
def bench_latency(backend: Backend, catalogue: Path, routes: int) -> dict[str, Any]:
    from skillrt.config import RoutingConfig, RuntimeConfig, StateConfig
    from skillrt.runtime import SkillRuntime

    state_dir = backend.tmp / "latency"
    config = RuntimeConfig(
        project_dir=backend.tmp,
        state_dir=state_dir,
        routing=RoutingConfig(embedding_backend="hashing"),
    )
    store = None
    if backend.kind == "postgresql":
        config = config.replace_section(
            state=StateConfig(url=backend.location, schema=backend.schema)
        )
    else:
        store = backend.open()
    rt = SkillRuntime(config, roots=[catalogue], store=store)
    queries = [f"please {w} the {x} report" for w in ("review", "deploy", "convert", "test")
               for x in ("sales", "api", "docs", "billing", "infra")]  # fmt: skip
    for q in queries:  # warm: index built, vectors cached, statements prepared
        rt.route(q)
    times = []
    for i in range(routes):
        t0 = time.perf_counter()
        rt.route(queries[i % len(queries)] + f" {i}")
        times.append((time.perf_counter() - t0) * 1000)
    t0 = time.perf_counter()
    rt.close()  # flushes queued events
    close_ms = (time.perf_counter() - t0) * 1000
    check = backend.open()
    stored = int(check.connection().execute("SELECT COUNT(*) FROM route_events").fetchone()[0])
    check.close()
    times.sort()
    return {
        "routes": routes,
        "p50_ms": round(statistics.median(times), 3),
        "p95_ms": round(times[int(0.95 * len(times)) - 1], 3),
        "events_stored": stored,
        "events_expected": routes + len(queries),
        "close_ms": round(close_ms, 1),
    }


# -- 3. kill -9 -------------------------------------------------------------------------
PHASES = ["scope", "draft", "review", "ship"]


def composite(root: Path) -> Path:
    folder = root / "bench-flow"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: bench-flow\ndescription: A composite benchmark workflow.\n---\n# flow\n",
        encoding="utf-8",
    )
    config = {
        "name": "bench-flow",
        "phases": [
            {"id": p, "agent": f"{p}-agent", "instructions": f"Do {p}.", "context": []}
            for p in PHASES
        ],
    }
    (folder / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return folder


def worker_config(backend: Backend, lease_s: float, worker_id: str | None) -> Any:
    from skillrt.config import OrchestrationConfig, RoutingConfig, RuntimeConfig

    return RuntimeConfig(
        project_dir=backend.tmp,
        state_dir=backend.tmp / "kill",
        routing=RoutingConfig(embedding_backend="hashing"),
        orchestration=OrchestrationConfig(
            lease_s=lease_s,
            worker_id=worker_id,
            memory_dir=backend.tmp / "kill" / "memory",
            learnings_dir=backend.tmp / "kill" / "learnings",
        ),
    )


def run_worker(args: list[str], lease_s: float, stop: Path, skills: Path) -> None:
    """A worker process: drive whatever run it can claim until ``stop`` exists."""
    from skillrt.errors import WorkflowBusy
    from skillrt.execution.base import Runner, RunnerResult
    from skillrt.runtime import SkillRuntime

    backend = Backend.from_args(args)
    worker_id = f"worker-{os.getpid()}"

    class SlowAgent(Runner):
        name = "bench-agent"

        def run(self, prompt: str, *, timeout_s: float | None = None) -> RunnerResult:
            time.sleep(random.uniform(0.05, 0.25))  # the agent works
            path = Path(MEMORY.search(prompt)[1])  # type: ignore[index]
            phase = PHASE.search(prompt)[1]  # type: ignore[index]
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(f"{phase} done.\n\nStatus: COMPLETED\n", encoding="utf-8")
            os.replace(tmp, path)
            return RunnerResult(output="ok", latency_ms=0.0)

    rt = SkillRuntime(
        worker_config(backend, lease_s, worker_id), roots=[skills], store=backend.open()
    )
    agent = SlowAgent()
    while not stop.exists():
        busy = True
        for run in rt.workflow_list():
            if run.state == "completed":
                continue
            try:
                rt.workflow_resume(run.run_id, runner=agent)
                busy = False
            except WorkflowBusy:
                continue
        if busy:
            time.sleep(0.05)


def bench_kills(backend: Backend, kills: int, lease_s: float) -> dict[str, Any]:
    from skillrt.orchestration.protocol import new_run_id
    from skillrt.orchestration.state import WorkflowStore

    skills = backend.tmp / "kill-skills"
    folder = composite(skills)
    stop = backend.tmp / "stop"
    store = backend.open()
    ws = WorkflowStore(store, lease_s=lease_s)
    config = worker_config(backend, lease_s, None)

    def spawn() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--worker",
                *backend.args(),
                str(lease_s),
                str(stop),
                str(skills),
            ],  # fmt: skip
            start_new_session=True,
        )

    workers = [spawn() for _ in range(3)]
    rng = random.Random(14)
    run_ids: list[str] = []
    hits = 0
    t0 = time.perf_counter()
    try:
        for _ in range(kills):
            run_id = new_run_id()
            ws.create_run(
                run_id=run_id,
                skill="bench-flow",
                skill_dir=str(folder),
                query="Ship the quarterly report",
                mode="runner",
                runner={"kind": "python", "name": "bench-agent"},
                memory_dir=str(config.orchestration.memory_dir),
                learnings_dir=str(config.orchestration.learnings_dir),
            )
            run_ids.append(run_id)
            time.sleep(rng.uniform(0.1, 1.2))  # a random place in the run
            owner = ws.load(run_id).owner
            victim = next(
                (w for w in workers if owner and owner == f"worker-{w.pid}"),
                rng.choice(workers),
            )
            hits += int(bool(owner) and owner == f"worker-{victim.pid}")
            os.killpg(victim.pid, signal.SIGKILL)
            victim.wait()
            workers[workers.index(victim)] = spawn()
            deadline = time.monotonic() + 120
            while ws.load(run_id).state.value != "completed":
                if time.monotonic() > deadline:
                    raise RuntimeError(f"run {run_id} did not complete")
                time.sleep(0.05)
    finally:
        stop.write_text("stop")
        for w in workers:
            try:
                w.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(w.pid, signal.SIGKILL)
    elapsed = time.perf_counter() - t0
    completed = 0
    verified_once = 0
    reruns = 0
    for run_id in run_ids:
        rec = ws.load(run_id)
        completed += rec.state.value == "completed"
        transitions = ws.transitions(run_id)
        verified = [t["phase_id"] for t in transitions if t["to_state"] == "verified"]
        started = [t["phase_id"] for t in transitions if t["to_state"] == "running"]
        verified_once += sorted(verified) == sorted(PHASES)
        reruns += len(started) - len(set(started))
    store.close()
    return {
        "runs": len(run_ids),
        "kills": kills,
        "kills_of_the_owner": hits,
        "completed": completed,
        "each_phase_verified_once": verified_once,
        "phases_run_again": reruns,
        "seconds": round(elapsed, 1),
    }


# -- main -------------------------------------------------------------------------------
def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        a = sys.argv[2:]
        run_worker(a[:4], float(a[4]), Path(a[5]), Path(a[6]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres-url", default=os.environ.get("SKILLRT_TEST_POSTGRES_URL"))
    parser.add_argument("--seconds", type=float, default=30.0, help="writer time (default 30)")
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--routes", type=int, default=1000)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--lease", type=float, default=1.0, help="lease seconds in the kill test")
    parser.add_argument(
        "--quick", action="store_true", help="a short run: 5 s writers, 300 routes, 5 kills"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args()
    if args.quick:
        args.seconds = min(args.seconds, 5.0)
        args.routes, args.kills = min(args.routes, 300), min(args.kills, 5)
    from gen_skills import generate_catalogue

    out: dict[str, Any] = {"writers": {}, "latency": {}, "kills": {}}
    with postgres(args.postgres_url) as url, tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        catalogue = tmp / "catalogue"
        generate_catalogue(catalogue, 200, seed=0)
        made: list[Backend] = []

        def fresh(kind: str, name: str) -> Backend:
            made.append(backend(kind, tmp, url, name))
            return made[-1]

        try:
            for kind in KINDS:
                log(f"{kind}: {args.processes} writers x {args.seconds:g} s")
                b = fresh(kind, "writers")
                out["writers"][kind] = bench_writers(b, args.processes, args.seconds)
            for kind in KINDS:
                log(f"{kind}: route latency over {args.routes} routes")
                out["latency"][kind] = bench_latency(fresh(kind, "latency"), catalogue, args.routes)
            for kind in KINDS:
                log(f"{kind}: kill -9 in {args.kills} runs shared by 3 workers")
                out["kills"][kind] = bench_kills(fresh(kind, "kills"), args.kills, args.lease)
        finally:
            for b in made:
                if b.schema:
                    drop_schema(url, b.schema)
    lat = out["latency"]
    delta = lat["postgresql"]["p95_ms"] - lat["sqlite"]["p95_ms"]
    w = out["writers"]
    k = out["kills"]
    out["targets"] = {
        "writers_0_errors": all(w[b]["errors"] == 0 for b in w),
        "writers_0_lost": all(
            w[b]["lost_events"] == w[b]["lost_route_counts"] == w[b]["lost_execution_counts"] == 0
            for b in w
        ),
        "route_p95_delta_ms": round(delta, 3),
        "route_p95_within_3ms": delta <= TARGET_P95_DELTA_MS,
        "kills_all_completed_once": all(
            k[b]["completed"] == k[b]["each_phase_verified_once"] == k[b]["runs"] for b in k
        ),
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        report(out)
    return 0 if all(v for key, v in out["targets"].items() if key != "route_p95_delta_ms") else 1


def log(message: str) -> None:
    print(f"bench_store: {message}", file=sys.stderr, flush=True)


def report(out: dict[str, Any]) -> None:
    w, lat, k = out["writers"], out["latency"], out["kills"]
    print("concurrent writers (route events 60% / execution stats 30% / enable flips 10%)")
    print(f"{'backend':<11} {'procs':>5} {'ops/s':>9} {'events/s':>9} {'tx/s':>8} "
          f"{'errors':>6} {'events':>8} {'lost':>5}")  # fmt: skip
    for b, r in w.items():
        lost = r["lost_events"] + r["lost_route_counts"] + r["lost_execution_counts"]
        print(f"{b:<11} {r['processes']:>5} {r['ops_per_s']:>9} {r['events_per_s']:>9} "
              f"{r['transactions_per_s']:>8} {r['errors']:>6} {r['events_stored']:>8} "
              f"{lost:>5}")  # fmt: skip
    print(f"throughput PostgreSQL / SQLite: "
          f"{w['postgresql']['ops_per_s'] / max(w['sqlite']['ops_per_s'], 1e-9):.2f}x "
          "(events/s: route events stored; tx/s: stat updates and flips)")  # fmt: skip
    print()
    print("route latency (SkillRuntime.route, 200 skills, hashing embeddings)")
    for b, r in lat.items():
        print(f"{b:<11} p50 {r['p50_ms']:>7.3f} ms  p95 {r['p95_ms']:>7.3f} ms  "
              f"events stored {r['events_stored']}/{r['events_expected']}  "
              f"close {r['close_ms']} ms")  # fmt: skip
    print(f"p95 difference: {out['targets']['route_p95_delta_ms']:+.3f} ms (target <= 3 ms)")
    print()
    print("kill -9 of a worker in composite runs shared by 3 workers")
    for b, r in k.items():
        print(f"{b:<11} runs {r['runs']}  kills {r['kills']} ({r['kills_of_the_owner']} of the "
              f"owner)  completed {r['completed']}  each phase verified once "
              f"{r['each_phase_verified_once']}  phases run again {r['phases_run_again']}  "
              f"{r['seconds']} s")  # fmt: skip
    print()
    print("targets:", json.dumps(out["targets"]))


if __name__ == "__main__":
    sys.exit(main())
