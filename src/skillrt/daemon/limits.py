"""What one daemon holds, and how much: the state folder's lock (one daemon per state),
the caps on connections served at once (and on those not authenticated yet), and the
time a client has to send its first request.

The lock is an exclusive ``flock`` on ``<state>/skillrt.daemon.lock``, released by the
kernel when the process ends, however it ends; the holder's pid is written in it for
the refusal a second daemon prints.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import socketserver
import threading
import time
from pathlib import Path
from typing import Any

from skillrt.daemon.protocol import error_reply, read_info_file, reply_line
from skillrt.errors import DaemonBusy, DaemonStartError

__all__ = [
    "MAX_CONNECTIONS",
    "MAX_UNAUTHENTICATED",
    "Capped",
    "StateLock",
    "read_line_by",
]

#: Most connections served at once; one more is answered ``E_BUSY`` and closed (each
#: costs a thread and a file descriptor: 373 unauthenticated ones used them all up).
MAX_CONNECTIONS = 64
#: Most TCP connections at once that have not sent the token yet: clients that do not
#: authenticate never take the slots of those that did.
MAX_UNAUTHENTICATED = 16


class StateLock:
    """The state folder's daemon lock (``path``; None: no lock), held from :meth:`take`
    to :meth:`release`; ``info_file`` names the holder's address in a refusal."""

    def __init__(self, path: Path | None, info_file: Path | None) -> None:
        self.path = path
        self.info_file = info_file
        self._fd: int | None = None

    def take(self) -> None:
        """Hold the lock, or raise ``DaemonStartError`` naming the daemon that does."""
        if self.path is None:
            return
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            info = (read_info_file(self.info_file) if self.info_file else None) or {}
            where = f" at {info['address']}" if info.get("address") else ""
            raise DaemonStartError(
                f"a daemon (pid {holder}) already serves this state folder{where}; stop "
                "it first (skillrt serve --stop) or give another --state",
                path=str(self.path),
            ) from None
        except OSError:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)  # the lock goes with the descriptor; the file stays (no race)


def read_line_by(rfile: Any, sock: socket.socket, deadline: float, limit: int) -> bytes:
    """One line (up to ``limit`` bytes) from buffered ``rfile`` over ``sock``, all of it
    by ``deadline`` (a ``time.monotonic()``): a socket timeout bounds one read only, so
    a client sending a byte now and then would otherwise hold the connection for good.
    Raises ``TimeoutError`` past the deadline; returns what came before EOF."""
    line = bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no complete request line in time")
        sock.settimeout(left)
        data = rfile.peek(1)  # what is buffered, or one read from the socket
        if not data:
            return bytes(line)
        end = data.find(b"\n")
        take = min(len(data) if end < 0 else end + 1, limit - len(line))
        line += rfile.read(take)  # buffered already: no wait
        if line.endswith(b"\n") or len(line) >= limit:
            return bytes(line)


class Capped(socketserver.ThreadingMixIn):
    """At most :data:`MAX_CONNECTIONS` connections at once, and of them at most
    ``max_unauthenticated`` not authenticated yet (on a server whose clients must send a
    token: ``needs_token``); one more is told ``E_BUSY`` and closed. The accept loop
    backs off instead of spinning when the process runs out of file descriptors."""

    daemon_threads = True
    block_on_close = False
    #: Pending connections while the accept loop waits for the GIL (5 by default, which
    #: makes a burst of hooks fail to connect with EAGAIN).
    request_queue_size = 128
    max_connections = MAX_CONNECTIONS
    max_unauthenticated = MAX_UNAUTHENTICATED
    #: Clients authenticate (send the token) with their first request.
    needs_token = False
    socket: socket.socket

    def _init_cap(self) -> None:
        self._active: set[Any] = set()
        self._unauthenticated: set[Any] = set()
        self._active_lock = threading.Lock()

    def get_request(self) -> tuple[Any, Any]:
        try:
            return self.socket.accept()
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                # The listening socket stays readable: without a pause the loop would
                # try again at once, forever (100% CPU). Connections end meanwhile.
                time.sleep(0.1)
            raise

    def verify_request(self, request: Any, client_address: Any) -> bool:
        with self._active_lock:
            if len(self._active) >= self.max_connections:
                why = f"over {self.max_connections} connections at once"
            elif self.needs_token and len(self._unauthenticated) >= self.max_unauthenticated:
                why = f"over {self.max_unauthenticated} connections waiting to authenticate"
            else:
                self._active.add(request)
                if self.needs_token:
                    self._unauthenticated.add(request)
                return True
        err = DaemonBusy(f"{why}; try again later")
        with contextlib.suppress(OSError):
            request.setblocking(False)
            request.send(reply_line(error_reply(None, err)))
        return False  # closed by the caller

    def open_connections(self) -> int:
        """Connections being served now."""
        with self._active_lock:
            return len(self._active)

    def authenticated(self, request: Any) -> None:
        """``request``'s client sent the token: it no longer counts as waiting to."""
        with self._active_lock:
            self._unauthenticated.discard(request)

    def shutdown_request(self, request: Any) -> None:
        with self._active_lock:
            self._active.discard(request)
            self._unauthenticated.discard(request)
        super().shutdown_request(request)  # type: ignore[misc]
