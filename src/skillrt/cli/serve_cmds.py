"""``serve``: the warm daemon (and ``serve --stop`` / ``serve --status``)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.cli.daemon_use import add_daemon_options

if TYPE_CHECKING:
    from skillrt.cli.context import CliContext
    from skillrt.serve.daemon import Daemon


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "serve",
        parents=[common],
        help="run the warm daemon the prompt hooks and the CLI ask (a Unix socket)",
        description="Keep the skills, the router index and the embedding model loaded and "
        "answer route / context / activate / read / resolve requests as JSON lines over "
        "a Unix socket (0600; default <state>/skillrt.sock) or a loopback port. Changed "
        "skills are reloaded while it runs; SIGTERM stops it and removes the socket.",
    )
    add_daemon_options(p)
    p.add_argument(
        "--port",
        type=int,
        metavar="N",
        help="listen on 127.0.0.1:N instead of a socket (0 picks a free port); clients "
        "read the token from <state>/skillrt.daemon.json",
    )
    p.add_argument(
        "--poll",
        type=float,
        metavar="SECONDS",
        help="seconds between checks for changed skills (0: no reload; default from "
        "config mcp.poll_interval_s, 2)",
    )
    p.add_argument(
        "--idle-exit",
        type=float,
        metavar="SECONDS",
        help="stop after this many seconds without a request (the daemon a prompt hook "
        "starts: hook.daemon_idle_s, 900); default: never",
    )
    p.add_argument(
        "--start-timeout",
        type=float,
        metavar="SECONDS",
        help="give up when loading the skills and the index takes longer than this",
    )
    p.add_argument(
        "--start-delay",
        type=float,
        metavar="SECONDS",
        help="wait this long (holding the daemon lock) before loading the skills and the "
        "index (the daemon a prompt hook starts: hook.daemon_start_delay_s, 2); default 0",
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="keep the derived caches (parsed skills, vectors, the saved index) in "
        "DIR/cache.db (the daemon a prompt hook starts shares the user's cache folder)",
    )
    p.add_argument("--stop", action="store_true", help="stop the running daemon")
    p.add_argument("--status", action="store_true", help="show the running daemon's status")
    p.add_argument(
        "--log-level",
        default="WARNING",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="log level on stderr",
    )
    p.set_defaults(handler=cmd_serve)


def cmd_serve(ctx: CliContext) -> int:
    from skillrt.errors import UsageError

    args = ctx.args
    if args.stop and args.status:
        raise UsageError("--stop and --status go alone")
    if args.port is not None and (args.socket or not 0 <= args.port <= 65535):
        raise UsageError("--port N (0..65535) and --socket PATH exclude each other")
    if args.stop or args.status:
        return _control(ctx, "shutdown" if args.stop else "status")
    return _serve(ctx)


def _control(ctx: CliContext, op: str) -> int:
    from skillrt.cli.daemon_use import daemon_address
    from skillrt.daemon.client import DaemonClient, DaemonUnavailable
    from skillrt.daemon.protocol import format_address
    from skillrt.errors import DaemonNotRunning

    address, token = daemon_address(ctx)
    where = format_address(address)
    try:
        with DaemonClient(address, token=token, timeout=10.0) as client:
            result = client.request(op)
    except DaemonUnavailable as exc:
        if op == "status":
            ctx.emit({"running": False, "address": where}, f"no daemon at {where}")
            return 1
        raise DaemonNotRunning(f"no daemon is running at {where}", address=where) from exc
    if op == "status":
        data = {"running": True, **result}
        ctx.emit(data, lambda: _render_status(data))
        return 0
    if isinstance(address, str):  # wait (bounded) until it has cleaned up
        deadline = time.monotonic() + 10
        while os.path.exists(address) and time.monotonic() < deadline:
            time.sleep(0.05)
    ctx.emit({"stopped": True, "pid": result.get("pid"), "address": where},
             f"stopped the daemon at {where} (pid {result.get('pid')})")  # fmt: skip
    return 0


def _render_status(data: dict[str, Any]) -> str:
    roots = data.get("roots")
    lines = [
        f"daemon pid {data.get('pid')} at {data.get('address')}",
        f"  skills {data.get('skills')}  reloads {data.get('reloads')}  "
        f"requests {data.get('requests')}  errors {data.get('errors')}  "
        f"up {data.get('uptime_s')} s",
        f"  roots {', '.join(roots) if roots else '(conventional)'}",
        f"  project {data.get('project_dir')}  state {data.get('state_dir')}",
    ]
    return "\n".join(lines)


def _serve(ctx: CliContext) -> int:
    import dataclasses

    from skillrt.cli.daemon_use import daemon_address, identity
    from skillrt.daemon.protocol import LOOPBACK, format_address, info_path
    from skillrt.errors import DaemonStartError
    from skillrt.mcp import SkillService, event_writer
    from skillrt.serve.daemon import Daemon

    args = ctx.args
    logging.basicConfig(
        stream=sys.stderr, level=args.log_level, format="skillrt serve: %(levelname)s %(message)s"
    )
    config = ctx.config()
    if args.cache_dir:
        config = config.replace_section(cache_dir=Path(args.cache_dir).resolve())
    mcp = config.mcp
    if args.poll is not None:
        if args.poll < 0:
            from skillrt.errors import UsageError

            raise UsageError("--poll must be >= 0", poll=args.poll)
        mcp = dataclasses.replace(mcp, poll_interval_s=args.poll)
    runtime = ctx.open_runtime(config=config, env=dict(os.environ))
    address = (LOOPBACK, args.port) if args.port is not None else daemon_address(ctx)[0]
    service = SkillService(runtime, mcp, events=event_writer(runtime), surface="daemon")
    daemon = Daemon(
        service,
        address,
        identity=identity(ctx),
        info_file=Path(info_path(str(config.state_dir))),
        poll_interval_s=mcp.poll_interval_s,
        idle_exit_s=_positive(args, "idle_exit"),
        start_timeout_s=_positive(args, "start_timeout"),
        start_delay_s=_start_delay(args),
    )

    def ready(d: Daemon) -> None:
        event = {"event": "listening", "address": format_address(d.address), "pid": os.getpid()}
        sys.stderr.write(json.dumps(event) + "\n")
        sys.stderr.flush()

    try:
        daemon.serve(ready=ready)
    except OSError as exc:  # the port is taken, no permission, ...
        raise DaemonStartError(f"cannot serve at {format_address(address)}: {exc}") from exc
    except KeyboardInterrupt:
        if daemon.stopped_because != "start_timeout":
            raise
        raise DaemonStartError(
            f"loading the skills took longer than --start-timeout {args.start_timeout:g} s"
        ) from None
    if daemon.stopped_because == "idle":
        sys.stderr.write(json.dumps({"event": "idle_exit", "pid": os.getpid()}) + "\n")
    return 0


def _start_delay(args: argparse.Namespace) -> float:
    delay = args.start_delay
    if delay is None:
        return 0.0
    from skillrt.hook_budget import MAX_START_DELAY_S

    if not 0 <= delay <= MAX_START_DELAY_S:
        from skillrt.errors import UsageError

        raise UsageError(f"--start-delay must be 0 to {MAX_START_DELAY_S:g} seconds",
                         argument="--start-delay")  # fmt: skip
    return float(delay)


def _positive(args: argparse.Namespace, name: str) -> float | None:
    value: float | None = getattr(args, name)
    if value is None:
        return None
    if not 0 < value < float("inf"):
        from skillrt.errors import UsageError

        flag = "--" + name.replace("_", "-")
        raise UsageError(f"{flag} must be a positive number of seconds", argument=flag)
    return value
