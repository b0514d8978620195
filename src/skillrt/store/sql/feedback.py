"""Route feedback in SQL: the ``route_feedback`` table (migration 6)."""

from __future__ import annotations

import json

from skillrt.store.feedback import Feedback, FeedbackLog
from skillrt.store.sql.connection import Database

__all__ = ["SqlFeedbackLog"]


class SqlFeedbackLog(FeedbackLog):
    def __init__(self, store: Database) -> None:
        self.store = store

    def put(self, feedback: Feedback) -> None:
        fb = feedback
        with self.store.transaction(sync=False) as conn:
            conn.execute(
                "INSERT INTO route_feedback(route_id, correct, source, note, created_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(route_id) DO UPDATE SET "
                "correct = excluded.correct, source = excluded.source, note = excluded.note, "
                "created_at = excluded.created_at",
                (fb.route_id, json.dumps(list(fb.correct)), fb.source, fb.note, fb.created_at),
            )

    def load(self, since: float | None = None) -> dict[str, Feedback]:
        sql = "SELECT route_id, correct, source, note, created_at FROM route_feedback"
        params: tuple[float, ...] = ()
        if since is not None:
            sql += " WHERE created_at >= ?"
            params = (since,)
        out: dict[str, Feedback] = {}
        for row in self.store.connection().execute(sql, params):
            try:
                correct = tuple(str(n) for n in json.loads(row["correct"]))
            except (ValueError, TypeError):
                continue  # a hand-edited row must not break stats
            out[row["route_id"]] = Feedback(
                row["route_id"], correct, row["source"], row["note"], float(row["created_at"])
            )
        return out
