"""D5 entry points on the command line: dispatch, orchestrate, run, run-skill, edges, repair."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from skillrt.cli.app import main
from skillrt.dispatch.prompt import header_yaml_in

from .support import EXAMPLES, REPO, scripted


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str, json_out: bool = True) -> tuple[int, object]:
        argv = ["--root", str(EXAMPLES), "--state", str(tmp_path / "state"), *args]
        if json_out:
            argv.append("--json")
        code = main(argv)
        out = capsys.readouterr().out
        return code, (json.loads(out) if json_out else out)

    return invoke


SEED_FLAGS = [
    "dispatch",
    "--role",
    "fixer",
    "--skill",
    "systematic-debugging",
    "--execution-mode",
    "delegated",
    "--depth",
    "1",
    "--parent-skill",
    "executing-plans",
    "--edge-type",
    "requires_now",
    "--visited-skills",
    "writing-plans,executing-plans",
    "--prompt",
    "trace the root cause first; no fix yet",
]


def test_dispatch_with_the_seeds_flags(cli, tmp_path: Path) -> None:
    model = scripted(tmp_path, [{"echo": True}])
    code, data = cli(*SEED_FLAGS, "--runner-cmd", model.cmd, "--request-id", "req-x-1")
    assert code == 0
    assert data["status"] == "success" and data["depth"] == 2
    header = yaml.safe_load(header_yaml_in(data["output"]))
    assert header["trace"] == {
        "request_id": "req-x-1",
        "depth": 2,
        "skill_stack": ["writing-plans", "executing-plans", "systematic-debugging"],
        "visited_skills": ["writing-plans", "executing-plans"],
    }
    assert [c["skill"] for c in data["children"]] == ["test-driven-development"]
    assert "trace the root cause first" in model.calls()[0]["prompt_head"]


def test_dispatch_guard_error_is_structured(cli) -> None:
    code, data = cli(
        "dispatch",
        "--skill",
        "executing-plans",
        "--execution-mode",
        "delegated",
        "--parent-skill",
        "systematic-debugging",
        "--depth",
        "1",
        "--visited-skills",
        "executing-plans,systematic-debugging",
        "--prompt",
        "x",
        "--dry-run",
    )
    assert code == 1
    err = data["error"]
    assert err["code"] == "E_SKILL_REENTRY_BLOCKED"
    assert {"request_id", "current_skill", "target_skill", "depth", "skill_stack"} <= set(err)
    code, data = cli(
        "dispatch",
        "--skill",
        "code-review",
        "--prompt",
        "x",
        "--dry-run",
        "--execution-mode",
        "delegated",
        "--depth",
        "3",
    )
    assert data["error"]["code"] == "E_DEPTH_LIMIT"
    code, data = cli(
        "dispatch",
        "--skill",
        "code-review",
        "--prompt",
        "x",
        "--dry-run",
        "--edge-type",
        "reference_only",
    )
    assert data["error"]["code"] == "E_EDGE_NOT_EXECUTABLE"
    code, data = cli("dispatch", "--skill", "code-review", "--prompt", "x", "--role", "wizard")
    assert (code, data["error"]["code"]) == (1, "E_UNKNOWN_ROLE")


def test_dispatch_dry_run_human_output_shows_the_prompts(cli) -> None:
    code, out = cli(
        "dispatch", "--skill", "executing-plans", "--prompt", "go", "--dry-run", json_out=False
    )
    assert code == 0
    assert "systematic-debugging  (delegated, depth 1, requires_now, role fixer)  success" in out
    assert "----- prompt: test-driven-development (depth 2, delegated) -----" in out
    assert "next (requires_later): finishing-work" in out


def test_orchestrate_with_the_example_rules(cli) -> None:
    code, data = cli(
        "orchestrate",
        "our tests fail with a stack trace",
        "--rules",
        str(REPO / "examples" / "skill-routing.yaml"),
        "--dry-run",
    )
    assert code == 0
    assert (data["source"], data["role"], data["skill"]) == (
        "rule",
        "fixer",
        "systematic-debugging",
    )
    assert data["rule"]["rule_id"] == "debugging"


def test_run_dry_run_json_and_human(cli) -> None:
    code, data = cli("run", "$executing-plans carry out task 1", "--dry-run")
    assert code == 0
    assert data["status"] == "success" and data["source"] == "mention"
    (step,) = data["steps"]
    assert [t["to_state"] for t in step["transitions"]] == ["running", "success"]
    assert step["dispatches"][0]["children"][0]["skill"] == "systematic-debugging"
    code, out = cli("run", "$executing-plans carry out task 1", "--dry-run", json_out=False)
    assert "Plan (mention): executing-plans" in out
    assert "Step 1/1: executing-plans -> success via skill:executing-plans" in out
    assert "----- prompt: executing-plans (depth 0, root) -----" in out
    assert "Status: success" in out


def test_run_with_a_runner_command_and_fallback(cli, tmp_path: Path) -> None:
    model = scripted(
        tmp_path,
        [{"match": "current_skill: null", "stdout": "plain answer"}, {"exit": 1, "stderr": "nope"}],
    )
    code, out = cli(
        "run", "$code-review look at my diff", "--runner-cmd", model.cmd, json_out=False
    )
    assert code == 0
    assert "skill:code-review: running -> fatal_failure" in out
    assert "skill:code-review: fallback -> success" in out
    assert "Output:\nplain answer" in out


def test_run_needs_user_input_exits_1(cli) -> None:
    code, data = cli("run", "$code-review $commit-messages do both", "--dry-run")
    assert code == 1 and data["status"] == "needs_user_input" and data["question"]


def test_run_skill_cli(cli) -> None:
    code, data = cli(
        "run-skill", "code-review", "check it", "--call-chain", "writing-plans", "--dry-run"
    )
    assert code == 0
    assert data["status"] == "delegated"
    assert data["call_chain"] == ["writing-plans", "code-review"]
    code, data = cli(
        "run-skill",
        "--text",
        "run_skill code-review: check it",
        "--call-chain",
        "code-review",
        "--dry-run",
    )
    assert code == 1 and data["error"]["code"] == "E_SKILL_REENTRY_BLOCKED"
    code, data = cli("run-skill", "--text", "hello")
    assert code == 2 and data["error"]["code"] == "E_USAGE"


def test_edges_cli(cli) -> None:
    code, data = cli("edges", "executing-plans", "--type", "requires_now")
    assert code == 0
    assert [(e["source"], e["target"]) for e in data["edges"]] == [
        ("executing-plans", "systematic-debugging")
    ]
    code, out = cli("edges", json_out=False)
    rows = [line.split()[:3] for line in out.splitlines()]
    assert ["acme:release-notes", "requires_now", "acme:gh-fix-ci"] in rows
    assert len(rows) == 1 + 21


def test_repair_list_and_revert_cli(cli, make_skill, tmp_path: Path, monkeypatch) -> None:
    code, data = cli("repair", "list")
    assert code == 0 and data == {"attempts": [], "patches": []}
    code, data = cli("repair", "revert", "rep-nope")
    assert code == 1 and data["error"]["code"] == "E_PATCH_NOT_FOUND"
    code, data = cli("repair")
    assert code == 2


def test_openai_runner_reads_the_key_from_the_named_variable(cli, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    code, data = cli(
        "dispatch",
        "--skill",
        "code-review",
        "--prompt",
        "x",
        "--runner",
        "openai",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--timeout",
        "2",
    )
    # Port 9 (discard) refuses: a retryable connection error, retried once.
    assert code == 1
    assert data["error"]["retryable"] is True
    assert data["attempts"] == 2


def test_cli_end_to_end_in_a_subprocess(tmp_path: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "skillrt",
        "--root",
        str(EXAMPLES),
        "--state",
        str(tmp_path / "s"),
        *SEED_FLAGS,
        "--runner-cmd",
        "head -c 200",
        "--json",
    ]
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["output"].startswith("<runtime-header>\n```yaml\nexecution_mode: delegated")
    assert shlex.split("head -c 200")  # the command line reached the shell as given


def test_repair_cli_after_a_real_repair(
    make_skill, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """run (repair enabled) patches a skill; repair list shows it; repair revert undoes it."""
    make_skill("fixme-x", body="# Fix me\n", files={"scripts/run.py": "print('v1')\n"})
    script = tmp_path / "skills" / "fixme-x" / "scripts" / "run.py"
    (tmp_path / "skillrt.yaml").write_text(
        "roots: [skills]\nexecution:\n  repair_enabled: true\n", encoding="utf-8"
    )
    fix = {
        "error_signature": "wrong version",
        "root_cause": "run.py prints v1",
        "expected_effect": "prints FIXED",
        "files": [{"path": "scripts/run.py", "content": "print('FIXED')\n"}],
    }
    report = (
        '```skillrt-failure-report\n{"task_progress": 0.9, "root_cause_count": 1, '
        '"change_scope_within_skill": true, "estimated_fix_attempts": 1}\n```\n'
    )
    model = scripted(
        tmp_path,
        [
            {"match": "<repair-request>", "stdout": "```json\n" + json.dumps(fix) + "\n```"},
            {
                "match": "current_skill: fixme-x",
                "when_file": str(script),
                "file_has": "FIXED",
                "stdout": "all good",
            },
            {"match": "current_skill: fixme-x", "exit": 1, "stdout": report},
        ],
    )
    monkeypatch.chdir(tmp_path)

    def cli(*args: str) -> tuple[int, dict]:
        code = main([*args, "--json"])
        return code, json.loads(capsys.readouterr().out)

    code, data = cli("run", "$fixme-x go", "--runner-cmd", model.cmd)
    assert code == 0 and data["output"] == "all good"
    assert script.read_text() == "print('FIXED')\n"
    code, data = cli("repair", "list")
    (attempt,) = data["attempts"]
    assert attempt["outcome"] == "success" and attempt["patch_status"] == "applied"
    assert attempt["patched_files"] == ["scripts/run.py"]
    code, data = cli("repair", "revert", attempt["attempt_id"])
    assert code == 0 and data["status"] == "reverted"
    assert script.read_text() == "print('v1')\n"


def _recorded(db: Path) -> dict[str, int]:
    """Rows of the tables a run records into (0 each when the file was never made)."""
    import sqlite3

    if not db.exists():
        return {"route_events": 0, "executions": 0, "skill_stats": 0}
    with sqlite3.connect(db) as conn:
        return {
            table: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("route_events", "executions", "skill_stats")
        }


def test_a_dry_run_records_nothing_unless_state_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    text = "The nightly build fails after the refactor: find the root cause before fixing anything"
    for command in (["run", text], ["orchestrate", text], ["run-skill", "code-review", "look"]):
        code = main(["--root", str(EXAMPLES), *command, "--dry-run", "--json"])
        assert code == 0 and json.loads(capsys.readouterr().out)
        assert _recorded(tmp_path / ".skillrt" / "state.db") == {
            "route_events": 0,
            "executions": 0,
            "skill_stats": 0,
        }, command
    state = tmp_path / "given"
    code = main(
        ["--root", str(EXAMPLES), "--state", str(state), "run", text, "--dry-run", "--json"]
    )
    assert code == 0 and json.loads(capsys.readouterr().out)["source"] == "router"
    recorded = _recorded(state / "state.db")
    assert recorded["route_events"] == 1 and recorded["executions"] >= 1
