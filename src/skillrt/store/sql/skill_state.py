"""Enable state in SQL: the ``skill_state`` table (migration 1)."""

from __future__ import annotations

from skillrt.store.skill_state import EnableState
from skillrt.store.sql.connection import Database

__all__ = ["SqlEnableState"]


class SqlEnableState(EnableState):
    def __init__(self, store: Database) -> None:
        self.store = store

    def disabled(self) -> frozenset[str]:
        rows = self.store.connection().execute("SELECT name FROM skill_state WHERE enabled = 0")
        return frozenset(str(r["name"]) for r in rows)

    def set(self, name: str, enabled: bool, *, at: float) -> None:
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO skill_state(name, enabled, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT(name) DO UPDATE SET enabled = excluded.enabled, "
                "updated_at = excluded.updated_at",
                (name, 1 if enabled else 0, at),
            )

    def token(self) -> str:
        row = (
            self.store.connection()
            .execute(
                "SELECT COUNT(*), COALESCE(MAX(updated_at), 0), COALESCE(SUM(enabled), 0) "
                "FROM skill_state"
            )
            .fetchone()
        )
        return f"{row[0]}:{row[1]}:{row[2]}"
