"""``skillrt workflow ...`` as a user runs it: real processes, real runner commands."""

from __future__ import annotations

import argparse
import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from skillrt.cli.app import build_parser

from .conftest import EXAMPLE_SKILL, agent_cmd, cli_env, memory_text, skillrt_cmd

QUERY = "Add CSV export to the reports API, with tests"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "skillrt.yaml").write_text(
        "roots:\n"
        f"  - {EXAMPLE_SKILL.parent}\n"
        "discovery:\n"
        "  conventional_roots: false\n"
        "routing:\n"
        "  embedding_backend: hashing\n",
        encoding="utf-8",
    )
    return tmp_path


def run(project: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        skillrt_cmd(*args),
        cwd=project,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def run_json(project: Path, *args: str, code: int = 0) -> dict[str, Any]:
    proc = run(project, *args, "--json", check=False)
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def log_counts(log: Path) -> Counter[str]:
    return Counter(log.read_text(encoding="utf-8").split()) if log.exists() else Counter()


def test_start_runs_the_six_steps_and_status_reports_them(project: Path) -> None:
    log = project / "agents.log"
    data = run_json(
        project, "workflow", "start", "develop-feature", QUERY, "--runner-cmd", agent_cmd(log)
    )
    run_id = data["run_id"]
    assert run_id.startswith("wf-") and data["state"] == "completed"
    assert data["marker"] == "SKILL_ORCHESTRATION_COMPLETE"
    assert sorted(data["steps"]) == ["1", "2", "3", "4", "5", "6"]
    assert [p["phase_id"] for p in data["phases_completed"]] == [
        "clarification",
        "research",
        "implementation",
        "verification",
    ]
    kinds = [e["kind"] for e in data["events"]]
    assert kinds[0] == "created" and kinds[-1] == "completed"
    assert "prompt" not in data["events"][7]  # prompts only on request
    assert log_counts(log) == Counter(
        {"clarification": 1, "research": 1, "implementation": 1, "verification": 1}
    )

    status = run_json(project, "workflow", "status", run_id)
    assert status["state"] == "completed"
    assert status["steps"]["1"]["task_id"] == data["steps"]["1"]["task_id"]
    assert set(status["steps"]["2"]) >= {"domain", "confidence", "score"}
    assert status["steps"]["3"]["skill_config"]["name"] == "develop-feature"
    assert status["steps"]["4"]["memory_file"].endswith("-workflow-context.md")
    assert len(status["steps"]["5"]["phases_completed"]) == 4
    assert "summary" in status["steps"]["6"]
    assert len(status["memory_files"]) == 6
    assert status["created_at"] <= status["updated_at"] and status["completed_at"]
    with_log = run_json(project, "workflow", "status", run_id, "--transitions")
    assert [t["seq"] for t in with_log["transitions_log"]] == list(range(1, 17))

    listed = run_json(project, "workflow", "list")
    assert [r["run_id"] for r in listed["runs"]] == [run_id]
    memory = project / ".skillrt" / "memory"
    assert (memory / f"{data['task_id']}-verification-memory.md").is_file()


def test_human_output_prints_each_directive_then_the_marker(project: Path) -> None:
    log = project / "agents.log"
    proc = run(
        project, "workflow", "start", "develop-feature", QUERY, "--runner-cmd", agent_cmd(log)
    )
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("workflow run wf-")
    assert lines[-1] == "SKILL_ORCHESTRATION_COMPLETE"
    order = [ln.split(":")[0] for ln in lines if ln.startswith("[step ")]
    assert order == [
        "[step 1/6] GENERATE_TASK_ID",
        "[step 2/6] CLASSIFY_DOMAIN",
        "[step 3/6] READ_SKILL",
        "[step 4/6] CREATE_MEMORY",
        "[step 5/6] TRIGGER_AGENTS",
        "[step 5/6] TRIGGER_AGENTS",
        "[step 6/6] COMPLETE_WORKFLOW",
    ]
    # Each step line is followed by the next step's directive.
    i = lines.index(next(ln for ln in lines if ln.startswith("[step 1/6]")))
    assert lines[i + 1].strip().startswith("-> Step 2 CLASSIFY_DOMAIN")
    assert sum("memory file verified" in ln for ln in lines) == 4


def test_runner_failure_then_resume(project: Path) -> None:
    log = project / "agents.log"
    err = run_json(
        project,
        "workflow",
        "start",
        "develop-feature",
        QUERY,
        "--runner-cmd",
        agent_cmd(log, "--fail-in", "research"),
        code=1,
    )["error"]
    assert err["code"] == "E_WORKFLOW_PHASE_FAILED" and err["phase_id"] == "research"
    run_id = err["run_id"]
    status = run_json(project, "workflow", "status", run_id)
    assert status["state"] == "blocked" and status["blocked_from"] == "triggering_agents"
    done = run_json(project, "workflow", "resume", run_id, "--runner-cmd", agent_cmd(log))
    assert done["state"] == "completed"
    assert log_counts(log) == Counter(
        {"clarification": 1, "research": 2, "implementation": 1, "verification": 1}
    )
    again = run(project, "workflow", "resume", run_id)
    assert "already complete" in again.stdout


def test_manual_mode_through_the_cli(project: Path) -> None:
    start = run_json(project, "workflow", "start", "develop-feature", QUERY, "--manual")
    run_id = start["run_id"]
    assert start["state"] == "triggering_agents" and start["mode"] == "manual"
    awaiting = start["events"][-1]
    assert awaiting["kind"] == "phase_awaiting" and "Memory file: " in awaiting["prompt"]

    err = run_json(project, "workflow", "advance", run_id, "clarification", code=1)["error"]
    assert err["code"] == "E_MEMORY_VERIFICATION_FAILED" and err["reason"] == "missing"
    err = run_json(project, "workflow", "advance", run_id, "research", code=1)["error"]
    assert err["code"] == "E_WORKFLOW_ILLEGAL_TRANSITION"

    human = run(project, "workflow", "advance", run_id, "clarification", check=False)
    assert human.returncode == 1 and "E_MEMORY_VERIFICATION_FAILED" in human.stderr

    phases = ["clarification", "research", "implementation", "verification"]
    for phase in phases:
        status = run_json(project, "workflow", "status", run_id)
        [p] = [p for p in status["phases"] if p["phase_id"] == phase]
        Path(p["memory_file"]).write_text(memory_text(phase), encoding="utf-8")
        result = run_json(project, "workflow", "advance", run_id, phase)
    assert result["state"] == "completed" and result["marker"] == "SKILL_ORCHESTRATION_COMPLETE"


def test_manual_mode_human_prints_the_prompt(project: Path) -> None:
    proc = run(project, "workflow", "start", "develop-feature", QUERY, "--manual")
    assert "----- BEGIN PROMPT (clarification) -----" in proc.stdout
    assert "skillrt workflow advance wf-" in proc.stdout
    assert proc.stdout.rstrip().splitlines()[-1].startswith("run wf-")


def test_dry_run_shows_the_first_prompt_and_waits(project: Path) -> None:
    """A dry run runs no agent: nothing failed, nothing is blocked, and it says so; the
    run waits at phase 1 and a real runner takes it from there (issue 30)."""
    data = run_json(project, "workflow", "start", "develop-feature", QUERY, "--dry-run")
    assert data["dry_run"] is True and data["state"] == "triggering_agents"
    assert data["blocked_from"] is None and data["last_error"] is None
    kinds = [e["kind"] for e in data["events"]]
    assert "phase_failed" not in kinds and "blocked" not in kinds
    [shown] = [e for e in data["events"] if e["kind"] == "phase_awaiting"]
    assert "## Phase instructions" in shown["prompt"] and shown["extra"]["dry_run"] is True
    assert [p["state"] for p in data["phases"]] == ["running", "pending", "pending", "pending"]
    assert "resume" in data["note"] and "nothing failed" in data["note"]
    human = run(project, "workflow", "start", "develop-feature", QUERY, "--dry-run")
    assert human.returncode == 0
    assert "----- BEGIN PROMPT (clarification) -----" in human.stdout
    assert "dry run: no agent ran" in human.stdout
    assert not [ln for ln in human.stdout.splitlines() if ln.startswith("BLOCKED [")]
    assert ": FAILED:" not in human.stdout
    log = project / "agents.log"
    done = run_json(project, "workflow", "resume", data["run_id"], "--runner-cmd", agent_cmd(log))
    assert done["state"] == "completed"
    assert log_counts(log) == Counter(
        {"clarification": 1, "research": 1, "implementation": 1, "verification": 1}
    )


def test_a_resume_that_completes_the_run_says_so_once(project: Path) -> None:
    """The completing resume ends with the marker, not with "already complete" (which is
    for a resume that found the run complete)."""
    log = project / "agents.log"
    err = run_json(
        project, "workflow", "start", "develop-feature", QUERY,
        "--runner-cmd", agent_cmd(log, "--fail-in", "research"), code=1,
    )["error"]  # fmt: skip
    done = run(project, "workflow", "resume", err["run_id"], "--runner-cmd", agent_cmd(log))
    lines = done.stdout.rstrip().splitlines()
    assert lines[-1] == "SKILL_ORCHESTRATION_COMPLETE"
    assert "already complete" not in done.stdout
    again = run(project, "workflow", "resume", err["run_id"])
    assert again.stdout.strip() == f"run {err['run_id']} is already complete"


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["workflow", "status", "wf-000000000000"], "E_WORKFLOW_NOT_FOUND"),
        (["workflow", "resume", "wf-000000000000"], "E_WORKFLOW_NOT_FOUND"),
        (["workflow", "advance", "wf-000000000000", "x"], "E_WORKFLOW_NOT_FOUND"),
        (["workflow", "start", "code-review", "q", "--manual"], "E_WORKFLOW_CONFIG"),
        (["workflow", "start", "no-such-skill", "q", "--manual"], "SkillNotFound"),
        (["workflow", "start", "develop-feature", "q"], "E_WORKFLOW_RUNNER_REQUIRED"),
        (["workflow", "start", "develop-feature", " ", "--manual"], "E_USAGE"),
    ],
)
def test_errors_are_structured(project: Path, args: list[str], code: str) -> None:
    proc = run(project, *args, "--json", check=False)
    assert proc.returncode in (1, 2)
    assert json.loads(proc.stdout)["error"]["code"] == code
    assert "Traceback" not in proc.stderr


def _workflow_parsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    top = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    wf = top.choices["workflow"]
    sub = next(a for a in wf._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_no_bypass_option_exists() -> None:
    """Seed 002 invariant 6: phase advancement blocks on verification; nothing skips it."""
    parsers = _workflow_parsers()
    assert set(parsers) == {"start", "status", "resume", "list", "advance"}
    globals_ = {"-h", "--help", "--root", "--config", "--state", "--json", "--no-client-roots"}
    runner = {
        "--runner",
        "--runner-cmd",
        "--writes-files",
        "--base-url",
        "--model",
        "--api-key-env",
        "--timeout",
        "--dry-run",
    }
    allowed = {
        "start": runner | {"--manual", "--show-prompts", "--domain", "--memory-dir",
                           "--learnings-dir"},
        "status": {"--transitions"},
        "resume": runner | {"--manual", "--show-prompts"},
        "list": {"--limit"},
        "advance": set(),
    }  # fmt: skip
    for name, p in parsers.items():
        options = {o for a in p._actions for o in a.option_strings} - globals_
        assert options == allowed[name], (name, options)
        for word in ("force", "skip", "bypass", "no-verify", "unsafe"):
            assert not any(word in o for o in options)
