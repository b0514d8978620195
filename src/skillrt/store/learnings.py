"""Domain learnings kept in the store (seed 002 step 0, O5): :class:`LearningsTable`.

A shared store keeps each domain's lessons as the very lines a learnings file would
hold, in the order they were learned, one per normalised text (its ``key``); an
embedded store keeps them in ``<learnings_dir>/<domain>.md`` files instead
(:mod:`skillrt.orchestration.learnings`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

__all__ = ["LearningsTable"]


class LearningsTable(ABC):
    """Each domain's lessons, in the order they were learned."""

    @abstractmethod
    def lines(self, domain: str) -> list[str]:
        """The lines of ``domain``'s lessons, oldest first."""

    @abstractmethod
    def add(
        self, domain: str, items: Sequence[tuple[str, str, str]], *, at: float
    ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Add ``(key, line, text)`` lessons in one transaction; ``(lines added, texts
        already known)``. A lesson whose key is known (or empty) is not added again,
        also when two hosts add it at once."""
