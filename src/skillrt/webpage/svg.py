"""Charts as plain inline SVG: bars, paired bars, a heat map, lines.

No charting library: the reports must open offline from one file, and the charts they
need are a few rectangles and polylines. Every label is XML-escaped; every chart has a
``<title>`` per mark, so hovering shows the exact value.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["bars", "heat_map", "lines", "paired_bars"]

FONT = 'font-family="system-ui, sans-serif" font-size="12"'
BLUE, ORANGE, GREY, RED = "#3b6fb6", "#e08a2c", "#d9dde3", "#c0392b"
PALETTE = (BLUE, ORANGE, "#2e9c6a", "#8e5bb5", RED, "#6b7a8f")


def _label(text: str, limit: int = 34) -> str:
    return escape(text if len(text) <= limit else text[: limit - 1] + "…")


def bars(
    items: Sequence[tuple[str, float]],
    *,
    maximum: float | None = None,
    unit: str = "",
    marker: float | None = None,
    marker_label: str = "",
    width: int = 640,
) -> str:
    """Horizontal bars, one row per ``(label, value)``; ``marker``: a vertical line (a
    budget, a threshold) at that value."""
    if not items:
        return '<p class="empty">nothing to show</p>'
    top = max([maximum or 0.0, marker or 0.0, *(v for _, v in items)]) or 1.0
    left, row, plot = 260, 20, width - 260 - 70
    height = row * len(items) + 24
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" {FONT}>']  # fmt: skip
    for k, (label, value) in enumerate(items):
        y = 4 + k * row
        w = max(0.0, value) / top * plot
        out.append(f'<text x="{left - 6}" y="{y + 13}" text-anchor="end">{_label(label)}</text>')
        out.append(
            f'<rect x="{left}" y="{y + 2}" width="{w:.1f}" height="{row - 6}" fill="{BLUE}">'
            f"<title>{escape(label)}: {value:g}{escape(unit)}</title></rect>"
        )
        out.append(f'<text x="{left + w + 4:.1f}" y="{y + 13}">{value:g}{escape(unit)}</text>')
    if marker is not None:
        x = left + marker / top * plot
        out.append(
            f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height - 16}" stroke="{RED}" '
            f'stroke-dasharray="4 3"/><text x="{x:.1f}" y="{height - 3}" fill="{RED}" '
            f'text-anchor="middle">{escape(marker_label)}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def paired_bars(
    items: Sequence[tuple[str, float | None, float | None]],
    names: tuple[str, str],
    *,
    width: int = 640,
) -> str:
    """Two bars per row (values in 0..1, drawn as percentages): e.g. precision, recall."""
    if not items:
        return '<p class="empty">nothing to show</p>'
    left, row, plot = 260, 26, width - 260 - 60
    height = row * len(items) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" {FONT}>']  # fmt: skip
    for n, (name, colour) in enumerate(zip(names, (BLUE, ORANGE), strict=True)):
        x = left + n * 110
        out.append(
            f'<rect x="{x}" y="{height - 14}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{x + 14}" y="{height - 5}">{escape(name)}</text>'
        )
    for k, (label, a, b) in enumerate(items):
        y = 2 + k * row
        out.append(f'<text x="{left - 6}" y="{y + 15}" text-anchor="end">{_label(label)}</text>')
        for n, (value, colour) in enumerate(((a, BLUE), (b, ORANGE))):
            yy = y + 2 + n * 11
            shown = "-" if value is None else f"{100 * value:.0f}%"
            w = 0.0 if value is None else max(0.0, min(1.0, value)) * plot
            out.append(
                f'<rect x="{left}" y="{yy}" width="{w:.1f}" height="9" fill="{colour}">'
                f"<title>{escape(label)} {escape(names[n])}: {shown}</title></rect>"
                f'<text x="{left + w + 4:.1f}" y="{yy + 8}" font-size="10">{shown}</text>'
            )
    out.append("</svg>")
    return "".join(out)


def _heat(value: float) -> str:
    """White (0) to dark red (1)."""
    v = max(0.0, min(1.0, value))
    r, g, b = 255 - int(63 * v), 255 - int(198 * v), 255 - int(212 * v)
    return f"rgb({r},{g},{b})"


def heat_map(labels: Sequence[str], cells: dict[tuple[int, int], float], *, cell: int = 22) -> str:
    """A square matrix: row ``i`` loses requests to column ``j`` with ``cells[i, j]``."""
    if not labels:
        return '<p class="empty">nothing to show</p>'
    n = len(labels)
    left, top = 260, 200
    size_w, size_h = left + n * cell + 10, top + n * cell + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size_w}" height="{size_h}" '
           f'viewBox="0 0 {size_w} {size_h}" role="img" {FONT}>']  # fmt: skip
    peak = max(cells.values(), default=0.0) or 1.0
    for i, label in enumerate(labels):
        y = top + i * cell
        out.append(
            f'<text x="{left - 6}" y="{y + 15}" text-anchor="end">{_label(label, 38)}</text>'
        )
        x = left + i * cell + 15
        out.append(
            f'<text x="{x}" y="{top - 6}" transform="rotate(-60 {x} {top - 6})">'
            f"{_label(label, 28)}</text>"
        )
        for j in range(n):
            value = cells.get((i, j), 0.0)
            fill = GREY if i == j else _heat(value / peak)
            out.append(
                f'<rect x="{left + j * cell}" y="{y}" width="{cell - 1}" height="{cell - 1}" '
                f'fill="{fill}"><title>{escape(label)} → {escape(labels[j])}: '
                f"{value:.2f}</title></rect>"
            )
    out.append("</svg>")
    return "".join(out)


def lines(
    x_labels: Sequence[str],
    series: Sequence[tuple[str, Sequence[float | None]]],
    *,
    unit: str = "",
    width: int = 700,
    height: int = 220,
) -> str:
    """Line chart of each series over ``x_labels`` (None: no point)."""
    values = [v for _, ys in series for v in ys if v is not None]
    if not x_labels or not values:
        return '<p class="empty">nothing to show</p>'
    left, right, top, bottom = 60, 20, 14, 48
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max(values) or 1.0
    n = len(x_labels)

    def x(k: int) -> float:
        return left + (plot_w * k / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return top + plot_h - v / peak * plot_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" {FONT}>']  # fmt: skip
    out.append(
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
        f'stroke="#999"/><line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" '
        f'stroke="#999"/><text x="{left - 6}" y="{top + 8}" text-anchor="end">'
        f"{peak:g}{escape(unit)}</text>"
        f'<text x="{left - 6}" y="{top + plot_h}" text-anchor="end">0</text>'
    )
    step = max(1, n // 8)
    for k in range(0, n, step):
        out.append(
            f'<text x="{x(k):.1f}" y="{top + plot_h + 16}" text-anchor="middle" '
            f'font-size="10">{escape(x_labels[k])}</text>'
        )
    for s, (name, ys) in enumerate(series):
        colour = PALETTE[s % len(PALETTE)]
        points = [(x(k), y(v), v) for k, v in enumerate(ys) if v is not None]
        if len(points) > 1:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py, _ in points)
            out.append(
                f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>'
            )
        for k, v in enumerate(ys):
            if v is not None:
                out.append(
                    f'<circle cx="{x(k):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}">'
                    f"<title>{escape(name)} {escape(x_labels[k])}: {v:g}{escape(unit)}</title>"
                    "</circle>"
                )
        lx = left + s * 150
        out.append(
            f'<rect x="{lx}" y="{height - 14}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{lx + 14}" y="{height - 5}">{escape(name)}</text>'
        )
    out.append("</svg>")
    return "".join(out)
