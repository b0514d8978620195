"""Connections to one PostgreSQL server: opened in the caller's thread within a connect
timeout, told apart when they fail, and kept for reuse.

A connection is opened where it is needed, so its failure reaches the caller with the
server's own words, and nothing retries or logs behind its back:

- :class:`~skillrt.errors.StoreMisconfigured` (``E_STORE_CONFIG``, not retryable): the
  server refused this configuration (no such database or role, failed authentication,
  an unknown option) or the URL cannot be used at all (malformed, a bad ``sslmode``,
  an unknown host). Trying again changes nothing. (Told by the error's SQLSTATE when
  there is one, else by its words; a handle that reached its server before treats any
  refusal as the next kind.)
- :class:`~skillrt.errors.StoreUnavailable` (``E_STORE_UNAVAILABLE``, retryable): the
  server cannot be reached (refused, no socket, starting up, full) or did not answer
  within ``connect_timeout_s``.

At most ``size`` connections are out at once; a returned connection that is broken, or
left inside a transaction that cannot be rolled back, is closed rather than kept.

A connection over TCP sends keepalives and gives up on data its server does not
acknowledge (``keepalives_*`` and ``tcp_user_timeout`` from ``connect_timeout_s``,
unless the URL sets them): a host that vanished, or a cut network, fails a statement
in about four connect timeouts instead of the kernel's minutes. A server process that
still acknowledges but does not answer (stopped, hung) is another matter: only a
deadline ends the wait (:func:`bounded`, used within a
:func:`~skillrt.store.patience.patience` budget).
"""

from __future__ import annotations

import math
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from skillrt.errors import StoreDriverMissing, StoreError, StoreMisconfigured, StoreUnavailable

__all__ = ["ConnectionPool", "bounded", "classify", "driver", "too_late"]

#: Failures of a server that exists and was asked correctly, but cannot serve now.
_TRANSIENT = (
    "the database system is starting up",
    "the database system is shutting down",
    "the database system is in recovery mode",
    "not yet accepting connections",
    "not accepting connections",  # PostgreSQL 14+: "the database system is not ..."
    "too many clients",
    "connection slots are reserved",
    "terminating connection",
    "timeout expired",
    "temporary failure in name resolution",
    "server closed the connection unexpectedly",
)
#: SQLSTATE classes of a server that cannot serve now: connection exceptions,
#: insufficient resources (too many clients), operator intervention (shutting down,
#: starting up), system errors. Any other SQLSTATE refuses the configuration.
_TRANSIENT_CLASSES = ("08", "53", "57", "58")
#: Failures that only a change of configuration cures (besides any ``FATAL`` the
#: server answers at startup, which refuses who or what was asked for).
_PERMANENT = (
    "invalid ",
    "fe_sendauth",
    "password",
    "does not support ssl",
    "certificate",
    "name or service not known",
    "nodename nor servname",
    "no such host",
)


def driver() -> Any:
    """The ``psycopg`` module, or :class:`StoreDriverMissing` with the pip line."""
    try:
        import psycopg
    except ImportError as exc:
        raise StoreDriverMissing(
            "a PostgreSQL state store needs the psycopg driver: pip install 'skillrt[postgres]'",
            missing=exc.name or "psycopg",
        ) from exc
    return psycopg


#: ``scheme://user:password@``, as a message may echo a URL back.
_PASSWORD = re.compile(r"(://[^:/@\s\"']*):[^@\s\"']*@")


def _detail(exc: BaseException) -> str:
    """The driver's message, on one line, without libpq's prefixes and hints, and
    without any password a URL it echoes holds."""
    text = _PASSWORD.sub(r"\1:***@", str(exc).strip())
    for prefix in ("connection failed: ", "connection is bad: "):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    first = text.split("\n", 1)[0].strip()
    if "FATAL:" in first:  # 'connection to server ... failed: FATAL:  database "x" ...'
        first = first.split("FATAL:", 1)[1].strip()
    return first


def classify(exc: BaseException, location: str, timeout_s: float) -> StoreError:
    """The store error a failed connection attempt is (see the module docstring): by
    the error's SQLSTATE when the driver gives one, else by libpq's and the server's
    words (English; a server answering in another language is told apart only by a
    handle that reached it before: :class:`~skillrt.store.postgres.PostgresStore`
    retries it)."""
    psycopg = driver()
    detail = _detail(exc)
    lowered = str(exc).lower()
    sqlstate = getattr(exc, "sqlstate", None)
    if isinstance(sqlstate, str) and sqlstate:
        permanent = not sqlstate.startswith(_TRANSIENT_CLASSES)
    else:
        permanent = isinstance(exc, psycopg.ProgrammingError) or (
            not any(t in lowered for t in _TRANSIENT)
            and ("fatal:" in lowered or any(p in lowered for p in _PERMANENT))
        )
    if permanent:
        return StoreMisconfigured(
            f"state store {location} refused the connection: {detail} "
            "(check the URL, database, role and credentials; retrying will not help)",
            url=location,
            retryable=False,
            detail=detail,
        )
    if "timeout expired" in lowered:
        detail = f"no answer within {timeout_s:g} s"
    return StoreUnavailable(
        f"cannot reach the state store {location}: {detail}",
        url=location,
        retryable=True,
        detail=detail,
    )


def too_late(location: str) -> StoreUnavailable:
    """The error of a store call that ran out of the time it had to wait."""
    return StoreUnavailable(
        f"the state store {location} did not answer in time (skillrt went on without it)",
        url=location,
        retryable=True,
    )


class _Cutoff:
    """Shuts ``conn``'s socket down after ``seconds`` unless disarmed first: the
    statement waiting on it fails at once, and the connection is dropped. (A cancel
    request would not do: it goes to the same server, which may be the one that does
    not answer, and a stopped backend acts on it only when it runs again.)"""

    def __init__(self, conn: Any, seconds: float) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self._armed = True
        self.fired = False
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            if not self._armed:
                return
            self.fired = True
            try:
                fd = os.dup(self._conn.fileno())
            except Exception:  # closed meanwhile (psycopg raises its own error)
                return
            sock = socket.socket(fileno=fd)
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            finally:
                sock.close()  # the duplicate only; the driver still owns its descriptor

    def disarm(self) -> None:
        with self._lock:
            self._armed = False
        self._timer.cancel()


@contextmanager
def bounded(conn: Any, deadline: float | None, location: str) -> Iterator[None]:
    """Statements on ``conn`` inside end by ``deadline`` (a ``time.monotonic()``; None:
    no bound): past it the connection is cut (:class:`_Cutoff`) and
    :func:`too_late` raised; with no time left, raised at once."""
    if deadline is None:
        yield
        return
    left = deadline - time.monotonic()
    if left <= 0:
        raise too_late(location)
    cut = _Cutoff(conn, left)
    try:
        yield
    except Exception as exc:
        if cut.fired and isinstance(exc, (driver().Error, StoreError)):
            raise too_late(location) from exc  # whatever the cut connection said
        raise
    finally:
        cut.disarm()


def _keepalives(url: str, timeout_s: float) -> dict[str, Any]:
    """TCP keepalive and user-timeout settings from ``timeout_s``, except those the URL
    gives itself (libpq ignores them on a Unix socket)."""
    from psycopg.conninfo import conninfo_to_dict

    seconds = max(1, math.ceil(timeout_s))
    wanted: dict[str, Any] = {
        "keepalives": 1,
        "keepalives_idle": seconds,
        "keepalives_interval": seconds,
        "keepalives_count": 3,
        "tcp_user_timeout": 4 * seconds * 1000,  # milliseconds
    }
    given = conninfo_to_dict(url)
    return {k: v for k, v in wanted.items() if k not in given}


class ConnectionPool:
    """Up to ``size`` connections to ``url``, each set up by ``configure`` once.

    Args:
        url: A libpq URL.
        size: Most connections out at once (a caller past it waits for one).
        connect_timeout_s: Longest a new connection may take (libpq counts whole
            seconds, at least 2).
        location: The URL without its password, for messages.
        configure: Run on each new connection (session settings).
        options: More connection keywords (``autocommit``, ``row_factory``, ...).
    """

    def __init__(
        self,
        url: str,
        *,
        size: int,
        connect_timeout_s: float,
        location: str,
        configure: Callable[[Any], None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.url = url
        self.size = max(1, size)
        self.connect_timeout_s = connect_timeout_s
        self.location = location
        self._configure = configure
        self._options = dict(options or {})
        self._slots = threading.BoundedSemaphore(self.size)
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self._closed = False

    def get(self, deadline: float, *, patient: bool = False) -> Any:
        """A connection: an idle one, else a new one opened now (raises the classified
        error when it cannot be opened, ``StoreUnavailable`` when every slot stays busy
        until ``deadline``). ``patient``: a new connection is opened on a helper thread
        and waited for until ``deadline`` only (one that arrives later is kept for the
        next caller)."""
        if not self._slots.acquire(timeout=max(0.0, deadline - time.monotonic())):
            raise StoreUnavailable(
                f"all {self.size} connections to the state store {self.location} are busy",
                url=self.location,
                retryable=True,
            )
        try:
            while True:
                with self._lock:
                    conn = self._idle.pop() if self._idle else None
                if conn is None:
                    return self._connect_within(deadline) if patient else self._connect()
                if not (conn.closed or conn.broken):
                    return conn
                _close(conn)
        except _HandedOver as late:
            raise late.error from None  # the helper thread gives the slot back
        except BaseException:
            self._release()
            raise

    def _connect_within(self, deadline: float) -> Any:
        """:meth:`_connect` on a helper thread, waited for until ``deadline``; past it
        the thread keeps the slot and parks its connection (or drops its failure)."""
        outcome: list[Any] = []
        done = threading.Event()
        guard = threading.Lock()
        abandoned = False

        def work() -> None:
            try:
                outcome.append(self._connect())
            except BaseException as exc:  # handed to the caller, or dropped when late
                outcome.append(exc)
            with guard:
                done.set()
                late = abandoned
            if late:
                if isinstance(outcome[0], BaseException):
                    self._release()
                else:
                    self.put(outcome[0])

        threading.Thread(target=work, name="skillrt-pg-connect", daemon=True).start()
        done.wait(max(0.0, deadline - time.monotonic()))
        with guard:
            if not done.is_set():
                abandoned = True
                raise _HandedOver(
                    StoreUnavailable(
                        f"the state store {self.location} did not answer in time "
                        "(skillrt went on without it)",
                        url=self.location,
                        retryable=True,
                    )
                )
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        return outcome[0]

    def _release(self) -> None:
        try:
            self._slots.release()
        except ValueError:  # not from this pool (the handle was closed meanwhile)
            pass

    def put(self, conn: Any) -> None:
        """Give ``conn`` back: kept when it is healthy and outside any transaction (one
        left inside is rolled back, within the caller's store budget)."""
        from skillrt.store.patience import patience_deadline

        psycopg = driver()
        try:
            keep = not (self._closed or conn.closed or conn.broken)
            if keep and conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                try:
                    with bounded(conn, patience_deadline(), self.location):
                        conn.execute("ROLLBACK")
                except (psycopg.Error, StoreUnavailable):
                    keep = False
            if keep:
                with self._lock:
                    self._idle.append(conn)
            else:
                _close(conn)
        finally:
            self._release()

    def _connect(self) -> Any:
        psycopg = driver()
        try:
            conn = psycopg.connect(
                self.url,
                connect_timeout=max(2, math.ceil(self.connect_timeout_s)),
                **_keepalives(self.url, self.connect_timeout_s),
                **self._options,
            )
        except psycopg.Error as exc:
            raise classify(exc, self.location, self.connect_timeout_s) from exc
        try:
            if self._configure is not None:
                self._configure(conn)
        except psycopg.Error as exc:
            _close(conn)
            raise classify(exc, self.location, self.connect_timeout_s) from exc
        except BaseException:
            _close(conn)
            raise
        return conn

    def close(self) -> None:
        """Close the idle connections; those in use are closed when given back."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            _close(conn)


class _HandedOver(Exception):
    """A patient caller gave up; the helper thread owns the slot now."""

    def __init__(self, error: StoreUnavailable) -> None:
        super().__init__(error.message)
        self.error = error


def _close(conn: Any) -> None:
    try:
        conn.close()
    except Exception:  # closing a dead connection can fail; it is gone either way
        pass
