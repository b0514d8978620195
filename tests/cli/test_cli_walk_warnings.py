"""Every command reports a missing root (and a cut walk) the way ``list`` does (issue 22):
``ROOT_NOT_FOUND`` on stderr in human output, under ``warnings`` in the JSON document
(beside ``error`` when the command fails), never silently."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillrt.cli import main

Make = Callable[..., Path]
MISSING = "/nonexistent/skills"

COMMANDS = [
    ["route", "review my pull request"],
    ["catalog"],
    ["show", "nope"],
    ["read", "nope", "a.md"],
    ["resolve", "$nope do it"],
    ["complete", "$no"],
    ["run", "hello there"],
    ["edges", "nope"],
    ["enable", "nope"],
    ["dispatch", "--skill", "nope", "--prompt", "hi"],
    ["orchestrate", "hello there"],
]


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SKILLRT_DEBUG", raising=False)
    return tmp_path


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = main(["--json", *args])
    doc = json.loads(capsys.readouterr().out)
    assert isinstance(doc, dict)
    return code, doc


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_missing_root_is_a_warning_in_json(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    _, doc = run_json(capsys, *args, "--root", MISSING)
    assert [w["code"] for w in doc["warnings"]] == ["ROOT_NOT_FOUND"], doc
    assert doc["warnings"][0]["path"] == MISSING


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_missing_root_is_a_warning_on_stderr(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    main([*args, "--root", MISSING])
    out, err = capsys.readouterr()
    assert f"warning [ROOT_NOT_FOUND]: skill root does not exist: {MISSING}" in err, err
    assert "ROOT_NOT_FOUND" not in out  # stdout stays the command's own output


def test_existing_roots_add_no_warnings_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, make_skill: Make
) -> None:
    make_skill("code-review", root=tmp_path / "skills")
    _, doc = run_json(capsys, "route", "review my code", "--root", str(tmp_path / "skills"))
    assert "warnings" not in doc
    main(["catalog", "--root", str(tmp_path / "skills")])
    assert "warning" not in capsys.readouterr().err


def test_list_reports_it_once(capsys: pytest.CaptureFixture[str]) -> None:
    main(["list", "--root", MISSING])
    out, err = capsys.readouterr()
    assert (out + err).count("ROOT_NOT_FOUND") == 1


def test_eval_reports_a_missing_root(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"query": "hello", "expected": []}\n', encoding="utf-8")
    _, doc = run_json(capsys, "eval", "--root", MISSING, "--queries", str(queries))
    assert [w["code"] for w in doc["warnings"]] == ["ROOT_NOT_FOUND"]


def test_a_cut_walk_is_reported_by_every_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, make_skill: Make
) -> None:
    root = tmp_path / "big"
    for i in range(12):
        make_skill(f"skill-{i:02d}", root=root / f"group-{i:02d}")
    (tmp_path / "skillrt.yaml").write_text("discovery:\n  max_dirs_per_root: 5\n", encoding="utf-8")
    _, doc = run_json(capsys, "route", "skill three", "--root", str(root))
    assert [w["code"] for w in doc["warnings"]] == ["ROOT_DIR_LIMIT"]
    main(["catalog", "--root", str(root)])
    assert "warning [ROOT_DIR_LIMIT]" in capsys.readouterr().err


def test_eval_reads_the_same_discovery_settings_as_list(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, make_skill: Make
) -> None:
    """skillrt.yaml's discovery section holds for eval too (it once built a fresh
    DiscoveryConfig()): the same skills as list, and the cut walk said out loud."""
    root = tmp_path / "big"
    for i in range(12):
        make_skill(f"skill-{i:02d}", root=root)
    (tmp_path / "skillrt.yaml").write_text(
        "discovery:\n  max_dirs_per_root: 5\n  max_depth: 3\n", encoding="utf-8"
    )
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"query": "skill three", "expected": []}\n', encoding="utf-8")
    _, listed = run_json(capsys, "list", "--root", str(root))
    assert 0 < len(listed["skills"]) < 12
    _, report = run_json(capsys, "eval", "--root", str(root), "--queries", str(queries))
    assert report["catalog_size"] == len(listed["skills"])
    assert [w["code"] for w in report["warnings"]] == ["ROOT_DIR_LIMIT"]
