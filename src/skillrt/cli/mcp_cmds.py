"""``skillrt mcp``: serve the skills to any MCP client (stdio, or streamable HTTP)."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.cli.context import CliContext


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "mcp",
        parents=[common],
        help="run an MCP server over stdio (or --http PORT on 127.0.0.1)",
        description="Serve the skills to MCP clients: tools route_skills, load_skill, "
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
        "--with-hook",
        action="store_true",
        help="a skillrt prompt hook already routes each message for this client "
        "(install --mcp writes it): the instructions say to follow the skill it injected "
        "instead of routing again",
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

    args = ctx.args
    logging.basicConfig(
        stream=sys.stderr, level=args.log_level, format="skillrt mcp: %(levelname)s %(message)s"
    )
    # The run_skill tool's runner: execution config with the runner flags over it, its key
    # (and a command's allowlist) from this process's environment.
    runtime = open_with_runner_flags(ctx)
    config = runtime.config.mcp
    if args.with_hook:
        config = dataclasses.replace(config, with_hook=True)
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
        if args.http is None:
            _serve_stdio(runtime, config)
        else:
            from skillrt.mcp import serve
            from skillrt.mcp.server import announce_stderr

            runtime.build_runner()  # a bad runner choice fails now, not at a tool call
            serve(runtime, http=args.http, config=config, announce=announce_stderr)
    except KeyboardInterrupt:
        return 0
    except OSError as exc:  # the port is taken, no permission, ...
        raise ServeError(f"cannot serve: {exc}", port=args.http) from exc
    return 0


def _serve_stdio(runtime: Any, config: Any) -> None:
    """Over stdio: the client's ``initialize`` is answered before the MCP SDK is even
    imported (:mod:`skillrt.mcp.early`), then the server takes over the session."""
    from skillrt.mcp import SkillService, event_writer
    from skillrt.mcp.early import Handshake, answer, read_handshake, send
    from skillrt.mcp.stdin import claimed_stdin
    from skillrt.version import __version__

    service = SkillService(runtime, config, events=event_writer(runtime))
    with claimed_stdin() as wire:
        line, request = read_handshake(wire)
        handshake = Handshake(line)
        if request is not None:
            # From the registry alone: the skills' files are listed after the answer.
            instructions = service.early_instructions()
            result = answer(request, instructions=instructions, version=__version__)
            send(sys.stdout.buffer, request["id"], result)
            handshake = Handshake(line, request["id"], result)
        # A bad runner choice fails before any request is served (after the handshake:
        # building it imports the dispatcher, which the early answer does without).
        runtime.build_runner()
        import anyio

        from skillrt.mcp import server

        anyio.run(server.serve_stdio, service, wire, handshake)
