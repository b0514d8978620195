"""Commands asking a running daemon first (``route``, ``show``, ``resolve``).

A command uses the daemon of its state folder (``--socket``/``SKILLRT_SOCKET`` name
another) when one answers for the same skills (roots, config file, project) within
:data:`DAEMON_TIMEOUT_S`, and works in-process otherwise, with the same output either
way. ``--no-daemon`` skips it.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.errors import RemoteError

if TYPE_CHECKING:
    from skillrt.cli.context import CliContext

#: Seconds a command waits for the daemon's answer before working in-process: a warm
#: daemon answers in milliseconds, so one that takes this long is stopped or stuck.
DAEMON_TIMEOUT_S = 1.0


def add_daemon_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--socket",
        metavar="PATH",
        help="the daemon's socket (default <state>/skillrt.sock, or $SKILLRT_SOCKET)",
    )
    p.add_argument("--no-daemon", action="store_true", help="never ask a running daemon")


def identity(ctx: CliContext) -> dict[str, Any]:
    """What this command would serve: compared with the daemon's own identity."""
    from skillrt.settings import config_file, flag_roots
    from skillrt.skills.discovery import client_folders

    roots = flag_roots(getattr(ctx.args, "root", None), Path.cwd())
    config = config_file(getattr(ctx.args, "config", None), Path.cwd())
    return {
        "roots": [str(r.path) for r in roots] if roots is not None else None,
        "config": str(config) if config else None,
        "project_dir": str(ctx.config().project_dir),
        # a hook asks only a daemon that searches the client folders it finds
        "client_roots": client_folders(ctx.config().discovery),
    }


def daemon_address(ctx: CliContext) -> tuple[Any, str | None]:
    """``(address, token)`` of this command's daemon (which may not be running)."""
    from skillrt.daemon.protocol import ENV_SOCKET, locate
    from skillrt.errors import UsageError

    explicit = getattr(ctx.args, "socket", None) or os.environ.get(ENV_SOCKET) or None
    try:
        return locate(str(ctx.config().state_dir), explicit)
    except ValueError as exc:
        raise UsageError(str(exc), socket=explicit) from exc


def ask_daemon(ctx: CliContext, op: str, args: dict[str, Any]) -> Any | None:
    """The daemon's result for ``op``, or None when no daemon serves these skills.

    A request the daemon refuses raises the same structured error the in-process
    command would (its code and fields are kept).
    """
    if getattr(ctx.args, "no_daemon", False):
        return None
    from skillrt.daemon.client import DaemonClient, DaemonError, DaemonTimeout, DaemonUnavailable

    address, token = daemon_address(ctx)
    try:
        with DaemonClient(
            address, token=token, timeout=DAEMON_TIMEOUT_S, connect_timeout=DAEMON_TIMEOUT_S
        ) as client:
            return client.request(op, args, expect=identity(ctx))
    except DaemonTimeout:
        import sys

        sys.stderr.write(
            f"skillrt: the daemon at {address} did not answer within {DAEMON_TIMEOUT_S:g} s; "
            "working in-process\n"
        )
        return None
    except DaemonUnavailable:
        return None
    except DaemonError as exc:
        raise RemoteError(exc.data) from None
