"""Charts as plain inline SVG: bars, paired bars, a heat map, lines.

No charting library: the reports must open offline from one file, and the charts they
need are a few rectangles and polylines. Every label is XML-escaped; every chart has a
``<title>`` per mark, so hovering shows the exact value.

Nothing is cut or drawn over: each chart's margins are made from its own labels'
widths (estimated generously for the 12 px system font: :func:`text_width`), legends are
laid out from their entries' widths, and every chart scales down with the page (its
``viewBox`` keeps the proportions), so a label that fits at the full width fits at any
width. Numbers carry thousands separators and their unit (:func:`number`).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["bars", "heat_map", "legend", "lines", "number", "paired_bars", "text_width"]

FONT = 'font-family="system-ui, sans-serif" font-size="12"'
BLUE, ORANGE, GREY, RED = "#3b6fb6", "#e08a2c", "#d9dde3", "#c0392b"
PALETTE = (BLUE, ORANGE, "#2e9c6a", "#8e5bb5", RED, "#6b7a8f")


#: Width of one character of the 12 px font, generous (the widest common glyphs), and
#: of the 10 px one.
CHAR_PX = 7.5
SMALL_CHAR_PX = 6.5


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _label(text: str, limit: int = 34) -> str:
    return escape(_clip(text, limit))


def text_width(text: str, char_px: float = CHAR_PX) -> float:
    """The width ``text`` takes at most, in pixels."""
    return len(text) * char_px


def number(value: float, unit: str = "") -> str:
    """``53440`` -> ``53,440``; ``0.8731`` -> ``0.87``; with ``unit`` after a space
    (``53,440 characters``) unless it is ``%``."""
    if value == int(value) and abs(value) < 1e15:
        text = f"{int(value):,}"
    elif abs(value) >= 100:
        text = f"{value:,.0f}"
    else:
        text = f"{value:,.2f}".rstrip("0").rstrip(".")
    if not unit:
        return text
    return f"{text}{unit}" if unit == "%" else f"{text} {unit.strip()}"


def _svg(width: float, height: float) -> str:
    """An SVG that scales down with the page (never up), keeping its proportions."""
    w, h = round(width), round(height)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" '
        f'height="{h}" style="max-width:100%;height:auto" role="img" {FONT}>'
    )


def legend(entries: Sequence[tuple[str, str]], x: float, y: float) -> tuple[list[str], float]:
    """Colour swatches and names side by side from ``x`` (wrapping is the caller's):
    the marks and the x after the last entry."""
    out = []
    for name, colour in entries:
        out.append(
            f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="10" height="10" fill="{colour}"/>'
            f'<text x="{x + 14:.1f}" y="{y:.1f}">{escape(name)}</text>'
        )
        x += 14 + text_width(name) + 18
    return out, x


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
    limit = 34
    left = 12 + max(text_width(_clip(label, limit)) for label, _ in items)
    right = 8 + max(text_width(number(v, unit)) for _, v in items)
    plot = max(160.0, width - left - right)
    row = 20
    height = row * len(items) + 24
    out = [_svg(left + plot + right, height)]
    for k, (label, value) in enumerate(items):
        y = 4 + k * row
        w = max(0.0, value) / top * plot
        shown = number(value, unit)
        out.append(
            f'<text x="{left - 6:.1f}" y="{y + 13}" text-anchor="end">{_label(label, limit)}</text>'
        )
        out.append(
            f'<rect x="{left:.1f}" y="{y + 2}" width="{w:.1f}" height="{row - 6}" fill="{BLUE}">'
            f"<title>{escape(label)}: {escape(shown)}</title></rect>"
        )
        out.append(f'<text x="{left + w + 4:.1f}" y="{y + 13}">{escape(shown)}</text>')
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
    limit = 34
    left = 12 + max(text_width(_clip(label, limit)) for label, _, _ in items)
    right = 8 + text_width("100%", SMALL_CHAR_PX)
    plot = max(160.0, width - left - right)
    row = 26
    height = row * len(items) + 30
    out = [_svg(left + plot + right, height)]
    marks, _ = legend(list(zip(names, (BLUE, ORANGE), strict=True)), left, height - 5)
    out += marks
    for k, (label, a, b) in enumerate(items):
        y = 2 + k * row
        out.append(
            f'<text x="{left - 6:.1f}" y="{y + 15}" text-anchor="end">{_label(label, limit)}</text>'
        )
        for n, (value, colour) in enumerate(((a, BLUE), (b, ORANGE))):
            yy = y + 2 + n * 11
            shown = "-" if value is None else f"{100 * value:.0f}%"
            w = 0.0 if value is None else max(0.0, min(1.0, value)) * plot
            out.append(
                f'<rect x="{left:.1f}" y="{yy}" width="{w:.1f}" height="9" fill="{colour}">'
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
    """A square matrix: row ``i`` loses requests to column ``j`` with ``cells[i, j]``.

    Column labels are turned 60 degrees; the top and right margins are made from the
    longest one, so none is cut."""
    if not labels:
        return '<p class="empty">nothing to show</p>'
    n = len(labels)
    rows = [_clip(label, 38) for label in labels]
    cols = [_clip(label, 28) for label in labels]
    longest = max(text_width(c) for c in cols)
    left = 12 + max(text_width(r) for r in rows)
    top = 16 + longest * 0.87  # sin 60
    size_w = left + n * cell + max(10.0, longest * 0.5 + 10 - cell)  # cos 60
    size_h = top + n * cell + 10
    out = [_svg(size_w, size_h)]
    peak = max(cells.values(), default=0.0) or 1.0
    for i, label in enumerate(labels):
        y = top + i * cell
        out.append(
            f'<text x="{left - 6:.1f}" y="{y + 15:.1f}" text-anchor="end">{escape(rows[i])}</text>'
        )
        x = left + i * cell + 15
        out.append(
            f'<text x="{x:.1f}" y="{top - 6:.1f}" transform="rotate(-60 {x:.1f} {top - 6:.1f})">'
            f"{escape(cols[i])}</text>"
        )
        for j in range(n):
            value = cells.get((i, j), 0.0)
            fill = GREY if i == j else _heat(value / peak)
            out.append(
                f'<rect x="{left + j * cell:.1f}" y="{y:.1f}" width="{cell - 1}" '
                f'height="{cell - 1}" fill="{fill}"><title>{escape(label)} → '
                f"{escape(labels[j])}: {value:.2f}</title></rect>"
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
    peak = max(values) or 1.0
    peak_text = number(peak, unit)
    left = 14 + text_width(peak_text)
    right = 10 + text_width(max(x_labels, key=len), SMALL_CHAR_PX) / 2
    top, bottom = 14, 48
    plot_w, plot_h = width - left - right, height - top - bottom
    n = len(x_labels)

    def x(k: int) -> float:
        return left + (plot_w * k / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return top + plot_h - v / peak * plot_h

    out = [_svg(width, height)]
    out.append(
        f'<line x1="{left:.1f}" y1="{top + plot_h}" x2="{left + plot_w:.1f}" y2="{top + plot_h}" '
        f'stroke="#999"/><line x1="{left:.1f}" y1="{top}" x2="{left:.1f}" y2="{top + plot_h}" '
        f'stroke="#999"/><text x="{left - 6:.1f}" y="{top + 8}" text-anchor="end">'
        f"{escape(peak_text)}</text>"
        f'<text x="{left - 6:.1f}" y="{top + plot_h}" text-anchor="end">0</text>'
    )
    # As many x labels as fit side by side (each gets its width and a gap).
    label_w = text_width(max(x_labels, key=len), SMALL_CHAR_PX) + 12
    fit = max(1, int(plot_w // label_w) + 1)
    step = max(1, -(-n // fit))
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
                    f"<title>{escape(name)} {escape(x_labels[k])}: "
                    f"{escape(number(v, unit))}</title></circle>"
                )
    marks, _ = legend(
        [(name, PALETTE[s % len(PALETTE)]) for s, (name, _) in enumerate(series)],
        left,
        height - 5,
    )
    out += marks
    out.append("</svg>")
    return "".join(out)
