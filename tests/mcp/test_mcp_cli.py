"""`skillrt mcp` argument and start-up errors are structured, never tracebacks."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest
from mcp_support import server_env, skillrt_cmd


def run(*args: str, cwd: Path) -> tuple[int, dict[str, object]]:
    done = subprocess.run(
        skillrt_cmd("mcp", *args, "--json"),
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **server_env()},
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("--http", "70000"), "E_USAGE"),
        (("--poll", "-1"), "E_USAGE"),
        (("--instructions-budget", "-5"), "E_USAGE"),
    ],
)
def test_bad_arguments(catalogue: Path, state: Path, args: tuple[str, ...], code: str) -> None:
    rc, out = run("--root", str(catalogue), "--state", str(state), *args, cwd=state.parent)
    assert rc == 2 and out["error"]["code"] == code  # type: ignore[index]


def test_port_in_use(catalogue: Path, state: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        rc, out = run(
            "--root", str(catalogue), "--state", str(state), "--http", port, cwd=state.parent
        )
    assert rc == 1 and out["error"]["code"] == "E_SERVE"  # type: ignore[index]


def test_stdin_closed_at_once_exits_cleanly(catalogue: Path, state: Path) -> None:
    """A client that disconnects immediately: the server exits 0, stdout stays clean."""
    done = subprocess.run(
        skillrt_cmd("mcp", "--root", str(catalogue), "--state", str(state)),
        capture_output=True,
        text=True,
        cwd=state.parent,
        env={**os.environ, **server_env()},
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
