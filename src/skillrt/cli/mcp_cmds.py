"""``skillrt mcp``: serve the skills to any MCP client (stdio, or streamable HTTP)."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.cli.context import CliContext
    from skillrt.mcp.early import EarlyInput
    from skillrt.mcp.service import SkillService


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
    from skillrt.errors import ServeError, UsageError

    args = ctx.args
    logging.basicConfig(
        stream=sys.stderr, level=args.log_level, format="skillrt mcp: %(levelname)s %(message)s"
    )
    if args.poll is not None and args.poll < 0:
        raise UsageError("--poll must be >= 0", poll=args.poll)
    if args.instructions_budget is not None and args.instructions_budget < 0:
        raise UsageError("--instructions-budget must be >= 0")
    if args.http is not None and not 0 <= args.http <= 65535:
        raise UsageError(f"--http port must be 0..65535, got {args.http}", port=args.http)
    try:
        if args.http is None:
            _serve_stdio(ctx)
        else:
            from skillrt.mcp import serve
            from skillrt.mcp.server import announce_stderr

            runtime, config = _open(ctx)
            runtime.build_runner()  # a bad runner choice fails now, not at a tool call
            serve(runtime, http=args.http, config=config, announce=announce_stderr)
    except KeyboardInterrupt:
        return 0
    except OSError as exc:  # the port is taken, no permission, ...
        raise ServeError(f"cannot serve: {exc}", port=args.http) from exc
    return 0


def _open(ctx: CliContext) -> tuple[Any, Any]:
    """The runtime (the run_skill tool's runner: execution config with the runner flags
    over it, its key and a command's allowlist from this process's environment) and the
    MCP config with this command's flags over it."""
    from skillrt.cli.dispatch_cmds import open_with_runner_flags

    args = ctx.args
    runtime = open_with_runner_flags(ctx)
    config = runtime.config.mcp
    if args.with_hook:
        config = dataclasses.replace(config, with_hook=True)
    if args.poll is not None:
        config = dataclasses.replace(config, poll_interval_s=args.poll)
    if args.instructions_budget is not None:
        config = dataclasses.replace(config, instructions_budget=args.instructions_budget)
    return runtime, config


def _serve_stdio(ctx: CliContext) -> None:
    """Over stdio: the client's first requests are answered before the MCP SDK is even
    imported (:mod:`skillrt.mcp.early`), then the server takes over the session. With
    ``--with-hook`` the instructions are a fixed text, so ``initialize`` is answered
    before the config, the skills and the store are loaded too (~0.1 s from the process
    start); a ``tools/list`` right after it from the registry, before the skills' files
    are listed for the resources."""
    from skillrt.mcp.early import EarlyInput, Handshake, initialize_request
    from skillrt.mcp.stdin import claimed_stdin

    with claimed_stdin() as wire:
        early = EarlyInput(wire)
        line = early.readline() or b""  # the server waits for its client's first line
        request = initialize_request(line)
        answered: dict[Any, tuple[str, dict[str, Any]]] = {}
        if request is not None and ctx.args.with_hook:
            from skillrt.mcp.instructions import HOOKED

            _answer_initialize(request, HOOKED, answered)
        runtime, config = _open(ctx)
        from skillrt.mcp import event_writer
        from skillrt.mcp.service import SkillService

        service = SkillService(runtime, config, events=event_writer(runtime))
        lines = [line]
        if request is not None:
            if not answered:
                # From the registry alone: the skills' files are listed after the answer.
                _answer_initialize(request, service.early_instructions(), answered)
            lines += _answer_tools_list(early, service, answered)
        handshake = Handshake((*lines, *early.rest()), answered)
        # A bad runner choice fails before any request is served (after the handshake:
        # building it imports the dispatcher, which the early answers do without).
        runtime.build_runner()
        import anyio

        from skillrt.mcp import server

        anyio.run(server.serve_stdio, service, wire, handshake)


#: How long the early phase waits for each of the client's next lines (Codex sends
#: ``initialized`` and ``tools/list`` within milliseconds of the ``initialize`` answer).
_NEXT_LINE_S = 0.1


def _answer_initialize(
    request: dict[str, Any], instructions: str, answered: dict[Any, tuple[str, dict[str, Any]]]
) -> None:
    from skillrt.mcp.early import answer, send
    from skillrt.version import __version__

    result = answer(request, instructions=instructions, version=__version__)
    send(sys.stdout.buffer, request["id"], result)
    answered[request["id"]] = ("initialize", result)
    logging.getLogger("skillrt.mcp").debug("answered initialize early")


def _answer_tools_list(
    early: EarlyInput, service: SkillService, answered: dict[Any, tuple[str, dict[str, Any]]]
) -> list[bytes]:
    """Answer a ``tools/list`` that follows the ``initialized`` notification from the
    snapshot (the client's first turn may not wait for the SDK's import); the lines
    read, for the SDK."""
    from skillrt.mcp.early import is_initialized, list_tools_id, send
    from skillrt.mcp.tools import tool_wire

    lines: list[bytes] = []
    initialized = False
    while len(lines) < 2:
        line = early.readline(timeout=_NEXT_LINE_S)
        if not line:
            break
        lines.append(line)
        rid = list_tools_id(line) if initialized else None
        if rid is not None and rid not in answered:
            result = {"tools": [tool_wire(spec) for spec in service.early_tools()]}
            send(sys.stdout.buffer, rid, result)
            answered[rid] = ("tools/list", result)
            logging.getLogger("skillrt.mcp").debug("answered tools/list early")
            break
        if not is_initialized(line) or initialized:
            break
        initialized = True
    return lines
