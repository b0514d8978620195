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


class ProgressBar:
    """A one-line progress bar on stderr, only when stderr is a terminal.

    Called as ``bar(done, total)``, or ``bar.build(what, done, total)`` for an index
    build (which reports each phase: reading skills, embedding vectors, ...).
    """

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self._last: tuple[str, int] = ("", -1)

    def __call__(self, done: int, total: int, what: str = "") -> None:
        if not self.enabled or total <= 0:
            return
        pct = done * 100 // total
        if (what, pct) == self._last and done != total:
            return
        self._last = (what, pct)
        width = 30
        filled = width * done // total
        bar = "#" * filled + "-" * (width - filled)
        label = f"{what} " if what else ""
        sys.stderr.write(f"\r{label}[{bar}] {done}/{total} ({pct}%)")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    def build(self, what: str, done: int, total: int) -> None:
        self(done, total, what)
