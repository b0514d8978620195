"""A real PostgreSQL server failing under skillrt: dropped connections, restarts, outages.

The restart tests take the test server down and up (``.ci/postgres.sh``), so they need
the cluster's folder (``SKILLRT_PG_DIR``, exported by ``.ci/postgres.sh start``).
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import REPO, StoreSpec

from skillrt.errors import StoreUnavailable
from skillrt.orchestration.fsm import RunState
from skillrt.runtime import SkillRuntime
from skillrt.store import skill_state
from skillrt.store.postgres import PostgresStore

from .conftest import InstantRunner, TextRunner, make_config


@pytest.fixture
def pg(postgres_url: str, pg_schema: str, tmp_path: Path) -> StoreSpec:
    return StoreSpec("postgresql", postgres_url, pg_schema, tmp_path)


@pytest.fixture
def cluster(postgres_url: str) -> Iterator[str]:
    """The test cluster's folder; the server is up again after the test, whatever it did."""
    folder = os.environ.get("SKILLRT_PG_DIR")
    if not folder:
        pytest.skip("restart tests need SKILLRT_PG_DIR (set by `.ci/postgres.sh start`)")
    yield folder
    server("up", folder, check=False)


def server(action: str, folder: str, *, check: bool = True) -> None:
    subprocess.run(
        ["bash", str(REPO / ".ci" / "postgres.sh"), action, folder],
        check=check,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def terminate(url: str, where: str, *args: Any) -> int:
    """Kill server backends (pg_terminate_backend) chosen by ``where``; how many."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE pid <> pg_backend_pid() AND {where}",
            args,
        ).fetchall()
    return len(rows)


def test_connection_dropped_mid_transaction(pg: StoreSpec) -> None:
    store = pg.open()
    skill_state.set_enabled(store, "before", False)
    with pytest.raises(StoreUnavailable) as exc, store.transaction() as conn:
        conn.execute("INSERT INTO skill_state VALUES ('half', 0, 1.0)")
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        assert terminate(pg.location, "pid = %s", pid) == 1
        conn.execute("INSERT INTO skill_state VALUES ('other-half', 0, 1.0)")
    assert exc.value.code == "E_STORE_UNAVAILABLE"
    assert exc.value.context["retryable"] is True
    # Nothing of the transaction was kept, and the handle works on a new connection.
    assert skill_state.disabled_names(store) == frozenset({"before"})
    skill_state.set_enabled(store, "after", False)
    assert skill_state.disabled_names(store) == frozenset({"before", "after"})
    store.close()


def test_idle_pooled_connections_dropped_are_replaced(pg: StoreSpec) -> None:
    store = pg.open()
    skill_state.set_enabled(store, "a", False)
    assert terminate(pg.location, "application_name = 'skillrt'") >= 1
    assert skill_state.disabled_names(store) == frozenset({"a"})  # a read: retried
    assert terminate(pg.location, "application_name = 'skillrt'") >= 1
    skill_state.set_enabled(store, "b", False)  # a transaction: begun again
    assert skill_state.disabled_names(store) == frozenset({"a", "b"})
    store.close()


def test_unreachable_server_is_a_structured_error(tmp_path: Path) -> None:
    store = PostgresStore(
        f"postgresql://nobody@/none?host={tmp_path}&port=1",
        retry_s=0.3,
        connect_timeout_s=0.2,
    )
    with pytest.raises(StoreUnavailable) as exc:
        skill_state.set_enabled(store, "x", False)
    assert exc.value.to_dict()["code"] == "E_STORE_UNAVAILABLE"
    store.close()


def verified_once(rt: SkillRuntime, run_id: str) -> list[str]:
    transitions = rt.workflows().transitions(run_id)
    return sorted(t["phase_id"] for t in transitions if t["to_state"] == "verified")


def test_server_restarted_mid_workflow(
    pg: StoreSpec,
    cluster: str,
    tmp_path: Path,
    skills_dir: Path,
) -> None:
    """The server restarts while a phase's agent works: the run goes on when it is back."""

    def restart(phase: str, prompt: str) -> None:
        if phase == "build":
            server("restart", cluster)

    config = make_config(tmp_path, lease_s=5.0, worker_id="worker-1")
    rt = SkillRuntime(config, roots=[skills_dir], store=pg.open())
    runner = InstantRunner(before=restart)
    try:
        status = rt.workflow_start("mini-flow", "Build the thing", runner=runner)
        assert status.state == "completed"
        assert runner.calls == ["plan", "build", "check"]  # nothing run twice
        assert verified_once(rt, status.run_id) == ["build", "check", "plan"]
    finally:
        rt.close()


def test_server_down_then_back_the_run_resumes(
    pg: StoreSpec,
    cluster: str,
    tmp_path: Path,
    skills_dir: Path,
) -> None:
    """The server is down longer than a transaction waits: the worker stops with a
    structured error, nothing is lost, and resume finishes without redoing work."""

    def halt(phase: str, prompt: str) -> None:
        if phase == "build":
            server("down", cluster)

    config = make_config(tmp_path, lease_s=5.0, worker_id="worker-1")
    store = pg.open(retry_s=1.0, connect_timeout_s=0.5)
    rt = SkillRuntime(config, roots=[skills_dir], store=store)
    first = InstantRunner(before=halt)
    try:
        with pytest.raises(StoreUnavailable):
            rt.workflow_start("mini-flow", "Build the thing", runner=first)
        server("up", cluster)
        store.retry_s = 30.0  # the first failure was made quick; now wait like a user would
        (run,) = rt.workflow_list()
        assert rt.workflow_status(run.run_id).state == RunState.TRIGGERING_AGENTS
        second = InstantRunner()
        status = rt.workflow_resume(run.run_id, runner=second)
        assert status.state == "completed"
        # build's memory file was written before the outage: verified, not run again.
        assert first.calls == ["plan", "build"] and second.calls == ["check"]
        assert verified_once(rt, run.run_id) == ["build", "check", "plan"]
    finally:
        rt.close()


@pytest.mark.parametrize("runner", [InstantRunner, TextRunner], ids=["agentic", "text"])
def test_a_store_failure_during_a_phase_is_not_a_phase_failure(
    pg: StoreSpec, tmp_path: Path, skills_dir: Path, runner: type[InstantRunner | TextRunner]
) -> None:
    """The server drops skillrt's connection while it records the phase's run (issue 22):
    the error is E_STORE_UNAVAILABLE, the phase is not counted as failed and the run is
    not blocked; once the store answers, resume verifies the phase's file and goes on,
    without running its agent again — for an agent that writes the file itself, and for
    a model that returns it as its reply (skillrt writes the reply before it records the
    call, so the failed record loses nothing).

    The drop is made exact on the real server: another session locks ``executions``, so
    the phase's insert waits; the test terminates the waiting backend (as a server
    restart would), then releases the lock, so the store answers again at once.
    """
    import threading

    import psycopg

    locked = threading.Event()
    release = threading.Event()
    killed: list[int] = []

    def locker() -> None:
        with psycopg.connect(pg.location) as conn:
            conn.execute(f'SET search_path TO "{pg.schema}"')
            conn.execute("LOCK TABLE executions IN ACCESS EXCLUSIVE MODE")
            locked.set()
            release.wait(120)
            conn.rollback()

    def terminator() -> None:
        deadline = time.monotonic() + 120  # a safety net, not a bound
        while not _waiting(pg.location) and time.monotonic() < deadline:
            time.sleep(0.02)
        where = "application_name = 'skillrt' AND wait_event_type = 'Lock'"
        killed.append(terminate(pg.location, where))
        release.set()

    def drop_connection(phase: str, prompt: str) -> None:
        if phase == "build":
            threading.Thread(target=locker, daemon=True).start()
            assert locked.wait(60)
            threading.Thread(target=terminator, daemon=True).start()

    config = make_config(tmp_path, lease_s=30.0, worker_id="worker-1")
    rt = SkillRuntime(config, roots=[skills_dir], store=pg.open(retry_s=30.0))
    first = runner(before=drop_connection)
    try:
        with pytest.raises(StoreUnavailable) as exc:
            rt.workflow_start("mini-flow", "Build the thing", runner=first)
        assert exc.value.code == "E_STORE_UNAVAILABLE"
        assert killed and killed[0] >= 1
        (run,) = rt.workflow_list()
        status = rt.workflow_status(run.run_id)
        assert status.state == "triggering_agents"  # not blocked
        build = status.phases[1]
        assert build.state == "running" and build.last_error is None  # not failed
        second = runner()
        done = rt.workflow_resume(run.run_id, runner=second)
        assert done.state == "completed"
        assert first.calls == ["plan", "build"] and second.calls == ["check"]
        assert verified_once(rt, run.run_id) == ["build", "check", "plan"]
    finally:
        release.set()
        rt.close()


def _waiting(url: str) -> bool:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE application_name = 'skillrt' AND wait_event_type = 'Lock'"
        ).fetchone()
    return bool(row and row[0])
