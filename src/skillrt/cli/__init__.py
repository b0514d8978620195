"""The ``skillrt`` command line: a thin surface over :class:`skillrt.runtime.SkillRuntime`.

``skillrt hook ...`` runs once per prompt of a coding agent, so it skips the argument
parser and every command module: :func:`main` hands it straight to
:mod:`skillrt.hooks.entry`.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"]:
        if "-h" in args or "--help" in args:
            from skillrt.cli.hook_cmds import print_hook_help

            return print_hook_help()
        from skillrt.hooks.entry import main as hook_main

        code = hook_main(args[1:])
        if argv is None:  # this process is the client's hook: it ends here
            _exit_now(code)
        return code
    from skillrt.cli.app import main as app_main

    return app_main(args)


def _exit_now(code: int) -> None:
    """End the process without tearing the interpreter down. The client waits for the
    hook to exit, and after an in-process answer the teardown of the model runtime and
    the array modules took ~0.2 s; by now the answer is written, the store closed and
    the daemon started, so there is nothing left to finalise but the output streams."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
