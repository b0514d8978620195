"""One SQLite file holds skillrt's state: WAL, busy timeout, versioned schema.

Every area keeps its queries in its own module and goes through
:meth:`Store.transaction` so each logical change commits atomically.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from skillrt.errors import StoreError
from skillrt.store.schema import MIGRATIONS, latest_version

DEFAULT_BUSY_TIMEOUT_MS = 5000
MEMORY = ":memory:"


class Store:
    """A handle on the state database; one connection per thread, opened lazily."""

    def __init__(
        self,
        path: Path | str,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        read_only: bool = False,
    ) -> None:
        self.path = path if path == MEMORY else Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self.read_only = read_only
        self._local = threading.local()
        self._migrated = False
        self._migrate_lock = threading.Lock()
        self._shared: sqlite3.Connection | None = None  # the one connection of a :memory: db

    def connection(self) -> sqlite3.Connection:
        """This thread's connection, migrated to the latest schema."""
        if self.path == MEMORY:
            if self._shared is None:
                self._shared = self._open()
                self._migrate(self._shared)
            return self._shared
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
            if not self._migrated:
                with self._migrate_lock:
                    if not self._migrated:
                        self._migrate(conn)
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
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    conn = sqlite3.connect(
                        self.path, isolation_level=None, timeout=self.busy_timeout_ms / 1000
                    )
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_ms)}")
            if not self.read_only and self.path != MEMORY:
                conn.execute("PRAGMA journal_mode = WAL")
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
                raise StoreError(
                    f"state store {self.path} has schema version {current}, newer than this "
                    f"skillrt understands ({target}); upgrade skillrt",
                    path=str(self.path),
                    schema_version=current,
                )
            if current == target or self.read_only:
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                current = conn.execute("PRAGMA user_version").fetchone()[0]
                for version in sorted(v for v in MIGRATIONS if v > current):
                    for statement in MIGRATIONS[version][1]:
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
    def transaction(self, *, immediate: bool = True) -> Iterator[sqlite3.Connection]:
        """Run a block in one transaction: all of it commits, or none of it."""
        conn = self.connection()
        try:
            conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot begin a transaction on {self.path}: {exc}", path=str(self.path)
            ) from exc
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                conn.execute("ROLLBACK")
                raise StoreError(
                    f"cannot commit to {self.path}: {exc}", path=str(self.path)
                ) from exc

    def schema_version(self) -> int:
        return int(self.connection().execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
        if self._shared is not None:
            self._shared.close()
            self._shared = None
