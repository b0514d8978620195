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

from abc import abstractmethod
from contextlib import AbstractContextManager
from functools import cache
from typing import TYPE_CHECKING, ClassVar

from skillrt.store.base import Store
from skillrt.store.sql.connection import Connection, Dialect

if TYPE_CHECKING:
    from skillrt.store.caches import EmbeddingCache, FieldCache, SkillIndexCache
    from skillrt.store.executions import ExecutionLog
    from skillrt.store.feedback import FeedbackLog
    from skillrt.store.learnings import LearningsTable
    from skillrt.store.repairs import RepairLog
    from skillrt.store.routes import RouteLog
    from skillrt.store.skill_state import EnableState
    from skillrt.store.sql.caches import SqlEmbeddingCache, SqlFieldCache, SqlSkillIndexCache
    from skillrt.store.sql.executions import SqlExecutionLog
    from skillrt.store.sql.feedback import SqlFeedbackLog
    from skillrt.store.sql.learnings import SqlLearnings
    from skillrt.store.sql.repairs import SqlRepairLog
    from skillrt.store.sql.routes import SqlRouteLog
    from skillrt.store.sql.skill_state import SqlEnableState
    from skillrt.store.sql.stats import SqlSkillStats
    from skillrt.store.sql.workflows import SqlWorkflowRuns
    from skillrt.store.stats import SkillStatsTable
    from skillrt.store.workflows import WorkflowRuns

__all__ = ["SqlStore"]


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
        from skillrt.store.sql.tables import table_counts

        return table_counts(self)

    # -- the domain interfaces: a light view on this store, made per use --------------
    @property
    def routes(self) -> RouteLog:
        return _routes()(self)

    @property
    def stats(self) -> SkillStatsTable:
        return _stats()(self)

    @property
    def feedback(self) -> FeedbackLog:
        return _feedback()(self)

    @property
    def executions(self) -> ExecutionLog:
        return _executions()(self)

    @property
    def repairs(self) -> RepairLog:
        return _repairs()(self)

    @property
    def workflows(self) -> WorkflowRuns:
        return _workflows()(self)

    @property
    def learnings(self) -> LearningsTable:
        return _learnings()(self)

    @property
    def enable_state(self) -> EnableState:
        return _enable_state()(self)

    @property
    def field_cache(self) -> FieldCache:
        return _field_cache()(self)

    @property
    def embedding_cache(self) -> EmbeddingCache:
        return _embedding_cache()(self)

    @property
    def skill_index_cache(self) -> SkillIndexCache:
        return _skill_index_cache()(self)


# Each interface's class, imported on its first use (a command imports only the SQL it
# runs) and then kept: an interface costs one small object per use, and holds the store
# without the store holding it (no cycle keeps a dropped store's connections open).


@cache
def _routes() -> type[SqlRouteLog]:
    from skillrt.store.sql.routes import SqlRouteLog

    return SqlRouteLog


@cache
def _stats() -> type[SqlSkillStats]:
    from skillrt.store.sql.stats import SqlSkillStats

    return SqlSkillStats


@cache
def _feedback() -> type[SqlFeedbackLog]:
    from skillrt.store.sql.feedback import SqlFeedbackLog

    return SqlFeedbackLog


@cache
def _executions() -> type[SqlExecutionLog]:
    from skillrt.store.sql.executions import SqlExecutionLog

    return SqlExecutionLog


@cache
def _repairs() -> type[SqlRepairLog]:
    from skillrt.store.sql.repairs import SqlRepairLog

    return SqlRepairLog


@cache
def _workflows() -> type[SqlWorkflowRuns]:
    from skillrt.store.sql.workflows import SqlWorkflowRuns

    return SqlWorkflowRuns


@cache
def _learnings() -> type[SqlLearnings]:
    from skillrt.store.sql.learnings import SqlLearnings

    return SqlLearnings


@cache
def _enable_state() -> type[SqlEnableState]:
    from skillrt.store.sql.skill_state import SqlEnableState

    return SqlEnableState


@cache
def _field_cache() -> type[SqlFieldCache]:
    from skillrt.store.sql.caches import SqlFieldCache

    return SqlFieldCache


@cache
def _embedding_cache() -> type[SqlEmbeddingCache]:
    from skillrt.store.sql.caches import SqlEmbeddingCache

    return SqlEmbeddingCache


@cache
def _skill_index_cache() -> type[SqlSkillIndexCache]:
    from skillrt.store.sql.caches import SqlSkillIndexCache

    return SqlSkillIndexCache
