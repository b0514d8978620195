"""Reports a user writes to share (``doctor --html``, ``stats --html``, ``eval
--per-query``) get the permissions of any new file under the umask, not 0600 (issue 30)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillrt.atomic import atomic_write_text
from skillrt.cli.app import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


@pytest.fixture(params=[0o022, 0o077, 0o002])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield int(request.param)
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_reports_follow_the_umask(
    project: Path, umask: int, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(project / "state")
    common = ["--root", str(EXAMPLES), "--backend", "hashing", "--state", state]
    queries = project / "q.jsonl"
    queries.write_text(
        '{"query": "write a commit message", "expected": ["commit-messages"]}\n', "utf-8"
    )
    assert main(["eval", *common, "--queries", str(queries), "--per-query", "per.jsonl"]) == 0
    assert main(["doctor", *common, "--html", "doctor.html", "--samples", "2"]) == 0
    assert main(["route", "write a commit message", *common, "--no-daemon"]) == 0
    assert main(["stats", "--state", state, "--root", str(EXAMPLES), "--html", "stats.html"]) == 0
    capsys.readouterr()
    for name in ("per.jsonl", "doctor.html", "stats.html"):
        assert mode(project / name) == 0o666 & ~umask, name


def test_private_files_stay_private(project: Path, umask: int) -> None:
    atomic_write_text(project / "private.txt", "secret\n")
    assert mode(project / "private.txt") == 0o600
    atomic_write_text(project / "shared.txt", "report\n", shared=True)
    assert mode(project / "shared.txt") == 0o666 & ~umask
    assert sorted(p.name for p in project.iterdir()) == ["private.txt", "shared.txt"]
