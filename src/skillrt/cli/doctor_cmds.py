"""``doctor``: the catalogue's health: environment, shadowing, unreachable skills, risk,
listing budget and (with ``--queries``) trigger precision and recall (docs/doctor.md)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from skillrt.cli.routing_cmds import BACKENDS, add_catalogue_options

if TYPE_CHECKING:
    from skillrt.cli.context import CliContext
    from skillrt.doctor.commands import CommandLine
    from skillrt.doctor.model import DoctorReport


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "doctor",
        parents=[common],
        help="find skills that shadow each other, never trigger or are cut from listings",
        description="Diagnose a skill catalogue offline: where skills come from, which "
        "skills take each other's requests (shadowing), which never come first for their own "
        "text (unreachable), each skill's risk of losing its requests, what agent clients "
        "cut from their skill listing, and with --queries each skill's trigger precision "
        "and recall. Each finding says what to do. Nothing is recorded; the routing index "
        "cache is reused. With --catalog and no --root, only the catalogue is diagnosed.",
    )
    add_catalogue_options(p)
    p.add_argument(
        "--queries", metavar="FILE", help="a labelled query set (as `skillrt eval` reads)"
    )
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report")
    p.add_argument(
        "--samples",
        type=int,
        metavar="N",
        help="pseudo-requests per skill (default: 12, fewer on large catalogues)",
    )
    p.add_argument(
        "--context-window",
        type=int,
        metavar="TOKENS",
        help="the agent's context window, for the listing budget (default 200000)",
    )
    p.add_argument("--top", type=int, default=10, metavar="N", help="rows per section (10)")
    p.add_argument("--backend", choices=BACKENDS, help="embedding backend (default: config)")
    p.add_argument(
        "--socket",
        metavar="PATH",
        help="the daemon to check (default <state>/skillrt.sock, or $SKILLRT_SOCKET)",
    )
    p.set_defaults(handler=cmd_doctor)


def cmd_doctor(ctx: CliContext) -> int:
    from skillrt.cli.output import ProgressBar
    from skillrt.cli.routing_cmds import catalogue_only, routing_config
    from skillrt.errors import UsageError

    args = ctx.args
    for flag in ("samples", "context_window"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise UsageError(f"--{flag.replace('_', '-')} must be at least 1", argument=flag)
    if args.top < 0:
        raise UsageError("--top must be >= 0", argument="top")
    html_path = Path(args.html) if args.html else None
    if html_path is not None and html_path.is_dir():
        raise UsageError(f"--html {args.html} is a folder; give a file", path=args.html)
    config = routing_config(ctx)
    if args.catalog and not getattr(args, "root", None):
        config = catalogue_only(config)
    runtime = ctx.open_runtime(
        config=config, catalogs=args.catalog, catalog_base=args.base, env=dict(os.environ)
    )
    report = runtime.doctor(
        queries=args.queries,
        samples=args.samples,
        context_window=args.context_window,
        daemon_socket=args.socket or os.environ.get("SKILLRT_SOCKET") or None,
        progress=ProgressBar().build,
        commands=command_line(ctx),
    )
    if html_path is not None:
        from skillrt.atomic import atomic_write_text
        from skillrt.doctor.html import render_html

        try:
            atomic_write_text(html_path, render_html(report), shared=True)
        except OSError as exc:
            raise UsageError(f"cannot write {html_path}: {exc}", path=str(html_path)) from exc
    ctx.emit(report, lambda: render(report, top=args.top, html=html_path))
    return 0


def command_line(ctx: CliContext) -> CommandLine:
    """The doctor's own inputs, as the user gave them: every command it prints repeats
    them, so it runs as printed from the same folder."""
    from skillrt.doctor.commands import CommandLine

    args = ctx.args
    return CommandLine.of(
        roots=getattr(args, "root", None),
        catalogs=args.catalog,
        base=args.base,
        state=getattr(args, "state", None),
        config=getattr(args, "config", None),
        backend=args.backend,
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def render(report: DoctorReport, *, top: int, html: Path | None = None) -> str:
    """The human report: each section's worst findings, each with its action."""
    from skillrt.cli.output import bold, table

    env = report.environment
    a = report.analysis
    lines = [bold("Environment")]
    for r in env.roots:
        state = "searched" if r.searched else "NOT searched"
        exists = "" if r.exists else " (missing)"
        lines.append(f"  {r.path}{exists}: {state}, {r.skills} skills  [{r.scope}]")
    for catalog in env.catalogs:
        lines.append(f"  catalogue {catalog}")
    store = env.store
    lines.append(
        f"  store: {store.get('backend')} at {store.get('location')}"
        + ("" if store.get("ok") else f" — ERROR {store.get('error')}")
    )
    lines.append(f"  embedding: {env.backend}")
    daemon = env.daemon
    lines.append(
        f"  daemon: running at {daemon.get('address')}"
        if daemon.get("running")
        else f"  daemon: not running ({daemon.get('start', 'skillrt serve')} starts one)"
    )
    for client, h in env.hooks.items():
        where = ", ".join(h["where"]) if h["installed"] else f"not installed ({h.get('install')})"
        lines.append(f"  hook {client}: {where}")
        for problem in h.get("problems", ()):
            lines.append(f"    ! [{problem['code']}] {problem['message']}; {problem['fix']}")
    for extra in env.missing_extras:
        lines.append(f"  extra {extra['extra']} missing ({extra['for']}): {extra['install']}")
    for problem in env.problems:
        lines.append(f"  ! {problem}")

    lines += ["", bold(f"Act on these first ({len(report.findings)})")]
    if report.findings:
        rows = [
            [str(k), f.kind, f.skill, f.summary, f.action]
            for k, f in enumerate(report.findings[:top], start=1)
        ]
        lines.append(table(["#", "KIND", "SKILL", "FINDING", "ACTION"], rows))
        if len(report.findings) > top:
            lines.append(f"  ... {len(report.findings) - top:,} more (--top N, or --json)")
    else:
        lines.append("  nothing: no collision, stub, duplicate or shadowing pair")
    if report.disabled:
        lines.append(
            f"  disabled ({len(report.disabled)}, not diagnosed): " + ", ".join(report.disabled)
        )

    lines += ["", bold(f"Shadowing ({len(report.shadowing)} pairs; worst first)")]
    rows = [
        [p.skill, p.shadowed_by, f"{p.score:.2f}", _pct(p.taken), ", ".join(p.words[:4]), p.action]
        for p in report.shadowing[:top]
    ]
    lines.append(table(["SKILL", "SHADOWED BY", "SCORE", "TAKEN", "WORDS", "ACTION"], rows))

    lines += ["", bold(f"Unreachable ({len(report.unreachable)})")]
    rows = [[u.skill, u.reason, u.action] for u in report.unreachable[:top]]
    lines.append(table(["SKILL", "WHY", "ACTION"], rows))

    lines += ["", bold("Risk (worst first)")]
    rows = [[r.skill, f"{r.score:.2f}", r.reasons[0], r.action] for r in report.risk[:top]]
    lines.append(table(["SKILL", "RISK", "MAIN REASON", "ACTION"], rows))

    lines += ["", bold("Listing budget")]
    for listing in report.listing.clients:
        lines.append(
            f"  {listing.client}: {listing.listed_chars:,} characters needed, "
            f"{listing.budget_chars:,} allowed; {len(listing.dropped)} descriptions dropped, "
            f"{len(listing.truncated)} cut — {listing.action}"
        )

    if report.triggers is not None:
        t = report.triggers
        lines += [
            "",
            bold(f"Trigger eval: {t.queries} ({t.count} requests)"),
            f"  precision {_pct(t.precision)}, recall {_pct(t.recall)}; lowest recall first:",
        ]
        rows = [
            [s.skill, _pct(s.precision), _pct(s.recall), ", ".join(s.missed_to), s.action]
            for s in t.skills[:top]
        ]
        lines.append(table(["SKILL", "PRECISION", "RECALL", "MISSED TO", "ACTION"], rows))
    lines += [
        "",
        f"{a.get('skills')} skills, {a.get('pseudo_requests')} pseudo-requests routed in "
        f"{a.get('seconds')} s ({a.get('encodings_computed')} encoded anew)"
        + (f"; HTML report: {html}" if html else ""),
    ]
    return "\n".join(lines)
