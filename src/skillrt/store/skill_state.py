"""Persisted enable/disable state of skills (S6, seed 004 §3.4)."""

from __future__ import annotations

import time

from skillrt.store.base import Store


def disabled_names(store: Store) -> frozenset[str]:
    rows = store.connection().execute("SELECT name FROM skill_state WHERE enabled = 0")
    return frozenset(str(r["name"]) for r in rows)


def set_enabled(store: Store, name: str, enabled: bool) -> None:
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO skill_state(name, enabled, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(name) DO UPDATE SET enabled = excluded.enabled, "
            "updated_at = excluded.updated_at",
            (name, 1 if enabled else 0, time.time()),
        )
