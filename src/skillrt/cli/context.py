"""What every command handler gets: :class:`CliContext` (the parsed arguments and the
one runtime of the command) and the helpers that print through it.

Command modules (``skillrt.cli.*_cmds``) import this module, never :mod:`skillrt.cli.app`,
which loads them by name: the command line imports one way.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.config import RootConfig, RuntimeConfig
    from skillrt.runtime import SkillRuntime
    from skillrt.store.base import Store

__all__ = ["WALK_WARNINGS", "CliContext", "Handler", "dump_json", "group_help"]

Handler = Callable[["CliContext"], int]
#: Walk diagnostics every command reports, as ``list`` does: a root that is not there
#: or a walk cut short means skills the user expects may be missing.
WALK_WARNINGS = frozenset({"ROOT_NOT_FOUND", "ROOT_DIR_LIMIT"})


@dataclass
class CliContext:
    """Parsed arguments plus the one runtime every command uses, built on first use."""

    args: argparse.Namespace
    _runtime: SkillRuntime | None = field(default=None, repr=False)
    #: Set once the walk's warnings are out (``list`` prints them with its output).
    walk_reported: bool = False

    @property
    def json(self) -> bool:
        return bool(getattr(self.args, "json", False))

    def config(self) -> RuntimeConfig:
        from skillrt.settings import load_config

        return load_config(
            getattr(self.args, "config", None),
            getattr(self.args, "state", None),
            cwd=Path.cwd(),
            home=os.environ.get("HOME"),
            codex_home=os.environ.get("CODEX_HOME"),
            client_roots=not getattr(self.args, "no_client_roots", False),
        )

    @property
    def runtime(self) -> SkillRuntime:
        """The command's runtime (``open_runtime()`` with the flags' settings, unless the
        command opened it with its own)."""
        if self._runtime is None:
            return self.open_runtime()
        return self._runtime

    def open_runtime(
        self,
        *,
        config: RuntimeConfig | None = None,
        roots: Sequence[Path | RootConfig] | None = None,
        store: Store | None = None,
        catalogs: Sequence[str] = (),
        catalog_base: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> SkillRuntime:
        """Build :attr:`runtime` with a command's own settings, before anything uses it.

        ``config`` defaults to the file and flags' (:meth:`config`), ``roots`` to the
        ``--root`` flags; the rest are :class:`~skillrt.runtime.SkillRuntime`'s options.
        Closed by :func:`main` whatever happens.
        """
        if self._runtime is not None:
            raise RuntimeError("the runtime is already open; open it before first use")
        from skillrt.runtime import SkillRuntime
        from skillrt.settings import flag_roots

        if roots is None:
            roots = flag_roots(getattr(self.args, "root", None), Path.cwd())
        runtime = SkillRuntime(
            config or self.config(),
            roots=roots,
            store=store,
            catalogs=catalogs,
            catalog_base=catalog_base,
            env=env,
        )
        self._runtime = runtime
        if sys.stderr.isatty():
            from skillrt.cli.output import ProgressBar

            runtime.build_progress = ProgressBar().build
        return runtime

    def walk_warnings(self) -> list[dict[str, Any]]:
        """The walk's warnings (:data:`WALK_WARNINGS`) not reported yet, as JSON, if
        the command discovered skills; each is reported once."""
        registry = self._runtime.discovered if self._runtime is not None else None
        if registry is None or self.walk_reported:
            return []
        from skillrt.serialize import to_jsonable

        found = [to_jsonable(d) for d in registry.diagnostics if d.code in WALK_WARNINGS]
        self.walk_reported = bool(found)
        return found

    def emit(self, data: Any, human: Callable[[], str] | str | None = None) -> None:
        """Print ``data`` as one JSON document with --json, else the human rendering.

        With --json, the walk's warnings (a missing root, a cut walk) ride along under
        ``warnings``; in human form :func:`main` prints them on stderr at the end."""
        if self.json:
            warnings = self.walk_warnings()
            if warnings:
                from skillrt.serialize import to_jsonable

                doc = to_jsonable(data)
                if isinstance(doc, dict) and "warnings" not in doc:
                    data = {**doc, "warnings": warnings}
            sys.stdout.write(dump_json(data) + "\n")
            return
        text = human() if callable(human) else human
        if text is None:
            from skillrt.serialize import to_json

            text = to_json(data, indent=2)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def dump_json(data: Any) -> str:
    """``data`` as JSON: indented for a person at a terminal, compact when piped."""
    from skillrt.serialize import to_json

    return to_json(data, indent=2 if sys.stdout.isatty() else None)


def group_help(parser: argparse.ArgumentParser) -> Handler:
    """The handler of a command group run without its action: its help on stderr and
    exit 2, or with ``--json`` the usage error as the one JSON document."""

    def handler(ctx: CliContext) -> int:
        if not ctx.json:
            parser.print_help(sys.stderr)
            return 2
        from skillrt.errors import UsageError

        groups = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        names = [name for group in groups for name in group.choices]
        what = str(groups[0].metavar or "command").lower() if groups else "command"
        raise UsageError(
            f"{parser.prog}: name a{'n' if what[0] in 'aeiou' else ''} {what}: " + ", ".join(names),
            usage=parser.format_usage().strip(),
        )

    return handler
