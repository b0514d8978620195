"""``skillrt resolve`` and ``skillrt complete`` (CLI contract: --json, exit codes)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillrt.cli.app import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    monkeypatch.chdir(tmp_path)

    def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = main(["--root", str(EXAMPLES), "--state", str(tmp_path / "state"), *args])
        out, err = capsys.readouterr()
        return code, out, err

    return run


def test_resolve_human(cli: Any) -> None:
    code, out, _ = cli("resolve", "$systematic-debugging fix the auth bug $nope")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Using skill: systematic-debugging"
    assert "(parsed, not enforced)" in lines[1] and "Bash(git:*)" in lines[1]
    assert "No skill named 'nope'. Run /skill list to see available skills.  [NO_MATCH]" in lines
    assert lines[-1] == "Task: fix the auth bug $nope"
    assert "Systematic Debugging" not in out  # no body without --show-body


def test_resolve_show_body(cli: Any) -> None:
    code, out, _ = cli("resolve", "--show-body", "$systematic-debugging go")
    assert code == 0 and "# Systematic Debugging" in out


def test_resolve_json(cli: Any) -> None:
    code, out, _ = cli("resolve", "--json", "$acme:gh-fix-ci inspect failing checks")
    assert code == 0
    data = json.loads(out)
    (act,) = data["activated"]
    assert act["skill"] == "acme:gh-fix-ci"
    assert act["line"] == "Using skill: acme:gh-fix-ci"
    assert act["allowed_tools_enforced"] is False and act["allowed_tools"]
    assert act["load_report"]["sha256"] and "Fix Failing CI" in act["body"]
    assert data["task_text"] == "inspect failing checks"
    assert data["surface"] == "user" and data["event"]["activated"] == ["acme:gh-fix-ci"]
    assert data["mentions"][0]["start"] == 0


def test_resolve_model_surface(cli: Any) -> None:
    code, out, _ = cli("resolve", "--json", "--surface", "model", "$deploy-production v2")
    data = json.loads(out)
    assert code == 0 and data["activated"] == []
    assert [d["code"] for d in data["diagnostics"]] == ["MODEL_INVOCATION_DISABLED"]
    code, out, _ = cli("resolve", "--json", "--surface", "palette", "$deploy-production v2")
    assert [a["skill"] for a in json.loads(out)["activated"]] == ["deploy-production"]


def test_resolve_commands_apply_and_persist(cli: Any) -> None:
    code, out, _ = cli("resolve", "/skill disable code-review\n$code-review my PR")
    assert code == 0
    assert "/skill disable: Skill 'code-review' disabled." in out
    assert "Skill 'code-review' is disabled. Enable it with /skill enable code-review." in out
    code, out, _ = cli("resolve", "--json", "/skill list review")
    (result,) = json.loads(out)["command_results"]
    assert {s["id"]: s["enabled"] for s in result["skills"]}["code-review"] is False
    code, out, _ = cli("resolve", "--no-apply", "/skill enable code-review\n$code-review x")
    assert "DISABLED" in out


def test_resolve_stdin(cli: Any) -> None:
    code, out, _ = cli("resolve", "--json", "-", stdin="please use $writing-plans now\n")
    assert json.loads(out)["activated"][0]["skill"] == "writing-plans"


def test_complete(cli: Any) -> None:
    code, out, _ = cli("complete", "--json", "fix with $sys")
    assert code == 0
    (first, *_) = json.loads(out)["completions"]
    assert first["id"] == "systematic-debugging"
    assert first["replace_start"] == len("fix with ") and first["replace_end"] == 13
    code, out, _ = cli("complete", "$te", "--cursor", "3")
    assert out.splitlines()[1].startswith("$test-driven-development")
    code, out, _ = cli("complete", "`$sys`")
    assert out.strip() == "(no completions)"


def test_complete_bad_cursor_is_usage_error(cli: Any) -> None:
    code, out, _ = cli("complete", "--json", "$sys", "--cursor", "99")
    assert code == 2
    assert json.loads(out)["error"]["code"] == "E_USAGE"


def test_installed_entry_point(tmp_path: Path) -> None:
    exe = Path(sys.executable).parent / "skillrt"
    proc = subprocess.run(
        [
            str(exe),
            "--root",
            str(EXAMPLES),
            "--state",
            str(tmp_path),
            "resolve",
            "--json",
            "$tdd $systematic-debugging fix the parser",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["activated"] == []
    assert data["diagnostics"][-1]["message"] == (
        "Choose one skill to lead this turn: $test-driven-development or $systematic-debugging."
    )
