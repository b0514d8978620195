"""The runner flags every command that runs a model shares, built from
:class:`~skillrt.execution.options.RunnerOptions` (one flag per field, named by its
metadata), plus ``--dry-run``.

``run``, ``dispatch``, ``run-skill``, ``orchestrate``, ``workflow start|resume`` and
``mcp`` take them alike; each overrides the ``execution`` key of the same name, and the
runner is built by the one builder (``SkillRuntime.build_runner``), so a flag, a config
key and their errors are the same everywhere.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.execution.options import RunnerOptions

__all__ = ["add_runner_flags", "runner_flags_given", "runner_options"]


def add_runner_flags(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, *, dry_run: bool = True
) -> None:
    """Add the runner flags (and ``--dry-run`` unless ``dry_run=False``) to ``parser``."""
    from skillrt.execution.options import RUNNER_NAMES, RunnerOptions

    for f in dataclasses.fields(RunnerOptions):
        meta = f.metadata
        help = str(meta["help"]).format(runner_names=", ".join(RUNNER_NAMES))
        parser.add_argument(meta["flag"], dest=f.name, default=None, help=help, **meta["parser"])
    if dry_run:
        parser.add_argument(
            "--dry-run", action="store_true", help="print the assembled prompts; run no model"
        )


def runner_options(args: argparse.Namespace) -> RunnerOptions:
    """The options the flags chose (``--dry-run`` is the dry-run runner)."""
    from skillrt.execution.options import RunnerOptions

    values: dict[str, Any] = {
        f.name: getattr(args, f.name, None) for f in dataclasses.fields(RunnerOptions)
    }
    if getattr(args, "dry_run", False):
        values["runner"] = "dry-run"
    return RunnerOptions(**values)


def runner_flags_given(args: argparse.Namespace) -> list[str]:
    """The runner flags given on the command line (their flag names)."""
    from skillrt.execution.options import RunnerOptions

    given = [
        str(f.metadata["flag"])
        for f in dataclasses.fields(RunnerOptions)
        if getattr(args, f.name, None) is not None
    ]
    if getattr(args, "dry_run", False):
        given.append("--dry-run")
    return given
