"""The shared store: PostgreSQL through psycopg 3, a few pooled connections per handle.

Many processes on many hosts use one database. Each transaction runs on a pooled
connection between an explicit ``BEGIN`` and ``COMMIT``; rows a transaction will update
are locked with ``SELECT ... FOR UPDATE`` (the dialect's ``for_update``), counters are
bumped in place (``SET n = n + 1``), so concurrent writers never lose an update.

Connections are opened in the caller's thread (:mod:`skillrt.store.pgpool`), each
within ``connect_timeout_s``, so a failure reaches the caller at once with the server's
own words: a configuration the server refuses (no such database or role, failed
authentication, a bad URL or option) is :class:`~skillrt.errors.StoreMisconfigured`,
never retried; a server that cannot be reached is
:class:`~skillrt.errors.StoreUnavailable`.

A handle that has never reached its server gives up after one attempt (a command run
while the server is down fails within the connect timeout, and later calls of the
same handle fail at once for ``connect_timeout_s``). Once it has reached it, a server
restart or a dropped connection is survived: a connection that fails before its
transaction did anything is replaced and the transaction begins again, for up to
``retry_s``; one that fails inside a transaction rolls it back (the server does) and
raises ``StoreUnavailable``, so the caller decides. A refusal such a handle meets (the
server shutting down or not accepting connections, in words of any language) is
``StoreUnavailable`` too: the configuration worked before.

The driver is optional (``pip install skillrt[postgres]``) and imported on first use.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit, urlunsplit

from skillrt.errors import (
    StoreConflict,
    StoreError,
    StoreMisconfigured,
    StoreSchemaTooNew,
    StoreUnavailable,
)
from skillrt.store.base import MEMORY, StateSettings, Store
from skillrt.store.patience import store_wait
from skillrt.store.pgpool import ConnectionPool, bounded, driver, too_late
from skillrt.store.schema import MIGRATIONS, latest_version, statements
from skillrt.store.sql.base import SqlStore
from skillrt.store.sql.connection import POSTGRESQL, Connection, Cursor, Dialect

if TYPE_CHECKING:
    from skillrt.store.sqlite import SqliteStore

__all__ = ["PostgresStore", "mask_url"]

DEFAULT_POOL_SIZE = 4
DEFAULT_RETRY_S = 30.0
DEFAULT_CONNECT_TIMEOUT_S = 3.0
#: pg_advisory_xact_lock key held while migrating (crc32 of "skillrt-migrate").
_MIGRATE_LOCK = 0x5C1E7A11
_READS = ("SELECT", "WITH", "SHOW", "VALUES")


def mask_url(url: str) -> str:
    """``url`` without its password."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://(invalid URL)"
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[-1]}"))


@functools.lru_cache(maxsize=1024)
def _pg_sql(sql: str) -> str:
    """``?`` placeholders as psycopg's ``%s`` (a literal ``%`` doubled)."""
    return sql.replace("%", "%%").replace("?", "%s")


class _RowBase(tuple[Any, ...]):
    """A row read by index or by column name, like ``sqlite3.Row``."""

    __slots__ = ()
    _index: ClassVar[dict[str, int]] = {}

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._index)


@functools.lru_cache(maxsize=256)
def _row_class(names: tuple[str, ...]) -> type[_RowBase]:
    index = {n: i for i, n in reversed(list(enumerate(names)))}  # first of a name wins
    return type("Row", (_RowBase,), {"__slots__": (), "_index": index})


def _row_factory(cursor: Any) -> Callable[[Sequence[Any]], Any]:
    desc = cursor.description
    if desc is None:
        return tuple
    cls = _row_class(tuple(d.name for d in desc))
    return cls


class _Result:
    """A fetched result, read like a cursor (the connection went back to the pool)."""

    __slots__ = ("_rows", "description", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int, description: Any = None) -> None:
        self._rows = rows
        self.rowcount = rowcount
        self.description = description

    def fetchone(self) -> Any:
        return self._rows.pop(0) if self._rows else None

    def fetchall(self) -> list[Any]:
        rows, self._rows = self._rows, []
        return rows

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


def _translate(exc: Exception, location: str) -> StoreError:
    psycopg = driver()

    if isinstance(exc, psycopg.IntegrityError):
        return StoreConflict(f"{exc} (state store {location})", url=location)
    if isinstance(exc, psycopg.OperationalError):
        return StoreUnavailable(
            f"state store {location} unavailable: {exc}".strip(), url=location, retryable=True
        )
    return StoreError(f"{exc} (state store {location})", url=location)


class PgConnection(Connection):
    """One pooled connection inside a transaction."""

    __slots__ = ("_location", "raw")
    dialect: ClassVar[Dialect] = POSTGRESQL

    def __init__(self, raw: Any, location: str) -> None:
        self.raw = raw
        self._location = location

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        psycopg = driver()
        try:
            with store_wait() as bound, bounded(self.raw, bound, self._location):
                cursor: Cursor = (
                    self.raw.execute(_pg_sql(sql), params) if params else self.raw.execute(sql)
                )
        except psycopg.Error as exc:
            raise _translate(exc, self._location) from exc
        return cursor

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        psycopg = driver()
        try:
            with (
                store_wait() as bound,
                bounded(self.raw, bound, self._location),
                self.raw.cursor() as cur,
            ):
                cur.executemany(_pg_sql(sql), list(rows))
        except psycopg.Error as exc:
            raise _translate(exc, self._location) from exc


class _AutoConnection(Connection):
    """``Store.connection()``: each statement borrows a pooled connection and commits."""

    dialect: ClassVar[Dialect] = POSTGRESQL

    def __init__(self, store: PostgresStore) -> None:
        self._store = store

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        psycopg = driver()
        retry = sql.lstrip()[:6].upper().startswith(_READS)  # a read is safe to repeat
        store = self._store
        deadline = time.monotonic() + store.retry_s
        with store_wait() as bound:
            while True:
                with store._borrow(retry_s=max(0.0, deadline - time.monotonic())) as raw:
                    try:
                        with bounded(raw, bound, store.location):
                            cur = raw.execute(_pg_sql(sql), params) if params else raw.execute(sql)
                            rows = cur.fetchall() if cur.description is not None else []
                        return _Result(rows, cur.rowcount, cur.description)
                    except psycopg.OperationalError as exc:
                        if not (retry and raw.broken and time.monotonic() < deadline):
                            raise _translate(exc, store.location) from exc
                    except psycopg.Error as exc:
                        raise _translate(exc, store.location) from exc
                time.sleep(0.05)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._store.transaction() as conn:
            conn.executemany(sql, rows)


class PostgresStore(SqlStore):
    """The state in a PostgreSQL database (optionally in its own ``schema``).

    Args:
        url: ``postgresql://user@host:5432/db`` (any libpq URL; a password can come
            from ``PGPASSWORD`` or ``~/.pgpass`` instead of the URL).
        schema: Keep skillrt's tables in this schema (created on first use).
        cache_path: The local SQLite file for this machine's derived caches
            (:attr:`local`); None keeps them in memory.
        pool_size: Most connections this handle opens at once.
        busy_timeout_ms: How long a statement waits for a row lock (``lock_timeout``).
        retry_s: How long a transaction keeps trying to reach a server this handle
            reached before (a restart) until it raises ``StoreUnavailable``.
        connect_timeout_s: Longest one connection attempt waits for the server to
            answer (libpq counts whole seconds, at least 2).
    """

    backend: ClassVar[str] = "postgresql"
    dialect: ClassVar[Dialect] = POSTGRESQL
    background_writes: ClassVar[bool] = True
    shared: ClassVar[bool] = True

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        cache_path: Path | str | None = None,
        pool_size: int = DEFAULT_POOL_SIZE,
        busy_timeout_ms: int = 5000,
        read_only: bool = False,
        retry_s: float = DEFAULT_RETRY_S,
        connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S,
    ) -> None:
        self.url = url
        self.schema = schema
        self.cache_path = cache_path
        self.pool_size = max(1, pool_size)
        self.busy_timeout_ms = busy_timeout_ms
        self.read_only = read_only
        self.retry_s = retry_s
        self.connect_timeout_s = connect_timeout_s
        self._pool: ConnectionPool | None = None
        self._lock = threading.Lock()
        #: Whether this handle (or the one it was reopened from) ever reached the server.
        self._reached = False
        self._unreached_error: tuple[float, StoreUnavailable] | None = None
        self._migrated = False
        self._local_store: SqliteStore | None = None

    @classmethod
    def from_settings(
        cls, location: Path | str, settings: StateSettings, *, cache_path: Path | None
    ) -> PostgresStore:
        return cls(
            str(location),
            schema=settings.schema,
            cache_path=cache_path,
            pool_size=settings.pool_size,
            retry_s=settings.retry_s,
            connect_timeout_s=settings.connect_timeout_s,
        )

    # -- identity --------------------------------------------------------------------
    @property
    def location(self) -> str:
        masked = mask_url(self.url)
        return f"{masked} (schema {self.schema})" if self.schema else masked

    @property
    def unreachable(self) -> bool:
        """This handle never reached its server, and its last attempt (or the last
        attempt of the handle it was reopened from) failed within ``connect_timeout_s``."""
        failed = self._unreached_error
        return (
            not self._reached
            and failed is not None
            and time.monotonic() < failed[0] + self.connect_timeout_s
        )

    @property
    def local(self) -> Store:
        if self._local_store is None:
            from skillrt.store.sqlite import SqliteStore

            self._local_store = SqliteStore(self.cache_path or MEMORY)
        return self._local_store

    # -- connections -----------------------------------------------------------------
    def _get_pool(self) -> ConnectionPool:
        if self._pool is not None:
            return self._pool
        with self._lock:
            if self._pool is None:
                try:
                    driver()  # first: it says when the driver is missing
                except StoreError as exc:
                    raise exc.fill(url=self.location) from exc.__cause__
                self._pool = ConnectionPool(
                    self.url,
                    size=self.pool_size,
                    connect_timeout_s=self.connect_timeout_s,
                    location=self.location,
                    configure=self._configure,
                    options={
                        "autocommit": True,
                        "row_factory": _row_factory,
                        "application_name": "skillrt",
                    },
                )
        return self._pool

    def _configure(self, conn: Any) -> None:
        settings = [f"SET lock_timeout = {int(self.busy_timeout_ms)}"]
        if self.schema:
            settings.append(f"SET search_path TO {_ident(self.schema)}")
        if self.read_only:
            settings.append("SET default_transaction_read_only = on")
        conn.execute("; ".join(settings))  # one round trip

    def _connect(self, deadline: float, patient: bool) -> Any:
        """A connection from the pool: at once the last failure while a handle that
        never reached its server is within ``connect_timeout_s`` of it."""
        failed = self._unreached_error
        if failed is not None and time.monotonic() < failed[0] + self.connect_timeout_s:
            raise failed[1]
        try:
            conn = self._get_pool().get(deadline, patient=patient)
        except StoreUnavailable as exc:
            if not self._reached:
                self._unreached_error = (time.monotonic(), exc)
            raise
        except StoreMisconfigured as exc:
            if not self._reached:
                raise
            # It took this configuration before: what refuses it now is a server being
            # restarted, shut down or reconfigured (or one answering in a language
            # the words were not matched in); retried like an unreachable server.
            detail = exc.context.get("detail") or exc.message
            raise StoreUnavailable(
                f"cannot reach the state store {self.location}: {detail}",
                url=self.location,
                retryable=True,
                detail=detail,
            ) from exc
        self._reached = True
        self._unreached_error = None
        return conn

    def _acquire(self, deadline: float, prepare: Callable[[Any], None] | None = None) -> Any:
        """A pooled connection, migrated, on which ``prepare`` succeeded.

        A configuration the server refuses fails at once. A server that cannot be
        reached fails at once too, unless this handle has reached it before (a restart,
        a dropped connection): then it tries again until ``deadline`` (nothing has been
        done on the server yet, so trying again is safe). Within
        :func:`~skillrt.store.base.patience`, ``deadline`` is at most what is left of
        its budget (none left: ``StoreUnavailable`` at once).
        """
        with store_wait() as bound:
            if bound is not None:
                if bound <= time.monotonic():
                    raise too_late(self.location)
                deadline = min(deadline, bound)
            return self._acquire_by(deadline, prepare, bound)

    def _acquire_by(
        self, deadline: float, prepare: Callable[[Any], None] | None, bound: float | None
    ) -> Any:
        pool = self._get_pool()
        psycopg = driver()
        delay = 0.05
        while True:
            try:
                conn = self._connect(deadline, bound is not None)
            except StoreMisconfigured:
                raise
            except StoreUnavailable:
                if not self._reached or time.monotonic() + delay >= deadline:
                    raise
                time.sleep(delay)
                delay = min(1.0, delay * 2)
                continue
            try:
                with bounded(conn, bound, self.location):
                    if not self._migrated:
                        self._migrate(conn)
                    if prepare is not None:
                        prepare(conn)
                return conn
            except StoreUnavailable:
                pool.put(conn)
                if time.monotonic() >= deadline:
                    raise
            except psycopg.OperationalError as exc:
                pool.put(conn)  # broken: the pool closes it and the next get connects anew
                if not conn.broken or time.monotonic() >= deadline:
                    raise _translate(exc, self.location) from exc
            except BaseException:
                pool.put(conn)
                raise
            time.sleep(delay)
            delay = min(1.0, delay * 2)

    @contextmanager
    def _borrow(self, retry_s: float | None = None) -> Iterator[Any]:
        """A pooled connection for a few statements, back to the pool afterwards."""
        deadline = time.monotonic() + (self.retry_s if retry_s is None else retry_s)
        pool = self._get_pool()
        conn = self._acquire(deadline)
        try:
            yield conn
        finally:
            pool.put(conn)

    def connection(self) -> Connection:
        return _AutoConnection(self)

    @contextmanager
    def transaction(self, *, sync: bool | None = None) -> Iterator[Connection]:
        """One transaction on one pooled connection. Until it begins, a server that
        cannot be reached is waited for (up to ``retry_s``); once it has begun, a lost
        connection raises ``StoreUnavailable`` and the server rolls the work back."""

        def begin(conn: Any) -> None:
            # One round trip: the statements go as one simple query.
            conn.execute("BEGIN; SET LOCAL synchronous_commit TO off" if sync is False else "BEGIN")

        pool = self._get_pool()
        raw = self._acquire(time.monotonic() + self.retry_s, begin)
        try:
            yield from self._run(raw)
        finally:
            pool.put(raw)

    def _run(self, raw: Any) -> Iterator[Connection]:
        psycopg = driver()

        try:
            yield PgConnection(raw, self.location)
        except BaseException:
            if not raw.broken:
                try:
                    with store_wait() as bound, bounded(raw, bound, self.location):
                        raw.execute("ROLLBACK")
                except (psycopg.Error, StoreUnavailable):
                    pass  # the server rolls back a transaction whose connection is gone
            raise
        try:
            with store_wait() as bound, bounded(raw, bound, self.location):
                raw.execute("COMMIT")
        except psycopg.Error as exc:
            raise _translate(exc, self.location) from exc

    # -- schema ----------------------------------------------------------------------
    def _migrate(self, conn: Any) -> None:
        psycopg = driver()

        try:
            current = self._read_version(conn)
            target = latest_version()
            if current > target:
                raise StoreSchemaTooNew(
                    f"state store {self.location} has schema version {current}, newer than "
                    f"this skillrt understands ({target}); upgrade skillrt",
                    url=self.location,
                    schema_version=current,
                    supported_version=target,
                )
            if current < target and not self.read_only:
                conn.execute("BEGIN")
                try:
                    # One migrator at a time across every host; the others wait, then
                    # find the work done.
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATE_LOCK,))
                    if self.schema:
                        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {_ident(self.schema)}")
                    conn.execute(
                        "CREATE TABLE IF NOT EXISTS skillrt_schema (version BIGINT PRIMARY KEY, "
                        "summary TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
                    )
                    current = self._read_version(conn)
                    if current > target:
                        raise StoreSchemaTooNew(
                            f"state store {self.location} was migrated to schema version "
                            f"{current} meanwhile, newer than this skillrt ({target})",
                            url=self.location,
                            schema_version=current,
                            supported_version=target,
                        )
                    for version in range(current + 1, target + 1):
                        for statement in statements(version, "postgresql"):
                            conn.execute(statement)
                        conn.execute(
                            "INSERT INTO skillrt_schema(version, summary, applied_at) "
                            "VALUES (%s, %s, %s)",
                            (version, MIGRATIONS[version][0], time.time()),
                        )
                    conn.execute("COMMIT")
                except BaseException:
                    if not conn.broken:
                        conn.execute("ROLLBACK")
                    raise
        except psycopg.Error as exc:
            raise _translate(exc, self.location) from exc
        self._migrated = True

    def _read_version(self, conn: Any) -> int:
        row = conn.execute("SELECT to_regclass('skillrt_schema') IS NOT NULL").fetchone()
        if not row[0]:
            return 0
        return int(
            conn.execute("SELECT COALESCE(MAX(version), 0) FROM skillrt_schema").fetchone()[0]
        )

    def schema_version(self) -> int:
        with store_wait() as bound, self._borrow() as conn, bounded(conn, bound, self.location):
            return self._read_version(conn)

    # -- lifecycle -------------------------------------------------------------------
    def reopen(
        self, *, busy_timeout_ms: int | None = None, read_only: bool | None = None
    ) -> PostgresStore:
        other = PostgresStore(
            self.url,
            schema=self.schema,
            cache_path=None,
            pool_size=2,
            busy_timeout_ms=self.busy_timeout_ms if busy_timeout_ms is None else busy_timeout_ms,
            read_only=self.read_only if read_only is None else read_only,
            retry_s=self.retry_s,
            connect_timeout_s=self.connect_timeout_s,
        )
        other._reached = self._reached  # the server was there: a failure now is a restart
        other._unreached_error = self._unreached_error  # it was not: fail as fast as this one
        return other

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
        self._migrated = False
        if self._local_store is not None:
            self._local_store.close()


def _ident(name: str) -> str:
    """A quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'
