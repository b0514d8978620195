"""``skillrt index`` and a first ``route`` that finishes its index in the background."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from skillrt.cli.app import main
from skillrt.routing import index as index_module
from skillrt.routing.index_build import build_lock, is_building

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
QUERY = "please write a commit message for my staged changes"
#: Bound on the background build of the example skills (hashing vectors: ~1 s).
BUILD_TIMEOUT_S = 120.0


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def _saved(folder: Path) -> bool:
    """Whether a whole index is saved in ``folder`` and no build holds its lock."""
    deadline = time.monotonic() + BUILD_TIMEOUT_S
    while not list(folder.glob("*.npz")) or is_building(folder):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


ROUTE = ("route", QUERY, "--root", str(EXAMPLES), "--backend", "hashing", "--json", "--no-daemon")


def test_a_first_route_answers_then_a_background_build_saves_the_whole_index(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "DEFER_MIN_TEXTS", 1)  # the examples are few
    state = project / "state"
    code, first, err = run(capsys, *ROUTE, "--state", str(state))
    assert code == 0 and first["plan"]["skills"]
    assert "embeds them in the background" in err
    folder = state / "router-index"
    assert _saved(folder), (folder / "build.log").read_text()
    log = (folder / "build.log").read_text()
    assert "started by skillrt route" in log and "skillrt index:" in log
    code, second, err = run(capsys, *ROUTE, "--state", str(state))
    assert code == 0 and "background" not in err
    # The same skills (scores move a little: the first route is now in the stats).
    assert [s["name"] for s in second["plan"]["skills"]] == [
        s["name"] for s in first["plan"]["skills"]
    ]


def test_no_defer_builds_the_whole_index_before_answering(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "DEFER_MIN_TEXTS", 1)
    state = project / "state"
    code, _, err = run(capsys, *ROUTE, "--state", str(state), "--no-defer")
    assert code == 0 and "background" not in err
    folder = state / "router-index"
    assert list(folder.glob("*.npz")) and not (folder / "build.log").exists()


def test_index_builds_and_saves_and_gives_way_to_a_build_under_way(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = project / "state"
    args = ("index", "--root", str(EXAMPLES), "--backend", "hashing", "--state", str(state))
    with build_lock(state / "router-index") as held:
        assert held
        code, data, _ = run(capsys, *args, "--json")
    assert code == 0 and data["built"] is False and "another process" in data["reason"]
    assert not list((state / "router-index").glob("*.npz"))
    code, data, _ = run(capsys, *args, "--json")
    assert code == 0 and data["built"] is True
    _, listed, _ = run(capsys, "list", "--root", str(EXAMPLES), "--json")
    assert data["skills"] == len(listed["skills"])
    assert data["embedded"] > 0
    saved = list((state / "router-index").glob("*.npz"))
    assert len(saved) == 1 and data["saved"] == str(saved[0])
    # A lexical index saves nothing, and says so.
    code, data, _ = run(capsys, *args[:-4], "--backend", "none", *args[-2:], "--json")
    assert code == 0 and data["built"] is True and data["saved"] is None


def test_the_background_build_gets_the_routes_inputs_and_logs_no_password(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "DEFER_MIN_TEXTS", 1)
    started: list[list[str]] = []

    def record(argv: list[str], **_kwargs: object) -> int:
        started.append(argv)
        return 4242

    monkeypatch.setattr("skillrt.hooks.autostart.start_detached", record)
    # A folder whose name starts with "-" stays one value on the child's command line.
    odd = project / "-skills"
    odd.symlink_to(EXAMPLES)
    code, _, err = run(capsys, "route", QUERY, "--root=-skills", "--backend", "hashing",
                       "--state", str(project / "state"), "--json", "--no-daemon")  # fmt: skip
    assert code == 0 and "pid 4242" in err
    (argv,) = started
    assert argv[3:] == ["--root=-skills", f"--state={project / 'state'}", "index",
                        "--background", "--backend=hashing"]  # fmt: skip


def test_the_build_log_never_holds_the_arguments(tmp_path: Path) -> None:
    import sys

    from skillrt.hooks.autostart import start_detached

    log = tmp_path / "router-index" / "build.log"
    secret = "postgresql://me:hunter2@db/skills"
    pid = start_detached([sys.executable, "-c", "pass", "--state", secret], cwd=str(tmp_path),
                         log_path=str(log), environ={}, by="a test")  # fmt: skip
    assert pid > 0
    assert "hunter2" not in log.read_text() and "started by a test" in log.read_text()


def test_a_route_starts_no_second_build_and_survives_a_build_that_cannot_start(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_module, "DEFER_MIN_TEXTS", 1)
    state = project / "state"
    with build_lock(state / "router-index"):
        code, data, err = run(capsys, *ROUTE, "--state", str(state))
    assert code == 0 and data["plan"]["skills"]
    assert "another 'skillrt index' is embedding them" in err
    assert not (state / "router-index" / "build.log").exists()  # nothing was started

    def refuse(*_args: object, **_kwargs: object) -> int:
        raise PermissionError(13, "Permission denied", str(state / "router-index"))

    monkeypatch.setattr("skillrt.hooks.autostart.start_detached", refuse)
    code, data, err = run(capsys, *ROUTE, "--state", str(state))
    assert code == 0 and data["plan"]["skills"]  # the answer stands, one JSON document
    assert "could not start" in err and "Permission denied" in err
