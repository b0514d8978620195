"""Routing while the PostgreSQL store is down or silent: routes never wait on it, and
their events are written once it is back (kept in memory, or in this machine's outbox
by a process that ended meanwhile), or counted as lost and reported by ``stats``.

Against the real test server: a *silent* server is a stopped postmaster (``SIGSTOP``,
after its connections to skillrt were ended, so skillrt must open new ones); a *down*
server is stopped with ``pg_ctl`` (``.ci/postgres.sh down``).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import REPO, StoreSpec
from tests.pg_processes import child_pids, postmaster_pid

from skillrt.config import RuntimeConfig
from skillrt.routing.plan import RouteResult
from skillrt.runtime import SkillRuntime

sys.path.insert(0, str(REPO / "tests" / "hooks"))
from hook_support import build_skills, claude_payload, env, hook_output, skillrt


@pytest.fixture
def pg(postgres_url: str, pg_schema: str, tmp_path: Path) -> StoreSpec:
    return StoreSpec("postgresql", postgres_url, pg_schema, tmp_path)


@pytest.fixture
def cluster(postgres_url: str) -> Iterator[str]:
    folder = os.environ.get("SKILLRT_PG_DIR")
    if not folder:
        pytest.skip("outage tests need SKILLRT_PG_DIR (set by `.ci/postgres.sh start`)")
    yield folder
    postmaster = Path(folder) / "data" / "postmaster.pid"
    if postmaster.exists():
        os.kill(int(postmaster.read_text().split()[0]), signal.SIGCONT)
    server("up", folder)


def server(action: str, folder: str) -> None:
    import subprocess

    subprocess.run(
        ["bash", str(REPO / ".ci" / "postgres.sh"), action, folder],
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=120,
    )


def end_skillrt_connections(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE pid <> pg_backend_pid() AND application_name = 'skillrt'"
        )


@contextmanager
def silent(folder: str, url: str, *, frozen: bool = False) -> Iterator[None]:
    """The server stops answering: skillrt's connections ended, the postmaster stopped;
    ``frozen``: the connections kept, the postmaster and every backend stopped (an open
    connection gets no answer either, and its socket still acknowledges)."""
    postmaster = postmaster_pid(folder)
    if not frozen:
        end_skillrt_connections(url)
    pids = [postmaster, *(child_pids(postmaster) if frozen else [])]
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in reversed(pids):
            os.kill(pid, signal.SIGCONT)


def route_events(url: str, schema: str) -> list[tuple[str, str]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'SET search_path TO "{schema}"')
        rows = conn.execute("SELECT route_id, surface FROM route_events").fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


def project_with_store(tmp_path: Path, pg: StoreSpec, make_skill: Callable[..., Path]) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    build_skills(tmp_path / "skills", make_skill)
    (project / "skillrt.yaml").write_text(
        f"roots: [{tmp_path / 'skills'}]\n"
        f"state:\n  url: '{pg.location}'\n  schema: {pg.schema}\n"
        "  retry_s: 600\n  connect_timeout_s: 2\n"
    )
    return project


@pytest.mark.parametrize("frozen", [False, True], ids=["new-connection", "open-connection"])
def test_a_route_does_not_wait_for_a_silent_store(
    pg: StoreSpec,
    cluster: str,
    tmp_path: Path,
    make_skill: Callable[..., Path],
    monkeypatch: pytest.MonkeyPatch,
    frozen: bool,
) -> None:
    """The store stops answering after the runtime reached it (retry_s 600): a route
    still answers, on the stats it read last, and its event is written when the store
    is back — whether the route must open a new connection or reads on the one it holds
    (``frozen``: cut at state.route_wait_s)."""
    import skillrt.store.counters as stats

    monkeypatch.setattr(stats, "SHARED_STATS_MAX_AGE_S", 0.0)  # every route asks the store
    project = project_with_store(tmp_path, pg, make_skill)
    rt = SkillRuntime(RuntimeConfig.from_file(project / "skillrt.yaml"))
    try:
        first = rt.route("review my pr please")
        assert rt.flush_events(60)
        results: list[RouteResult] = []
        with silent(cluster, pg.location, frozen=frozen):
            worker = threading.Thread(
                target=lambda: results.append(rt.route("review my pr again")), daemon=True
            )
            worker.start()
            worker.join(60)  # without the bound it waits retry_s (600 s) for the server
            assert results, "the route waited on a silent store"
        assert [s.name for s in results[0].plan.skills] == ["code-review"]
        assert rt.flush_events(60)  # the server is back: the queued event is written
        ids = {rid for rid, _ in route_events(pg.location, pg.schema or "")}
        assert ids == {first.route_id, results[0].route_id}
    finally:
        rt.close()


def test_a_command_during_an_outage_keeps_its_event_for_later(
    pg: StoreSpec, cluster: str, tmp_path: Path, make_skill: Callable[..., Path]
) -> None:
    """`skillrt route` while the server is down answers, keeps its event in the outbox;
    the next command that reaches the server writes it; `stats` reports nothing left."""
    project = project_with_store(tmp_path, pg, make_skill)
    before = skillrt("--json", "route", "review my pr", cwd=project)
    assert before.returncode == 0, before.stderr
    server("down", cluster)
    try:
        during = skillrt("--json", "route", "check this sql query for injection", cwd=project)
        assert during.returncode == 0, during.stderr
        assert json.loads(during.stdout)["plan"]["skills"][0]["name"] == "sql-review"
        outbox = project / ".skillrt" / "outbox"
        assert outbox.is_dir() and any(outbox.iterdir()), during.stderr
    finally:
        server("up", cluster)
    after = skillrt("--json", "route", "deploy to production", cwd=project)
    assert after.returncode == 0, after.stderr
    report = skillrt("--json", "stats", cwd=project)
    assert report.returncode == 0, report.stderr
    data = json.loads(report.stdout)
    assert data["unrecorded"]["pending"] == 0 and data["unrecorded"]["lost"] == 0
    assert len(route_events(pg.location, pg.schema or "")) == 3
    assert data["overall"]["routes"] == 3


def test_the_daemon_answers_prompts_while_the_store_is_silent(
    pg: StoreSpec, cluster: str, tmp_path: Path, make_skill: Callable[..., Path]
) -> None:
    import subprocess
    import time

    project = project_with_store(tmp_path, pg, make_skill)
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillrt", "serve", "--poll", "0.2"],
        cwd=project,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        assert json.loads(proc.stderr.readline())["event"] == "listening"
        threading.Thread(target=proc.stderr.read, daemon=True).start()

        def hook(prompt: str) -> dict[str, Any] | None:
            out = skillrt(
                "hook", "claude-code", cwd=project, stdin=claude_payload(prompt, project),
                timeout=60,
            )  # fmt: skip
            return hook_output(out)

        assert hook("review my pr") is not None
        time.sleep(1.2)  # the stats it read are stale now: the next route asks the store
        with silent(cluster, pg.location):
            answer = hook("check this sql query for injection")
            assert answer is not None
            assert "sql-review" in answer["hookSpecificOutput"]["additionalContext"]
            log = project / ".skillrt" / "hook.log"
            assert not log.exists() or "in-process" not in log.read_text()  # the daemon answered
        deadline = time.monotonic() + 60
        while len(route_events(pg.location, pg.schema or "")) < 2:
            assert time.monotonic() < deadline, "the queued event was never written"
            time.sleep(0.2)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def test_the_hook_does_not_wait_on_a_silent_store(
    pg: StoreSpec, cluster: str, tmp_path: Path, make_skill: Callable[..., Path]
) -> None:
    """No daemon, the store silent (retry_s 600): the hook waits on it at most
    hook.store_wait_s, answers, logs what it could not do, and keeps its route event for
    the next process that reaches the store."""
    project = project_with_store(tmp_path, pg, make_skill)
    config = project / "skillrt.yaml"
    config.write_text(config.read_text() + "hook:\n  store_wait_s: 0.5\n")

    def hook(prompt: str) -> dict[str, Any] | None:
        out = skillrt(
            "hook", "claude-code", "--no-daemon",
            cwd=project, stdin=claude_payload(prompt, project), timeout=60,
        )  # fmt: skip
        return hook_output(out)

    assert hook("review my pr") is not None  # reachable: migrated, recorded
    with silent(cluster, pg.location):
        answer = hook("check this sql query for injection")
    assert answer is not None and answer["systemMessage"] == "Using skill: sql-review"
    from skillrt.hooks.locations import default_state_dir

    # the hook's log, in the user's cache folder (the hook writes nothing in the project)
    log = (Path(default_state_dir(str(project), os.environ)) / "hook.log").read_text()
    assert "state store" in log and "kept in" in log  # what it could not do, and where
    assert hook("plan a database migration") is not None  # reaches the store: the outbox too
    assert len(route_events(pg.location, pg.schema or "")) == 3
