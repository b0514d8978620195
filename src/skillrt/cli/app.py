"""The ``skillrt`` command: global options, dispatch to command modules, error output.

Command modules (``skillrt.cli.*_cmds``) each expose ``register(subparsers, common)``;
they import library code inside their handlers so ``skillrt --help`` stays fast.
This is the only layer that reads environment variables.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from skillrt.cli.context import CliContext, Handler, dump_json, group_help

#: Command modules, in help order. A module that fails to import is reported, not fatal.
COMMAND_MODULES = (
    "skills_cmds",
    "loader_cmds",
    "invocation_cmds",
    "routing_cmds",
    "index_cmds",
    "doctor_cmds",
    "dispatch_cmds",
    "workflow_cmds",
    "telemetry_cmds",
    "mcp_cmds",
    "state_cmds",
    "serve_cmds",
    "hook_cmds",
)

#: command -> the module that registers it: a command line naming one loads only that
#: module's parsers (building all of them costs ~80 ms of every command's start).
COMMANDS = {
    "list": "skills_cmds", "validate": "skills_cmds", "catalog": "skills_cmds",
    "enable": "skills_cmds", "disable": "skills_cmds", "show": "loader_cmds",
    "read": "loader_cmds", "resolve": "invocation_cmds", "complete": "invocation_cmds",
    "route": "routing_cmds", "eval": "routing_cmds", "index": "index_cmds",
    "doctor": "doctor_cmds",
    "dispatch": "dispatch_cmds", "orchestrate": "dispatch_cmds", "run": "dispatch_cmds",
    "run-skill": "dispatch_cmds", "edges": "dispatch_cmds", "repair": "dispatch_cmds",
    "workflow": "workflow_cmds", "stats": "telemetry_cmds", "feedback": "telemetry_cmds",
    "mcp": "mcp_cmds", "state": "state_cmds", "serve": "serve_cmds", "hook": "hook_cmds",
    "install": "hook_cmds",
}  # fmt: skip


def add_global_options(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    default: Any = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--root",
        action="append",
        metavar="DIR",
        default=default,
        help="skill root to search (repeatable); when given, only these roots are searched "
        "(no configured or conventional ones)",
    )
    parser.add_argument(
        "--config", metavar="FILE", default=default, help="config file (default ./skillrt.yaml)"
    )
    parser.add_argument(
        "--state",
        metavar="DIR|URL",
        default=default,
        help="state folder (default ./.skillrt/) or a postgresql:// URL of a shared store",
    )
    parser.add_argument(
        "--no-client-roots",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="do not search the coding agents' own skill folders (.claude/skills, "
        ".codex/skills, .gemini/skills, in the project and in ~)",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="print exactly one JSON document on stdout",
    )


class UsageExit(Exception):
    """Raised by the parser instead of printing and exiting, so ``main`` can answer in
    JSON when ``--json`` was asked for."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser
        self.message = message


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but a usage error raises :class:`UsageExit` (subparsers inherit this)."""

    def error(self, message: str) -> NoReturn:
        raise UsageExit(self, message)


class VersionExit(Exception):
    """Raised by ``--version`` so ``main`` prints it as text or, with ``--json``, as JSON."""


class _VersionAction(argparse.Action):
    """``--version``, reading the installed version only when asked (it costs an import)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any, **_kwargs: Any) -> None:
        raise VersionExit


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line's parser; given the arguments, only the parsers of the
    command they name, when their first argument names one (help and errors for
    anything else still list every command)."""
    parser = ArgumentParser(
        prog="skillrt",
        description="A runtime for Agent Skills: find, route, load, dispatch, orchestrate.",
    )
    parser.add_argument("--version", action=_VersionAction)
    add_global_options(parser, suppress=False)
    common = ArgumentParser(add_help=False)
    add_global_options(common, suppress=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    named = COMMANDS.get(argv[0]) if argv else None
    for name in (named,) if named else COMMAND_MODULES:
        try:
            module = importlib.import_module(f"skillrt.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"skillrt.cli.{name}":
                continue  # that command group is not built yet
            raise
        module.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from skillrt.errors import InternalError, Interrupted, SkillrtError, UsageError

    arg_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(arg_list)
    # --json promises one JSON document on stdout, for usage errors, --help and
    # --version too: what argparse would print is caught and answered in JSON.
    json_wanted = "--json" in arg_list
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed) if json_wanted else contextlib.nullcontext():
            args = parser.parse_args(arg_list)
    except UsageExit as exc:
        if json_wanted:
            error = UsageError(exc.message, usage=exc.parser.format_usage().strip())
            sys.stdout.write(dump_json({"error": error.to_dict()}) + "\n")
        else:
            exc.parser.print_usage(sys.stderr)
            sys.stderr.write(f"{exc.parser.prog}: error: {exc.message}\n")
        return 2
    except VersionExit:
        from skillrt.version import __version__

        if json_wanted:
            sys.stdout.write(dump_json({"name": "skillrt", "version": __version__}) + "\n")
        else:
            sys.stdout.write(f"skillrt {__version__}\n")
        return 0
    except SystemExit as exc:  # --help
        if json_wanted:
            sys.stdout.write(dump_json({"help": printed.getvalue()}) + "\n")
        return exc.code if isinstance(exc.code, int) else 0
    ctx = CliContext(args)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        handler = group_help(parser)
    try:
        return handler(ctx)
    except UsageError as exc:
        _report(ctx, exc.to_dict())
        return 2
    except SkillrtError as exc:
        _report(ctx, exc.to_dict())
        return 1
    except KeyboardInterrupt:
        _report(ctx, Interrupted("interrupted").to_dict())
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # never a traceback for users; SKILLRT_DEBUG=1 shows it
        if os.environ.get("SKILLRT_DEBUG"):
            raise
        _report(ctx, InternalError(f"{type(exc).__name__}: {exc}").to_dict())
        return 1
    finally:
        if not ctx.json:
            _warn_walk(ctx)
        if ctx._runtime is not None:
            ctx._runtime.close()


def _report(ctx: CliContext, err: dict[str, Any]) -> None:
    if ctx.json:
        doc: dict[str, Any] = {"error": err}
        warnings = ctx.walk_warnings()  # often the cause: "no skill named x" in no root
        if warnings:
            doc["warnings"] = warnings
        sys.stdout.write(dump_json(doc) + "\n")
    else:
        _warn_walk(ctx)
        sys.stderr.write(f"skillrt: error [{err['code']}]: {err['message']}\n")


def _warn_walk(ctx: CliContext) -> None:
    for w in ctx.walk_warnings():
        sys.stderr.write(f"skillrt: warning [{w['code']}]: {w['message']}\n")
