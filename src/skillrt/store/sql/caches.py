"""Derived caches in SQL: ``routing_fields`` (migration 9), ``embedding_cache``
(migration 2) and ``index_cache`` (migration 1)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from skillrt.store.caches import EmbeddingCache, FieldCache, IndexRow, SkillIndexCache
from skillrt.store.sql.connection import Database

__all__ = ["SqlEmbeddingCache", "SqlFieldCache", "SqlSkillIndexCache"]

#: Keys per ``IN (...)`` lookup (SQLite allows 999 host parameters in old builds).
LOOKUP_CHUNK = 500


def _lookup(store: Database, sql: str, head: Sequence[Any], keys: Sequence[str]) -> list[Any]:
    """Rows of ``sql`` (ending in ``IN``) for ``keys``, a chunk of keys at a time."""
    conn = store.connection()
    out: list[Any] = []
    for start in range(0, len(keys), LOOKUP_CHUNK):
        chunk = keys[start : start + LOOKUP_CHUNK]
        out += conn.execute(f"{sql} ({', '.join('?' * len(chunk))})", (*head, *chunk)).fetchall()
    return out


class SqlFieldCache(FieldCache):
    def __init__(self, store: Database) -> None:
        self.store = store

    def get(self, keys: Sequence[str]) -> dict[str, str]:
        unique = list(dict.fromkeys(keys))
        rows = _lookup(
            self.store, "SELECT key, record FROM routing_fields WHERE key IN", (), unique
        )
        return dict(rows)

    def put(self, rows: Sequence[tuple[str, str]], *, at: float) -> None:
        with self.store.transaction() as conn:
            conn.executemany(
                "INSERT INTO routing_fields(key, record, created_at) VALUES (?, ?, ?) "
                "ON CONFLICT(key) DO UPDATE SET record = excluded.record, "
                "created_at = excluded.created_at",
                [(key, record, at) for key, record in rows],
            )


class SqlEmbeddingCache(EmbeddingCache):
    def __init__(self, store: Database) -> None:
        self.store = store

    def get(self, model_key: str, hashes: Sequence[str]) -> list[tuple[str, int, bytes]]:
        sql = (
            "SELECT text_hash, dim, vector FROM embedding_cache WHERE model_id = ? AND text_hash IN"
        )
        return _lookup(self.store, sql, (model_key,), hashes)  # rows unpack as tuples

    def dims(self, model_key: str, hashes: Sequence[str]) -> list[tuple[str, int]]:
        sql = "SELECT text_hash, dim FROM embedding_cache WHERE model_id = ? AND text_hash IN"
        return _lookup(self.store, sql, (model_key,), hashes)

    def put(self, model_key: str, rows: Sequence[tuple[str, int, bytes]], *, at: float) -> None:
        with self.store.transaction() as conn:
            conn.executemany(
                "INSERT INTO embedding_cache(model_id, text_hash, dim, vector, created_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(model_id, text_hash) DO UPDATE SET "
                "dim = excluded.dim, vector = excluded.vector, created_at = excluded.created_at",
                [(model_key, h, dim, blob, at) for h, dim, blob in rows],
            )


class SqlSkillIndexCache(SkillIndexCache):
    def __init__(self, store: Database) -> None:
        self.store = store

    def rows(self, parser_version: int) -> list[tuple[str, int, int, str]]:
        rows: list[Any] = (
            self.store.connection()
            .execute(
                "SELECT path, mtime_ns, size, record FROM index_cache WHERE parser_version = ?",
                (parser_version,),
            )
            .fetchall()
        )
        return rows  # rows unpack as tuples

    def update(self, rows: Sequence[IndexRow], gone: Sequence[str]) -> None:
        with self.store.transaction() as conn:
            conn.executemany(
                "INSERT INTO index_cache"
                "(path, mtime_ns, size, content_hash, parser_version, record)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET "
                "mtime_ns = excluded.mtime_ns, size = excluded.size, "
                "content_hash = excluded.content_hash, "
                "parser_version = excluded.parser_version, record = excluded.record",
                rows,
            )
            if gone:
                conn.executemany("DELETE FROM index_cache WHERE path = ?", [(p,) for p in gone])
