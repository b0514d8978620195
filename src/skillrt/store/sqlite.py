"""The embedded store: one SQLite file, WAL, busy timeout, versioned schema.

One connection per thread, opened lazily (``:memory:`` shares one). Writers take the
database's write lock at ``BEGIN IMMEDIATE``, so a transaction's reads and writes are
never interleaved with another writer's.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

from skillrt.errors import StoreConflict, StoreError, StoreSchemaTooNew, StoreUnavailable
from skillrt.statedir import make_state_dir
from skillrt.store.base import MEMORY, StateSettings, Store
from skillrt.store.schema import latest_version, statements
from skillrt.store.sql.base import SqlStore
from skillrt.store.sql.connection import SQLITE, Connection, Cursor, Dialect

__all__ = ["MEMORY", "SqliteConnection", "SqliteStore", "Store"]

DEFAULT_BUSY_TIMEOUT_MS = 5000


class _SqliteCursor:
    """A ``sqlite3`` cursor whose errors, also those met while fetching rows, are
    ``StoreError``s."""

    __slots__ = ("_cur", "_location")

    def __init__(self, cur: sqlite3.Cursor, location: str) -> None:
        self._cur = cur
        self._location = location

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount

    @property
    def description(self) -> Any:
        return self._cur.description

    def fetchone(self) -> Any:
        try:
            return self._cur.fetchone()
        except sqlite3.Error as exc:
            raise _error(exc, self._location) from exc

    def fetchall(self) -> list[Any]:
        try:
            return self._cur.fetchall()
        except sqlite3.Error as exc:
            raise _error(exc, self._location) from exc

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class SqliteConnection(Connection):
    """A ``sqlite3`` connection whose errors are ``StoreError``s."""

    __slots__ = ("location", "raw")
    dialect: ClassVar[Dialect] = SQLITE

    def __init__(self, raw: sqlite3.Connection, location: str) -> None:
        self.raw = raw
        self.location = location

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        try:
            return _SqliteCursor(self.raw.execute(sql, params), self.location)
        except sqlite3.Error as exc:
            raise _error(exc, self.location) from exc

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        try:
            self.raw.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise _error(exc, self.location) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)  # the rest of sqlite3.Connection, for SQLite-only code


def _error(exc: sqlite3.Error, location: str) -> StoreError:
    if isinstance(exc, sqlite3.IntegrityError):
        return StoreConflict(f"{exc} (state store {location})", path=location)
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
        # Another writer holds the lock past the busy timeout: worth trying again.
        return StoreUnavailable(f"{text} (state store {location})", path=location, retryable=True)
    return StoreError(f"{text} (state store {location})", path=location)


def _wal(conn: sqlite3.Connection, timeout_ms: int) -> None:
    """Switch to WAL, waiting up to ``timeout_ms`` for a lock: when several connections
    open a new file at once, the switch can fail at once with "database is locked"
    (SQLite does not apply the busy timeout to it)."""
    deadline = time.monotonic() + timeout_ms / 1000
    delay = 0.002
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if ("locked" not in text and "busy" not in text) or time.monotonic() >= deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


class SqliteStore(SqlStore):
    """The state database in one SQLite file (or ``:memory:``)."""

    backend: ClassVar[str] = "sqlite"
    dialect: ClassVar[Dialect] = SQLITE

    def __init__(
        self,
        path: Path | str = MEMORY,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        read_only: bool = False,
        cache_path: Path | None = None,
    ) -> None:
        self.path = path if path == MEMORY else Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self.read_only = read_only
        #: Where the derived caches live when not in this file (``cache_dir``: one
        #: cache every project shares); None: in this file.
        self.cache_path = cache_path if cache_path != self.path else None
        self._cache_store: SqliteStore | None = None
        self._local = threading.local()
        self._migrated = False
        self._migrate_lock = threading.Lock()
        self._shared: SqliteConnection | None = None  # the one connection of a :memory: db

    @classmethod
    def from_settings(
        cls, location: Path | str, settings: StateSettings, *, cache_path: Path | None
    ) -> SqliteStore:
        """The file at ``location`` (a server's settings do not apply); the caches in
        the same file, or in ``cache_path`` when given (``cache_dir``)."""
        return cls(location, cache_path=cache_path)

    @property
    def local(self) -> Store:
        """The derived caches' store: this one, or the file ``cache_path`` names."""
        if self.cache_path is None or self.path == MEMORY:
            return self
        if self._cache_store is None:
            self._cache_store = SqliteStore(self.cache_path, busy_timeout_ms=self.busy_timeout_ms)
        return self._cache_store

    @property
    def location(self) -> str:
        return str(self.path)

    @property
    def file(self) -> Path | None:
        return self.path if isinstance(self.path, Path) else None

    @property
    def is_memory(self) -> bool:
        return self.path == MEMORY

    def connection(self) -> SqliteConnection:
        """This thread's connection, migrated to the latest schema."""
        if self.path == MEMORY:
            if self._shared is None:
                self._shared = SqliteConnection(self._open(), MEMORY)
                self._migrate(self._shared.raw)
            return self._shared
        conn: SqliteConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = SqliteConnection(self._open(), str(self.path))
            self._local.conn = conn
            if not self._migrated:
                with self._migrate_lock:
                    if not self._migrated:
                        self._migrate(conn.raw)
                        self._migrated = True
        return conn

    def _open(self) -> sqlite3.Connection:
        try:
            if self.path == MEMORY:
                conn = sqlite3.connect(MEMORY, check_same_thread=False, isolation_level=None)
            else:
                assert isinstance(self.path, Path)
                if self.read_only:
                    uri = f"file:{self.path}?mode=ro"
                    conn = sqlite3.connect(
                        uri, uri=True, isolation_level=None, timeout=self.busy_timeout_ms / 1000
                    )
                else:
                    make_state_dir(self.path.parent)
                    conn = sqlite3.connect(
                        self.path, isolation_level=None, timeout=self.busy_timeout_ms / 1000
                    )
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
            if not self.read_only and self.path != MEMORY:
                _wal(conn, self.busy_timeout_ms)
                conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            return conn
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(
                f"cannot open state store {self.path}: {exc}", path=str(self.path)
            ) from exc

    def _migrate(self, conn: sqlite3.Connection) -> None:
        try:
            current = conn.execute("PRAGMA user_version").fetchone()[0]
            target = latest_version()
            if current > target:
                raise StoreSchemaTooNew(
                    f"state store {self.path} has schema version {current}, newer than this "
                    f"skillrt understands ({target}); upgrade skillrt",
                    path=str(self.path),
                    schema_version=current,
                    supported_version=target,
                )
            if current == target or self.read_only:
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                current = conn.execute("PRAGMA user_version").fetchone()[0]
                for version in range(current + 1, target + 1):
                    for statement in statements(version, "sqlite"):
                        conn.execute(statement)
                    conn.execute(f"PRAGMA user_version = {int(version)}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot migrate state store {self.path}: {exc}", path=str(self.path)
            ) from exc

    @contextmanager
    def transaction(
        self, *, sync: bool | None = None, immediate: bool = True
    ) -> Iterator[SqliteConnection]:
        """Run a block in one transaction: all of it commits, or none of it."""
        conn = self.connection()
        raw = conn.raw
        full = sync is True and self.path != MEMORY and not self.read_only
        try:
            if full:  # fsync the WAL at this commit (and with it every earlier one)
                raw.execute("PRAGMA synchronous = FULL")
            raw.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        except sqlite3.Error as exc:
            if full:
                raw.execute("PRAGMA synchronous = NORMAL")
            raise _error(exc, f"{self.path}, beginning a transaction") from exc
        try:
            yield conn
        except BaseException:
            raw.execute("ROLLBACK")
            raise
        else:
            try:
                raw.execute("COMMIT")
            except sqlite3.Error as exc:
                raw.execute("ROLLBACK")
                raise _error(exc, f"{self.path}, committing") from exc
        finally:
            if full:
                raw.execute("PRAGMA synchronous = NORMAL")

    def schema_version(self) -> int:
        return int(self.connection().execute("PRAGMA user_version").fetchone()[0])

    def reopen(
        self, *, busy_timeout_ms: int | None = None, read_only: bool | None = None
    ) -> SqliteStore:
        if self.path == MEMORY:
            raise ValueError("an in-memory store cannot be reopened (it would be empty)")
        return SqliteStore(
            self.path,
            busy_timeout_ms=self.busy_timeout_ms if busy_timeout_ms is None else busy_timeout_ms,
            read_only=self.read_only if read_only is None else read_only,
        )

    def close(self) -> None:
        if self._cache_store is not None:
            self._cache_store.close()
        conn: SqliteConnection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.raw.close()
            self._local.conn = None
        if self._shared is not None:
            self._shared.raw.close()
            self._shared = None
