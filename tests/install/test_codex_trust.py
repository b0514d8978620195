"""Asking Codex's app server about hook trust, against app servers that misbehave: every
exchange is bounded, a failure is a TrustProblem, and no process is left running."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from skillrt.install.codex_trust import TrustProblem, trust_hooks

#: A stand-in for ``codex``: ``app-server`` that answers ``initialize`` (or not), then
#: misbehaves as FAKE_MODE says; it and the child it starts (as Codex's npm launcher
#: starts the native binary) write their pids to FAKE_PIDS.
FAKE = """\
import json, os, subprocess, sys, time
mode = os.environ["FAKE_MODE"]
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
with open(os.environ["FAKE_PIDS"], "w") as fh:
    fh.write(f"{os.getpid()} {child.pid}")
if mode == "garbage-then-exit":
    sys.stdout.write("not json\\n[1, 2]\\n\\x00\\xff\\n")
    sys.stdout.flush()
    sys.exit(3)
if mode == "hang-after-initialize":
    request = json.loads(sys.stdin.readline())
    sys.stdout.write(json.dumps({"id": request["id"], "result": {}}) + "\\n")
    sys.stdout.flush()
time.sleep(300)  # deaf: no answer, and stdin's end is not noticed
"""


def fake_codex(tmp_path: Path) -> Path:
    path = tmp_path / "codex"
    path.write_text(f"#!{sys.executable}\n{FAKE}")
    path.chmod(0o755)
    return path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie is gone, only not yet reaped
        return fh.read().rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("hang", "codex_timeout"),
        ("hang-after-initialize", "codex_timeout"),
        ("garbage-then-exit", "codex_failed"),
    ],
)
def test_a_codex_that_hangs_or_fails_is_a_problem_and_leaves_no_process(
    tmp_path: Path, mode: str, reason: str
) -> None:
    pids = tmp_path / "pids"
    environ = {**os.environ, "FAKE_MODE": mode, "FAKE_PIDS": str(pids)}
    with pytest.raises(TrustProblem) as caught:
        trust_hooks(tmp_path, lambda _: True, codex=str(fake_codex(tmp_path)),
                    environ=environ, timeout=3)  # fmt: skip
    assert caught.value.reason == reason
    started = [int(p) for p in pids.read_text().split()]
    try:
        give = time.monotonic() + 10  # a process being killed takes a moment to go
        while any(alive(p) for p in started) and time.monotonic() < give:
            time.sleep(0.05)
        assert not any(alive(p) for p in started)
    finally:  # on a failure, still leave none behind
        for pid in started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
