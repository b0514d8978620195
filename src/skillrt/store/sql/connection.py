r"""What the SQL of :mod:`skillrt.store.sql` runs on: a :class:`Database` of
:class:`Connection`\ s taking ``?`` placeholders, and the :class:`Dialect` fragments
where SQLite and PostgreSQL differ."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from skillrt.errors import StoreError

__all__ = [
    "POSTGRESQL",
    "SQLITE",
    "Connection",
    "Cursor",
    "Database",
    "Dialect",
    "missing_table",
]


@dataclass(frozen=True)
class Dialect:
    """What differs between the two databases, as SQL fragments."""

    name: str
    #: Appended to a ``SELECT`` whose rows the transaction will update: PostgreSQL locks
    #: them; SQLite needs nothing (a write transaction holds the whole database).
    for_update: str
    #: The database's clock in Unix seconds: one clock for every host sharing the store.
    now: str
    #: Run after rows were copied in with their own keys (``state migrate``): moves the
    #: sequence of ``{table}``'s identity ``{column}`` past them ('': the database does).
    move_identity: str = ""


SQLITE = Dialect("sqlite", "", "((julianday('now') - 2440587.5) * 86400.0)")
POSTGRESQL = Dialect(
    "postgresql",
    " FOR UPDATE",
    "(EXTRACT(EPOCH FROM clock_timestamp())::double precision)",
    "SELECT setval(pg_get_serial_sequence('{table}', '{column}'), "
    "COALESCE((SELECT MAX({column}) FROM {table}), 0) + 1, false)",
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


def missing_table(exc: StoreError) -> bool:
    """The error says a table does not exist (SQLite's or PostgreSQL's words): a store
    of an older schema, opened read-only, has nothing of that kind."""
    text = str(exc)
    return "no such table" in text or "does not exist" in text


class Database(Protocol):
    """A SQL store, as the domain interfaces' SQL uses it."""

    def connection(self) -> Connection:
        """A connection for single statements (each commits on its own)."""
        ...

    def transaction(self, *, sync: bool | None = None) -> AbstractContextManager[Connection]:
        """A block that commits all of its statements, or none of them."""
        ...
