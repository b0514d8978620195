"""A runner's agent as a process group: told to whoever records it, found alive, ended.

A command runner starts its agent in a new session, so the agent and everything it
starts share one process group (``pgid`` = the leader's pid). When the process that
waits for the agent dies (kill -9), the group lives on. So a caller that must never
run a second agent beside it (a workflow phase, :mod:`skillrt.orchestration`) watches
spawns with :func:`watch_spawns`: the runner reports each agent it starts
(:func:`notify_spawn`) *before* it feeds the agent its prompt, the caller records the
:class:`AgentProcess`, and a later process checks it with :func:`group_alive` and ends
it with :func:`end_group`.

A reused pid is told apart by the leader's start time (``/proc/<pid>/stat``). A group
whose leader is gone but whose members live is still the agent's: the kernel does not
hand out a pid that is in use as a process group id. Zombies (exited, not yet reaped:
an orphan's new parent may never reap it) do not count as alive.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AgentProcess",
    "SpawnHook",
    "end_group",
    "group_alive",
    "notify_spawn",
    "process_start_time",
    "watch_spawns",
]


def process_start_time(pid: int) -> str | None:
    """The start time of ``pid`` (clock ticks since boot), ``"dead"`` for a zombie, None
    when the process does not exist or ``/proc`` cannot tell."""
    stat = _stat(pid)
    if stat is None:
        return None
    state, _pgrp, start = stat
    return "dead" if state in ("Z", "X") else start


def _stat(pid: int) -> tuple[str, int, str] | None:
    """``(state, pgrp, start time)`` of ``pid`` from ``/proc``, or None."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            data = fh.read()
    except OSError:
        return None
    # Field 2 (comm) may hold spaces and parentheses: split after the last ')'.
    rest = data[data.rfind(")") + 2 :].split()
    if len(rest) < 20:
        return None
    try:
        return rest[0], int(rest[2]), rest[19]
    except ValueError:
        return None


@dataclass(frozen=True)
class AgentProcess:
    """The process group of one running agent, as recorded."""

    host: str
    pgid: int
    #: The leader's start time (None where ``/proc`` is not available).
    start: str | None
    #: The runner's agent writes files itself (an orphan may still finish its file).
    writes_files: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "pgid": self.pgid,
            "start": self.start,
            "writes_files": self.writes_files,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentProcess:
        start = data.get("start")
        return cls(
            host=str(data.get("host") or ""),
            pgid=int(data.get("pgid") or 0),
            start=str(start) if start is not None else None,
            writes_files=bool(data.get("writes_files", False)),
        )

    @property
    def local(self) -> bool:
        """On this host (only then can it be checked or ended)."""
        return self.host == socket.gethostname()


def _members(pgid: int) -> bool | None:
    """Whether a live (not zombie) process is in group ``pgid``; None when ``/proc``
    cannot be read."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    for name in entries:
        if not name.isdigit():
            continue
        stat = _stat(int(name))
        if stat is not None and stat[1] == pgid and stat[0] not in ("Z", "X"):
            return True
    return False


def _group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists; it is not ours to signal
    members = _members(pgid)
    return True if members is None else members


def group_alive(agent: AgentProcess) -> bool:
    """Whether ``agent``'s process group still runs (a group on another host: True,
    since it cannot be told)."""
    if not agent.local:
        return True
    if agent.pgid <= 1 or not _group_exists(agent.pgid):
        return False
    leader = process_start_time(agent.pgid)
    if leader is None or leader == "dead":
        return True  # the leader is gone; its members hold the group id
    return agent.start is None or leader == agent.start


def end_group(
    pgid: int,
    *,
    grace_s: float,
    wait_s: float = 5.0,
    reap: Callable[[], object] | None = None,
) -> bool:
    """SIGTERM process group ``pgid``, SIGKILL it after ``grace_s``; True when no live
    member is left within ``wait_s`` more seconds (False: not ours, or unkillable).
    ``reap``: the caller's way to collect its own child, the group's leader (a
    ``Popen.poll``), so an exited leader stops holding the group."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, wait_s)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        deadline = time.monotonic() + wait
        while True:
            if reap is not None:
                reap()
            if not _group_exists(pgid):
                return True
            if time.monotonic() >= deadline:
                break
            time.sleep(0.02)
    return not _group_exists(pgid)


#: Told about each agent a runner starts, before the agent gets its prompt.
SpawnHook = Callable[[AgentProcess], None]
_HOOK: ContextVar[SpawnHook | None] = ContextVar("skillrt_spawn_hook", default=None)


@contextmanager
def watch_spawns(hook: SpawnHook) -> Iterator[None]:
    """Call ``hook`` for every agent a runner starts in this context (this thread)."""
    token = _HOOK.set(hook)
    try:
        yield
    finally:
        _HOOK.reset(token)


def notify_spawn(pid: int, *, writes_files: bool = False) -> None:
    """Report the agent just started as ``pid`` (a new session: its group is ``pid``).

    The watcher's error propagates: the runner then ends the agent and fails.
    """
    hook = _HOOK.get()
    if hook is None:
        return
    agent = AgentProcess(
        host=socket.gethostname(),
        pgid=pid,
        start=process_start_time(pid),
        writes_files=writes_files,
    )
    hook(agent)
