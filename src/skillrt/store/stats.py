"""Per-skill counters (T2) as the store keeps them: :class:`SkillStatsTable`.

How often a skill was routed, selected, run, and succeeded, by qualified skill name.
Route counts are added with the route events that carry them
(:meth:`skillrt.store.routes.RouteLog.write`); executions one at a time.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["SkillStats", "SkillStatsTable"]


@dataclass(frozen=True)
class SkillStats:
    """Counters of one skill. ``routes`` counts the routes where it was a scored candidate."""

    name: str
    routes: int = 0
    selections: int = 0
    executions: int = 0
    successes: int = 0
    failures: int = 0
    fallbacks: int = 0
    latency_ms_total: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    last_routed_at: float | None = None
    last_executed_at: float | None = None

    @property
    def success_rate(self) -> float | None:
        """Successes / executions, or None before the first execution."""
        return self.successes / self.executions if self.executions else None

    @property
    def fallback_rate(self) -> float | None:
        return self.fallbacks / self.executions if self.executions else None

    @property
    def avg_latency_ms(self) -> float | None:
        return self.latency_ms_total / self.executions if self.executions else None

    @property
    def avg_tokens(self) -> float | None:
        return (self.tokens_in + self.tokens_out) / self.executions if self.executions else None


class SkillStatsTable(ABC):
    """Per-skill counters."""

    @abstractmethod
    def read(self, names: Iterable[str] | None = None) -> dict[str, SkillStats]:
        """Counters by qualified name (all skills, or only ``names``); a skill never
        counted is absent. Raises ``StoreError``."""

    @abstractmethod
    def add_execution(
        self,
        name: str,
        *,
        success: bool,
        latency_ms: float,
        tokens_in: int,
        tokens_out: int,
        fallback_used: bool,
        at: float,
    ) -> None:
        """Count one execution of ``name`` (atomically: concurrent writers never lose
        a count). Raises ``StoreError``."""
