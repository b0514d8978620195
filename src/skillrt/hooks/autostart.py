"""Start a daemon for the next prompts when none answers this one.

A prompt hook is a new process per prompt; without a daemon each one loads the skills,
the routing index and the embedding model again. So when no daemon serves the hook's
state folder, the hook starts ``skillrt serve`` in the background with the hook's own
roots, config and state (so that it serves exactly what the hook would compute) and
goes on in-process for this prompt. The daemon is:

- one per state folder: the hook starts none while another process holds the state
  folder's daemon lock (a daemon running or starting); two hooks racing both start one
  and the second exits at once on that lock;
- detached: its own session, no terminal, stdin from ``/dev/null``, its output appended
  to ``<state>/daemon.log`` (cut when it passes 1 MB);
- polite: it waits ``hook.daemon_start_delay_s`` (2 s) before loading the skills and
  the index, so the client's turn in progress keeps the cores;
- bounded: it gives up a start longer than ``hook.daemon_start_timeout_s`` and stops
  after ``hook.daemon_idle_s`` (15 min) without a request.

Standard library only (``subprocess`` is imported only when a daemon is started).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from typing import Any

LOG_NAME = "daemon.log"
MAX_LOG_BYTES = 1_000_000
LOCK_NAME = "skillrt.daemon.lock"  # skillrt.daemon.protocol.LOCK_NAME


def daemon_running(state_dir: str) -> bool:
    """Whether a process holds the state folder's daemon lock (serving or starting)."""
    from skillrt.locks import lock_held

    return lock_held(os.path.join(state_dir, LOCK_NAME))


def serve_command(
    *,
    roots: list[str] | None,
    config: str | None,
    state: str,
    client_roots: bool,
    idle_s: float,
    start_timeout_s: float,
    start_delay_s: float = 0.0,
    cache_dir: str | None = None,
) -> list[str]:
    """``skillrt serve`` with the hook's settings, run by this interpreter."""
    argv = [sys.executable, "-m", "skillrt", "serve", "--state", state]
    if cache_dir:
        argv += ["--cache-dir", cache_dir]
    for root in roots or ():
        argv += ["--root", root]
    if config:
        argv += ["--config", config]
    if not client_roots:
        argv.append("--no-client-roots")
    argv += ["--idle-exit", f"{idle_s:g}", "--start-timeout", f"{start_timeout_s:g}"]
    if start_delay_s > 0:
        argv += ["--start-delay", f"{start_delay_s:g}"]
    return argv


def start_daemon(argv: list[str], *, cwd: str, state_dir: str, environ: Any) -> int:
    """Start ``argv`` detached, its output appended to ``<state_dir>/daemon.log``; the
    new process's pid (it is not waited for)."""
    env = dict(environ)
    env.pop("SKILLRT_SOCKET", None)  # the daemon serves its state folder's socket
    log_path = os.path.join(state_dir, LOG_NAME)
    return start_detached(argv, cwd=cwd, log_path=log_path, environ=env, by="the prompt hook")


def start_detached(argv: list[str], *, cwd: str, log_path: str, environ: Any, by: str) -> int:
    """Start ``argv`` in a session of its own, stdin from ``/dev/null`` and its output
    appended to ``log_path`` (cut past :data:`MAX_LOG_BYTES`); the new process's pid
    (it is not waited for)."""
    import subprocess
    import time

    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    try:
        if os.path.getsize(log_path) > MAX_LOG_BYTES:
            os.replace(log_path, log_path + ".1")
    except OSError:
        pass
    with open(log_path, "ab") as log:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        # Not the arguments: a --state URL may carry a password.
        log.write(f"{stamp} started by {by} (pid {os.getpid()})\n".encode())
        log.flush()
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=environ,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            close_fds=True,
        )
    return proc.pid
