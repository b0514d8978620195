"""What a repair records (seed 001 §12), as the store keeps it: :class:`RepairLog`.

One record per repair attempt, one per patch it applied (whose backups live in files
under ``<state>/repairs/<patch_id>/``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["PatchRecord", "RepairAttempt", "RepairLog"]


@dataclass(frozen=True)
class RepairAttempt:
    """The structured record of one attempt (001 §12)."""

    attempt_id: str
    skill: str
    attempt: int
    outcome: str
    error_signature: str
    root_cause: str
    expected_effect: str
    patched_files: tuple[str, ...]
    patch_id: str | None = None
    stop_reason: str | None = None


@dataclass(frozen=True)
class PatchRecord:
    """An applied (or reverted) patch as stored."""

    patch_id: str
    attempt_id: str | None
    skill: str
    skill_dir: str
    backup_dir: str
    files: tuple[dict[str, Any], ...]
    status: str
    created_at: float
    reverted_at: float | None = None


class RepairLog(ABC):
    """Repair attempts and patches."""

    @abstractmethod
    def add_attempt(
        self,
        attempt: RepairAttempt,
        *,
        run_id: str | None,
        eligibility: Mapping[str, Any],
        created_at: float,
    ) -> None:
        """Store one attempt with the eligibility vote it was made under."""

    @abstractmethod
    def attempts(self, limit: int = 100) -> list[dict[str, Any]]:
        """Attempts, newest first, as field -> value (``patched_files`` a list,
        ``eligibility`` a dict) with their patch's status (``patch_status``)."""

    @abstractmethod
    def add_patch(self, record: PatchRecord) -> None:
        """Store a patch being applied."""

    @abstractmethod
    def set_patch_status(self, patch_id: str, status: str, *, at: float) -> None:
        """Change a patch's status; ``reverted`` also records ``at`` as its revert time."""

    @abstractmethod
    def patches(self) -> list[PatchRecord]:
        """Every patch, newest first."""

    @abstractmethod
    def find_patch(self, ident: str) -> PatchRecord | None:
        """The newest patch whose id, or whose repair attempt's id, is ``ident``."""
