"""The state store: one handle (:class:`Store`) with domain interfaces, SQLite or
PostgreSQL behind it (chosen by :mod:`skillrt.store.backends`).

The names below are imported on first use: checking a ``--state`` URL (the prompt
hook) loads :mod:`skillrt.store.backends` alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.store.backends import open_location, open_store
    from skillrt.store.base import MEMORY, Store

__all__ = ["MEMORY", "Store", "open_location", "open_store"]


def __getattr__(name: str) -> Any:
    if name in ("MEMORY", "Store"):
        from skillrt.store import base

        value = getattr(base, name)
    elif name in ("open_location", "open_store"):
        from skillrt.store import backends

        value = getattr(backends, name)
    else:
        raise AttributeError(f"module 'skillrt.store' has no attribute {name!r}")
    globals()[name] = value
    return value
