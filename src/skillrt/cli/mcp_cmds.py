"""``skillrt mcp``: serve the skills to any MCP client (stdio, or streamable HTTP)."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillrt.cli.app import CliContext


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "mcp",
        parents=[common],
        help="run an MCP server over stdio (or --http PORT on 127.0.0.1)",
        description="Serve the skills to MCP clients: tools route_skills, activate_skill, "
        "read_skill_resource, resolve_mentions, run_skill; every skill file as a skill:// "
        "resource; the catalogue as the server instructions. Skills added, changed or "
        "removed on disk are picked up while it runs.",
    )
    p.add_argument(
        "--http",
        type=int,
        metavar="PORT",
        help="serve streamable HTTP at http://127.0.0.1:PORT/mcp instead of stdio "
        "(0 picks a free port; the URL is printed on stderr)",
    )
    p.add_argument(
        "--poll",
        type=float,
        metavar="SECONDS",
        help="seconds between checks for changed skills (0: no hot reload; default from "
        "config mcp.poll_interval_s, 2)",
    )
    p.add_argument(
        "--instructions-budget",
        type=int,
        metavar="CHARS",
        help="character budget of the catalogue sent as instructions (default 8000)",
    )
    p.add_argument(
        "--log-level",
        default="WARNING",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="log level on stderr (stdout is the protocol channel)",
    )
    from skillrt.cli.runner_flags import add_runner_flags

    add_runner_flags(
        p.add_argument_group(
            "runner", "how the run_skill tool runs a skill (default: execution.runner)"
        )
    )
    p.set_defaults(handler=cmd_mcp)


def cmd_mcp(ctx: CliContext) -> int:
    from skillrt.cli.dispatch_cmds import open_with_runner_flags
    from skillrt.errors import ServeError, UsageError
    from skillrt.mcp import serve
    from skillrt.mcp.server import announce_stderr

    args = ctx.args
    logging.basicConfig(
        stream=sys.stderr, level=args.log_level, format="skillrt mcp: %(levelname)s %(message)s"
    )
    # The run_skill tool's runner: execution config with the runner flags over it, its key
    # (and a command's allowlist) from this process's environment.
    runtime = open_with_runner_flags(ctx)
    runtime.build_runner()  # a bad runner choice fails here, not at the first tool call
    config = runtime.config.mcp
    if args.poll is not None:
        if args.poll < 0:
            raise UsageError("--poll must be >= 0", poll=args.poll)
        config = dataclasses.replace(config, poll_interval_s=args.poll)
    if args.instructions_budget is not None:
        if args.instructions_budget < 0:
            raise UsageError("--instructions-budget must be >= 0")
        config = dataclasses.replace(config, instructions_budget=args.instructions_budget)
    if args.http is not None and not 0 <= args.http <= 65535:
        raise UsageError(f"--http port must be 0..65535, got {args.http}", port=args.http)
    try:
        serve(runtime, http=args.http, config=config, announce=announce_stderr)
    except KeyboardInterrupt:
        return 0
    except OSError as exc:  # the port is taken, no permission, ...
        raise ServeError(f"cannot serve: {exc}", port=args.http) from exc
    return 0
