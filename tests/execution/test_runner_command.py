"""X1: the stdin command runner, with real subprocesses."""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
import time
from pathlib import Path

import pytest

from skillrt.config import ExecutionConfig
from skillrt.errors import ConfigError, RunnerError, RunnerTimeout
from skillrt.execution.options import RunnerOptions
from skillrt.execution.runners import (
    BASE_ENV,
    CommandRunner,
    DryRunRunner,
    build_runner,
    minimal_env,
)

from .support import ENV, scripted

PY = shlex.quote(sys.executable)


def py(code: str) -> str:
    return f"{PY} -c {shlex.quote(code)}"


def test_prompt_goes_in_on_stdin_and_stdout_comes_back() -> None:
    runner = CommandRunner("cat", env=ENV)
    result = runner.run("hello\nwörld")
    assert result.output == "hello\nwörld"
    assert result.exit_code == 0
    assert result.truncated is False
    assert result.latency_ms > 0


def test_user_command_line_may_use_shell_features() -> None:
    runner = CommandRunner('tr a-z A-Z | sed "s/^/> /"', env=ENV)
    assert runner.run("abc").output == "> ABC"


def test_stderr_and_exit_code_are_kept() -> None:
    runner = CommandRunner(
        py("import sys; print('partial'); sys.stderr.write('bad\\n'); sys.exit(3)"), env=ENV
    )
    with pytest.raises(RunnerError) as info:
        runner.run("x")
    err = info.value
    assert err.retryable is False
    assert err.context["exit_code"] == 3
    assert err.context["stderr"] == "bad\n"
    assert "partial" in err.context["output_excerpt"]
    assert "exited with status 3: bad" in err.message
    assert err.context["scope"] == "skill"


@pytest.mark.parametrize(
    ("code", "retryable", "scope"),
    [(75, True, "skill"), (124, True, "skill"), (1, False, "skill"), (2, False, "skill")],
)
def test_exit_code_classification(code: int, retryable: bool, scope: str) -> None:
    with pytest.raises(RunnerError) as info:
        CommandRunner(f"exit {code}", env=ENV).run("x")
    assert info.value.retryable is retryable
    assert info.value.context["scope"] == scope


def test_configured_retryable_exit_codes() -> None:
    with pytest.raises(RunnerError) as info:
        CommandRunner("exit 9", env=ENV, retryable_exit_codes=(9,)).run("x")
    assert info.value.retryable


def test_command_not_found_is_fatal_for_the_runner() -> None:
    with pytest.raises(RunnerError) as info:
        CommandRunner("definitely-not-a-command-xyz", env=ENV).run("x")
    assert info.value.context["exit_code"] == 127
    assert info.value.retryable is False
    assert info.value.context["scope"] == "runner"
    assert "not found" in info.value.message


def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    # The shell starts a grandchild that would outlive a plain kill of the shell.
    cmd = f"sleep 30 & echo $! > {shlex.quote(str(pidfile))}; wait"
    runner = CommandRunner(cmd, env=ENV, timeout_s=2.0, kill_grace_s=0.2)
    with pytest.raises(RunnerTimeout) as info:
        runner.run("x")
    assert info.value.retryable is True
    assert info.value.code == "E_RUNNER_TIMEOUT"
    pid = int(pidfile.read_text())
    for _ in range(100):
        if not _alive(pid):
            break
        time.sleep(0.05)
    else:
        pytest.fail("the grandchild survived the timeout")


def _alive(pid: int) -> bool:
    """Running (a killed, not yet reaped zombie does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return not Path("/proc").is_dir()
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def test_timeout_kills_a_process_that_ignores_sigterm() -> None:
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(30)"
    runner = CommandRunner(py(code), env=ENV, timeout_s=0.5, kill_grace_s=0.2)
    with pytest.raises(RunnerTimeout):
        runner.run("x")


def test_output_cap_sets_truncated_and_keeps_draining() -> None:
    runner = CommandRunner(py("print('é' * 500000)"), env=ENV, max_output_bytes=1001)
    result = runner.run("x")
    assert result.truncated is True
    assert len(result.output.encode("utf-8")) <= 1001
    assert set(result.output) == {"é"}  # never a broken UTF-8 sequence
    assert result.meta["output_bytes"] > 1_000_000


def test_large_prompt_to_a_command_that_does_not_read_stdin() -> None:
    result = CommandRunner("echo done", env=ENV).run("x" * 5_000_000)
    assert result.output == "done\n"


def test_environment_is_explicit_not_inherited(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SKILLRT_TEST_SECRET", "s3cret")
    monkeypatch.setenv("SKILLRT_TEST_PASSED", "yes")
    env = minimal_env(os.environ, ["SKILLRT_TEST_PASSED"])
    assert set(env) <= {*BASE_ENV, "SKILLRT_TEST_PASSED"}
    model = scripted(tmp_path, [{"env": ["SKILLRT_TEST_SECRET", "SKILLRT_TEST_PASSED", "PATH"]}])
    import json

    out = json.loads(model.runner(env=env).run("x").output)
    assert out["SKILLRT_TEST_SECRET"] is None
    assert out["SKILLRT_TEST_PASSED"] == "yes"
    assert out["PATH"] == os.environ["PATH"]


def test_minimal_env_defaults_path() -> None:
    assert minimal_env({}) == {"PATH": os.defpath}
    assert minimal_env({"HOME": "/h", "OTHER": "x", "LANG": "C"}) == {
        "HOME": "/h",
        "LANG": "C",
        "PATH": os.defpath,
    }


def test_build_runner_from_config(monkeypatch) -> None:
    cfg = ExecutionConfig(pass_env=("X_TOKEN",), timeout_s=7.0)
    env = {"PATH": "/bin", "X_TOKEN": "t", "Y": "n"}
    runner = build_runner(cfg, RunnerOptions(runner_cmd="cat"), environ=env)
    assert isinstance(runner, CommandRunner)
    assert runner.env == {"PATH": "/bin", "X_TOKEN": "t"}
    assert runner.timeout_s == 7.0
    assert isinstance(build_runner(cfg), DryRunRunner)
    for kind, reason in (
        ("command", "no_runner_cmd"),
        ("openai", "no_base_url"),
        ("telepathy", "unknown_runner"),
    ):
        with pytest.raises(ConfigError) as exc:
            build_runner(cfg, RunnerOptions(runner=kind))
        assert exc.value.context["reason"] == reason
        # The config key fails the same way as the option.
        with pytest.raises(ConfigError) as same:
            build_runner(dataclasses.replace(cfg, runner=kind))
        assert same.value.to_dict() == exc.value.to_dict()
    with pytest.raises(ConfigError):
        CommandRunner("   ")


def test_dry_run_returns_the_prompt() -> None:
    result = DryRunRunner().run("the prompt")
    assert result.output == "the prompt"
    assert result.meta["dry_run"] is True
