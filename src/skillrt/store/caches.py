"""Derived caches, as the store keeps them: what this machine computed from skill files.

Three small interfaces, each a lookup by content key: a skill's routing fields
(:class:`FieldCache`), vectors and other per-text arrays (:class:`EmbeddingCache`), and
parsed SKILL.md records (:class:`SkillIndexCache`). Their callers keep them on the
store's :attr:`~skillrt.store.base.Store.local` handle (paths and mtimes mean nothing
on another host) and treat them as an optimisation: a ``StoreError`` costs the cache,
never the result.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

__all__ = ["EmbeddingCache", "FieldCache", "IndexRow", "SkillIndexCache"]

#: ``(path, mtime_ns, size, content_hash, parser_version, record)`` of one SKILL.md.
IndexRow = tuple[str, int, int, str, int, str]


class FieldCache(ABC):
    """Each skill's routing fields (JSON text) by a key of its identity and file stat."""

    @abstractmethod
    def get(self, keys: Sequence[str]) -> dict[str, str]:
        """The records of those of ``keys`` that are cached."""

    @abstractmethod
    def put(self, rows: Sequence[tuple[str, str]], *, at: float) -> None:
        """Cache ``(key, record)`` rows (replacing a row of the same key)."""


class EmbeddingCache(ABC):
    """Arrays (the bytes of float32 vectors) by ``(model key, text hash)``, with the
    width they were made with."""

    @abstractmethod
    def get(self, model_key: str, hashes: Sequence[str]) -> list[tuple[str, int, bytes]]:
        """``(text_hash, dim, blob)`` of those of ``hashes`` that are cached."""

    @abstractmethod
    def dims(self, model_key: str, hashes: Sequence[str]) -> list[tuple[str, int]]:
        """``(text_hash, dim)`` of those of ``hashes`` that are cached (no blob read)."""

    @abstractmethod
    def put(self, model_key: str, rows: Sequence[tuple[str, int, bytes]], *, at: float) -> None:
        """Cache ``(text_hash, dim, blob)`` rows (replacing a row of the same hash)."""


class SkillIndexCache(ABC):
    """Parsed SKILL.md records (JSON text) by the file's path."""

    @abstractmethod
    def rows(self, parser_version: int) -> list[tuple[str, int, int, str]]:
        """``(path, mtime_ns, size, record)`` of every row written by ``parser_version``."""

    @abstractmethod
    def update(self, rows: Sequence[IndexRow], gone: Sequence[str]) -> None:
        """Write ``rows`` (replacing a row of the same path) and drop the rows of the
        paths in ``gone``, in one transaction."""
