"""The ``Runner`` extension point: run an assembled prompt on a model (X1).

Concrete runners (stdin command, OpenAI-compatible HTTP, dry-run) live in
``runners.py``. A runner raises :class:`skillrt.errors.RunnerError` with
``retryable`` set so the fallback state machine can decide what to do.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from skillrt.config import ExecutionConfig


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


@dataclass(frozen=True)
class RunnerOptions:
    """What the caller chose for a runner; anything unset comes from ``execution`` config."""

    runner_cmd: str | None = None
    base_url: str | None = None
    model: str | None = None
    #: An explicit key (the CLI reads it from the variable ``execution.api_key_env`` names).
    api_key: str | None = None
    #: The caller's environment, filtered before a command runner sees it.
    environ: Mapping[str, str] | None = None
    cwd: str | os.PathLike[str] | None = None


class Runner(ABC):
    """Runs one prompt; ``name`` identifies it in events and stats.

    Capabilities are class attributes, so a caller asks the runner instead of comparing
    names: ``dry_run`` runners show the assembled prompt instead of running a model (their
    output is the prompt: it feeds no stats, no sub-skill context and no ``run_skill``
    lines, and the prompts are kept on the result).
    """

    name: str = "runner"
    dry_run: ClassVar[bool] = False

    @classmethod
    def from_options(cls, config: ExecutionConfig, options: RunnerOptions) -> Runner:
        """Build this runner from config and the caller's choices (``build_runner``)."""
        raise NotImplementedError(f"{cls.__name__} cannot be built by name")

    def spec(self) -> dict[str, Any] | None:
        """How to build this runner again on another day (a resumed workflow run), or None
        when that needs what must not be saved (a key) or cannot be known (a Python object)."""
        return None

    @abstractmethod
    def run(self, prompt: str, *, timeout_s: float | None = None) -> RunnerResult:
        """Run ``prompt``; raise ``RunnerError(retryable=...)`` on failure."""
