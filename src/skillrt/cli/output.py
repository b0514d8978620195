"""Small helpers for human output: aligned tables, colour only on a terminal."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import TextIO


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
    build (which reports each phase: reading skills, embedding vectors, ...). Once a
    phase has run a second, the bar says how long the rest should take, at the pace so
    far (:func:`estimate`); ``done`` and ``total`` may count anything that takes
    evenly long (the vector cache counts characters, so long texts weigh more).
    """

    def __init__(self, *, stream: TextIO | None = None, clock: Callable[[], float] | None = None):
        self.stream = stream or sys.stderr
        self.enabled = stream is not None or sys.stderr.isatty()
        self._clock = clock or time.monotonic
        self._last: tuple[str, int, str] = ("", -1, "")
        #: When each phase started (its first report).
        self._started: dict[str, float] = {}

    def __call__(self, done: int, total: int, what: str = "") -> None:
        if not self.enabled or total <= 0:
            return
        now = self._clock()
        started = self._started.setdefault(what, now)
        if done == 0:
            self._started[what] = started = now
        pct = min(100, done * 100 // total)
        eta = estimate(now - started, done, total) if done < total else ""
        if (what, pct, eta) == self._last and done != total:
            return
        self._last = (what, pct, eta)
        width = 30
        filled = min(width, width * done // total)
        bar = "#" * filled + "-" * (width - filled)
        label = f"{what} " if what else ""
        tail = f", about {eta} left" if eta else ""
        # Pad over a longer line drawn before (the estimate shrinks).
        self.stream.write(f"\r{label}[{bar}] {pct}%{tail}\033[K")
        if done >= total:
            self.stream.write("\n")
            self._started.pop(what, None)
        self.stream.flush()

    def build(self, what: str, done: int, total: int) -> None:
        self(done, total, what)


def estimate(elapsed: float, done: int, total: int) -> str:
    """The time the rest of a job should take at its pace so far ("" until a second of
    it has run and some of it is done): "12 s", "3 min"."""
    if elapsed < 1.0 or done <= 0 or done >= total:
        return ""
    left = elapsed * (total - done) / done
    if left < 60:
        return f"{max(1, round(left))} s"
    return f"{round(left / 60)} min"
