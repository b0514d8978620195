"""``resolve`` and ``complete``: the ``$skill`` inline invocation commands (seed 004)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from skillrt.cli.daemon_use import add_daemon_options

if TYPE_CHECKING:
    from skillrt.cli.context import CliContext
    from skillrt.invocation.results import Completion, Resolution


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "resolve",
        parents=[common],
        help="resolve the $skill mentions and /skill commands of a message",
        description=(
            "Scan TEXT for $skill mentions (outside code) and /skill list|enable|disable "
            "lines; print each activated skill's 'Using skill:' line and allowed tools, "
            "every diagnostic, then the remaining task text. TEXT '-' reads stdin."
        ),
    )
    p.add_argument("text", metavar="TEXT", help="the message ('-' reads it from stdin)")
    p.add_argument(
        "--surface",
        choices=("user", "palette", "model"),
        default="user",
        help="where the text came from (default: user)",
    )
    p.add_argument("--show-body", action="store_true", help="print each activated body")
    p.add_argument(
        "--no-apply",
        action="store_true",
        help="parse /skill enable|disable lines but do not apply them",
    )
    add_daemon_options(p)
    p.set_defaults(handler=cmd_resolve)

    p = sub.add_parser(
        "complete",
        parents=[common],
        help="complete the partial $skill mention under the cursor",
    )
    p.add_argument("text", metavar="TEXT", help="the text being typed ('-' reads stdin)")
    p.add_argument(
        "--cursor", type=int, metavar="N", help="cursor offset in TEXT (default: the end)"
    )
    p.add_argument("--limit", type=int, default=20, metavar="N", help="at most N (default 20)")
    p.set_defaults(handler=cmd_complete)


def _text(value: str) -> str:
    return sys.stdin.read() if value == "-" else value


def cmd_resolve(ctx: CliContext) -> int:
    from skillrt.cli.daemon_use import ask_daemon

    args = ctx.args
    text = _text(args.text)
    request = {"text": text, "surface": args.surface, "apply_commands": not args.no_apply}
    remote = ask_daemon(ctx, "resolve", request)
    if remote is not None:
        res = _resolution(remote)
    else:
        res = ctx.runtime.resolve(text, surface=args.surface, apply_commands=not args.no_apply)
    data: dict[str, Any] = {
        "activated": res.activated,
        "task_text": res.task_text,
        "diagnostics": res.diagnostics,
        "mentions": res.mentions,
        "commands": res.commands,
        "command_results": res.command_results,
        "surface": res.surface,
        "event": res.event,
    }
    ctx.emit(data, lambda: render_resolution(res, show_body=args.show_body))
    return 0


def _resolution(data: dict[str, Any]) -> Resolution:
    """A resolution as the daemon sent it, with load reports rebuilt for rendering."""
    import dataclasses

    from skillrt.invocation.results import Resolution
    from skillrt.loading.report import LoadReport
    from skillrt.serialize import from_jsonable

    res = from_jsonable(Resolution, data)
    activated = tuple(
        dataclasses.replace(a, load_report=from_jsonable(LoadReport, a.load_report))
        if isinstance(a.load_report, dict)
        else a
        for a in res.activated
    )
    return dataclasses.replace(res, activated=activated)


def render_resolution(res: Resolution, *, show_body: bool = False) -> str:
    """Human output: activation lines, tools, diagnostics, command results, task text."""
    lines: list[str] = []
    for a in res.activated:
        lines.append(a.line)
        lines.append(f"  {a.tools_line}")
        report = a.load_report
        summary = getattr(report, "summary", None)
        if callable(summary):
            lines.append(f"  Load report: {summary()}")
        if show_body:
            lines.append("")
            lines.extend(f"  {line}" if line else "" for line in a.body.splitlines())
            lines.append("")
    for d in res.diagnostics:
        lines.append(f"{d.message}  [{d.code}]")
    for outcome in res.command_results:
        lines.append(f"/skill {outcome.command.action}: {outcome.message}")
        if outcome.skills:
            from skillrt.cli.output import table

            rows = [
                [s.id, "enabled" if s.enabled else "disabled", _short(s.description)]
                for s in outcome.skills
            ]
            lines.append(table(["ID", "STATE", "DESCRIPTION"], rows))
    lines.append(f"Task: {res.task_text}" if res.task_text else "Task: (empty)")
    return "\n".join(lines)


def _short(text: str, width: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def cmd_complete(ctx: CliContext) -> int:
    args = ctx.args
    items = ctx.runtime.complete(_text(args.text), args.cursor, limit=args.limit)
    ctx.emit({"completions": items}, lambda: render_completions(items))
    return 0


def render_completions(items: list[Completion]) -> str:
    if not items:
        return "(no completions)"
    from skillrt.cli.output import table

    return table(
        ["COMPLETION", "MATCH", "DESCRIPTION"],
        [[c.display, c.match, _short(c.description)] for c in items],
    )
