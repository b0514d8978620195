"""The runner settings, declared once: :class:`RunnerSettings`.

They are the runner keys of ``execution:`` in skillrt.yaml
(:class:`~skillrt.config.ExecutionConfig` inherits them), the runner flags of every
command that runs a model (:class:`~skillrt.execution.options.RunnerOptions` is made
from them), and what each runner kind is built with and saves to be rebuilt. The
module imports only the standard library, below the config: building the command
line's parser reads it without importing the config.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["RunnerSettings"]


def _runner_setting(
    default: Any,
    flag: str,
    help: str,
    *,
    kinds: tuple[str, ...] = (),
    selects: str | None = None,
    **parser: Any,
) -> Any:
    """A field of :class:`RunnerSettings`: its default, its flag and help (``parser``:
    what else ``argparse`` takes), the runner ``kinds`` that are built with it (saved in
    their :meth:`~skillrt.execution.base.Runner.spec`), and the kind it ``selects`` when
    given without ``--runner``."""
    meta = {"flag": flag, "help": help, "kinds": kinds, "parser": parser}
    if selects is not None:
        meta["selects"] = selects
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class RunnerSettings:
    """The runner and its settings, each declared once, here: a key of ``execution:``
    in skillrt.yaml, a flag of every command that runs a model
    (:class:`~skillrt.execution.options.RunnerOptions` is made from these fields: each
    one None for "not given"), and what the runner kinds named by its ``kinds`` are
    built with and save to be rebuilt (:attr:`Runner.settings
    <skillrt.execution.base.Runner.settings>`). A new setting is one field here, read
    by its runner's ``from_config``."""

    runner: str = _runner_setting(
        "dry-run",
        "--runner",
        "runner kind: {runner_names} (default: execution.runner; --runner-cmd alone means "
        "command, --base-url alone openai)",
        metavar="KIND",
    )
    runner_cmd: str | None = _runner_setting(
        None,
        "--runner-cmd",
        "shell command that reads the prompt on stdin and prints the answer",
        kinds=("command",),
        selects="command",
        metavar="CMD",
    )
    #: The command's agent writes files itself (an agentic CLI): a workflow phase asks it
    #: to write its memory file. False: the command returns text, which skillrt writes.
    writes_files: bool = _runner_setting(
        False,
        "--writes-files",
        "the command's agent writes files itself (a workflow phase asks it to write its "
        "memory file; by default the command's answer is written for it)",
        kinds=("command",),
        action="store_const",
        const=True,
    )
    base_url: str | None = _runner_setting(
        None,
        "--base-url",
        "OpenAI-compatible endpoint (…/v1) for --runner openai",
        kinds=("openai",),
        selects="openai",
        metavar="URL",
    )
    model: str | None = _runner_setting(
        None, "--model", "model name for --runner openai", kinds=("openai",), metavar="NAME"
    )
    #: The environment variable holding the OpenAI-compatible endpoint's API key (read
    #: when the runner is built, never stored).
    api_key_env: str = _runner_setting(
        "OPENAI_API_KEY",
        "--api-key-env",
        "environment variable holding the endpoint's API key (default: "
        "execution.api_key_env, OPENAI_API_KEY)",
        kinds=("openai",),
        metavar="VAR",
    )
    timeout_s: float = _runner_setting(
        300.0, "--timeout", "runner timeout in seconds", metavar="S", type=float
    )
