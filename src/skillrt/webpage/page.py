"""One self-contained HTML page: inline CSS, inline SVG, no script, no network.

Opened from a file with no network, the page must show everything: no fonts, images or
scripts are fetched, and there is no JavaScript at all (nothing can log an error).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

__all__ = ["cards", "document", "section", "table"]

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d2430;background:#f6f7f9}
header{background:#1d2430;color:#fff;padding:18px 28px}
header h1{margin:0;font-size:22px} header p{margin:4px 0 0;color:#c5cbd5}
main{padding:8px 28px 40px;max-width:1200px}
section{background:#fff;border:1px solid #e1e4ea;border-radius:8px;margin:18px 0;
padding:14px 18px;overflow-x:auto}
h2{font-size:17px;margin:4px 0 10px} p.note{color:#5b6575;margin:4px 0 10px}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{text-align:left;padding:5px 8px;border-bottom:1px solid #eceef2;vertical-align:top}
th{background:#f0f2f5;font-weight:600}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:18px 0}
.card{background:#fff;border:1px solid #e1e4ea;border-radius:8px;padding:10px 16px;
min-width:140px} .card b{display:block;font-size:22px} .card span{color:#5b6575}
.empty{color:#8a93a3;font-style:italic} .bad{color:#c0392b} .ok{color:#2e7d4f}
"""


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """An HTML table; every cell is escaped."""
    if not rows:
        return '<p class="empty">none</p>'
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def section(title: str, body: str, note: str = "", anchor: str = "") -> str:
    """A titled block; ``body`` is trusted HTML (built from escaped parts)."""
    ident = f' id="{escape(anchor)}"' if anchor else ""
    note_html = f'<p class="note">{escape(note)}</p>' if note else ""
    return f"<section{ident}><h2>{escape(title)}</h2>{note_html}{body}</section>"


def cards(items: Sequence[tuple[str, str]]) -> str:
    """Headline numbers: ``(value, label)`` each."""
    inner = "".join(
        f'<div class="card"><b>{escape(v)}</b><span>{escape(k)}</span></div>' for v, k in items
    )
    return f'<div class="cards">{inner}</div>'


def document(title: str, subtitle: str, body: str) -> str:
    """The whole page."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{escape(title)}</h1><p>{escape(subtitle)}</p></header>"
        f"<main>{body}</main></body></html>\n"
    )
