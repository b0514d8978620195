"""How long a slow or broken dependency holds a command, a route or a prompt hook (issue 22).

Against a real PostgreSQL server (a throwaway cluster from ``.ci/postgres.sh`` unless
``SKILLRT_TEST_POSTGRES_URL`` and ``SKILLRT_PG_DIR`` name one) and real ``skillrt``
processes, each case timed end to end (process start to exit), ``--runs`` times:

1. a misconfigured store (no such database, no such role, a role that may not log in,
   a bad ``sslmode``, a malformed URL): ``skillrt disable`` fails with ``E_STORE_CONFIG``
   (target: under 2 s);
2. a server that does not answer (a loopback listener that never speaks; a stopped
   postmaster): ``E_STORE_UNAVAILABLE`` (target: the connect timeout, 3 s, plus the
   process's start);
3. routing while the store is silent: the daemon's ``context`` round trip while the
   postmaster is stopped (target: within ``state.route_wait_s``, 0.3 s, of a normal
   one), and every route event written once it is back;
4. ``skillrt route`` while the server is down (``pg_ctl stop``): answers, its event kept
   in the outbox and written by the next command (target: no event lost); and while
   a server never answers (the listener): answers (target: the same route on SQLite plus
   ``state.route_wait_s``, 0.3 s, plus 0.5 s of process noise); and the daemon's
   ``context`` while the whole server is frozen (``SIGSTOP`` of the postmaster and its
   backends: the daemon's open connections get no answer either; target as in 3);
5. the Claude Code hook with a stopped daemon (``kill -STOP``), and with no daemon and a
   silent store (target: ``hook.deadline_s``, 3 s, plus the process's start);
6. ``skillrt route`` with a stopped daemon (target: about 1 s plus in-process routing).

    python bench/bench_stalls.py [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REPO = Path(__file__).resolve().parents[1]
SKILLS = {
    "code-review": ("Review a pull request for correctness, security and style.", "review my pr"),
    "sql-review": ("Review SQL queries for injection and slow plans.", "sql injection"),
    "pdf-tools": ("Extract text and tables from PDF files.", "pdf tables"),
}
PROMPT = "please do a code review of my pr"


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("SKILLRT_")}
    out["PYTHONPATH"] = str(REPO / "src")
    return out


def timed(argv: list[str], cwd: Path, stdin: str | None = None) -> tuple[float, Any, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "skillrt", *argv],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=env(),
        timeout=300,
    )
    elapsed = time.perf_counter() - start
    try:
        out = json.loads(proc.stdout) if proc.stdout.strip() else None
    except ValueError:
        out = proc.stdout
    return elapsed, out, proc.stderr


def summary(times: list[float], target: float | None, ok: bool = True) -> dict[str, Any]:
    worst = max(times)
    return {
        "median_s": round(statistics.median(times), 3),
        "max_s": round(worst, 3),
        "target_s": target,
        "ok": ok and (target is None or worst <= target),
    }


@contextmanager
def postgres() -> Iterator[tuple[str, str]]:
    url, folder = os.environ.get("SKILLRT_TEST_POSTGRES_URL"), os.environ.get("SKILLRT_PG_DIR")
    if url and folder:
        yield url, folder
        return
    out = subprocess.run(
        ["bash", str(REPO / ".ci" / "postgres.sh"), "start"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    values = dict(
        line.removeprefix("export ").split("=", 1) for line in out.splitlines() if "=" in line
    )
    folder, url = values["SKILLRT_PG_DIR"], values["SKILLRT_TEST_POSTGRES_URL"].strip("'")
    try:
        yield url, folder
    finally:
        pg_ctl("stop", folder)


def pg_ctl(action: str, folder: str) -> None:
    subprocess.run(
        ["bash", str(REPO / ".ci" / "postgres.sh"), action, folder],
        capture_output=True, check=False, timeout=120,
    )  # fmt: skip


def with_url(url: str, *, path: str | None = None, user: str | None = None, **q: str) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query.update(q)
    netloc = parts.netloc if user is None else f"{user}@{parts.netloc.rsplit('@', 1)[-1]}"
    return urlunsplit(
        parts._replace(
            path=parts.path if path is None else path, query=urlencode(query), netloc=netloc
        )
    )


def postmaster(folder: str) -> int:
    return int((Path(folder) / "data" / "postmaster.pid").read_text().split()[0])


@contextmanager
def stopped(*pids: int) -> Iterator[None]:
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in reversed(pids):
            os.kill(pid, signal.SIGCONT)


def server_processes(folder: str) -> list[int]:
    """The postmaster and every process it started (its backends)."""
    parent = postmaster(folder)
    found = [parent]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = (Path("/proc") / entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                found.append(int(entry))
    return found


def end_connections(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND application_name = 'skillrt'"
        )


@contextmanager
def silent_listener() -> Iterator[str]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not done.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"postgresql://skillrt@127.0.0.1:{listener.getsockname()[1]}/postgres"
    finally:
        done.set()
        for conn in held:
            conn.close()
        listener.close()


def project(base: Path, name: str, state: str = "") -> Path:
    folder = base / name
    skills = folder / "skills"
    for skill, (description, trigger) in SKILLS.items():
        (skills / skill).mkdir(parents=True, exist_ok=True)
        (skills / skill / "SKILL.md").write_text(
            f"---\nname: {skill}\ndescription: {description}\n"
            f"metadata:\n  triggers: [{trigger}]\n---\n# {skill}\n\nSteps.\n"
        )
    (folder / "skillrt.yaml").write_text(f"roots: [skills]\n{state}")
    return folder


def payload(cwd: Path, prompt: str = PROMPT) -> str:
    return json.dumps(
        {"session_id": "s", "transcript_path": str(cwd / "none.jsonl"), "cwd": str(cwd),
         "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    )  # fmt: skip


@contextmanager
def daemon(cwd: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillrt", "serve", "--poll", "0"],
        cwd=cwd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert '"listening"' in line, line
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    try:
        yield proc
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def route_events(url: str, schema: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'SET search_path TO "{schema}"')
        return int(conn.execute("SELECT COUNT(*) FROM route_events").fetchone()[0])


def drop_schemas(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for kind in ("daemon", "cli", "hook"):
            conn.execute(f'DROP SCHEMA IF EXISTS "bench_stalls_{kind}_{os.getpid()}" CASCADE')
        conn.execute("DROP ROLE IF EXISTS bench_nologin")


# -- the cases ---------------------------------------------------------------------------
def bench_misconfigured(url: str, base: Path, runs: int) -> dict[str, Any]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS bench_nologin")
        conn.execute("CREATE ROLE bench_nologin NOLOGIN")
    cases = {
        "no such database": with_url(url, path="/no_such_db"),
        "no such role": with_url(url, user="no_such_role"),
        "role may not log in": with_url(url, user="bench_nologin"),
        "bad sslmode": with_url(url, sslmode="bogus"),
        "malformed URL": "postgresql://skillrt@[::1/postgres",
    }
    folder = project(base, "misconfigured")
    out: dict[str, Any] = {}
    for what, bad in cases.items():
        times, codes = [], set()
        for _ in range(runs):
            t, data, _ = timed(["--json", "--state", bad, "disable", "pdf-tools"], folder)
            times.append(t)
            codes.add(((data or {}).get("error") or {}).get("code"))
        out[what] = {**summary(times, 2.0, codes == {"E_STORE_CONFIG"}), "codes": sorted(codes)}
    return out


def bench_silent(url: str, pg_dir: str, base: Path, runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    folder = project(base, "silent")
    with silent_listener() as silent:
        times, codes = [], set()
        for _ in range(runs):
            t, data, _ = timed(["--json", "--state", silent, "disable", "pdf-tools"], folder)
            times.append(t)
            codes.add(((data or {}).get("error") or {}).get("code"))
        ok = codes == {"E_STORE_UNAVAILABLE"}
        out["listener that never speaks"] = {**summary(times, 4.5, ok), "codes": sorted(codes)}
    times, codes = [], set()
    for _ in range(runs):
        with stopped(postmaster(pg_dir)):
            t, data, _ = timed(["--json", "--state", url, "disable", "pdf-tools"], folder)
        times.append(t)
        codes.add(((data or {}).get("error") or {}).get("code"))
    ok = codes == {"E_STORE_UNAVAILABLE"}
    out["stopped postmaster"] = {**summary(times, 4.5, ok), "codes": sorted(codes)}
    return out


def bench_daemon_outage(url: str, pg_dir: str, base: Path, runs: int) -> dict[str, Any]:
    from skillrt.daemon.client import DaemonClient

    schema = f"bench_stalls_daemon_{os.getpid()}"
    state = f"state:\n  url: '{url}'\n  schema: {schema}\n"
    folder = project(base, "daemon-outage", state)
    expect = {"roots": None, "config": str((folder / "skillrt.yaml").resolve()),
              "project_dir": str(folder)}  # fmt: skip
    args = {"prompt": PROMPT, "surface": "hook"}
    with daemon(folder), DaemonClient(str(folder / ".skillrt" / "skillrt.sock"), timeout=120) as c:
        normal = []
        for _ in range(runs):
            t = time.perf_counter()
            c.request("context", args, expect=expect)
            normal.append(time.perf_counter() - t)
            time.sleep(1.1)  # stats older than a second: the next route asks the store
        end_connections(url)
        during = []
        with stopped(postmaster(pg_dir)):
            for _ in range(runs):
                time.sleep(1.1)
                t = time.perf_counter()
                c.request("context", args, expect=expect)
                during.append(time.perf_counter() - t)
        time.sleep(5.5)  # past the 5 s a store that failed is left alone: asked again
        c.request("context", args, expect=expect)  # reconnected; its connection pooled
        frozen = []  # its pooled connections kept: a statement on one gets no answer
        with stopped(*server_processes(pg_dir)):
            for _ in range(runs):
                time.sleep(1.1)
                t = time.perf_counter()
                c.request("context", args, expect=expect)
                frozen.append(time.perf_counter() - t)
        deadline = time.monotonic() + 60
        while route_events(url, schema) < 3 * runs + 1 and time.monotonic() < deadline:
            time.sleep(0.2)
        written = route_events(url, schema)
    target = statistics.median(normal) + 0.3 + 0.2
    return {
        "context, store up": summary(normal, None),
        "context, postmaster stopped": summary(during, target),
        "context, server frozen": summary(frozen, target),
        "route events written after": {
            "written": written,
            "routed": 3 * runs + 1,
            "ok": written == 3 * runs + 1,
        },  # fmt: skip
    }


def bench_cli_outage(url: str, pg_dir: str, base: Path, runs: int) -> dict[str, Any]:
    schema = f"bench_stalls_cli_{os.getpid()}"
    state = f"state:\n  url: '{url}'\n  schema: {schema}\n"
    folder = project(base, "cli-outage", state)
    timed(["--json", "route", PROMPT], folder)  # migrated, one event
    pg_ctl("down", pg_dir)
    times = []
    try:
        for _ in range(runs):
            t, data, _ = timed(["--json", "route", PROMPT], folder)
            assert data and "plan" in data, data  # routed (a skill or none), no error
            times.append(t)
    finally:
        pg_ctl("up", pg_dir)
    timed(["--json", "route", PROMPT], folder)  # writes the outbox too
    written = route_events(url, schema)
    out: dict[str, Any] = {
        "route, server down": summary(times, None),
        "route events written after": {
            "written": written,
            "routed": runs + 2,
            "ok": written == runs + 2,
        },  # fmt: skip
    }
    sqlite = project(base, "cli-sqlite")
    timed(["--json", "route", PROMPT], sqlite)  # the index built once, as for the others
    baseline = []
    for _ in range(runs):
        t, data, _ = timed(["--json", "route", PROMPT], sqlite)
        assert data and "plan" in data, data
        baseline.append(t)
    out["route, SQLite"] = summary(baseline, None)
    with silent_listener() as silent:
        state = f"state:\n  url: '{silent}'\n  connect_timeout_s: 3\n"
        folder = project(base, "cli-silent", state)
        timed(["--json", "--state", str(folder / ".skillrt"), "route", PROMPT], folder)  # index
        times = []
        for _ in range(runs):
            t, data, _ = timed(["--json", "route", PROMPT], folder)
            assert data and "plan" in data, data  # routed (a skill or none), no error
            times.append(t)
    out["route, server never answers"] = summary(times, max(baseline) + 0.3 + 0.5)
    return out


def bench_hooks(url: str, pg_dir: str, base: Path, runs: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    folder = project(base, "hook-daemon")
    with daemon(folder) as proc:
        proc.send_signal(signal.SIGSTOP)
        times, answered = [], 0
        for _ in range(runs):
            t, data, _ = timed(["hook", "claude-code"], folder, stdin=payload(folder))
            times.append(t)
            answered += data is not None
        out["hook, daemon stopped"] = {**summary(times, 4.0), "answered": answered}
        times = []
        for _ in range(runs):
            t, data, err = timed(["--json", "route", PROMPT], folder)
            times.append(t)
        out["route, daemon stopped"] = summary(times, None)
    schema = f"bench_stalls_hook_{os.getpid()}"
    state = f"state:\n  url: '{url}'\n  schema: {schema}\n"
    folder = project(base, "hook-store", state)
    timed(["hook", "claude-code", "--no-daemon"], folder, stdin=payload(folder))  # migrated
    times, answered = [], 0
    for _ in range(runs):
        end_connections(url)
        with stopped(postmaster(pg_dir)):
            t, data, _ = timed(["hook", "claude-code", "--no-daemon"], folder, payload(folder))
        times.append(t)
        answered += data is not None
    out["hook, no daemon, store silent"] = {**summary(times, 4.0), "answered": answered}
    return out


CASES: dict[str, Callable[..., dict[str, Any]]] = {
    "misconfigured store (skillrt disable)": lambda url, d, b, n: bench_misconfigured(url, b, n),
    "silent store (skillrt disable)": bench_silent,
    "routing while the store is silent (daemon)": bench_daemon_outage,
    "skillrt route while the server is down": bench_cli_outage,
    "prompt hook and route": bench_hooks,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    results: dict[str, Any] = {"load_average": os.getloadavg()}
    with postgres() as (url, pg_dir), tempfile.TemporaryDirectory() as tmp:
        try:
            for name, case in CASES.items():
                results[name] = case(url, pg_dir, Path(tmp), args.runs)
                if not args.json:
                    print(f"\n{name}")
                    for what, row in results[name].items():
                        print(f"  {what:<34} {json.dumps(row)}")
        finally:
            drop_schemas(url)
    if args.json:
        print(json.dumps(results, indent=2))
    failed = [
        f"{case}: {what}"
        for case, rows in results.items()
        if isinstance(rows, dict)
        for what, row in rows.items()
        if isinstance(row, dict) and row.get("ok") is False
    ]
    for line in failed:
        print(f"target missed: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
