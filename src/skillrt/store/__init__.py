"""The SQLite state store."""

from skillrt.store.sqlite import Store

__all__ = ["Store"]
