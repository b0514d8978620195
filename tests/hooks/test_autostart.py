"""No daemon answers: the hook starts one for the next prompts (issue 27), one per
state folder, detached, logged, and gone after its idle time."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hook_support import claude_payload, hook_output, hook_state, skillrt, wait_for

from skillrt.hooks.autostart import daemon_running


def _daemons(state: Path) -> list[int]:
    """Pids of `skillrt serve` processes of this state folder (a /proc scan)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(state).encode() in argv:
            out.append(int(entry))
    return out


@pytest.fixture
def autostarted(project: Path, skills: Path) -> Iterator[Path]:
    """The project, its hook allowed to start a daemon (idle after 20 s); every daemon
    of its state folder is ended afterwards, whatever the test did."""
    (project / ".git").mkdir()
    (project / "skillrt.yaml").write_text("hook:\n  daemon_idle_s: 20\n")
    yield project
    state = hook_state(project)
    for pid in _daemons(state):
        try:
            os.kill(pid, 15)
        except ProcessLookupError:
            pass
    wait_for(lambda: not _daemons(state), timeout=30)


def hook(project: Path, skills: Path, prompt: str, *, cwd: Path | None = None) -> dict | None:  # type: ignore[type-arg]
    proc = skillrt(
        "hook", "claude-code", "--root", str(skills), cwd=cwd or project,
        stdin=claude_payload(prompt, cwd or project), SKILLRT_DAEMON_AUTOSTART="1",
    )  # fmt: skip
    return hook_output(proc)


def test_the_first_prompt_starts_a_daemon_that_answers_the_next(
    autostarted: Path, skills: Path
) -> None:
    project = autostarted
    state = hook_state(project)
    first = hook(project, skills, "please do a code review of my pr")
    assert first is not None and "code-review" in first["systemMessage"]
    log = (state / "hook.log").read_text()
    assert "started a daemon" in log
    wait_for(lambda: "listening" in (state / "daemon.log").read_text(), timeout=120)
    assert daemon_running(str(state)) and len(_daemons(state)) == 1
    # from a subfolder: the same project, the same daemon
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    second = hook(project, skills, "please do a code review of my pr", cwd=sub)
    assert second is not None and "code-review" in second["systemMessage"]
    assert (state / "hook.log").read_text() == log  # answered by the daemon: nothing new
    status = json.loads(skillrt("serve", "--status", "--json", "--state", str(state),
                                cwd=project).stdout)  # fmt: skip
    assert status["running"] and status["requests"] >= 1
    # nobody asks for 20 s: it goes, cleaned up
    wait_for(lambda: not _daemons(state), timeout=60)
    assert not daemon_running(str(state)) and not (state / "skillrt.sock").exists()
    assert "idle_exit" in (state / "daemon.log").read_text()
    assert sorted(p.name for p in project.iterdir()) == [".git", "skillrt.yaml", "src"]


def test_two_prompts_at_once_leave_one_daemon(autostarted: Path, skills: Path) -> None:
    project = autostarted
    state = hook_state(project)
    procs = [
        subprocess.Popen(
            [
                os.environ.get("PYTHON", "python3"),
                "-m",
                "skillrt",
                "hook",
                "claude-code",
                "--root",
                str(skills),
                "--deadline",
                "60",
            ],
            cwd=project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={
                **os.environ,
                "SKILLRT_DAEMON_AUTOSTART": "1",
                "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src"),
            },
        )  # fmt: skip
        for _ in range(3)
    ]
    for proc in procs:
        proc.communicate(claude_payload("please do a code review of my pr", project).encode(),
                         timeout=120)  # fmt: skip
        assert proc.returncode == 0
    wait_for(lambda: "listening" in (state / "daemon.log").read_text(), timeout=120)
    time.sleep(1)  # a racing second daemon fails on the lock at once
    assert len(_daemons(state)) == 1


def test_no_daemon_is_started_when_told_not_to(project: Path, skills: Path) -> None:
    state = hook_state(project)
    payload = claude_payload("please do a code review of my pr", project)
    proc = skillrt("hook", "claude-code", "--root", str(skills), "--no-daemon", cwd=project,
                   stdin=payload, SKILLRT_DAEMON_AUTOSTART="1")  # fmt: skip
    out = hook_output(proc)
    assert out is not None
    assert not (state / "daemon.log").exists() and not _daemons(state)


def test_no_daemon_is_started_where_its_socket_cannot_be(project: Path, skills: Path) -> None:
    # A state folder whose socket path passes the Unix limit (a long home or cache
    # folder): a daemon started there fails at once, so starting one at every prompt
    # only costs a process each time; the hook says why in its log instead.
    state = project.parent / ("s" * 120)
    payload = claude_payload("please do a code review of my pr", project)
    for _ in range(2):
        proc = skillrt("hook", "claude-code", "--root", str(skills), "--state", str(state),
                       cwd=project, stdin=payload, SKILLRT_DAEMON_AUTOSTART="1")  # fmt: skip
        assert hook_output(proc) is not None
    assert not (state / "daemon.log").exists() and not _daemons(state)
    assert "socket path is too long" in (state / "hook.log").read_text()


def test_the_daemon_is_started_after_the_prompt_is_answered(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A daemon starting up (loading the model and the index) would take the cores the
    first prompt's in-process answer is computed on: it is started once that answer is
    printed."""
    import io
    import sys

    from skillrt.hooks import entry

    (project / ".git").mkdir()
    calls: list[str] = []
    monkeypatch.setattr(entry, "_ask_daemon", lambda *a, **k: None)
    monkeypatch.setattr(entry._Run, "_in_process", lambda self, *a: calls.append("answer") or {
        "text": "[Skill: x]", "lines": ["Using skill: x"]})  # fmt: skip
    monkeypatch.setattr(entry._Run, "write", lambda self, out: calls.append("print"))
    monkeypatch.setattr(entry._Run, "_start_daemon", lambda self, *a: calls.append("daemon"))
    stdin = io.TextIOWrapper(io.BytesIO(claude_payload("review my pr", project).encode()))
    monkeypatch.setattr(sys, "stdin", stdin)
    monkeypatch.chdir(project)
    assert entry.main(["claude-code", "--deadline", "60"]) == 0
    assert calls == ["answer", "print", "daemon"]


def test_a_prompt_past_its_deadline_still_starts_the_daemon(
    autostarted: Path, skills: Path
) -> None:
    """The deadline passes while the first prompt works in-process (a cold runtime
    takes longer than 0.5 s here): nothing is printed, and the daemon for the next
    prompts is started all the same."""
    project = autostarted
    state = hook_state(project)

    def prompt(deadline: str) -> subprocess.CompletedProcess[str]:
        proc = skillrt(
            "hook", "claude-code", "--root", str(skills), "--deadline", deadline, cwd=project,
            stdin=claude_payload("please do a code review of my pr", project),
            SKILLRT_DAEMON_AUTOSTART="1",
        )  # fmt: skip
        assert proc.returncode == 0
        return proc

    proc = prompt("0.5")
    log = (state / "hook.log").read_text()
    if hook_output(proc) is None:  # a machine fast enough answers in time: that is fine
        assert "deadline of 0.5 s passed while" in log
        if "passed while working in-process" not in log:
            # A loaded machine passed the deadline before the work (reading the config):
            # no daemon was due yet; the next prompt, in time, starts it.
            assert "started a daemon" not in log
            prompt("30")
            log = (state / "hook.log").read_text()
    assert "started a daemon" in log
    wait_for(lambda: len(_daemons(state)) == 1, timeout=60)


def test_the_daemon_waits_holding_its_lock_before_it_loads(autostarted: Path, skills: Path) -> None:
    """``hook.daemon_start_delay_s``: the client's turn keeps the cores while the daemon
    waits; meanwhile it holds the state folder's lock, so a second prompt starts none."""
    project = autostarted
    (project / "skillrt.yaml").write_text("hook:\n  daemon_idle_s: 20\n  daemon_start_delay_s: 5\n")
    state = hook_state(project)
    assert hook(project, skills, "please do a code review of my pr") is not None
    wait_for(lambda: len(_daemons(state)) == 1, timeout=60)
    (pid,) = _daemons(state)
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert argv[argv.index(b"--start-delay") + 1] == b"5"
    wait_for(lambda: daemon_running(str(state)), timeout=60)  # the lock, then the wait
    log = state / "daemon.log"
    assert "listening" not in (log.read_text() if log.exists() else "")
    hook(project, skills, "please do a code review of my pr")
    assert len(_daemons(state)) == 1
    wait_for(lambda: "listening" in (state / "daemon.log").read_text(), timeout=120)


def test_the_start_delay_is_bounded(tmp_path: Path) -> None:
    from skillrt.config import HookConfig, check_hook
    from skillrt.errors import ConfigError

    check_hook(HookConfig(daemon_start_delay_s=0))
    for bad in (-1.0, 61.0):
        with pytest.raises(ConfigError) as caught:
            check_hook(HookConfig(daemon_start_delay_s=bad))
        assert caught.value.code == "E_CONFIG"
    proc = skillrt("serve", "--start-delay", "99", "--state", str(tmp_path / "s"), "--json",
                   cwd=tmp_path)  # fmt: skip
    assert proc.returncode != 0
    assert json.loads(proc.stdout or proc.stderr)["error"]["code"] == "E_USAGE"
