"""The state store: one handle (:class:`Store`) with domain interfaces, SQLite or
PostgreSQL behind it (chosen by :mod:`skillrt.store.backends`).

The names below are imported on first use: checking a ``--state`` URL (the prompt
hook) loads :mod:`skillrt.store.backends` alone.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.store.backends import open_location, open_store
    from skillrt.store.base import MEMORY, Store

__all__ = ["MEMORY", "Store", "open_location", "open_store"]

_EXPORTS = {
    "MEMORY": "skillrt.store.base",
    "Store": "skillrt.store.base",
    "open_location": "skillrt.store.backends",
    "open_store": "skillrt.store.backends",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skillrt.store' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
