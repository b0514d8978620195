"""``stats`` and ``feedback``: routing metrics (T2) and recorded right answers."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillrt.cli.context import CliContext
    from skillrt.telemetry.metrics import Metrics, StatsReport


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "stats",
        parents=[common],
        help="routing metrics: trigger rate, precision, success, fallback, latency, tokens",
        description="Metrics over the recorded routes (seed 001 §14), overall and per skill. "
        "selection_precision comes from `skillrt feedback`.",
    )
    p.add_argument(
        "--since",
        metavar="WHEN",
        help="only routes since an ISO date/time (2026-01-31T09:00) or a duration ago (24h, 7d)",
    )
    p.add_argument(
        "--by-config",
        action="store_true",
        help="compare the gray-release routing configs side by side",
    )
    p.add_argument(
        "--triggers",
        action="store_true",
        help="list triggers that fire often but whose routes rarely succeed or get corrected",
    )
    p.add_argument(
        "--top", type=int, default=20, metavar="N", help="skills shown in the table (default 20)"
    )
    p.add_argument(
        "--html",
        metavar="FILE",
        help="also write the metrics as charts in one self-contained HTML page",
    )
    p.set_defaults(handler=cmd_stats)

    p = sub.add_parser(
        "feedback",
        parents=[common],
        help="record the right answer for a route (for selection_precision)",
    )
    p.add_argument("route_id", metavar="ROUTE_ID")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--correct",
        action="append",
        metavar="NAME",
        help="a skill that should have been selected (repeat for a multi-skill plan)",
    )
    group.add_argument("--none", action="store_true", help="no skill was the right answer")
    p.add_argument("--note", metavar="TEXT", help="a free-text note kept with the answer")
    p.set_defaults(handler=cmd_feedback)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _metric_rows(m: Metrics) -> list[tuple[str, str]]:
    return [
        ("routes", str(m.routes)),
        ("trigger_rate", f"{_pct(m.trigger_rate)} ({m.triggered})"),
        ("selection_precision", f"{_pct(m.selection_precision)} (n={m.with_feedback})"),
        ("success_rate", f"{_pct(m.success_rate)} (n={m.executed})"),
        ("fallback_rate", _pct(m.fallback_rate)),
        ("latency p50/p95 ms", f"{_ms(m.latency_ms.p50)} / {_ms(m.latency_ms.p95)}"),
        ("avg_token_cost", _num(m.avg_token_cost)),
    ]


def render(report: StatsReport, *, top: int) -> str:
    from skillrt.cli.output import bold, table

    lines = [bold("Overall")]
    lines += [f"  {k:<22} {v}" for k, v in _metric_rows(report.overall)]
    if report.by_config:
        ids = list(report.by_config)
        rows = [
            [label, *values]
            for label, *values in zip(
                [k for k, _ in _metric_rows(report.overall)],
                *[[v for _, v in _metric_rows(report.by_config[c])] for c in ids],
                strict=True,
            )
        ]
        lines += ["", bold("By config"), table(["METRIC", *ids], rows)]
    if report.skills:
        rows = [
            [
                s.name,
                str(s.selected),
                _pct(s.precision),
                _pct(s.success_rate),
                _pct(s.fallback_rate),
                f"{_ms(s.latency_ms.p50)}/{_ms(s.latency_ms.p95)}",
                _num(s.avg_token_cost),
                str(s.missed),
            ]
            for s in report.skills[:top]
        ]
        lines += [
            "",
            bold("Per skill"),
            table(
                [
                    "SKILL",
                    "SELECTED",
                    "PRECISION",
                    "SUCCESS",
                    "FALLBACK",
                    "P50/P95 MS",
                    "TOKENS",
                    "MISSED",
                ],
                rows,
            ),
        ]
        if len(report.skills) > top:
            lines.append(f"  ... {len(report.skills) - top} more (--top N or --json)")
    if report.triggers is not None:
        flagged = [t for t in report.triggers if t.prune]
        rows = [
            [
                t.skill,
                t.trigger,
                str(t.fires),
                _pct(t.success_rate),
                _pct(t.correction_rate),
                "; ".join(t.reasons) or "-",
            ]
            for t in flagged
        ]
        lines += [
            "",
            bold(f"Triggers to prune ({len(flagged)} of {len(report.triggers)} that fired)"),
            table(["SKILL", "TRIGGER", "FIRES", "SUCCESS", "CORRECTED", "WHY"], rows),
        ]
    if report.overall.routes == 0:
        lines.append("\nno routes recorded yet (route with `skillrt route` or the MCP server)")
    gone = report.unrecorded or {}
    if gone.get("pending") or gone.get("lost"):
        lines.append(
            f"\nroute events of this machine not in the store: {gone.get('pending', 0)} "
            f"waiting in {gone.get('outbox')} (written once the store is reachable), "
            f"{gone.get('lost', 0)} lost"
        )
    return "\n".join(lines)


def cmd_stats(ctx: CliContext) -> int:
    from skillrt.errors import UsageError
    from skillrt.telemetry.report import parse_since

    if ctx.args.top < 0:
        raise UsageError("--top must be >= 0")
    since = parse_since(ctx.args.since)
    report = ctx.runtime.stats(
        since=since, by_config=ctx.args.by_config, triggers=ctx.args.triggers
    )
    if ctx.args.html:
        from pathlib import Path

        from skillrt.atomic import atomic_write_text

        path = Path(ctx.args.html)
        try:
            atomic_write_text(path, ctx.runtime.stats_html(since=since), shared=True)
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc}", path=str(path)) from exc
    ctx.emit(report, lambda: render(report, top=ctx.args.top))
    return 0


def cmd_feedback(ctx: CliContext) -> int:
    fb = ctx.runtime.feedback(
        ctx.args.route_id,
        correct=ctx.args.correct,
        none=ctx.args.none,
        note=ctx.args.note,
        source="cli",
    )
    answer = ", ".join(fb.correct) if fb.correct else "no skill"
    ctx.emit(
        {
            "route_id": fb.route_id,
            "correct": list(fb.correct),
            "none": fb.none,
            "note": fb.note,
            "recorded_at": fb.created_at,
        },
        f"recorded for {fb.route_id}: {answer}",
    )
    return 0
