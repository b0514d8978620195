"""Crash safety with real processes (seed 002 invariant 7, O3).

``skillrt workflow start`` runs in a subprocess with a real runner command. The CLI's
test hook (``SKILLRT_TEST_PAUSE_AT``) parks it at an exact checkpoint — every step
boundary, every phase boundary, after a phase's start was saved, after its agent wrote
the memory file, just before and after the final commit — or the agent itself hangs
half-way through writing its memory file. The test then SIGKILLs it, runs
``skillrt workflow resume``, and compares everything with an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .conftest import EXAMPLE_SKILL, agent_cmd, cli_env, skillrt_cmd

QUERY = "Add CSV export to the reports API, with tests"
PHASES = ["clarification", "research", "implementation", "verification"]
POINTS = (
    [f"step:{n}" for n in range(1, 7)]
    + [f"phase:{p}{suffix}" for p in PHASES for suffix in ("", ":running", ":written")]
    + ["step:6:commit", "complete"]
)


@dataclass
class Outcome:
    status: dict[str, Any]
    memory: dict[str, str]
    learnings: str
    calls: Counter[str]


def make_project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "skillrt.yaml").write_text(
        f"roots:\n  - {EXAMPLE_SKILL.parent}\ndiscovery:\n  conventional_roots: false\n"
        "routing:\n  embedding_backend: hashing\n",
        encoding="utf-8",
    )
    return root


def cli(project: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        skillrt_cmd(*args),
        cwd=project,
        env=cli_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for(path: Path, proc: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 120  # a safety net against a hung test, not a limit
    while not path.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"exited {proc.returncode} before {what}:\n{out}\n{err}")
        if time.monotonic() > deadline:
            raise AssertionError(f"never reached {what}")
        time.sleep(0.02)


def kill(proc: subprocess.Popen[str]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL


def outcome(project: Path, run_id: str, log: Path) -> Outcome:
    proc = subprocess.run(
        skillrt_cmd("workflow", "status", run_id, "--json", "--transitions"),
        cwd=project,
        env=cli_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    status = json.loads(proc.stdout)
    task = status["task_id"]
    memory_dir = project / ".skillrt" / "memory"
    memory = {
        p.name.replace(task, "TASK"): p.read_text(encoding="utf-8").replace(task, "TASK")
        for p in sorted(memory_dir.iterdir())
    }
    learnings = (project / ".skillrt" / "learnings" / f"{status['domain']}.md").read_text(
        encoding="utf-8"
    )
    calls = Counter(log.read_text(encoding="utf-8").split())
    return Outcome(status, memory, learnings.replace(task, "TASK"), calls)


def uninterrupted(root: Path) -> Outcome:
    project = make_project(root)
    log = project / "agents.log"
    proc = cli(project, "workflow", "start", "develop-feature", QUERY, "--runner-cmd",
               agent_cmd(log), "--json")  # fmt: skip
    out, err = proc.communicate()
    assert proc.returncode == 0, (out, err)
    return outcome(project, json.loads(out)["run_id"], log)


def crash_and_resume(root: Path, point: str) -> Outcome:
    """Kill at ``point`` (a checkpoint, or ``inside:<phase>``), then resume."""
    project = make_project(root)
    log = project / "agents.log"
    marker = project / "paused.json"
    extra: list[str] = []
    env: dict[str, str] = {}
    if point.startswith("inside:"):
        phase = point.split(":", 1)[1]
        extra = ["--hang-in", phase, "--once", str(project / "hung"), "--marker", str(marker)]
    else:
        env = {"SKILLRT_TEST_PAUSE_AT": point, "SKILLRT_TEST_PAUSE_FILE": str(marker)}
    proc = cli(project, "workflow", "start", "develop-feature", QUERY, "--runner-cmd",
               agent_cmd(log, *extra), **env)  # fmt: skip
    wait_for(marker, proc, point)
    kill(proc)
    if point.startswith("inside:"):
        # The agent runs in its own process group (the runner's): it dies with us here.
        os.kill(int(marker.read_text(encoding="utf-8")), signal.SIGKILL)
        listed = subprocess.run(
            skillrt_cmd("workflow", "list", "--json"),
            cwd=project,
            env=cli_env(),
            capture_output=True,
            text=True,
            check=True,
        )
        run_id = json.loads(listed.stdout)["runs"][0]["run_id"]
    else:
        paused = json.loads(marker.read_text(encoding="utf-8"))
        assert paused["point"] == point
        run_id = paused["run_id"]
    # Resume with no runner option: the run's saved runner command is used.
    resumed = cli(project, "workflow", "resume", run_id, "--json")
    out, err = resumed.communicate()
    assert resumed.returncode == 0, (point, out, err)
    assert json.loads(out)["state"] == "completed"
    return outcome(project, run_id, log)


def comparable(status: dict[str, Any]) -> dict[str, Any]:
    """Status fields that must be identical to an uninterrupted run's."""
    steps = status["steps"]
    return {
        "state": status["state"],
        "domain": steps["2"],
        "skill_config": steps["3"]["skill_config"],
        "phases": [(p["phase_id"], p["state"]) for p in status["phases"]],
        "phases_completed": [
            (p["phase_id"], Path(p["memory_file"]).name.replace(status["task_id"], "TASK"))
            for p in steps["5"]["phases_completed"]
        ],
        "summary": steps["6"]["summary"].replace(status["task_id"], "TASK"),
        "lessons": [x.replace(status["task_id"], "TASK")
                    for x in steps["6"]["learnings"]["lessons"]],
        "memory_files": [Path(f).name.replace(status["task_id"], "TASK")
                         for f in status["memory_files"]],
        "complete": status["complete"],
    }  # fmt: skip


@pytest.mark.slow
def test_sigkill_anywhere_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    base = uninterrupted(tmp_path / "base")
    assert base.calls == Counter(PHASES)
    scenarios = POINTS + [f"inside:{p}" for p in PHASES]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = dict(
            zip(
                scenarios,
                pool.map(
                    lambda item: crash_and_resume(tmp_path / f"s{item[0]}", item[1]),
                    enumerate(scenarios),
                ),
                strict=True,
            )
        )
    for point, got in results.items():
        assert comparable(got.status) == comparable(base.status), point
        assert got.memory == base.memory, point
        assert got.learnings == base.learnings, point
        # No phase runs twice after its memory file was verified. Only the phase that was
        # killed mid-run (its memory file never verified) runs a second time.
        expected = Counter(PHASES)
        if point.startswith("inside:"):
            expected[point.split(":", 1)[1]] += 1
        assert got.calls == expected, (point, got.calls)
        log = got.status["transitions_log"]
        assert [t["seq"] for t in log] == list(range(1, len(log) + 1)), point
        verified = [t["phase_id"] for t in log if t["to_state"] == "verified"]
        assert verified == PHASES, (point, verified)  # each verified exactly once


def test_pause_hook_is_inert_without_the_variable(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    log = project / "agents.log"
    proc = cli(project, "workflow", "start", "develop-feature", QUERY, "--runner-cmd",
               agent_cmd(log), "--json", SKILLRT_TEST_PAUSE_AT="")  # fmt: skip
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    assert json.loads(out)["state"] == "completed"


def test_two_concurrent_cli_runs_share_a_store(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    logs = [project / f"agents{i}.log" for i in range(2)]
    procs = [
        cli(
            project,
            "workflow",
            "start",
            "develop-feature",
            f"{QUERY} #{i}",
            "--runner-cmd",
            agent_cmd(logs[i]),
            "--json",
        )  # fmt: skip
        for i in range(2)
    ]
    results = []
    for p in procs:
        out, err = p.communicate()
        assert p.returncode == 0, err
        results.append(json.loads(out))
    assert {r["state"] for r in results} == {"completed"}
    tasks = {r["task_id"] for r in results}
    assert len(tasks) == 2
    for r in results:
        status = subprocess.run(
            skillrt_cmd("workflow", "status", r["run_id"], "--json", "--transitions"),
            cwd=project,
            env=cli_env(),
            capture_output=True,
            text=True,
            check=True,
        )
        log = json.loads(status.stdout)["transitions_log"]
        assert [t["seq"] for t in log] == list(range(1, 17))
    learnings = next((project / ".skillrt" / "learnings").glob("*.md")).read_text("utf-8")
    for task in tasks:  # both runs' lessons landed; neither overwrote the other
        assert sum(f"Lesson only task {task}" in ln for ln in learnings.splitlines()) == 4
    assert learnings.count("Shared lesson that every phase repeats.") == 1
    memory = project / ".skillrt" / "memory"
    for task in tasks:
        assert len(list(memory.glob(f"{task}-*"))) == 6
