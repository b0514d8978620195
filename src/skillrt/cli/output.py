"""Small helpers for human output: aligned tables, colour only on a terminal."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence


def use_colour() -> bool:
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def bold(text: str) -> str:
    return f"\033[1m{text}\033[0m" if use_colour() else text


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns; the last column is not padded."""
    if not rows:
        return "(none)"
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers) - 1)]

    def line(cells: Sequence[str]) -> str:
        parts = [str(c).ljust(w) for c, w in zip(cells, widths, strict=False)]
        return "  ".join([*parts, str(cells[-1])]).rstrip()

    return "\n".join([bold(line(headers)), *(line(r) for r in rows)])
