"""The state store's schema, as ordered migrations.

Each area of skillrt owns one migration slot; a fresh database applies them all in
order, an old one applies only those above its ``user_version``. A released migration
is never edited: add a new version instead.
"""

from __future__ import annotations

#: version -> (summary, SQL statements). Kept in ascending order.
MIGRATIONS: dict[int, tuple[str, tuple[str, ...]]] = {
    1: (
        "foundation: enable state and the parsed-skill index cache",
        (
            """CREATE TABLE skill_state (
                name TEXT PRIMARY KEY,
                enabled INTEGER NOT NULL,
                updated_at REAL NOT NULL
            )""",
            """CREATE TABLE index_cache (
                path TEXT PRIMARY KEY,
                mtime_ns INTEGER NOT NULL,
                size INTEGER NOT NULL,
                content_hash TEXT NOT NULL,
                parser_version INTEGER NOT NULL,
                record TEXT NOT NULL
            )""",
        ),
    ),
    2: (
        "routing: embedding vector cache",
        (
            """CREATE TABLE embedding_cache (
                model_id TEXT NOT NULL,
                text_hash TEXT NOT NULL,
                dim INTEGER NOT NULL,
                vector BLOB NOT NULL,
                created_at REAL NOT NULL,
                PRIMARY KEY (model_id, text_hash)
            )""",
        ),
    ),
}


def latest_version() -> int:
    return max(MIGRATIONS)
