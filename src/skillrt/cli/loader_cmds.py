"""``show`` (Level 2: a skill's body) and ``read`` (Level 3: one resource excerpt).

Human output: the text on stdout, then one report line (and any degraded-load
warning) on stderr, so ``skillrt read … > excerpt.md`` captures only the text.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from skillrt.cli.daemon_use import add_daemon_options

if TYPE_CHECKING:
    from skillrt.cli.context import CliContext
    from skillrt.loading.report import LoadResult


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "show",
        parents=[common],
        help="print a skill's SKILL.md body (Level 2) and its load report",
        description="Print a skill's body (frontmatter stripped) within the configured "
        "limits; an over-limit body is truncated to its key sections or refused, per "
        "limits.body_policy.",
    )
    p.add_argument("name", metavar="NAME", help="skill name (ns:name or a unique bare name)")
    _shared(p)
    add_daemon_options(p)
    p.set_defaults(handler=cmd_show)

    p = sub.add_parser(
        "read",
        parents=[common],
        help="print one file of a skill (Level 3): a section excerpt or its head",
        description="Read one file inside a skill's folder. Paths are relative to the "
        "skill; '..', absolute paths, links out of the folder, binaries and files over "
        "limits.max_resource_file_bytes are refused.",
    )
    p.add_argument("name", metavar="NAME", help="skill name (ns:name or a unique bare name)")
    p.add_argument("path", metavar="RELATIVE_PATH", help="e.g. references/checklist.md")
    p.add_argument(
        "--section",
        metavar="HEADING",
        help='heading to excerpt, e.g. "## Security" (that level) or "Security" (any '
        "level); for JSON/YAML, a top-level key",
    )
    p.add_argument(
        "--full",
        action="store_true",
        help="ask for the whole content; over the excerpt cap it is spilled to "
        ".agent/runs/<run_id>/observations/ and the excerpt says where",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="fail (SectionNotFound) instead of falling back to the head",
    )
    _shared(p)
    p.set_defaults(handler=cmd_read)


def _shared(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--inject",
        action="store_true",
        help="print the context injection block ([Skill: …] header lines + text)",
    )
    p.add_argument(
        "--run-id", metavar="ID", help="run whose observations folder receives spilled content"
    )
    p.add_argument("--no-spill", action="store_true", help="never write spilled content to disk")


def _emit(ctx: CliContext, result: LoadResult) -> int:
    from skillrt.loading.report import injection_block

    block = injection_block(None, result) if ctx.args.inject else None
    if ctx.json:
        data: dict[str, Any] = {"text": result.text, "report": result.report}
        if block is not None:
            data["injection"] = block
        ctx.emit(data)
        return 0
    out = block if block is not None else result.text
    sys.stdout.write(out if out.endswith("\n") else out + "\n")
    sys.stdout.flush()
    report = result.report
    for err in report.errors:
        sys.stderr.write(f"skillrt: warning [{err.get('code')}]: {err.get('message')}\n")
        suggestions = err.get("suggestions") or []
        if suggestions:
            sys.stderr.write(f"skillrt: did you mean: {', '.join(suggestions)}\n")
    if report.dropped_sections:
        sys.stderr.write(f"skillrt: left out: {'; '.join(report.dropped_sections)}\n")
    sys.stderr.write(f"skillrt: {report.summary()}\n")
    return 0


def cmd_show(ctx: CliContext) -> int:
    from skillrt.cli.daemon_use import ask_daemon

    a = ctx.args
    request = {"name": a.name, "model": False, "spill": not a.no_spill, "run_id": a.run_id}
    data = ask_daemon(ctx, "activate", {k: v for k, v in request.items() if v is not None})
    if data is not None:
        from skillrt.loading.report import LoadReport, LoadResult
        from skillrt.serialize import from_jsonable

        result = LoadResult(data["text"], from_jsonable(LoadReport, data["report"]))
    else:
        result = ctx.runtime.load_body(a.name, run_id=a.run_id, spill=not a.no_spill)
    return _emit(ctx, result)


def cmd_read(ctx: CliContext) -> int:
    a = ctx.args
    result = ctx.runtime.read_resource(
        a.name,
        a.path,
        a.section,
        run_id=a.run_id,
        full=a.full,
        strict=a.strict,
        spill=not a.no_spill,
    )
    return _emit(ctx, result)
