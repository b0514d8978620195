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

        return hook_main(args[1:])
    from skillrt.cli.app import main as app_main

    return app_main(args)
