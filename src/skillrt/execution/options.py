"""How a caller chooses a runner: :class:`RunnerOptions`, one field per ``execution`` key.

Every entry point that runs a model (``run``, ``dispatch``, ``run-skill``,
``orchestrate``, ``workflow start|resume``, the MCP server's ``run_skill``) takes the
same options: each field overrides the ``execution`` config key of the same name, and
each field's metadata is its command-line flag (``skillrt.cli.runner_flags`` builds the
flags from them). So a runner's new setting is one field here and one key in
:class:`~skillrt.config.ExecutionConfig` (a test checks they match), and
:func:`skillrt.execution.runners.build_runner` turns the merged config into a runner.

This module imports nothing heavy: the CLI reads it to build its parser.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.config import ExecutionConfig

__all__ = ["RUNNER_NAMES", "SELECTED_BY", "RunnerOptions"]

#: The runner kinds (``skillrt.execution.runners.RUNNERS``; a test keeps them equal).
RUNNER_NAMES = ("command", "openai", "dry-run")
#: An option that, given without ``runner``, chooses its runner kind.
SELECTED_BY = {"runner_cmd": "command", "base_url": "openai"}


def _flag(flag: str, help: str, **extra: Any) -> Any:
    return field(default=None, metadata={"flag": flag, "help": help, **extra})


@dataclass(frozen=True)
class RunnerOptions:
    """A caller's runner choice; None leaves the config's value.

    Secrets are never options: the OpenAI-compatible runner reads its key from the
    environment variable ``api_key_env`` names, when it is built.
    """

    runner: str | None = _flag(
        "--runner",
        f"runner kind: {', '.join(RUNNER_NAMES)} (default: execution.runner; --runner-cmd "
        "alone means command, --base-url alone openai)",
        metavar="KIND",
    )
    runner_cmd: str | None = _flag(
        "--runner-cmd",
        "shell command that reads the prompt on stdin and prints the answer",
        metavar="CMD",
    )
    writes_files: bool | None = _flag(
        "--writes-files",
        "the command's agent writes files itself (a workflow phase asks it to write its "
        "memory file; by default the command's answer is written for it)",
        action="store_const",
        const=True,
    )
    base_url: str | None = _flag(
        "--base-url", "OpenAI-compatible endpoint (…/v1) for --runner openai", metavar="URL"
    )
    model: str | None = _flag("--model", "model name for --runner openai", metavar="NAME")
    api_key_env: str | None = _flag(
        "--api-key-env",
        "environment variable holding the endpoint's API key (default: "
        "execution.api_key_env, OPENAI_API_KEY)",
        metavar="VAR",
    )
    timeout_s: float | None = _flag(
        "--timeout", "runner timeout in seconds", metavar="S", type=float
    )

    def given(self) -> dict[str, Any]:
        """The options that were set."""
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if getattr(self, f.name) is not None
        }

    def kind(self) -> str | None:
        """The runner kind these options choose by themselves (None: the config's).
        Options of two kinds without ``runner`` (``--runner-cmd`` and ``--base-url``)
        are a :class:`~skillrt.errors.UsageError`: which one was meant is not known."""
        if self.runner is not None:
            return self.runner
        chosen = {key: kind for key, kind in SELECTED_BY.items() if getattr(self, key) is not None}
        if len(set(chosen.values())) > 1:
            from skillrt.errors import UsageError

            flags = [f"--{key.replace('_', '-')}" for key in chosen]
            raise UsageError(
                f"{' and '.join(flags)} choose different runners "
                f"({', '.join(chosen.values())}): say which with --runner",
                arguments=flags,
            )
        return next(iter(chosen.values()), None)

    def over(self, base: RunnerOptions) -> RunnerOptions:
        """These options over ``base`` (a resumed run's saved runner): each one given
        replaces base's; options that choose another kind replace base altogether."""
        kind = self.kind()
        if kind is not None and base.runner is not None and kind != base.runner:
            return self
        return RunnerOptions(**{**base.given(), **self.given()})

    def apply(self, execution: ExecutionConfig) -> ExecutionConfig:
        """``execution`` with these options in it; without ``runner``, an option that
        belongs to one kind (:data:`SELECTED_BY`) chooses that kind."""
        changes = self.given()
        kind = self.kind()
        if kind is not None:
            changes["runner"] = kind
        return dataclasses.replace(execution, **changes) if changes else execution
