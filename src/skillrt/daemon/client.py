"""A small client for the daemon (standard library only: a prompt hook imports it, so it
talks through the C ``_socket`` module: ``socket.py`` and its imports cost a few
milliseconds per prompt).

    client = DaemonClient("/project/.skillrt/skillrt.sock")
    result = client.request("context", {"prompt": "..."})

:class:`DaemonUnavailable` means there is no usable daemon (no socket, nothing
listening, a timeout, a daemon for other skills): the caller works in-process.
:class:`DaemonError` is the daemon's structured answer to a bad request.
"""

from __future__ import annotations

import _socket
import itertools

from skillrt import fastjson
from skillrt.daemon.protocol import (
    E_DAEMON_MISMATCH,
    MAX_LINE_BYTES,
    MAX_UNIX_PATH_BYTES,
    Address,
    encode,
    format_address,
)

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from typing import Any


class DaemonUnavailable(Exception):
    """No daemon answered (or it serves other skills): work in-process instead."""


class DaemonTimeout(DaemonUnavailable):
    """The daemon did not answer in time (stopped, stuck or overloaded)."""


class DaemonError(Exception):
    """The daemon refused a request: ``code``, ``message`` and the error's fields."""

    def __init__(self, error: dict[str, Any]) -> None:
        self.code = str(error.get("code", "E_DAEMON"))
        self.message = str(error.get("message", "daemon error"))
        self.data = error
        super().__init__(f"[{self.code}] {self.message}")


def connect(address: Address, timeout: float) -> _socket.socket:
    """A connected socket, or :class:`DaemonUnavailable`."""
    if isinstance(address, tuple):
        sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    else:
        if len(address.encode()) > MAX_UNIX_PATH_BYTES:
            raise DaemonUnavailable(f"socket path too long for a Unix socket: {address}")
        sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(address)
    except OSError as exc:
        sock.close()
        raise DaemonUnavailable(f"no daemon at {format_address(address)}: {exc}") from exc
    return sock


class DaemonClient:
    """One connection to a daemon, reused for every request (thread-unsafe: one per
    thread).

    Args:
        address: A socket path or ``(host, port)``.
        token: Sent with every request (required over TCP).
        timeout: Seconds to wait for an answer; a slower daemon counts as unavailable.
        connect_timeout: Seconds to wait for the connection itself.
    """

    def __init__(
        self,
        address: Address,
        *,
        token: str | None = None,
        timeout: float = 10.0,
        connect_timeout: float = 1.0,
    ) -> None:
        self.address = address
        self.token = token
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._sock: _socket.socket | None = None
        self._buffer = b""
        self._ids = itertools.count(1)

    def _connect(self) -> None:
        sock = connect(self.address, self.connect_timeout)
        sock.settimeout(self.timeout)
        self._sock = sock
        self._buffer = b""

    def _readline(self) -> bytes:
        """One reply line (without reading past it); b"" when the daemon hung up."""
        assert self._sock is not None
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_LINE_BYTES:
                raise DaemonUnavailable("daemon answer too long")
            chunk = self._sock.recv(65536)
            if not chunk:
                return b""
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line + b"\n"

    def request(
        self, op: str, args: dict[str, Any] | None = None, *, expect: dict[str, Any] | None = None
    ) -> Any:
        """Send one request and return its ``result`` (raises DaemonError or
        DaemonUnavailable; a daemon for other skills is unavailable)."""
        if self._sock is None:
            self._connect()
        assert self._sock is not None
        rid = next(self._ids)
        message: dict[str, Any] = {"id": rid, "op": op, "args": args or {}}
        if expect is not None:
            message["expect"] = expect
        if self.token:
            message["token"] = self.token
        try:
            self._sock.sendall(encode(message))
            line = self._readline()
        except TimeoutError as exc:
            self.close()
            raise DaemonTimeout(f"no answer from the daemon within {self.timeout:g} s") from exc
        except OSError as exc:
            self.close()
            raise DaemonUnavailable(f"daemon connection failed: {exc}") from exc
        if not line.endswith(b"\n"):
            self.close()
            raise DaemonUnavailable("the daemon closed the connection")
        try:
            reply = fastjson.loads(line)
        except ValueError as exc:
            self.close()
            raise DaemonUnavailable(f"unreadable daemon answer: {exc}") from exc
        if not isinstance(reply, dict) or reply.get("id") != rid:
            self.close()
            raise DaemonUnavailable("daemon answer out of step")
        if reply.get("ok"):
            return reply.get("result")
        error = reply.get("error")
        if not isinstance(error, dict):
            error = {}
        if error.get("code") == E_DAEMON_MISMATCH:
            raise DaemonUnavailable(str(error.get("message")))
        raise DaemonError(error)

    def close(self) -> None:
        self._buffer = b""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> DaemonClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
