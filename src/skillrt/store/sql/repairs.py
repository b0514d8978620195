"""Repairs in SQL: the ``repair_attempts`` and ``patches`` tables (migration 4)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from skillrt.store.repairs import PatchRecord, RepairAttempt, RepairLog
from skillrt.store.sql.connection import Database

__all__ = ["SqlRepairLog"]


def _patch(row: Any) -> PatchRecord:
    return PatchRecord(
        patch_id=row["patch_id"],
        attempt_id=row["attempt_id"],
        skill=row["skill"],
        skill_dir=row["skill_dir"],
        backup_dir=row["backup_dir"],
        files=tuple(json.loads(row["files"])),
        status=row["status"],
        created_at=row["created_at"],
        reverted_at=row["reverted_at"],
    )


class SqlRepairLog(RepairLog):
    def __init__(self, store: Database) -> None:
        self.store = store

    def add_attempt(
        self,
        attempt: RepairAttempt,
        *,
        run_id: str | None,
        eligibility: Mapping[str, Any],
        created_at: float,
    ) -> None:
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO repair_attempts(attempt_id, run_id, skill, attempt, outcome, "
                "error_signature, root_cause, expected_effect, patched_files, eligibility, "
                "stop_reason, patch_id, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    attempt.attempt_id,
                    run_id,
                    attempt.skill,
                    attempt.attempt,
                    attempt.outcome,
                    attempt.error_signature,
                    attempt.root_cause,
                    attempt.expected_effect,
                    json.dumps(list(attempt.patched_files)),
                    json.dumps(dict(eligibility)),
                    attempt.stop_reason,
                    attempt.patch_id,
                    created_at,
                ),
            )

    def attempts(self, limit: int = 100) -> list[dict[str, Any]]:
        rows = (
            self.store.connection()
            .execute(
                "SELECT a.*, p.status AS patch_status FROM repair_attempts a "
                "LEFT JOIN patches p ON p.patch_id = a.patch_id "
                "ORDER BY a.created_at DESC LIMIT ?",
                (limit,),
            )
            .fetchall()
        )
        out = []
        for r in rows:
            d = dict(r)
            d["patched_files"] = json.loads(d["patched_files"])
            d["eligibility"] = json.loads(d["eligibility"])
            out.append(d)
        return out

    def add_patch(self, record: PatchRecord) -> None:
        r = record
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT INTO patches(patch_id, attempt_id, skill, skill_dir, backup_dir, files, "
                "status, created_at) VALUES (?,?,?,?,?,?,?,?)",
                (
                    r.patch_id,
                    r.attempt_id,
                    r.skill,
                    r.skill_dir,
                    r.backup_dir,
                    json.dumps(list(r.files)),
                    r.status,
                    r.created_at,
                ),
            )

    def set_patch_status(self, patch_id: str, status: str, *, at: float) -> None:
        with self.store.transaction() as conn:
            conn.execute(
                "UPDATE patches SET status = ?, reverted_at = CASE WHEN ? = 'reverted' "
                "THEN ? ELSE reverted_at END WHERE patch_id = ?",
                (status, status, at, patch_id),
            )

    def patches(self) -> list[PatchRecord]:
        rows = self.store.connection().execute("SELECT * FROM patches ORDER BY created_at DESC")
        return [_patch(r) for r in rows.fetchall()]

    def find_patch(self, ident: str) -> PatchRecord | None:
        row = (
            self.store.connection()
            .execute(
                "SELECT * FROM patches WHERE patch_id = ? OR attempt_id = ? "
                "ORDER BY created_at DESC LIMIT 1",
                (ident, ident),
            )
            .fetchone()
        )
        return None if row is None else _patch(row)
