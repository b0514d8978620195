"""Recorded right answers for routes, as the store keeps them: :class:`FeedbackLog`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

__all__ = ["Feedback", "FeedbackLog"]


@dataclass(frozen=True)
class Feedback:
    """The right answer for one route: skills (qualified names), or none."""

    route_id: str
    #: The skills that should have been selected; empty means "no skill".
    correct: tuple[str, ...]
    source: str = "cli"
    note: str | None = None
    created_at: float = 0.0

    @property
    def none(self) -> bool:
        return not self.correct


class FeedbackLog(ABC):
    """One answer per route; the latest recorded wins."""

    @abstractmethod
    def put(self, feedback: Feedback) -> None:
        """Store ``feedback``, replacing an earlier answer for the same route."""

    @abstractmethod
    def load(self, since: float | None = None) -> dict[str, Feedback]:
        """Every answer by route id (only those recorded at or after ``since``); an
        answer that cannot be read back (a hand-edited row) is left out."""
