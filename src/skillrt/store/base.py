"""The state store interface: one API over SQLite (embedded) and PostgreSQL (shared).

Every area of skillrt keeps its own queries, written once in the SQL both databases
accept (``?`` placeholders, ``INSERT ... ON CONFLICT``, ``RETURNING``), and runs them
through a :class:`Connection` from :meth:`Store.connection` (single statements) or
:meth:`Store.transaction` (all or nothing). Where the dialects differ the connection
says how (:class:`Dialect`): a row lock, the database clock. Driver errors arrive as
:class:`~skillrt.errors.StoreError` subclasses, so no caller imports a driver.

``Store(location)`` opens the backend the location names: a ``postgresql://`` URL
gives a :class:`~skillrt.store.postgres.PostgresStore`, anything else a SQLite file
(:class:`~skillrt.store.sqlite.SqliteStore`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

from skillrt.store.patience import patience, patience_deadline, store_wait

__all__ = [
    "MEMORY",
    "POSTGRESQL",
    "SQLITE",
    "Connection",
    "Cursor",
    "Dialect",
    "Store",
    "backend",
    "check_location",
    "is_postgres_url",
    "open_location",
    "patience",
    "patience_deadline",
    "store_wait",
    "url_scheme",
]

MEMORY = ":memory:"
_PG_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(location: object) -> bool:
    """Whether ``location`` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(location, str) and location.lower().startswith(_PG_SCHEMES)


def url_scheme(location: object) -> str | None:
    """The scheme of a location written as a URL (``mysql`` for ``mysql://x/y``), or
    None for a path. Only ``postgresql://`` (and ``postgres://``) URLs name a store."""
    if not isinstance(location, str):
        return None
    scheme, sep, _ = location.partition("://")
    if sep and scheme and scheme[0].isalpha() and all(c.isalnum() or c in "+.-" for c in scheme):
        return scheme
    return None


def check_location(location: Path | str) -> None:
    """Refuse a URL that names no store skillrt has (a folder named ``mysql:`` is never
    what was meant): ``StoreMisconfigured``."""
    scheme = url_scheme(location)
    if scheme is not None and not is_postgres_url(location):
        from skillrt.errors import StoreMisconfigured

        raise StoreMisconfigured(
            f"unknown state store URL scheme {scheme!r}: use postgresql://... for a "
            "shared store, or a folder for SQLite",
            retryable=False,
        )


@dataclass(frozen=True)
class Dialect:
    """What differs between the two databases, as SQL fragments."""

    name: str
    #: Appended to a ``SELECT`` whose rows the transaction will update: PostgreSQL locks
    #: them; SQLite needs nothing (a write transaction holds the whole database).
    for_update: str
    #: The database's clock in Unix seconds: one clock for every host sharing the store.
    now: str


SQLITE = Dialect("sqlite", "", "((julianday('now') - 2440587.5) * 86400.0)")
POSTGRESQL = Dialect(
    "postgresql", " FOR UPDATE", "(EXTRACT(EPOCH FROM clock_timestamp())::double precision)"
)


class Cursor(Protocol):
    """The part of a DB-API cursor skillrt uses. Rows read by index and by column name."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(ABC):
    """A connection taking ``?`` placeholders; driver errors raise ``StoreError``."""

    dialect: ClassVar[Dialect]

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """Run one statement."""

    @abstractmethod
    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Run one statement per parameter row."""


def backend(location: Path | str) -> type[Store]:
    """The store class for ``location``: PostgreSQL for a URL, else SQLite (another
    URL is refused: ``StoreMisconfigured``)."""
    check_location(location)
    if is_postgres_url(location):
        from skillrt.store.postgres import PostgresStore

        return PostgresStore
    from skillrt.store.sqlite import SqliteStore

    return SqliteStore


def open_location(location: Path | str, **options: Any) -> Store:
    """``Store(location, **options)``, typed as the concrete class it returns."""
    return backend(location)(location, **options)


class Store(ABC):
    """A handle on skillrt's state: enable state, stats, events, runs.

    Implementations open connections lazily and migrate the schema on first use; a
    schema newer than this skillrt is refused (``StoreSchemaTooNew``), never written.
    """

    dialect: ClassVar[Dialect]
    #: Route events go through a background writer (a write costs a network round
    #: trip); an embedded store writes them in the request, where it costs microseconds.
    background_writes: ClassVar[bool] = False
    #: Many hosts share the store, so what is kept in files under the state folder of
    #: an embedded store (domain learnings) is kept in the store instead.
    shared: ClassVar[bool] = False
    read_only: bool

    def __new__(cls, location: Path | str = MEMORY, *args: Any, **options: Any) -> Store:
        if cls is Store:
            cls = backend(location)
        return super().__new__(cls)

    @property
    @abstractmethod
    def location(self) -> str:
        """Where the state lives, for messages (a URL never shows its password)."""

    @property
    def unreachable(self) -> bool:
        """Known not to answer now (a server this handle never reached, whose last
        attempt failed moments ago): a caller that may skip the store skips it. An
        embedded store never is."""
        return False

    @property
    def is_memory(self) -> bool:
        """Nothing outlives the process (a second handle would see another database)."""
        return False

    @property
    def local(self) -> Store:
        """This machine's SQLite store for derived caches (parsed skills, vectors).

        For an embedded store that is the store itself.
        """
        return self

    @abstractmethod
    def connection(self) -> Connection:
        """A connection for single statements (each commits on its own)."""

    @abstractmethod
    def transaction(self, *, sync: bool | None = None) -> AbstractContextManager[Connection]:
        """A block that commits all of its statements, or none of them.

        ``sync``: True waits until the commit is on disk (survives power loss); False
        lets the commit return before that (survives a killed process, not an OS
        crash); None keeps the store's default.
        """

    @abstractmethod
    def schema_version(self) -> int:
        """The migration the database is at."""

    @abstractmethod
    def reopen(self, *, busy_timeout_ms: int | None = None, read_only: bool | None = None) -> Store:
        """A second handle, with its own connections, on the same database."""

    @abstractmethod
    def close(self) -> None:
        """Close the connections (the handle reopens lazily when used again)."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
