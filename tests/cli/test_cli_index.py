"""``skillrt index`` and a first ``route`` that finishes its index in the background."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
        code, data, _ = run(capsys, *args, "--json", "--wait", "0")  # as before --wait
    assert code == 0 and data["built"] is False and "another process" in data["reason"]
    assert "waited" not in data
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
    assert f"another 'skillrt index' (pid {os.getpid()}) is embedding them" in err
    assert not (state / "router-index" / "build.log").exists()  # nothing was started

    def refuse(*_args: object, **_kwargs: object) -> int:
        raise PermissionError(13, "Permission denied", str(state / "router-index"))

    monkeypatch.setattr("skillrt.hooks.autostart.start_detached", refuse)
    code, data, err = run(capsys, *ROUTE, "--state", str(state))
    assert code == 0 and data["plan"]["skills"]  # the answer stands, one JSON document
    assert "could not start" in err and "Permission denied" in err


#: Takes the index build lock of the folder argv[1] the way a build does, says so, holds
#: it argv[2] seconds (or until a line comes on stdin), then lets it go and exits.
HOLDER = """
import select, sys
from pathlib import Path
from skillrt.routing.index_build import build_lock
with build_lock(Path(sys.argv[1])) as held:
    print("held" if held else "busy", flush=True)
    select.select([sys.stdin], [], [], float(sys.argv[2]))
"""


@contextmanager
def another_build(folder: Path, seconds: float) -> Iterator[subprocess.Popen[str]]:
    """A real process holding ``folder``'s build lock for ``seconds`` from now on, or
    until :func:`let_go` is called."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder), str(seconds)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()


def let_go(proc: subprocess.Popen[str]) -> None:
    """Tell an :func:`another_build` process to let its lock go now, and wait for it."""
    assert proc.stdin is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()
    assert proc.wait(timeout=60) == 0


@pytest.fixture
def let_go_on_first_wait(monkeypatch: pytest.MonkeyPatch) -> list[subprocess.Popen[str]]:
    """Holders listed here let go when ``skillrt index`` first waits for them (however
    long the command took to get there)."""
    from skillrt.routing import index_build

    holders: list[subprocess.Popen[str]] = []
    real = index_build.wait_for_build

    def first_let_go(folder: Path, timeout: float) -> float | None:
        while holders:
            let_go(holders.pop())
        return real(folder, timeout)

    monkeypatch.setattr(index_build, "wait_for_build", first_let_go)
    return holders


INDEX = ("index", "--root", str(EXAMPLES), "--backend", "hashing", "--json")


def test_index_waits_for_the_build_under_way_then_builds_what_it_did_not_save(
    project: Path, capsys: pytest.CaptureFixture[str], let_go_on_first_wait: list[Any]
) -> None:
    state = project / "state"
    folder = state / "router-index"
    with another_build(folder, 120.0) as other:
        let_go_on_first_wait.append(other)
        code, data, err = run(capsys, *INDEX, "--state", str(state))
    # That build saved no index of these skills: this command built it once it could.
    assert code == 0 and data["built"] is True and data["waited"] >= 0, data
    assert data["saved"] and Path(data["saved"]).exists() and "Traceback" not in err
    assert not is_building(folder)
    # Now a build under way that leaves this index saved is only waited for.
    with another_build(folder, 120.0) as other:
        let_go_on_first_wait.append(other)
        code, waited, _ = run(capsys, *INDEX, "--state", str(state))
    assert code == 0 and waited["built"] is False and waited["waited"] >= 0
    assert waited["saved"] == data["saved"] and "saved the index" in waited["reason"]
    assert waited["folder"] == str(folder)


def test_index_gives_up_after_its_wait_with_a_stable_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = project / "state"
    folder = state / "router-index"
    with build_lock(folder) as held:  # held for longer than the command waits
        assert held
        code, data, err = run(capsys, *INDEX, "--state", str(state), "--wait", "0.5")
        assert code == 1 and set(data) == {"error"} and "Traceback" not in err
        error = data["error"]
        assert error["code"] == "E_INDEX_BUILD_BUSY"
        assert str(folder / "build.log") in error["message"] and "--wait" in error["message"]
        assert error["folder"] == str(folder) and error["waited"] == 0.5
        # In words, on stderr, for a person.
        code = main([*INDEX[:-1], "--state", str(state), "--wait", "0.5"])
        out, err = capsys.readouterr()
        assert code == 1 and not out and "Traceback" not in err
        assert "skillrt: error [E_INDEX_BUILD_BUSY]" in err and "build.log" in err
    assert not list(folder.glob("*.npz"))


def test_index_wait_must_be_a_number_of_seconds(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for bad in ("-1", "inf", "nan"):
        code, data, _ = run(capsys, *INDEX, "--state", str(project / "state"), "--wait", bad)
        assert code == 2 and data["error"]["code"] == "E_USAGE", bad


def test_the_background_build_never_waits(project: Path) -> None:
    state = project / "state"
    with build_lock(state / "router-index") as held:
        assert held
        done = subprocess.run(
            [sys.executable, "-m", "skillrt", *INDEX, "--state", str(state),
             "--background", "--wait", "600"],
            capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["built"] is False and "another process" in data["reason"]
    assert "waited" not in data


def test_a_build_under_way_is_named_by_its_pid(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from skillrt.routing.index_build import build_holder

    state = project / "state"
    folder = state / "router-index"
    assert build_holder(folder) is None
    with another_build(folder, 30.0) as other:
        assert build_holder(folder) == other.pid
        code, data, _ = run(capsys, *INDEX, "--state", str(state), "--wait", "0")
        assert code == 0 and data["built"] is False
        assert f"(pid {other.pid})" in data["reason"] and data["holder"] == other.pid
        code, data, _ = run(capsys, *INDEX, "--state", str(state), "--wait", "0.3")
        assert code == 1 and f"(pid {other.pid})" in data["error"]["message"]
        assert data["error"]["holder"] == other.pid
    # Let go (the holder is gone): nobody is named, though its pid is still in the file.
    assert build_holder(folder) is None
