"""``skillrt stats --html FILE``: the recorded telemetry as one self-contained page.

Routes over time, the trigger rate over time, latency percentiles over time, and per
skill its selections, selection precision and success rate, drawn as plain SVG
(:mod:`skillrt.webpage`) from the recorded route events. The time buckets follow the
span the routes cover: the smallest of 10 s, 1 min, 5 min, 15 min, 1 h, 6 h, 1 day and
1 week that gives at most :data:`MAX_BUCKETS` points (UTC), so 24 routes of one minute
are a line, not one dot.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime

from skillrt.telemetry.metrics import RouteRecord, StatsReport, percentile
from skillrt.webpage import svg
from skillrt.webpage.page import cards, document, section, table

__all__ = ["buckets", "render_stats_html"]

HOUR, DAY = 3600, 86400
SKILL_ROWS = 30
#: Points a time chart has at most.
MAX_BUCKETS = 48
#: Bucket sizes in seconds, smallest first, with their labels' format.
SIZES = (
    (10, "%H:%M:%S"),
    (60, "%m-%d %H:%M"),
    (300, "%m-%d %H:%M"),
    (900, "%m-%d %H:%M"),
    (HOUR, "%m-%d %H:00"),
    (6 * HOUR, "%m-%d %H:00"),
    (DAY, "%Y-%m-%d"),
    (7 * DAY, "%Y-%m-%d"),
)


def bucket_size(span: float) -> tuple[int, str]:
    """The smallest bucket (seconds, label format) that shows ``span`` in at most
    :data:`MAX_BUCKETS` points; weeks beyond."""
    for size, fmt in SIZES:
        if span / size < MAX_BUCKETS:
            return size, fmt
    return SIZES[-1]


def buckets(routes: Sequence[RouteRecord]) -> tuple[list[str], list[list[RouteRecord]]]:
    """Routes grouped by a time bucket chosen from the span they cover, with labels."""
    if not routes:
        return [], []
    first, last = min(r.ts for r in routes), max(r.ts for r in routes)
    size, fmt = bucket_size(last - first)
    start = first - first % size
    count = int((last - start) // size) + 1
    groups: list[list[RouteRecord]] = [[] for _ in range(count)]
    for r in routes:
        groups[int((r.ts - start) // size)].append(r)
    labels = [datetime.fromtimestamp(start + k * size, tz=UTC).strftime(fmt) for k in range(count)]
    return labels, groups


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} ms"


def _every(routes: Sequence[RouteRecord]) -> str:
    if not routes:
        return "bucket"
    size, _ = bucket_size(max(r.ts for r in routes) - min(r.ts for r in routes))
    if size < 60:
        return f"{size} seconds"
    if size < HOUR:
        return f"{size // 60} minute" + ("s" if size > 60 else "")
    if size < DAY:
        return f"{size // HOUR} hour" + ("s" if size > HOUR else "")
    return "day" if size == DAY else "week"


def render_stats_html(report: StatsReport, routes: Sequence[RouteRecord]) -> str:
    """The page for ``report`` and the routes it was computed from."""
    m = report.overall
    labels, groups = buckets(routes)
    counts = [float(len(g)) for g in groups]
    trigger = [(100.0 * sum(1 for r in g if r.selected) / len(g)) if g else None for g in groups]
    p50 = [percentile([r.latency_ms for r in g], 50) if g else None for g in groups]
    p95 = [percentile([r.latency_ms for r in g], 95) if g else None for g in groups]
    skills = report.skills[:SKILL_ROWS]
    parts = [
        cards(
            [
                (f"{m.routes:,}", "routes"),
                (_pct(m.trigger_rate), "trigger rate"),
                (_pct(m.selection_precision), "selection precision"),
                (_pct(m.success_rate), "success rate"),
                (f"{_ms(m.latency_ms.p50)} / {_ms(m.latency_ms.p95)}", "latency p50 / p95"),
            ]
        ),
        section(
            "Routes over time",
            svg.lines(labels, [("routes", counts)]),
            f"Routes per {_every(routes)} (UTC).",
        ),
        section(
            "Trigger rate over time",
            svg.lines(labels, [("routes that selected a skill", trigger)], unit="%"),
        ),
        section(
            "Latency percentiles over time",
            svg.lines(labels, [("p50", p50), ("p95", p95)], unit=" ms"),
            "Routing latency of the recorded routes (query embedding included).",
        ),
        section(
            "Selections per skill",
            svg.bars([(s.name, float(s.selected)) for s in skills], unit="routes"),
            "How many recorded routes selected each skill (most first).",
        ),
        section(
            "Precision and success per skill",
            svg.paired_bars(
                [(s.name, s.precision, s.success_rate) for s in skills],
                ("selection precision", "success rate"),
            ),
            "Precision comes from `skillrt feedback`; success from execution results.",
        ),
        section(
            "Per skill",
            table(
                ["skill", "selected", "precision", "success", "fallback", "p50 / p95", "missed"],
                [
                    [
                        s.name,
                        s.selected,
                        _pct(s.precision),
                        _pct(s.success_rate),
                        _pct(s.fallback_rate),
                        f"{_ms(s.latency_ms.p50)} / {_ms(s.latency_ms.p95)}",
                        s.missed,
                    ]
                    for s in report.skills
                ],
            ),  # fmt: skip
        ),
    ]
    since = (
        datetime.fromtimestamp(report.since, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
        if report.since is not None
        else "the first recorded route"
    )
    now = datetime.fromtimestamp(time.time(), tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    return document("skillrt stats", f"routes since {since} · written {now}", "".join(parts))
