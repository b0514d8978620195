"""The state store: one handle (:class:`Store`) on skillrt's state, whatever keeps it.

A store offers small domain interfaces, one per kind of state, named after what is
done with it, never after SQL (as openai-agents' ``Session``)::

    store.routes             RouteLog         route events (T1) and their outcome
    store.stats              SkillStatsTable  per-skill counters (T2)
    store.feedback           FeedbackLog      the right answers recorded for routes
    store.executions         ExecutionLog     runner calls and state-machine moves
    store.repairs            RepairLog        repair attempts and their patches
    store.workflows          WorkflowRuns     workflow runs, steps, phases, transitions
    store.learnings          LearningsTable   domain learnings of a shared store
    store.enable_state       EnableState      which skills are disabled
    store.field_cache        FieldCache       \\
    store.embedding_cache    EmbeddingCache    } this machine's derived caches
    store.skill_index_cache  SkillIndexCache  /   (used on :attr:`Store.local`)

Each interface is an ABC in its own module of this package (``store/routes.py``, ...)
with the records it takes and returns. The SQLite and PostgreSQL backends implement
all of them with one set of SQL (:mod:`skillrt.store.sql`); no module outside
``store/`` holds SQL. Which backend a location names is decided in one place, the
scheme map of :mod:`skillrt.store.backends`: ``Store(location)`` and
:func:`~skillrt.store.backends.open_location` ask it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from skillrt.store.patience import patience, patience_deadline, store_wait

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

__all__ = [
    "MEMORY",
    "StateSettings",
    "Store",
    "patience",
    "patience_deadline",
    "store_wait",
]

MEMORY = ":memory:"


class StateSettings(Protocol):
    """What a server store is opened with (``state:`` in skillrt.yaml): a file store
    needs none of it."""

    @property
    def schema(self) -> str | None: ...

    @property
    def pool_size(self) -> int: ...

    @property
    def retry_s(self) -> float: ...

    @property
    def connect_timeout_s(self) -> float: ...


class Store(ABC):
    """A handle on skillrt's state: enable state, stats, events, runs, caches.

    Implementations open connections lazily and migrate the schema on first use; a
    schema newer than this skillrt is refused (``StoreSchemaTooNew``), never written.
    ``Store(location, **options)`` opens the backend the location names.
    """

    #: The backend's name, as ``skillrt state info`` shows it.
    backend: ClassVar[str]
    #: Route events go through a background writer (a write costs a network round
    #: trip); an embedded store writes them in the request, where it costs microseconds.
    background_writes: ClassVar[bool] = False
    #: Many hosts share the store, so what is kept in files under the state folder of
    #: an embedded store (domain learnings) is kept in the store instead.
    shared: ClassVar[bool] = False
    read_only: bool

    def __new__(cls, location: Path | str = MEMORY, *args: Any, **options: Any) -> Store:
        if cls is Store:
            from skillrt.store.backends import backend_for

            cls = backend_for(location)
        return super().__new__(cls)

    @classmethod
    @abstractmethod
    def from_settings(
        cls, location: Path | str, settings: StateSettings, *, cache_path: Path | None
    ) -> Store:
        """The store at ``location`` opened as ``settings`` say (a server's schema, pool
        and timeouts); ``cache_path``: where a server store keeps this machine's caches
        (:attr:`local`)."""

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
    def file(self) -> Path | None:
        """The file on this machine that holds this store's state (None: in memory, or
        on a server); files beside it (the outbox, saved indexes) belong to it."""
        return None

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
    def schema_version(self) -> int:
        """The migration the database is at."""

    @abstractmethod
    def table_counts(self) -> dict[str, int]:
        """Rows of each kind of shared state (``skillrt state info``)."""

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

    # -- the domain interfaces -----------------------------------------------------------
    @property
    @abstractmethod
    def routes(self) -> RouteLog:
        """Route events (T1) and their outcome."""

    @property
    @abstractmethod
    def stats(self) -> SkillStatsTable:
        """Per-skill counters (T2)."""

    @property
    @abstractmethod
    def feedback(self) -> FeedbackLog:
        """The right answers recorded for routes."""

    @property
    @abstractmethod
    def executions(self) -> ExecutionLog:
        """Runner calls and the moves of the fallback and repair state machines."""

    @property
    @abstractmethod
    def repairs(self) -> RepairLog:
        """Repair attempts and the patches they applied."""

    @property
    @abstractmethod
    def workflows(self) -> WorkflowRuns:
        """Workflow runs with their steps, phases and transitions."""

    @property
    @abstractmethod
    def learnings(self) -> LearningsTable:
        """Domain learnings kept in the store (a shared store's)."""

    @property
    @abstractmethod
    def enable_state(self) -> EnableState:
        """Which skills are disabled."""

    @property
    @abstractmethod
    def field_cache(self) -> FieldCache:
        """Each skill's routing fields, by content key."""

    @property
    @abstractmethod
    def embedding_cache(self) -> EmbeddingCache:
        """Vectors (and other per-text arrays) by model and text hash."""

    @property
    @abstractmethod
    def skill_index_cache(self) -> SkillIndexCache:
        """Parsed SKILL.md records by file path."""
