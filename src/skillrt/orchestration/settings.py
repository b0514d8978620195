"""What a workflow engine is built with: its knobs (:class:`EngineSettings`, resolved
from ``OrchestrationConfig`` by the runtime) and how it rebuilds a run's saved runner
(:data:`RunnerFactory`). The engine (:mod:`skillrt.orchestration.protocol`) and its
phase steps (:mod:`skillrt.orchestration.phases`) both read them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillrt.execution.base import Runner
from skillrt.orchestration.learnings import LearningsBook

__all__ = ["EngineSettings", "RunnerFactory"]

#: Builds a runner from the spec a run saved (``{"kind": "command", "runner_cmd": ...}``).
RunnerFactory = Callable[[Mapping[str, Any]], Runner]


@dataclass(frozen=True)
class EngineSettings:
    """The engine's knobs, resolved from ``OrchestrationConfig`` by the runtime."""

    memory_dir: Path
    learnings_dir: Path
    default_timeout_s: float | None = None
    max_memory_file_bytes: int = 1_000_000
    max_context_file_chars: int = 40_000
    max_learnings_chars: int = 12_000
    merge_learnings: bool = True
    #: Where domain learnings are kept; None: ``<run's learnings_dir>/<domain>.md``.
    learnings: LearningsBook | None = None
    #: Seconds a resume waits for a live earlier agent that writes files to finish.
    orphan_wait_s: float = 10.0
    #: Seconds between SIGTERM and SIGKILL when an earlier agent is ended.
    kill_grace_s: float = 1.0
