"""``skillrt show`` and ``skillrt read``: human output, --json, --inject, errors (L6)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillrt.cli.app import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # spills and state go under the test's own folder


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["--root", str(EXAMPLES), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_show_human(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "show", "code-review")
    assert code == 0
    assert out.startswith("# Code Review\n")
    assert "allowed-tools" not in out  # frontmatter stripped
    assert "code-review: SKILL.md" in err and "truncated=false" in err


def test_show_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "code-review", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["text"].startswith("# Code Review")
    report = data["report"]
    for key in ("sha256", "bytes_read", "chars_returned", "truncated", "storage_ref", "path"):
        assert key in report
    assert report["kind"] == "body" and report["truncated"] is False


def test_show_inject(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "show", "code-review", "--inject")
    assert code == 0
    lines = out.split("\n")
    assert lines[0] == "[Skill: code-review | source=flag]"
    assert lines[1] == f"[Skill Path: {(EXAMPLES / 'code-review' / 'SKILL.md').resolve()}]"
    assert lines[2].startswith("[Load Report: sha256=") and "truncated=false" in lines[2]
    assert lines[3] == "# Code Review"


def test_read_section(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "read", "code-review", "references/checklist.md", "--section", "## Security"
    )
    assert code == 0
    assert out.startswith("## Security\n\n### Injection")
    assert "## Performance" not in out
    assert "section='## Security'" in err


def test_read_json_with_inject(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "read", "code-review", "references/checklist.md", "--section", "Tests",
        "--json", "--inject",
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert data["report"]["section"] == "## Tests"
    assert data["injection"].endswith(data["text"])
    assert data["injection"].startswith("[Skill: code-review | source=flag]\n")


def test_read_missing_section_degrades_with_a_warning(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "read", "code-review", "references/checklist.md", "--section", "## Secrity"
    )
    assert code == 0
    assert out.startswith("# Code review checklist")
    assert "warning [SectionNotFound]" in err and "did you mean: ## Security" in err
    code, out, _ = run(
        capsys, "read", "code-review", "references/checklist.md", "--section", "## Secrity",
        "--strict", "--json",
    )  # fmt: skip
    assert code == 1
    assert json.loads(out)["error"]["code"] == "SectionNotFound"


@pytest.mark.parametrize(
    ("argv", "code_name"),
    [
        (["read", "code-review", "../commit-messages/SKILL.md"], "PathTraversalBlocked"),
        (["read", "code-review", "/etc/passwd"], "PathTraversalBlocked"),
        (["read", "code-review", "%2e%2e/x.md"], "PathTraversalBlocked"),
        (["read", "code-review", "references/missing.md"], "IOError"),
        (["read", "release-notes", "scripts/changelog.py"], "DisallowedFileType"),
        (["show", "no-such-skill"], "SkillNotFound"),
        (["read", "no-such-skill", "x.md"], "SkillNotFound"),
    ],
)
def test_errors_are_json_with_non_zero_exit(
    capsys: pytest.CaptureFixture[str], argv: list[str], code_name: str
) -> None:
    code, out, _ = run(capsys, *argv, "--json")
    assert code == 1
    err = json.loads(out)["error"]
    assert err["code"] == code_name
    assert err["message"]


def test_human_error_goes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "read", "code-review", "../x.md")
    assert code == 1 and out == ""
    assert "[PathTraversalBlocked]" in err


def test_read_full_spills_under_the_run_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    skill = tmp_path / "skills" / "big"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: big\ndescription: Use for big docs.\n---\n# Big\n", encoding="utf-8"
    )
    content = "# Ref\n\n" + "".join(f"## S{i}\n\n" + "word " * 400 + "\n\n" for i in range(20))
    (skill / "references" / "ref.md").write_text(content, encoding="utf-8")
    code = main(
        ["--root", str(tmp_path / "skills"), "read", "big", "references/ref.md", "--full",
         "--run-id", "run-7", "--json"]
    )  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0
    report = json.loads(out)["report"]
    stored = Path(report["storage_ref"])
    assert stored.parent == tmp_path / ".agent" / "runs" / "run-7" / "observations"
    assert stored.read_text(encoding="utf-8") == content
    code = main(["--root", str(tmp_path / "skills"), "read", "big", "references/ref.md",
                 "--no-spill", "--json"])  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 0
    assert json.loads(out)["report"]["storage_ref"] is None
    code = main(["--root", str(tmp_path / "skills"), "read", "big", "references/ref.md",
                 "--run-id", "../evil", "--json"])  # fmt: skip
    out, _ = capsys.readouterr()
    assert code == 2 and json.loads(out)["error"]["code"] == "E_USAGE"


def test_real_process_exit_code_and_streams(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "skillrt", "--root", str(EXAMPLES), "read", "code-review",
         "references/../../x.md", "--json"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"]["code"] == "PathTraversalBlocked"
    proc = subprocess.run(
        [sys.executable, "-m", "skillrt", "--root", str(EXAMPLES), "read", "sql-query-review",
         "references/dialects.yaml", "--section", "sqlite"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0
    assert proc.stdout.startswith("sqlite:\n")
    assert "sql-query-review: references/dialects.yaml" in proc.stderr
