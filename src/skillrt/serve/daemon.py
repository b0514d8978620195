"""The daemon: a :class:`~skillrt.mcp.service.SkillService` (warm runtime, read/write
lock, hot reload, background route events) served over a Unix socket or loopback TCP.

Each connection gets a thread; a request runs under the service's read lock, so a
reload waits for requests in flight and requests wait for a reload. A malformed or
oversized request gets a structured error (the connection survives a malformed line,
not an oversized one); a client that disconnects mid-request only ends its own thread.
SIGTERM (or a ``shutdown`` request) stops it cleanly: no new connections, routes events
flushed, socket and info files removed.

One daemon per state folder: it holds an exclusive lock on ``<state>/skillrt.daemon.lock``
(``flock``, released by the kernel when the process ends, however it ends) from before
it binds until it has cleaned up, so a second one refuses to start (``E_DAEMON_START``)
instead of taking the first one's socket over; and it removes only its own socket (the
same file it bound) and info file (its own pid).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import secrets
import signal
import socket
import socketserver
import stat
import sys
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt import interrupts
from skillrt.daemon import protocol
from skillrt.daemon.client import DaemonClient, DaemonError, DaemonUnavailable
from skillrt.daemon.protocol import error_reply, reply_line
from skillrt.errors import (
    DaemonMismatch,
    DaemonRequestError,
    DaemonStartError,
    InternalError,
    RequestTooLarge,
    SkillrtError,
    Unauthorized,
    UnknownOp,
    UsageError,
)
from skillrt.mcp.tools import MAX_TEXT_CHARS
from skillrt.serialize import to_jsonable
from skillrt.serve.limits import Capped, StateLock, read_line_by

if TYPE_CHECKING:
    from skillrt.mcp.service import SkillService

log = logging.getLogger("skillrt.daemon")

#: A connection idle this long is closed (a client that vanished without closing).
IDLE_TIMEOUT_S = 300.0
#: A TCP connection must send a request with the token within this long, or is closed;
#: one whose request lacks the token is answered ``E_UNAUTHORIZED`` and closed.
AUTH_TIMEOUT_S = 5.0


class Daemon:
    """Answers protocol requests for one service (see :mod:`skillrt.daemon.protocol`).

    Args:
        service: The warm service; started (``warm=True``) by :meth:`serve`.
        address: A socket path, or ``("127.0.0.1", port)`` (port 0 picks a free one).
        identity: What the daemon serves: ``roots`` (or None), ``config``, ``project_dir``.
        info_file: Where to write the info file (pid, address, token); None for none.
        poll_interval_s: Seconds between checks for changed skills (0: no hot reload).
        lock_file: Held for the daemon's life (one daemon per state folder); None: the
            lock next to ``info_file``.
        idle_exit_s: Stop after this many seconds without a request (None: never); the
            daemon a prompt hook starts on its own goes away when nobody asks.
        start_timeout_s: Give up (and exit, cleaned up) when binding and warming up take
            longer than this (None: no limit).
        start_delay_s: Seconds to wait, bound and holding the lock, before loading the
            skills and the index (the daemon a prompt hook starts leaves the cores to
            the client's turn in progress).
    """

    def __init__(
        self,
        service: SkillService,
        address: protocol.Address,
        *,
        identity: Mapping[str, Any],
        info_file: Path | None = None,
        poll_interval_s: float = 2.0,
        lock_file: Path | None = None,
        idle_exit_s: float | None = None,
        start_timeout_s: float | None = None,
        start_delay_s: float = 0.0,
    ) -> None:
        self.service = service
        self.idle_exit_s = idle_exit_s
        self.start_timeout_s = start_timeout_s
        self.start_delay_s = start_delay_s
        #: ``time.monotonic()`` of the last request (or of the end of the warm-up).
        self.last_request = time.monotonic()
        #: Why the daemon stopped on its own (``idle``), for the log.
        self.stopped_because: str | None = None
        self.address = address
        self.identity = dict(identity)
        self.info_file = info_file
        if lock_file is None and info_file is not None:
            lock_file = info_file.with_name(protocol.LOCK_NAME)
        self.lock_file = lock_file
        self._lock = StateLock(lock_file, info_file)
        self._socket_id: tuple[int, int, int] | None = None
        self.poll_interval_s = poll_interval_s
        self.token = secrets.token_urlsafe(24) if isinstance(address, tuple) else None
        self.started_at = time.time()
        self.requests = 0
        self.errors = 0
        self._counts = threading.Lock()
        self._stop = threading.Event()
        #: Write end of the pipe that wakes the serving loop; a signal handler writes to
        #: it and takes no lock (see :meth:`_install_signals`).
        self._wake_fd: int | None = None
        self._wake_lock = threading.Lock()  # threads' stop() against the pipe's closing
        self._warming = True
        self._server: socketserver.BaseServer | None = None
        self._bound = False
        self._ops: dict[str, Callable[[dict[str, Any]], Any]] = {
            "ping": self._ping,
            "status": lambda _args: self.status(),
            "route": self._route,
            "context": self._context,
            "activate": self._activate,
            "read": self._read,
            "resolve": self._resolve,
            "shutdown": self._shutdown,
        }

    # -- requests ---------------------------------------------------------------------
    def respond(self, line: bytes, *, tcp: bool = False) -> dict[str, Any]:
        """The answer to one request line; never raises."""
        return self.answer(line, tcp=tcp)[0]

    def answer(self, line: bytes, *, tcp: bool = False) -> tuple[dict[str, Any], bool]:
        """The answer to one request line, and whether the request was authorised (over
        TCP: carried the token; a Unix socket's are); never raises."""
        rid: Any = None
        authorised = not tcp
        try:
            try:
                request = json.loads(line)
            except RecursionError:
                raise DaemonRequestError("request is nested too deeply") from None
            except (ValueError, UnicodeDecodeError) as exc:
                raise DaemonRequestError(f"request is not JSON: {exc}") from None
            if not isinstance(request, dict):
                raise DaemonRequestError("a request is a JSON object")
            rid = request.get("id")
            if tcp and not self._authorised(request.get("token")):
                raise Unauthorized("missing or wrong token (see the daemon's info file)")
            authorised = True
            op = request.get("op")
            handler = self._ops.get(op) if isinstance(op, str) else None
            if handler is None:
                raise UnknownOp(f"unknown op {op!r}; ops: {', '.join(protocol.OPS)}", op=str(op))
            args = request.get("args") or {}
            if not isinstance(args, dict):
                raise DaemonRequestError("'args' must be an object")
            expect = request.get("expect")
            if expect is not None:
                self._check_expect(expect)
            with self._counts:
                self.requests += 1
                self.last_request = time.monotonic()
            if op in ("ping", "status", "shutdown"):
                result = handler(args)
            else:
                with self.service.reading():
                    result = handler(args)
            return {"id": rid, "ok": True, "result": result}, authorised
        except SkillrtError as err:
            self._count_error()
            return error_reply(rid, err), authorised
        except RecursionError:  # arguments nested deeper than the stages walk
            self._count_error()
            deep = DaemonRequestError("request arguments are nested too deeply")
            return error_reply(rid, deep), authorised
        except Exception as exc:  # one bad request fails alone, never the daemon
            self._count_error()
            log.exception("request failed")
            return error_reply(rid, InternalError(f"{type(exc).__name__}: {exc}")), authorised

    def _count_error(self) -> None:
        with self._counts:
            self.errors += 1

    def _authorised(self, token: Any) -> bool:
        return (
            self.token is not None
            and isinstance(token, str)
            and hmac.compare_digest(token.encode(), self.token.encode())
        )

    def _check_expect(self, expect: Any) -> None:
        if not isinstance(expect, dict):
            raise DaemonRequestError("'expect' must be an object")
        mine = self.identity
        for key in ("roots", "config"):
            if key in expect and _norm(expect[key]) != _norm(mine.get(key)):
                raise DaemonMismatch(
                    f"this daemon serves {key} {mine.get(key)!r}, not {expect[key]!r}",
                    field=key,
                )
        wanted = expect.get("client_roots")  # a hook's --client-roots: .claude/skills, ...
        if wanted is not None:
            if not isinstance(wanted, list):
                raise DaemonRequestError("'expect.client_roots' must be a list")
            if not set(map(str, wanted)) <= set(map(str, mine.get("client_roots") or ())):
                raise DaemonMismatch(
                    f"this daemon does not search the client folders {wanted!r}",
                    field="client_roots",
                )
        if (
            mine.get("roots") is None
            and "project_dir" in expect
            and _norm(expect["project_dir"]) != _norm(mine.get("project_dir"))
        ):
            raise DaemonMismatch(
                f"this daemon serves project {mine.get('project_dir')!r}", field="project_dir"
            )

    # -- ops --------------------------------------------------------------------------
    def _ping(self, _args: dict[str, Any]) -> dict[str, Any]:
        return {"pong": True, "pid": os.getpid()}

    def status(self) -> dict[str, Any]:
        runtime = self.service.runtime
        try:
            skills = len(runtime.registry.skills())
        except SkillrtError:
            skills = None
        return {
            "pid": os.getpid(),
            "address": protocol.format_address(self.address),
            **self.identity,
            "state_dir": str(runtime.config.state_dir),
            "skills": skills,
            "reloads": self.service.reloads,
            "requests": self.requests,
            "errors": self.errors,
            "started_at": self.started_at,
            "uptime_s": round(time.time() - self.started_at, 3),
        }

    def _route(self, args: dict[str, Any]) -> Any:
        result = self.service.route(
            _text(args, "query"),
            surface=_opt_str(args, "surface") or "daemon",
            history=_history(args),
            top_k=_opt_int(args, "top_k"),
            candidates=_opt_names(args, "candidates"),
            explain=bool(args.get("explain", False)),
        )
        return to_jsonable(result)

    def _context(self, args: dict[str, Any]) -> Any:
        ctx = self.service.turn_context(
            _text(args, "prompt"),
            history=_history(args),
            surface=_opt_str(args, "surface") or "hook",
            budget=_opt_int(args, "budget"),
            loaded=_opt_names(args, "loaded") or (),
            client=_opt_str(args, "client"),
        )
        return to_jsonable(ctx)

    def _activate(self, args: dict[str, Any]) -> Any:
        """A skill's body. ``model`` (default true): for a model, as MCP's
        ``load_skill`` (enabled and model-invocable only); false: as ``skillrt show``."""
        runtime = self.service.runtime
        name = _text(args, "name")
        if args.get("model", True):
            skill = self.service.skill(name, for_model=True)
        else:
            skill = runtime.get(name)
        run_id = _opt_str(args, "run_id")
        result = runtime.load_body(
            skill.qualified_name, run_id=run_id, spill=bool(args.get("spill", False))
        )
        return {
            "name": skill.qualified_name,
            "description": skill.description,
            "allowed_tools": list(skill.allowed_tools),
            "text": result.text,
            "report": to_jsonable(result.report),
            "injection": runtime.inject(result),
        }

    def _read(self, args: dict[str, Any]) -> Any:
        runtime = self.service.runtime
        skill = self.service.skill(_text(args, "name"), for_model=False)
        result = runtime.read_resource(
            skill.qualified_name,
            _text(args, "path"),
            _opt_str(args, "section"),
            spill=False,
        )
        return {
            "name": skill.qualified_name,
            "path": args["path"],
            "text": result.text,
            "report": to_jsonable(result.report),
        }

    def _resolve(self, args: dict[str, Any]) -> Any:
        surface = _opt_str(args, "surface") or "user"
        if surface not in ("user", "palette", "model"):
            raise DaemonRequestError(f"unknown surface {surface!r}", surface=surface)
        res = self.service.runtime.resolve(
            _text(args, "text"),
            surface=surface,  # type: ignore[arg-type]
            apply_commands=bool(args.get("apply_commands", False)),
        )
        return to_jsonable(res)

    def _shutdown(self, _args: dict[str, Any]) -> dict[str, Any]:
        self.stop()
        return {"stopping": True, "pid": os.getpid()}

    # -- serving ----------------------------------------------------------------------
    def bind(self) -> None:
        """Take the state folder's lock, then create the listening socket (refuses when
        another daemon holds the lock or a live one listens at the address)."""
        self._lock.take()
        try:
            self._bind()
        except BaseException:
            self._lock.release()
            raise

    def _bind(self) -> None:
        if isinstance(self.address, tuple):
            self._server = _TCPServer(self.address, _Handler, self)
            host, port = self._server.server_address[:2]
            self.address = (str(host), int(port))  # port 0 -> the real port
        else:
            path = self.address
            if len(path.encode()) > protocol.MAX_UNIX_PATH_BYTES:
                raise DaemonStartError(
                    f"socket path is too long for a Unix socket ({len(path.encode())} bytes): "
                    f"{path}; pass a shorter --socket PATH",
                    path=path,
                )
            _clear_stale_socket(path)
            Path(path).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            old = os.umask(0o177)  # the socket file is created 0600: owner only
            try:
                self._server = _UnixServer(path, _Handler, self)
            finally:
                os.umask(old)
            os.chmod(path, 0o600)
            self._socket_id = _file_id(path)  # what cleanup may remove
        self._bound = True
        if self.info_file is not None:
            self._write_info()

    def _write_info(self) -> None:
        from skillrt.atomic import atomic_write_bytes

        assert self.info_file is not None
        info = {
            "pid": os.getpid(),
            "address": protocol.format_address(self.address),
            "token": self.token,
            "started_at": self.started_at,
            **self.identity,
        }
        atomic_write_bytes(self.info_file, json.dumps(info, indent=2).encode(), mode=0o600)

    def serve(self, *, warm: bool = True, ready: Callable[[Daemon], None] | None = None) -> None:
        """Start the service, listen, and block until SIGTERM/SIGINT or a ``shutdown``
        request; then clean up. Signal handlers are installed only in the main thread."""
        restore: Callable[[], None] = _nothing
        wake_r: int | None = None
        try:
            wake_r, self._wake_fd = os.pipe()
            os.set_blocking(wake_r, False)
            os.set_blocking(self._wake_fd, False)
            # Before the bind and the warm-up, which may take long: a SIGTERM then ends
            # the start cleanly (socket and info file removed) instead of killing it.
            restore = self._install_signals()
            watchdog = self._start_watchdog()
            try:
                if not self._bound:
                    self.bind()  # first: a second daemon fails before it loads anything
                if self.start_delay_s > 0:  # the lock is held: no second daemon meanwhile
                    log.info("waiting %.1f s before loading the skills", self.start_delay_s)
                    time.sleep(self.start_delay_s)  # a SIGTERM here ends the start cleanly
                self.service.start(warm=warm)
            finally:
                if watchdog is not None:
                    watchdog.cancel()
        except BaseException:
            self._warming = False  # a second signal must not cut the clean-up short
            if self._server is not None:
                self._server.server_close()
            self._cleanup()
            self._close_wake(wake_r)
            restore()
            raise
        assert self._server is not None
        self._warming = False
        try:
            # Hand the GIL over sooner (default 5 ms): a request thread waiting behind
            # the reload poll or the telemetry writer answers that much earlier.
            sys.setswitchinterval(0.001)
            threads = [threading.Thread(target=self._server.serve_forever, name="skillrt-daemon")]
            if self.poll_interval_s > 0:
                threads.append(threading.Thread(target=self._watch, name="skillrt-watch"))
            for t in threads:
                t.daemon = True
                t.start()
            if ready is not None:
                ready(self)
            self.last_request = time.monotonic()  # idle from the end of the warm-up
            while not self._stop.is_set() and not _woken(wake_r, 0.5):
                if self._idle():
                    break
        finally:
            self._stop.set()  # for the watch thread, when a signal ended the loop
            try:
                self._server.shutdown()
                self._server.server_close()
                if self.service.events is not None:
                    self.service.events.close()
            finally:
                # A second signal meanwhile only wakes the loop that has ended, and the
                # lock goes last: a second daemon may start once it is free, and then
                # this one must have finished with the state (its events written or kept).
                self._cleanup()
                self._close_wake(wake_r)
                restore()

    def _idle(self) -> bool:
        """Past ``idle_exit_s`` without a request (and none in flight)."""
        if self.idle_exit_s is None:
            return False
        with self._counts:
            quiet = time.monotonic() - self.last_request
        if quiet < self.idle_exit_s or self._open_connections() > 0:
            return False
        self.stopped_because = "idle"
        log.warning("no request for %.0f s: stopping (idle exit)", quiet)
        return True

    def _open_connections(self) -> int:
        count = getattr(self._server, "open_connections", None)
        return int(count()) if callable(count) else 0

    def _start_watchdog(self) -> threading.Timer | None:
        """A timer that ends a start (bind and warm-up) taking longer than
        ``start_timeout_s``, through the same SIGTERM path as a person's kill."""
        if self.start_timeout_s is None:
            return None
        pid = os.getpid()

        def give_up() -> None:
            if self._warming:
                log.error("start took longer than %.0f s: giving up", self.start_timeout_s)
                self.stopped_because = "start_timeout"
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGTERM)

        timer = threading.Timer(self.start_timeout_s, give_up)
        timer.daemon = True
        timer.start()
        return timer

    def stop(self) -> None:
        self._stop.set()
        with self._wake_lock:  # against _close_wake: never a write to a reused descriptor
            self._wake()

    def _close_wake(self, wake_r: int | None) -> None:
        with self._wake_lock:
            wake_w, self._wake_fd = self._wake_fd, None
            for fd in (wake_r, wake_w):
                if fd is not None:
                    os.close(fd)

    def _on_signal(self, signum: int, _frame: object) -> None:
        """SIGTERM/SIGINT: wake the serving loop; during the warm-up, also end it."""
        interrupts.record(signum)
        self._wake()
        if self._warming:
            raise KeyboardInterrupt  # if swallowed, the loop still sees the byte at once

    def _wake(self) -> None:
        """Wake the serving loop: one byte down its pipe (a full pipe is awake already)."""
        fd = self._wake_fd
        if fd is not None:
            with contextlib.suppress(OSError):
                os.write(fd, b"\0")

    def _watch(self) -> None:
        while not self._stop.wait(self.poll_interval_s):
            try:
                self.service.check_for_changes()
            except Exception:  # a broken poll must not kill the daemon; try again later
                log.exception("checking the skill roots failed")

    def _install_signals(self) -> Callable[[], None]:
        if threading.current_thread() is not threading.main_thread():
            return _nothing
        # The handler runs in the main thread between two bytecodes, possibly while that
        # thread holds ``_stop``'s own lock inside ``Event.wait``: setting the event there
        # deadlocked the daemon on SIGTERM. Writing to a pipe takes no lock.
        previous: dict[int, Any] = {}

        def restore() -> None:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

        try:
            for sig in (signal.SIGTERM, signal.SIGINT):
                previous[sig] = signal.signal(sig, self._on_signal)
        except BaseException:
            restore()
            raise
        return restore

    def _cleanup(self) -> None:
        """Remove this daemon's socket and info file (never another's), then let the
        state folder's lock go."""
        if isinstance(self.address, str) and self._socket_id is not None:
            with contextlib.suppress(OSError):
                if _file_id(self.address) == self._socket_id and not _listening(self.address):
                    os.unlink(self.address)
        if self.info_file is not None:
            info = protocol.read_info_file(self.info_file) or {}
            if info.get("pid") == os.getpid():
                with contextlib.suppress(OSError):
                    os.unlink(self.info_file)
        self._lock.release()


def _nothing() -> None:
    pass


def _woken(fd: int, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for bytes on pipe ``fd``; drain them; whether any
    came."""
    import select

    readable, _, _ = select.select([fd], [], [], timeout)
    if not readable:
        return False
    with contextlib.suppress(BlockingIOError):
        while os.read(fd, 512):
            pass
    return True


def _file_id(path: str) -> tuple[int, int, int]:
    """Which file ``path`` is: device, inode and change time (an inode number alone is
    reused at once by a file created after the first was removed)."""
    st = os.lstat(path)
    return (st.st_dev, st.st_ino, st.st_ctime_ns)


def _listening(path: str) -> bool:
    """Whether something accepts connections at socket ``path`` (called once this
    daemon's own listener is closed: then it is another's)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(1.0)
    try:
        probe.connect(path)
    except OSError:
        return False
    finally:
        probe.close()
    return True


def _clear_stale_socket(path: str) -> None:
    """Remove a socket file nobody listens on; refuse a live one or a non-socket."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise DaemonStartError(f"{path} exists and is not a socket; not replacing it", path=path)
    try:
        with DaemonClient(path, timeout=2.0, connect_timeout=1.0) as client:
            client.request("ping")
    except DaemonUnavailable:
        os.unlink(path)  # stale: its daemon died without cleaning up
        return
    except DaemonError:
        pass  # something answers there, with an error: treat it as live
    raise DaemonStartError(f"a daemon is already running at {path}", path=path)


class _Handler(socketserver.StreamRequestHandler):
    """One connection: read lines, answer each, until EOF, an error or a timeout.

    A TCP connection is closed unless its first request comes, whole, within
    :data:`AUTH_TIMEOUT_S` of the connection (however slowly it trickles in) and
    carries the token; after that it may idle :data:`IDLE_TIMEOUT_S` between requests,
    like a Unix socket's.
    """

    timeout = IDLE_TIMEOUT_S
    server: _UnixServer | _TCPServer

    def handle(self) -> None:
        daemon = self.server.daemon
        tcp = isinstance(self.server, _TCPServer)
        trusted = not tcp
        auth_by = time.monotonic() + AUTH_TIMEOUT_S
        limit = protocol.MAX_LINE_BYTES + 1
        while True:
            try:
                if trusted:
                    line = self.rfile.readline(limit)
                else:
                    line = read_line_by(self.rfile, self.connection, auth_by, limit)
            except (OSError, ValueError):
                return  # timed out or reset
            if not line:
                return
            if not line.endswith(b"\n"):
                if len(line) > protocol.MAX_LINE_BYTES:
                    err = RequestTooLarge(f"request over {protocol.MAX_LINE_BYTES} bytes")
                    self._send(error_reply(None, err))
                return  # oversized (the rest cannot be framed) or cut off mid-request
            if not line.strip():
                continue
            reply, authorised = daemon.answer(line, tcp=tcp)
            if not self._send(reply):
                return
            if not trusted:
                if not authorised:
                    return  # answered; a client without the token gets no second try
                trusted = True
                self.server.authenticated(self.request)
                self.connection.settimeout(IDLE_TIMEOUT_S)

    def _send(self, reply: dict[str, Any]) -> bool:
        try:
            self.wfile.write(reply_line(reply))
            self.wfile.flush()
        except OSError:
            return False  # the client went away
        return True


class _UnixServer(Capped, socketserver.UnixStreamServer):
    def __init__(self, path: str, handler: type[_Handler], daemon: Daemon) -> None:
        self.daemon = daemon
        self._init_cap()
        super().__init__(path, handler)


class _TCPServer(Capped, socketserver.TCPServer):
    allow_reuse_address = True
    needs_token = True

    def __init__(self, address: tuple[str, int], handler: type[_Handler], daemon: Daemon) -> None:
        if address[0] != protocol.LOOPBACK:
            raise DaemonStartError("the daemon only listens on 127.0.0.1", host=address[0])
        self.daemon = daemon
        self._init_cap()
        super().__init__(address, handler)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


# -- argument checks ------------------------------------------------------------------
def _norm(value: Any) -> Any:
    if isinstance(value, list):
        return sorted(str(v) for v in value)
    return None if value is None else str(value)


def _text(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str) or not value:
        raise DaemonRequestError(f"'{key}' must be a non-empty string", field=key)
    if len(value) > MAX_TEXT_CHARS:
        raise UsageError(f"'{key}' is over {MAX_TEXT_CHARS} characters", field=key)
    return value


def _opt_str(args: dict[str, Any], key: str) -> str | None:
    value = args.get(key)
    if value is not None and not isinstance(value, str):
        raise DaemonRequestError(f"'{key}' must be a string", field=key)
    return value


def _opt_int(args: dict[str, Any], key: str) -> int | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DaemonRequestError(f"'{key}' must be a positive integer", field=key)
    return value


def _opt_names(args: dict[str, Any], key: str) -> list[str] | None:
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DaemonRequestError(f"'{key}' must be a list of strings", field=key)
    return value


def _history(args: dict[str, Any]) -> list[str | dict[str, Any]] | None:
    value = args.get("history")
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, (str, dict)) for v in value):
        raise DaemonRequestError(
            "'history' must be a list of strings or {role, content} objects", field="history"
        )
    return value
