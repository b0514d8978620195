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


class Runner(ABC):
    """Runs one prompt; ``name`` identifies it in events and stats.

    Capabilities are attributes, so a caller asks the runner instead of comparing
    names:

    * ``dry_run``: the runner shows the assembled prompt instead of running a model (its
      output is the prompt: it feeds no stats, no sub-skill context and no ``run_skill``
      lines, and the prompts are kept on the result);
    * ``writes_files``: the runner's agent writes files itself (an agentic CLI). False:
      the runner returns text (a model's answer) and whoever asked for a file writes the
      answer to it (a workflow phase's memory file, ``orchestration``).

    ``model`` names the model the runner calls, when it knows (recorded per phase).
    """

    name: str = "runner"
    dry_run: ClassVar[bool] = False
    writes_files: bool = False
    model: str | None = None
    #: The runner settings this kind is built with, saved in :meth:`spec` (never a
    #: secret): the :class:`~skillrt.runner_settings.RunnerSettings` fields that name this kind.
    settings: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "settings" not in cls.__dict__:
            from skillrt.execution.options import runner_settings

            cls.settings = runner_settings(cls.name)

    @classmethod
    def from_config(
        cls,
        execution: ExecutionConfig,
        *,
        environ: Mapping[str, str],
        cwd: str | os.PathLike[str] | None = None,
    ) -> Runner:
        """Build this runner from ``execution`` (the config with the caller's
        :class:`~skillrt.execution.options.RunnerOptions` applied); ``environ`` is the
        caller's environment (filtered before a command sees it; keys are read from it)."""
        raise NotImplementedError(f"{cls.__name__} cannot be built by name")

    def spec(self) -> dict[str, Any] | None:
        """How to build this runner again on another day (a resumed workflow run):
        ``{"kind": name, <settings>...}``, or None when that cannot be known (a Python
        object). Secrets are never in it: ``env`` lists the variables a rebuild must
        find set again."""
        return None

    def describe(self) -> dict[str, Any]:
        """What ran (recorded per workflow phase): the spec, else the name; plus the model."""
        out = dict(self.spec() or {"kind": "python", "name": self.name})
        if self.model and "model" not in out:
            out["model"] = self.model
        return out

    @abstractmethod
    def run(self, prompt: str, *, timeout_s: float | None = None) -> RunnerResult:
        """Run ``prompt``; raise ``RunnerError(retryable=...)`` on failure."""
