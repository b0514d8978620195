"""``state``: where the state lives, and moving it (``state migrate``) to a shared store."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.cli.app import CliContext
    from skillrt.store.migrate import MigrationReport


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "state",
        parents=[common],
        help="the state store: where it is, its schema, moving it to PostgreSQL",
        description="Show the state store (--state DIR or a postgresql:// URL), or copy one "
        "into another with `state migrate`.",
    )
    ssub = p.add_subparsers(dest="state_command", metavar="ACTION")
    info = ssub.add_parser(
        "info", parents=[common], help="backend, location, schema version and row counts"
    )
    info.set_defaults(handler=cmd_info)
    mig = ssub.add_parser(
        "migrate",
        parents=[common],
        help="copy a SQLite state folder into an empty PostgreSQL store, then check counts",
        description="Copy enable state, stats, route events, feedback, executions, workflow "
        "runs and domain learnings from --from into the empty store --to (one transaction), "
        "then count every table again. Stop the processes using the source first.",
    )
    mig.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="DIR|URL",
        help="the state to copy: a state folder (its state.db), a .db file or a URL",
    )
    mig.add_argument(
        "--to",
        dest="target",
        metavar="URL",
        help="the empty store to fill (default: state.url of the config)",
    )
    mig.add_argument(
        "--schema", metavar="NAME", help="PostgreSQL schema of the target (default: state.schema)"
    )
    mig.add_argument(
        "--learnings",
        metavar="DIR",
        help="<domain>.md learnings files to import (default: <from>/learnings)",
    )
    mig.set_defaults(handler=cmd_migrate)
    p.set_defaults(handler=cmd_info)


def cmd_info(ctx: CliContext) -> int:
    from skillrt.store.schema import latest_version

    store = ctx.runtime.store
    data: dict[str, Any] = {
        "backend": store.backend,
        "location": store.location,
        "schema_version": store.schema_version(),
        "supported_version": latest_version(),
        "shared": store.shared,
        "cache": store.local.location,
        "tables": store.table_counts(),
    }

    def human() -> str:
        lines = [
            f"backend         {data['backend']}",
            f"location        {data['location']}",
            f"schema version  {data['schema_version']} (this skillrt: {data['supported_version']})",
            f"local cache     {data['cache']}",
            "",
        ]
        lines += [f"{t:<22} {n:>10}" for t, n in data["tables"].items()]
        return "\n".join(lines)

    ctx.emit(data, human)
    return 0


def cmd_migrate(ctx: CliContext) -> int:
    import dataclasses

    from skillrt.errors import StoreError, UsageError
    from skillrt.store.backends import backend_for, is_store_url, open_location, url_examples
    from skillrt.store.migrate import copy_state

    args = ctx.args
    config = ctx.config()
    target_url = args.target or config.state.url
    if not target_url:
        raise UsageError(f"give the target store: --to {url_examples()} (or state.url in config)")
    source_text = args.source
    learnings = Path(args.learnings) if args.learnings else None
    if is_store_url(source_text):
        source = open_location(source_text, read_only=True)
    else:
        path = Path(source_text)
        db = path / "state.db" if path.is_dir() else path
        if not db.is_file():
            raise UsageError(f"no state store at {db}", path=str(db))
        source = open_location(db, read_only=True)
        if learnings is None and path.is_dir():
            learnings = path / "learnings"
    settings = dataclasses.replace(
        config.state, schema=args.schema or config.state.schema, pool_size=2
    )
    target = backend_for(target_url).from_settings(target_url, settings, cache_path=None)
    try:
        report = copy_state(source, target, learnings_dir=learnings)
    finally:
        source.close()
        target.close()
    ctx.emit(report, lambda: _render(report))
    if not report.ok:
        raise StoreError(
            "the copy's counts do not match the source's",
            tables=[t.table for t in report.tables if not t.ok],
        )
    return 0


def _render(report: MigrationReport) -> str:
    lines = [f"copied {report.source}", f"  into {report.target}", ""]
    lines.append(f"{'table':<22} {'source':>10} {'target':>10}")
    for t in report.tables:
        mark = "" if t.ok else "  MISMATCH"
        lines.append(f"{t.table:<22} {t.source_rows:>10} {t.target_rows:>10}{mark}")
    lines.append("")
    lines.append("counts verified" if report.ok else "counts DO NOT match")
    return "\n".join(lines)
