"""The state store: one interface (:class:`Store`), SQLite or PostgreSQL behind it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillrt.store.base import MEMORY, Store, is_postgres_url, open_location

if TYPE_CHECKING:
    from skillrt.config import RuntimeConfig

__all__ = ["MEMORY", "Store", "is_postgres_url", "open_location", "open_store"]


def open_store(config: RuntimeConfig, *, persist: bool = True) -> Store:
    """The store ``config`` names: ``state.url`` (PostgreSQL, with this machine's caches
    in ``<state_dir>/cache.db``), else ``<state_dir>/state.db``; ``persist=False`` gives
    an in-memory SQLite store."""
    if not persist:
        return open_location(MEMORY)
    state = config.state
    if state.url:
        from skillrt.store.postgres import PostgresStore

        return PostgresStore(
            state.url,
            schema=state.schema,
            cache_path=config.cache_db,
            pool_size=state.pool_size,
            retry_s=state.retry_s,
            connect_timeout_s=state.connect_timeout_s,
        )
    return open_location(config.state_db)
