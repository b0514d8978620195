"""Domain learnings in SQL: the ``learnings`` table (migration 8).

A lesson is added with ``INSERT ... ON CONFLICT DO NOTHING`` on its key, so two runs
finishing at once on two hosts both land and none is kept twice.
"""

from __future__ import annotations

from collections.abc import Sequence

from skillrt.store.learnings import LearningsTable
from skillrt.store.sql.connection import Database

__all__ = ["SqlLearnings"]


class SqlLearnings(LearningsTable):
    def __init__(self, store: Database) -> None:
        self.store = store

    def lines(self, domain: str) -> list[str]:
        rows = (
            self.store.connection()
            .execute("SELECT line FROM learnings WHERE domain = ? ORDER BY id", (domain,))
            .fetchall()
        )
        return [str(r[0]) for r in rows]

    def add(
        self, domain: str, items: Sequence[tuple[str, str, str]], *, at: float
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        added: list[str] = []
        duplicates: list[str] = []
        if not items:
            return (), ()
        with self.store.transaction() as conn:
            for key, line, text in items:
                if not key:
                    duplicates.append(text)
                    continue
                rows = conn.execute(
                    "INSERT INTO learnings(domain, key, line, added_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT(domain, key) DO NOTHING RETURNING id",
                    (domain, key, line, at),
                ).fetchall()
                if rows:
                    added.append(line)
                else:
                    duplicates.append(text)
        return tuple(added), tuple(duplicates)
