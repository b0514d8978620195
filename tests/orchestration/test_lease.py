"""Leases on workflow runs, on both backends: one driver at a time, a dead one replaced.

Workers here are named (``worker_id``), so nothing can tell whether another one is
alive: only the lease decides, as it does between hosts.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from tests.conftest import StoreSpec

from skillrt.config import OrchestrationConfig
from skillrt.errors import WorkflowBusy, WorkflowLeaseLost
from skillrt.orchestration.fsm import PhaseState
from skillrt.orchestration.state import LeaseKeeper, WorkflowStore
from skillrt.runtime import SkillRuntime

from .conftest import InstantRunner, make_config
from .test_state import new_run, to_agents

LEASE_S = 0.6


def ws_for(spec: StoreSpec, lease_s: float = LEASE_S) -> WorkflowStore:
    return WorkflowStore(spec.open(), lease_s=lease_s)


def test_one_owner_at_a_time_until_the_lease_runs_out(store_spec: StoreSpec) -> None:
    a, b = ws_for(store_spec), ws_for(store_spec)
    run = new_run(a)
    a.claim(run, "worker-a")
    with pytest.raises(WorkflowBusy) as exc:
        b.claim(run, "worker-b")
    assert exc.value.context["owner"] == "worker-a"
    assert 0 < exc.value.context["lease_expires_in_s"] <= LEASE_S
    a.claim(run, "worker-a")  # the owner may claim again (renews)
    time.sleep(LEASE_S + 0.2)
    b.claim(run, "worker-b")  # expired: taken over
    assert b.load(run).owner == "worker-b"


def test_a_worker_that_lost_its_lease_writes_nothing(store_spec: StoreSpec) -> None:
    a, b = ws_for(store_spec), ws_for(store_spec)
    run = new_run(a)
    to_agents(a, run)
    a.claim(run, "worker-a")
    a.phase_transition(run, "a", PhaseState.RUNNING, owner="worker-a")
    time.sleep(LEASE_S + 0.2)
    b.claim(run, "worker-b")
    seq = b.load(run).seq
    with pytest.raises(WorkflowLeaseLost) as exc:
        a.phase_transition(run, "a", PhaseState.VERIFIED, memory_sha256="x", owner="worker-a")
    assert exc.value.code == "E_WORKFLOW_LEASE_LOST"
    rec = b.load(run)
    assert rec.seq == seq and rec.phase("a").state is PhaseState.RUNNING
    assert not a.renew(run, "worker-a")
    b.phase_transition(run, "a", PhaseState.VERIFIED, memory_sha256="x", owner="worker-b")
    with pytest.raises(Exception, match="verified"):  # never verified twice
        b.phase_transition(run, "a", PhaseState.VERIFIED, memory_sha256="x", owner="worker-b")


def test_transitions_and_the_keeper_renew_the_lease(store_spec: StoreSpec) -> None:
    a, b = ws_for(store_spec), ws_for(store_spec)
    run = new_run(a)
    a.claim(run, "worker-a")
    first = a.load(run).lease_until
    assert first is not None
    with LeaseKeeper(a, run, "worker-a") as keeper:
        time.sleep(LEASE_S * 2.5)  # well past one lease: the keeper renewed it
        with pytest.raises(WorkflowBusy):
            b.claim(run, "worker-b")
    assert not keeper.lost
    renewed = a.load(run).lease_until
    assert renewed is not None and renewed > first
    a.release(run, "worker-a")
    b.claim(run, "worker-b")  # released: free at once


def test_a_run_completes_on_each_backend_with_each_phase_verified_once(
    store_spec: StoreSpec, tmp_path: Path, skills_dir: Path
) -> None:
    config = make_config(tmp_path, lease_s=5.0, worker_id="worker-1")
    rt = SkillRuntime(config, roots=[skills_dir], store=store_spec.open())
    try:
        status = rt.workflow_start("mini-flow", "Build the thing", runner=InstantRunner())
        assert status.state == "completed"
        transitions = rt.workflows().transitions(status.run_id)
        verified = [t["phase_id"] for t in transitions if t["to_state"] == "verified"]
        assert sorted(verified) == ["build", "check", "plan"]
        rec = rt.workflows().store.load(status.run_id)
        assert rec.owner is None and rec.lease_until is None  # released
    finally:
        rt.close()


WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    sys.path[:0] = [{tests!r}, {repo!r}]
    from orchestration.conftest import InstantRunner, make_config
    from skillrt.runtime import SkillRuntime
    from tests.conftest import StoreSpec

    spec = StoreSpec({kind!r}, {location!r}, {schema!r}, Path({tmp!r}))
    marker = Path({marker!r})

    def hang(phase, prompt):
        if phase == "build":
            marker.write_text("x")
            time.sleep(600)  # killed here, holding the run

    config = make_config(Path({tmp!r}), lease_s={lease}, worker_id="worker-doomed")
    rt = SkillRuntime(config, roots=[Path({skills!r})], store=spec.open())
    rt.workflow_start("mini-flow", "Build the thing", runner=InstantRunner(before=hang))
    """
)


def test_a_sigkilled_worker_is_replaced_after_its_lease(
    store_spec: StoreSpec, tmp_path: Path, skills_dir: Path
) -> None:
    lease = 1.5
    marker = tmp_path / "in-build"
    repo = Path(__file__).resolve().parents[2]
    script = WORKER.format(
        tests=str(repo / "tests"),
        repo=str(repo),
        kind=store_spec.kind,
        location=store_spec.location,
        schema=store_spec.schema,
        tmp=str(tmp_path),
        marker=str(marker),
        lease=lease,
        skills=str(skills_dir),
    )
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    deadline = time.monotonic() + 120  # a safety net against a hung test, not a limit
    while not marker.exists():
        assert proc.poll() is None, "the worker exited before the build phase"
        assert time.monotonic() < deadline, "the worker never reached the build phase"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = time.monotonic()

    config = make_config(tmp_path, lease_s=lease, worker_id="worker-heir")
    rt = SkillRuntime(config, roots=[skills_dir], store=store_spec.open())
    try:
        (run,) = rt.workflow_list()
        with pytest.raises(WorkflowBusy):  # the dead worker's lease still runs
            rt.workflow_resume(run.run_id, runner=InstantRunner())
        while True:
            try:
                runner = InstantRunner()
                status = rt.workflow_resume(run.run_id, runner=runner)
                break
            except WorkflowBusy:
                assert time.monotonic() - killed_at < 60
                time.sleep(0.1)
        assert time.monotonic() - killed_at >= lease * 0.9
        assert status.state == "completed"
        assert runner.calls == ["build", "check"]  # plan was done before the kill
        transitions = rt.workflows().transitions(run.run_id)
        verified = [t["phase_id"] for t in transitions if t["to_state"] == "verified"]
        assert sorted(verified) == ["build", "check", "plan"]
        started = [t["phase_id"] for t in transitions if t["to_state"] == "running"]
        assert started.count("build") == 2  # begun by the dead worker, run again
    finally:
        rt.close()


def test_default_lease_and_worker_come_from_config() -> None:
    orch = OrchestrationConfig()
    assert orch.lease_s == 30.0 and orch.worker_id is None
