"""A store that speaks SQL: connections, transactions, and every domain interface in SQL.

A backend built on a SQL database subclasses :class:`SqlStore` and gives three things:
:meth:`~SqlStore.connection` (single statements, each committing on its own),
:meth:`~SqlStore.transaction` (all or nothing) and its :class:`Dialect`. Every domain
interface (:attr:`~SqlStore.routes`, :attr:`~SqlStore.workflows`, ...) then comes from
the modules of :mod:`skillrt.store.sql`, written once for both databases. Driver
errors arrive as :class:`~skillrt.errors.StoreError` subclasses, so no caller imports a
driver.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from skillrt.errors import StoreError
from skillrt.store.base import Store

if TYPE_CHECKING:
    from skillrt.store.caches import EmbeddingCache, FieldCache, SkillIndexCache
    from skillrt.store.executions import ExecutionLog
    from skillrt.store.feedback import FeedbackLog
    from skillrt.store.learnings import LearningsTable
    from skillrt.store.repairs import RepairLog
    from skillrt.store.routes import RouteLog
    from skillrt.store.skill_state import EnableState
    from skillrt.store.stats import SkillStatsTable
    from skillrt.store.workflows import WorkflowRuns

__all__ = ["POSTGRESQL", "SQLITE", "Connection", "Cursor", "Dialect", "SqlStore", "missing_table"]


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


class SqlStore(Store):
    """A :class:`Store` on a SQL database: the domain interfaces in SQL, over
    :meth:`connection` and :meth:`transaction`."""

    dialect: ClassVar[Dialect]

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

    def table_counts(self) -> dict[str, int]:
        from skillrt.store.migrate import table_counts

        return table_counts(self)

    # -- the domain interfaces (each made on first use, then kept) ---------------------
    @cached_property
    def routes(self) -> RouteLog:
        from skillrt.store.sql.routes import SqlRouteLog

        return SqlRouteLog(self)

    @cached_property
    def stats(self) -> SkillStatsTable:
        from skillrt.store.sql.stats import SqlSkillStats

        return SqlSkillStats(self)

    @cached_property
    def feedback(self) -> FeedbackLog:
        from skillrt.store.sql.feedback import SqlFeedbackLog

        return SqlFeedbackLog(self)

    @cached_property
    def executions(self) -> ExecutionLog:
        from skillrt.store.sql.executions import SqlExecutionLog

        return SqlExecutionLog(self)

    @cached_property
    def repairs(self) -> RepairLog:
        from skillrt.store.sql.repairs import SqlRepairLog

        return SqlRepairLog(self)

    @cached_property
    def workflows(self) -> WorkflowRuns:
        from skillrt.store.sql.workflows import SqlWorkflowRuns

        return SqlWorkflowRuns(self)

    @cached_property
    def learnings(self) -> LearningsTable:
        from skillrt.store.sql.learnings import SqlLearnings

        return SqlLearnings(self)

    @cached_property
    def enable_state(self) -> EnableState:
        from skillrt.store.sql.skill_state import SqlEnableState

        return SqlEnableState(self)

    @cached_property
    def field_cache(self) -> FieldCache:
        from skillrt.store.sql.caches import SqlFieldCache

        return SqlFieldCache(self)

    @cached_property
    def embedding_cache(self) -> EmbeddingCache:
        from skillrt.store.sql.caches import SqlEmbeddingCache

        return SqlEmbeddingCache(self)

    @cached_property
    def skill_index_cache(self) -> SkillIndexCache:
        from skillrt.store.sql.caches import SqlSkillIndexCache

        return SqlSkillIndexCache(self)
