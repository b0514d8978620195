"""Codex CLI runs a command hook only once the user has trusted it, and keys that trust
to the hook's content; ``codex exec`` skips an untrusted hook without a word. This
module asks Codex itself, through its app server (``codex app-server``, JSON-RPC over
stdio, the interface Codex's own clients use), which of skillrt's hooks it loads and in
what trust state, and records the user's approval the way Codex does: the hook's
current hash, as Codex reports it, written back with Codex's own ``config/value/write``
(``hooks.state."<key>".trusted_hash``). skillrt never computes a hash itself.

Every exchange is bounded (:data:`TIMEOUT_S` all told); a Codex that is missing, too
old (no ``hooks/list``), slow or broken is a :class:`TrustProblem` with the one step
that does by hand what could not be done here.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CodexHook", "TrustProblem", "TrustReport", "codex_hooks", "trust_hooks", "untrust"]

#: Seconds the whole exchange with the app server may take.
TIMEOUT_S = 30.0
#: What to do by hand when install cannot record the approval.
MANUAL_STEP = "run `codex` in {cwd}, type /hooks and approve the skillrt hook"


class TrustProblem(Exception):
    """The app server could not be asked, or did not do what was asked."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class CodexHook:
    """One hook as Codex's ``hooks/list`` reports it."""

    key: str
    command: str
    event: str
    source: str
    source_path: str
    trust: str  # "trusted" | "untrusted" | "modified" | "managed"
    current_hash: str
    enabled: bool


@dataclass
class TrustReport:
    """What Codex reported for the working folder, and what install changed."""

    cwd: str
    hooks: list[CodexHook] = field(default_factory=list)
    trusted_now: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Codex loads no project config here until the project is trusted.
    project_untrusted: bool = False


def codex_hooks(
    cwd: Path, *, codex: str, environ: Mapping[str, str], timeout: float = TIMEOUT_S
) -> TrustReport:
    """Every hook Codex loads for ``cwd`` (no change made)."""
    with _AppServer(codex, cwd, environ, timeout) as server:
        return _list(server, cwd)


def trust_hooks(
    cwd: Path,
    ours: Callable[[str], bool],
    *,
    codex: str,
    environ: Mapping[str, str],
    timeout: float = TIMEOUT_S,
) -> TrustReport:
    """Record the user's approval of each hook whose command ``ours`` recognises and
    that Codex reports untrusted or modified, then ask again: the report holds the
    state after the change (a hook still not trusted is the caller's error to raise)."""
    with _AppServer(codex, cwd, environ, timeout) as server:
        report = _list(server, cwd)
        for hook in report.hooks:
            if ours(hook.command) and hook.trust in ("untrusted", "modified"):
                server.call(
                    "config/value/write",
                    {
                        "keyPath": f"hooks.state.{json.dumps(hook.key)}.trusted_hash",
                        "mergeStrategy": "upsert",
                        "value": hook.current_hash,
                    },
                )
                report.trusted_now.append(hook.key)
        if not report.trusted_now:
            return report
        after = _list(server, cwd)
        after.trusted_now = report.trusted_now
        return after


def untrust(
    cwd: Path,
    keys: list[str],
    *,
    codex: str,
    environ: Mapping[str, str],
    timeout: float = TIMEOUT_S,
) -> None:
    """Remove the recorded approval of the hooks ``keys`` (an uninstall)."""
    if not keys:
        return
    with _AppServer(codex, cwd, environ, timeout) as server:
        for key in keys:
            server.call(
                "config/value/write",
                {
                    "keyPath": f"hooks.state.{json.dumps(key)}",
                    "mergeStrategy": "replace",
                    "value": None,
                },
            )


def _list(server: _AppServer, cwd: Path) -> TrustReport:
    result = server.call("hooks/list", {"cwds": [str(cwd)]})
    report = TrustReport(str(cwd))
    report.project_untrusted = server.project_untrusted
    for entry in result.get("data") or ():
        if not isinstance(entry, dict):
            continue
        report.warnings.extend(str(w) for w in entry.get("warnings") or ())
        for hook in entry.get("hooks") or ():
            if not isinstance(hook, dict) or hook.get("handlerType") != "command":
                continue
            report.hooks.append(
                CodexHook(
                    key=str(hook.get("key")),
                    command=str(hook.get("command") or ""),
                    event=str(hook.get("eventName")),
                    source=str(hook.get("source")),
                    source_path=str(hook.get("sourcePath")),
                    trust=str(hook.get("trustStatus")),
                    current_hash=str(hook.get("currentHash")),
                    enabled=bool(hook.get("enabled", True)),
                )
            )
    return report


class _AppServer:
    """``codex app-server`` over stdio, every read bounded by one deadline."""

    def __init__(self, codex: str, cwd: Path, environ: Mapping[str, str], timeout: float):
        self.codex = codex
        self.cwd = cwd
        self.environ = dict(environ)
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.buffer = b""
        self.next_id = 0
        self.project_untrusted = False

    def __enter__(self) -> _AppServer:
        try:
            self.proc = subprocess.Popen(
                [self.codex, "app-server"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=self.cwd,
                env=self.environ,
                start_new_session=True,
            )
        except OSError as exc:
            raise TrustProblem(f"cannot start `{self.codex} app-server`: {exc}",
                               reason="codex_not_started") from exc  # fmt: skip
        try:
            self.call("initialize", {"clientInfo": {"name": "skillrt", "version": _version()}})
            self._send({"jsonrpc": "2.0", "method": "initialized"})
        except BaseException:
            self.__exit__()  # no `with` body runs: the server is ended here
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        """Close its stdin, give it 2 s to end, then kill its process group (``codex``
        from npm is a launcher with the app server as its child), before the server
        itself is reaped: until then the group's id cannot be anyone else's."""
        proc = self.proc
        if proc is None:
            return
        self.proc = None
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        if not hasattr(os, "waitid"):  # macOS: a group killed only while its leader runs
            try:
                proc.wait(timeout=2)
                return
            except subprocess.TimeoutExpired:
                pass
        else:
            give = time.monotonic() + 2
            while time.monotonic() < give and not _ended(proc.pid):
                time.sleep(0.02)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait(timeout=5)

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise TrustProblem(f"codex app-server stopped: {exc}", reason="codex_failed") from exc

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        rid = self.next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            message = self._read()
            if message.get("id") != rid:
                self._notice(message)
                continue
            if "error" in message:
                error = message["error"] if isinstance(message["error"], dict) else {}
                text = str(error.get("message") or message["error"])
                reason = "codex_too_old" if error.get("code") == -32601 else "codex_refused"
                raise TrustProblem(f"codex app-server refused {method}: {text}", reason=reason)
            result = message.get("result")
            return result if isinstance(result, dict) else {}

    def _notice(self, message: dict[str, Any]) -> None:
        if message.get("method") == "configWarning":
            summary = str((message.get("params") or {}).get("summary") or "")
            if "until the project is trusted" in summary:
                self.project_untrusted = True

    def _read(self) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout
        with selectors.DefaultSelector() as sel:
            sel.register(out, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = self.deadline - time.monotonic()
                if left <= 0 or not sel.select(timeout=left):
                    raise TrustProblem(
                        f"codex app-server did not answer within {self.timeout:g} s",
                        reason="codex_timeout",
                    )
                chunk = os.read(out.fileno(), 65536)
                if not chunk:
                    raise TrustProblem("codex app-server ended before answering",
                                       reason="codex_failed")  # fmt: skip
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError:
            return {}
        return message if isinstance(message, dict) else {}


def _ended(pid: int) -> bool:
    """Whether the child ``pid`` has ended, leaving it to be reaped (``WNOWAIT``)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _version() -> str:
    from skillrt.version import __version__

    return str(__version__)
