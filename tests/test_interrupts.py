"""Stop requests are never lost (``skillrt.interrupts``).

A signal handler's ``KeyboardInterrupt`` is dropped when it lands in a weakref callback,
and turned into an ``ImportError`` inside onnxruntime's initialisation. Each case runs
in a fresh interpreter that signals itself at exactly that place; before the fix a
workflow's agent ran on to its end after SIGTERM, the router fell back to the lexical
backend after Ctrl-C, and a daemon killed during its warm-up left its socket behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillrt import interrupts

_SWALLOW = """
import os, signal, weakref

def swallow(signum):
    '''Deliver ``signum`` where Python drops the handler's exception.'''
    class Box: pass
    box = Box()
    def callback(_):
        os.kill(os.getpid(), signum)
        sum(range(10))  # the handler runs, and raises, here
    ref = weakref.ref(box, callback)
    del box
"""


def run_python(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True, text=True, timeout=timeout, env=env,
    )  # fmt: skip


def test_check_raises_only_after_a_recorded_signal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(interrupts, "_received", None)
    interrupts.check()
    assert interrupts.received() is None
    interrupts.record(15)
    assert interrupts.received() == 15
    with pytest.raises(KeyboardInterrupt):
        interrupts.check()


def test_a_swallowed_sigterm_still_ends_the_agent_wait() -> None:
    """The runner's wait on its agent ends within moments of a SIGTERM whose
    KeyboardInterrupt a weakref callback swallowed, and the agent is ended with it."""
    code = (
        _SWALLOW
        + """
import time
from skillrt import interrupts
from skillrt.execution.runners import CommandRunner

interrupts.raise_on(signal.SIGTERM)
swallow(signal.SIGTERM)
print("swallowed", flush=True)
start = time.monotonic()
try:
    CommandRunner("sleep 30", kill_grace_s=0.5).run("prompt")
except KeyboardInterrupt:
    print(f"interrupted after {time.monotonic() - start:.1f} s")
"""
    )
    proc = run_python(code, timeout=25)
    assert proc.stdout.startswith("swallowed\ninterrupted after"), proc.stdout + proc.stderr


def test_a_workflow_checkpoint_ends_a_swallowed_sigterm(tmp_path: Path) -> None:
    """A workflow command's handler records SIGTERM; the next checkpoint raises."""
    code = (
        _SWALLOW
        + """
from skillrt import interrupts
from skillrt.cli.workflow_cmds import _interrupt_on_sigterm

_interrupt_on_sigterm()
swallow(signal.SIGTERM)
print("swallowed", flush=True)
try:
    interrupts.check()
except KeyboardInterrupt:
    print("interrupted")
"""
    )
    proc = run_python(code)
    assert proc.stdout == "swallowed\ninterrupted\n", proc.stdout + proc.stderr


_CTRL_C_IN_ONNX_INIT = """
import builtins, importlib.machinery, os, signal, sys, warnings
from skillrt import interrupts

interrupts.raise_on(signal.SIGINT)
exec_module, real_import = importlib.machinery.ExtensionFileLoader.exec_module, builtins.__import__
state = {"init": False, "sent": False}

def watched_exec(self, module):
    state["init"] = module.__name__ == "onnxruntime.capi.onnxruntime_pybind11_state"
    try:
        return exec_module(self, module)
    finally:
        state["init"] = False

def watched_import(name, *args, **kwargs):
    if state["init"] and not state["sent"]:  # onnxruntime's init calls back into Python
        state["sent"] = True
        os.kill(os.getpid(), signal.SIGINT)
    return real_import(name, *args, **kwargs)

importlib.machinery.ExtensionFileLoader.exec_module = watched_exec
builtins.__import__ = watched_import
from skillrt.routing.embeddings import get_backend

warnings.simplefilter("ignore")
try:
    backend = get_backend()
    print("fell back to", type(backend).__name__, "sent" if state["sent"] else "not sent")
except KeyboardInterrupt:
    print("interrupted")
"""


def test_ctrl_c_inside_onnxruntime_init_is_not_a_missing_package() -> None:
    pytest.importorskip("onnxruntime")
    proc = run_python(_CTRL_C_IN_ONNX_INIT)
    assert proc.stdout.strip() == "interrupted", proc.stdout + proc.stderr[-2000:]


_SIGTERM_IN_WARM_UP = """
import os, signal, sys, time
from pathlib import Path
from typing import cast
from skillrt.serve.daemon import Daemon
from skillrt.mcp.service import SkillService

state = Path(sys.argv[1])

class SlowService:
    events = None
    def start(self, warm=False):
        os.kill(os.getpid(), signal.SIGTERM)  # while the daemon warms up
        time.sleep(30)

daemon = Daemon(cast(SkillService, SlowService()), str(state / "skillrt.sock"), identity={},
                info_file=state / "skillrt.daemon.json", poll_interval_s=0)
try:
    daemon.serve()
except KeyboardInterrupt:
    print("interrupted")
"""


def test_sigterm_during_the_daemon_warm_up_cleans_up(tmp_path: Path) -> None:
    """A SIGTERM while the daemon warms up ends it at once, socket and lock released
    (it killed the process before, leaving the socket file)."""
    state = tmp_path / "state"
    proc = run_python(_SIGTERM_IN_WARM_UP, str(state), timeout=25)
    assert proc.returncode == 0 and proc.stdout == "interrupted\n", proc.stdout + proc.stderr
    assert not (state / "skillrt.sock").exists()
    assert not (state / "skillrt.daemon.json").exists()


def test_an_ignored_signal_stays_ignored() -> None:
    """A shell's background job starts with SIGINT ignored: Ctrl-C at the terminal must
    not stop the workflow it runs."""
    code = """
import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
from skillrt.cli.workflow_cmds import _interrupt_on_sigterm
_interrupt_on_sigterm()
print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN,
      signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL)
"""
    proc = run_python(code)
    assert proc.stdout.split() == ["True", "True"], proc.stdout + proc.stderr
