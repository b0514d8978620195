"""A phase's agent never outlives its workflow unseen, and never runs twice at once
(issue 22): real ``skillrt workflow`` processes, real agent commands, real signals.

* kill -9 of ``start`` leaves the agent running (its own session); ``resume`` finds it
  through the process group recorded with the phase and ends it (a text agent at once,
  an agent that writes files after ``orchestration.orphan_wait_s``) or, if it finishes
  in time, verifies its file without a second agent;
* SIGTERM of ``start``, and ``timeout`` of ``resume``, end the agent before exiting;
* a live agent on another host (or one that cannot be ended) refuses the resume with
  ``E_WORKFLOW_AGENT_RUNNING`` and changes nothing;
* kill -9 at seeded random moments of a text-only run, then resume, over and over:
  every run completes and no phase runs again once its memory file was verified.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillrt.errors import WorkflowAgentRunning
from skillrt.runtime import SkillRuntime

from .conftest import EXAMPLE_SKILL, InstantRunner, agent_cmd, cli_env, make_config, skillrt_cmd

QUERY = "Add CSV export to the reports API, with tests"
PHASES = ["clarification", "research", "implementation", "verification"]


@pytest.fixture(autouse=True)
def _no_agent_left(tmp_path: Path) -> Iterator[None]:
    """Whatever a failing test left behind, no hung agent outlives it."""
    yield
    for marker in tmp_path.rglob("hung.pid"):
        try:
            os.killpg(os.getpgid(int(marker.read_text("utf-8"))), signal.SIGKILL)
        except (OSError, ValueError):
            pass


def make_project(root: Path, *, orphan_wait_s: float = 0.5) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "skillrt.yaml").write_text(
        f"roots:\n  - {EXAMPLE_SKILL.parent}\ndiscovery:\n  conventional_roots: false\n"
        "routing:\n  embedding_backend: hashing\n"
        f"orchestration:\n  orphan_wait_s: {orphan_wait_s}\n",
        encoding="utf-8",
    )
    return root


def spawn(project: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        skillrt_cmd(*args),
        cwd=project,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def cli(project: Path, *args: str, code: int = 0) -> dict[str, Any]:
    proc = subprocess.run(
        skillrt_cmd(*args, "--json"),
        cwd=project,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def alive(pid: int) -> bool:
    """Running and not a zombie (an orphan's new parent may never reap it)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def wait_until(check: Any, what: str, proc: subprocess.Popen[str] | None = None) -> None:
    deadline = time.monotonic() + 120  # a safety net against a hung test, not a bound
    while not check():
        if proc is not None and proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"exited {proc.returncode} before {what}:\n{out}\n{err}")
        if time.monotonic() > deadline:
            raise AssertionError(f"never: {what}")
        time.sleep(0.02)


def only_run(project: Path) -> str:
    runs = cli(project, "workflow", "list")["runs"]
    assert len(runs) == 1
    return str(runs[0]["run_id"])


def log_counts(log: Path) -> Counter[str]:
    return Counter(log.read_text("utf-8").split()) if log.exists() else Counter()


def start_and_hang(
    project: Path, *agent: str, writes_files: bool = False
) -> tuple[subprocess.Popen[str], int]:
    """``workflow start`` whose research agent hangs; returns the process and agent pid."""
    marker = project / "hung.pid"
    runner = agent_cmd(
        project / "agents.log",
        "--hang-in",
        "research",
        "--once",
        str(project / "hung-once"),
        "--marker",
        str(marker),
        "--exclusive",
        str(project / "pids"),
        *agent,
    )
    flags = ["--writes-files"] if writes_files else []
    proc = spawn(
        project, "workflow", "start", "develop-feature", QUERY, "--runner-cmd", runner, *flags
    )
    wait_until(marker.exists, "the research agent hangs", proc)
    return proc, int(marker.read_text("utf-8"))


def kill9(proc: subprocess.Popen[str]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)  # skillrt's own group; the agent has its own
    proc.communicate()


@pytest.mark.parametrize("text", [True, False], ids=["text-agent", "agentic-agent"])
def test_resume_ends_the_agent_a_killed_start_left_running(tmp_path: Path, text: bool) -> None:
    project = make_project(tmp_path / "p")
    proc, agent = start_and_hang(project, *(["--text"] if text else []), writes_files=not text)
    kill9(proc)
    assert alive(agent)  # the orphan the issue describes
    run_id = only_run(project)
    research = cli(project, "workflow", "status", run_id)["phases"][1]
    assert research["state"] == "running"
    group = os.getpgid(agent)
    assert research["agent_process"]["pgid"] == group  # recorded before it got its prompt

    done = cli(project, "workflow", "resume", run_id)
    assert done["state"] == "completed"
    assert not alive(agent)
    settled = [e for e in done["events"] if e["kind"] == "agent_settled"]
    assert len(settled) == 1 and settled[0]["extra"] == {"pgid": group, "ended": True}
    # No second agent ever ran beside the first (the agents check a pid file).
    assert not (project / "pids" / "overlaps").exists()
    assert log_counts(project / "agents.log") == Counter({**Counter(PHASES), "research": 2})
    assert all(p["agent_process"] is None for p in done["phases"])


@pytest.mark.parametrize("when", ["while-resume-waits", "before-resume"])
def test_an_orphan_that_finishes_its_file_is_waited_for(tmp_path: Path, when: str) -> None:
    """An agent that writes its own file, still working when its worker was killed: the
    resume waits for it (orphan_wait_s, and says so on stderr), it finishes, its file is
    verified — no second agent. An orphan that finished before the resume looked is
    settled the same way (``agent_settled``, not ended)."""
    project = make_project(tmp_path / "p", orphan_wait_s=120)
    release = project / "release"
    proc, agent = start_and_hang(project, "--release", str(release), writes_files=True)
    group = os.getpgid(agent)
    kill9(proc)
    run_id = only_run(project)
    if when == "before-resume":
        release.touch()
        wait_until(lambda: not alive(agent), "the orphan finishes")
    resumed = spawn(project, "workflow", "resume", run_id, "--json")
    assert resumed.stderr is not None
    if when == "while-resume-waits":
        for line in resumed.stderr:  # the resume tells it waits: only then may it finish
            if "waiting up to 120 s" in line:
                assert f"process group {group}" in line, line
                break
        else:
            raise AssertionError("the resume never said it waits for the orphan")
        release.touch()
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, (out, err)
    done = json.loads(out)
    assert done["state"] == "completed"
    settled = [e for e in done["events"] if e["kind"] == "agent_settled"]
    assert [s["extra"] for s in settled] == [{"pgid": group, "ended": False}]
    assert "finished" in settled[0]["directive"]
    verified = [e for e in done["events"] if e["kind"] == "phase_verified"]
    assert verified[0]["phase_id"] == "research" and verified[0]["extra"]["verified_on_resume"]
    assert log_counts(project / "agents.log") == Counter(PHASES)  # research ran once


def test_sigterm_of_start_ends_its_agent(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    proc, agent = start_and_hang(project, "--text")
    os.kill(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (out, err)
    assert "E_INTERRUPTED" in err
    assert not alive(agent)
    run_id = only_run(project)
    research = cli(project, "workflow", "status", run_id)["phases"][1]
    assert research["state"] == "running"  # interrupted, not failed: resume runs it again
    done = cli(project, "workflow", "resume", run_id)
    assert done["state"] == "completed"
    assert not [e for e in done["events"] if e["kind"] == "agent_settled"]  # nothing left


def test_timeout_of_resume_ends_its_agent(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    proc, first = start_and_hang(project, "--text")
    kill9(proc)
    run_id = only_run(project)
    marker = project / "hung.pid"
    marker.unlink()
    (project / "hung-once").unlink()  # the resumed agent hangs too
    resumed = subprocess.Popen(
        ["timeout", "-s", "TERM", "120", *skillrt_cmd("workflow", "resume", run_id, "--json")],
        cwd=project,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    wait_until(marker.exists, "the resumed agent hangs", resumed)
    second = int(marker.read_text("utf-8"))
    assert second != first and not alive(first)  # the orphan was ended before it started
    # What timeout(1) does when its time is up: SIGTERM to the command.
    os.kill(resumed.pid, signal.SIGTERM)
    out, _ = resumed.communicate(timeout=120)
    assert json.loads(out)["error"]["code"] == "E_INTERRUPTED"
    assert not alive(second)
    assert not (project / "pids" / "overlaps").exists()


def test_a_live_agent_elsewhere_refuses_the_resume(tmp_path: Path, skills_dir: Path) -> None:
    """An agent recorded on another host cannot be checked or ended from here: resume
    refuses (E_WORKFLOW_AGENT_RUNNING, nothing changed) until its lease runs out."""

    def interrupt(phase: str, prompt: str) -> None:
        if phase == "build":
            raise KeyboardInterrupt  # the worker stops mid-phase, like a killed one

    rt = SkillRuntime(make_config(tmp_path), roots=[skills_dir])
    try:
        with pytest.raises(KeyboardInterrupt):
            rt.workflow_start("mini-flow", QUERY, runner=InstantRunner(before=interrupt))
        (run,) = rt.workflow_list()
        store = rt.workflows().store
        agent = {"host": "elsewhere.example", "pgid": 4242, "start": "1", "writes_files": True}
        store.record_agent(run.run_id, "build", {**agent, "lease_until": time.time() + 600})
        before = rt.workflow_status(run.run_id)
        with pytest.raises(WorkflowAgentRunning) as exc:
            rt.workflow_resume(run.run_id, runner=InstantRunner())
        assert exc.value.code == "E_WORKFLOW_AGENT_RUNNING"
        assert exc.value.context["host"] == "elsewhere.example"
        assert exc.value.context["phase_id"] == "build"
        after = rt.workflow_status(run.run_id)
        assert (after.state, after.transitions) == (before.state, before.transitions)

        store.record_agent(run.run_id, "build", {**agent, "lease_until": time.time() - 1})
        finisher = InstantRunner()
        assert rt.workflow_resume(run.run_id, runner=finisher).state == "completed"
        assert finisher.calls == ["build", "check"]
    finally:
        rt.close()


def verified_at(project: Path, run_id: str) -> dict[str, float]:
    conn = sqlite3.connect(project / ".skillrt" / "state.db")
    try:
        rows = conn.execute(
            "SELECT phase_id, at FROM workflow_transitions WHERE run_id = ? AND "
            "to_state = 'verified'",
            (run_id,),
        ).fetchall()
    finally:
        conn.close()
    return {str(phase): float(at) for phase, at in rows}


@pytest.mark.slow
def test_kill_9_at_random_moments_of_a_text_only_run_then_resume(tmp_path: Path) -> None:
    """Seeded and bounded: 8 runs, each killed 1-3 times at a random moment (start or a
    resume), then resumed to the end."""
    rng = random.Random(20)
    for n in range(8):
        project = make_project(tmp_path / f"run{n}")
        trace = project / "trace.log"
        runner = agent_cmd(project / "agents.log", "--text", "--sleep", "0.3",
                           "--exclusive", str(project / "pids"), "--trace", str(trace))  # fmt: skip
        proc = spawn(project, "workflow", "start", "develop-feature", QUERY, "--runner-cmd",
                     runner, "--json")  # fmt: skip
        run_id: str | None = None
        for _kill in range(rng.randint(1, 3)):
            time.sleep(rng.uniform(0.0, 4.0))
            if proc.poll() is None:
                kill9(proc)
            else:
                proc.communicate()
            runs = cli(project, "workflow", "list")["runs"]
            if not runs:  # killed before the run was created: start again
                proc = spawn(project, "workflow", "start", "develop-feature", QUERY,
                             "--runner-cmd", runner, "--json")  # fmt: skip
                continue
            run_id = str(runs[0]["run_id"])
            proc = spawn(project, "workflow", "resume", run_id, "--json")
        # The last command (a resume, or a start when every kill landed before the run
        # existed) is never killed: it runs the run to its end, whatever the kills left.
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, (n, proc.returncode, out, err)
        done = json.loads(out)
        if run_id is None:
            run_id = only_run(project)
        assert done["state"] == "completed", (n, out, err)
        status = cli(project, "workflow", "status", run_id, "--transitions")
        log = status["transitions_log"]
        assert [t["seq"] for t in log] == list(range(1, len(log) + 1))
        assert sorted(t["phase_id"] for t in log if t["to_state"] == "verified") == sorted(PHASES)
        # No phase's agent started after that phase was verified.
        done_at = verified_at(project, run_id)
        for line in trace.read_text("utf-8").splitlines():
            phase, _pid, started = line.split()
            assert float(started) < done_at[phase], (n, line)
        for p in status["phases"]:
            assert Path(p["memory_file"]).read_text("utf-8").rstrip().endswith("Status: COMPLETED")
        assert not (project / "pids" / "overlaps").exists(), n


def test_advance_settles_a_live_orphan_before_it_verifies(tmp_path: Path) -> None:
    """kill -9 of start leaves the phase's agent writing; someone writes the memory file
    by hand and advances: the orphan is ended first (it would go on writing the file
    advance verifies), then the hand-written file is verified."""
    project = make_project(tmp_path / "p")
    proc, agent = start_and_hang(project, writes_files=True)
    group = os.getpgid(agent)
    kill9(proc)
    run_id = only_run(project)
    research = cli(project, "workflow", "status", run_id)["phases"][1]
    text = "Research done by hand.\n\n## Learnings\n- Ask first.\n\nStatus: COMPLETED\n"
    Path(research["memory_file"]).write_text(text, encoding="utf-8")
    advanced = cli(project, "workflow", "advance", run_id, "research")
    assert not alive(agent)
    settled = [e for e in advanced["events"] if e["kind"] == "agent_settled"]
    assert [s["extra"] for s in settled] == [{"pgid": group, "ended": True}]
    after = cli(project, "workflow", "status", run_id)["phases"][1]
    assert after["state"] == "verified" and after["agent_process"] is None
    assert Path(after["memory_file"]).read_text(encoding="utf-8") == text


def test_an_agent_that_cannot_be_told_apart_is_refused_not_ended(
    tmp_path: Path, skills_dir: Path
) -> None:
    """Without /proc an agent's record has no leader start time, so a live process group
    with its id may be anyone's (pids are reused): resume refuses
    (E_WORKFLOW_AGENT_RUNNING) and ends nothing."""
    import socket

    def interrupt(phase: str, prompt: str) -> None:
        if phase == "build":
            raise KeyboardInterrupt  # the worker stops mid-phase, like a killed one

    stranger = subprocess.Popen(["sleep", "600"], start_new_session=True)
    rt = SkillRuntime(make_config(tmp_path, orphan_wait_s=0.1), roots=[skills_dir])
    try:
        with pytest.raises(KeyboardInterrupt):
            rt.workflow_start("mini-flow", QUERY, runner=InstantRunner(before=interrupt))
        (run,) = rt.workflow_list()
        agent = {"host": socket.gethostname(), "pgid": stranger.pid, "start": None}
        rt.workflows().store.record_agent(run.run_id, "build", {**agent, "writes_files": True})
        with pytest.raises(WorkflowAgentRunning) as exc:
            rt.workflow_resume(run.run_id, runner=InstantRunner())
        assert exc.value.code == "E_WORKFLOW_AGENT_RUNNING"
        assert "told apart" in exc.value.message
        assert stranger.poll() is None  # still running: not ours to end
    finally:
        stranger.kill()
        stranger.wait()
        rt.close()
