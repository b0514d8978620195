"""The prompt hook answers within its deadline, well under the client's timeout.

A daemon that does not answer (``kill -STOP``) is skipped after ``hook.daemon_timeout_s``
and the hook works in-process; whatever still holds it past ``hook.deadline_s`` ends it
with nothing printed and the reason in ``<state>/hook.log``. Real ``skillrt serve`` and
``skillrt hook`` processes, the exact JSON Claude Code sends.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hook_support import build_skills, claude_payload, env, hook_output, hook_state, skillrt


@pytest.fixture
def stopped_daemon(tmp_path: Path, make_skill: Callable[..., Path]) -> Iterator[Path]:
    """A project whose daemon is alive but stopped (SIGSTOP): it accepts connections
    (the kernel queues them) and never answers."""
    project = tmp_path / "project"
    project.mkdir()
    skills = build_skills(tmp_path / "skills", make_skill)
    (project / "skillrt.yaml").write_text(f"roots: [{skills}]\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillrt", "serve", "--poll", "0"],
        cwd=project,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    try:
        assert json.loads(line)["event"] == "listening", line
    except BaseException:
        proc.kill()
        proc.wait(30)
        raise
    threading.Thread(target=proc.stderr.read, daemon=True).start()
    proc.send_signal(signal.SIGSTOP)
    try:
        yield project
    finally:
        proc.send_signal(signal.SIGCONT)
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def hook_log(project: Path) -> str:
    path = hook_state(project) / "hook.log"
    return path.read_text() if path.exists() else ""


def test_the_deadline_ends_a_hook_waiting_on_a_daemon(stopped_daemon: Path) -> None:
    """Even told to wait 600 s for the daemon, the hook ends at its deadline (2 s):
    nothing printed, exit 0, the reason logged."""
    project = stopped_daemon
    proc = skillrt(
        "hook", "claude-code", "--timeout", "600", "--deadline", "2",
        cwd=project, stdin=claude_payload("please do a code review of my pr", project),
        timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stdout == ""
    assert "deadline of 2 s passed while asking the daemon" in hook_log(project)


def test_a_daemon_that_does_not_answer_is_skipped(stopped_daemon: Path) -> None:
    """``hook.daemon_timeout_s`` from skillrt.yaml: the stopped daemon is given 1 s, then
    the hook answers in-process."""
    project = stopped_daemon
    config = project / "skillrt.yaml"
    config.write_text(config.read_text() + "hook:\n  daemon_timeout_s: 1\n")
    proc = skillrt(
        "hook", "claude-code",
        cwd=project, stdin=claude_payload("please do a code review of my pr", project),
        timeout=60,
    )  # fmt: skip
    out = hook_output(proc)
    assert out is not None and out["systemMessage"] == "Using skill: code-review"
    assert "daemon skipped (no answer within 1 s); working in-process" in hook_log(project)


def test_the_default_deadline_is_well_under_the_installed_timeout() -> None:
    from skillrt.config import HookConfig
    from skillrt.hooks.entry import DEADLINE_S, STORE_WAIT_S, parse_args
    from skillrt.install.targets import Target

    assert HookConfig().deadline_s == DEADLINE_S <= Target.timeout_s / 3
    assert HookConfig().store_wait_s == STORE_WAIT_S
    opts = parse_args(["claude-code", "--deadline", "2.5", "--timeout=1"])
    assert (opts.deadline, opts.timeout) == (2.5, 1.0)
    for bad in (["claude-code", "--deadline", "0"], ["claude-code", "--deadline", "x"]):
        with pytest.raises(ValueError):
            parse_args(bad)


def test_hook_settings_in_skillrt_yaml_are_checked(tmp_path: Path) -> None:
    from skillrt.config import RuntimeConfig, peek_hook
    from skillrt.errors import ConfigError

    path = tmp_path / "skillrt.yaml"
    path.write_text("hook:\n  deadline_s: 2\n  store_wait_s: 0.5\n")
    assert peek_hook(path).deadline_s == 2 and peek_hook(path).store_wait_s == 0.5
    assert RuntimeConfig.from_file(path).hook == peek_hook(path)
    for good in ("hook:\n  daemon_timeout_s: null\n", "hook: {}\n", "hook:\n  deadline_s: 2.5\n"):
        path.write_text(good)  # what the config accepts, the hook accepts (one check)
        assert peek_hook(path) == RuntimeConfig.from_file(path).hook
    for bad in (
        "hook:\n  deadline_s: 0\n",
        "hook:\n  deadline: 2\n",
        "hook:\n  deadline_s: x\n",
        "hook:\n  deadline_s: true\n",
        "hook: [1]\n",
    ):
        path.write_text(bad)
        with pytest.raises(ConfigError) as peeked:
            peek_hook(path)
        with pytest.raises(ConfigError) as full:
            RuntimeConfig.from_file(path)
        assert peeked.value.message == full.value.message, bad
    assert os.path.exists(path)


def test_route_does_not_wait_long_on_a_daemon_that_does_not_answer(stopped_daemon: Path) -> None:
    """`skillrt route` gives the stopped daemon about a second, then routes in-process
    (it waited 30 s; the 20 s guard fails a command that waits that long)."""
    project = stopped_daemon
    proc = skillrt("--json", "route", "please do a code review of my pr", cwd=project, timeout=20)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["plan"]["skills"][0]["name"] == "code-review"
    assert "did not answer within 1 s; working in-process" in proc.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1"])
def test_a_deadline_that_is_not_a_positive_number_is_a_usage_error(
    tmp_path: Path, value: str
) -> None:
    proc = skillrt("hook", "claude-code", "--deadline", value, cwd=tmp_path, stdin="{}")
    assert proc.returncode == 2 and "--deadline must be a positive number" in proc.stderr
