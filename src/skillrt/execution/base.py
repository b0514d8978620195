"""The ``Runner`` extension point: run an assembled prompt on a model (X1).

Concrete runners (stdin command, OpenAI-compatible HTTP, dry-run) live in
``runners.py``. A runner raises :class:`skillrt.errors.RunnerError` with
``retryable`` set so the fallback state machine can decide what to do.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RunnerResult:
    """What a successful run returned."""

    output: str
    exit_code: int = 0
    stderr: str = ""
    latency_ms: float = 0.0
    tokens_in: int | None = None
    tokens_out: int | None = None
    #: True when output was cut at the runner's output cap.
    truncated: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)


class Runner(ABC):
    """Runs one prompt; ``name`` identifies it in events and stats."""

    name: str = "runner"

    @abstractmethod
    def run(self, prompt: str, *, timeout_s: float | None = None) -> RunnerResult:
        """Run ``prompt``; raise ``RunnerError(retryable=...)`` on failure."""
