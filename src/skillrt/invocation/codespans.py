"""Where the code is in a message: fenced blocks and inline code spans (seed 004 §6).

A ``$`` inside code is never a skill mention, so the scanner asks a :class:`CodeMask`
whether a position is code. The rules follow CommonMark closely enough for chat text:

* A fence is a line of three or more backticks or tildes (after any indentation and
  ``>`` quote markers); it closes at a line of the same character, at least as long,
  with nothing else on it. An unclosed fence runs to the end of the text.
* A backtick fence whose info string holds a backtick is not a fence (CommonMark).
* An inline span opens with a run of N backticks and closes at the next run of exactly
  N backticks in the same paragraph (no blank line between); an unmatched run is literal.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*\r?\n")
#: A fence may be indented (lists, quotes), but not by more than this many characters.
_MAX_FENCE_INDENT = 64


class CodeMask:
    """Sorted, non-overlapping ``[start, end)`` spans of code in a text."""

    __slots__ = ("_starts", "spans")

    def __init__(self, spans: tuple[tuple[int, int], ...]) -> None:
        self.spans = spans
        self._starts = [s for s, _ in spans]

    def covers(self, pos: int) -> bool:
        """True when ``pos`` lies inside a fenced block or an inline code span."""
        i = bisect_right(self._starts, pos) - 1
        return i >= 0 and pos < self.spans[i][1]

    def __repr__(self) -> str:
        return f"CodeMask({self.spans!r})"


EMPTY_MASK = CodeMask(())


def code_mask(text: str) -> CodeMask:
    """Find every fenced block and inline code span of ``text``."""
    if "`" not in text and "~~~" not in text:
        return EMPTY_MASK
    fences = _fenced_blocks(text)
    blanks = [m.start() for m in _BLANK_LINE.finditer(text)] if "`" in text else []
    spans: list[tuple[int, int]] = []
    pos = 0
    for start, end in fences:
        if pos < start:
            spans.extend(_inline_spans(text, pos, start, blanks))
        spans.append((start, end))
        pos = end
    if pos < len(text):
        spans.extend(_inline_spans(text, pos, len(text), blanks))
    return CodeMask(tuple(spans))


def _fence_lines(text: str) -> list[tuple[int, int, str, int, str]]:
    """Lines that open or close a fence: ``(line_start, line_end, char, run_length, rest)``.

    Found with ``str.find`` on the literal markers (far faster than a line regex), then
    checked: the run must start the line after indentation and ``>`` quote markers.
    """
    n = len(text)
    found: list[tuple[int, int, str, int, str]] = []
    for marker in ("```", "~~~"):
        char = marker[0]
        pos = text.find(marker)
        # Line starts are tracked incrementally: one long line full of markers must not
        # cost a backwards scan per marker (quadratic on hostile input).
        seen_to, line_start = 0, 0
        while pos >= 0:
            if pos == 0 or text[pos - 1] != char:
                nl = text.rfind("\n", seen_to, pos)
                if nl >= 0:
                    line_start = nl + 1
                seen_to = pos
                prefix_len = pos - line_start
                if prefix_len <= _MAX_FENCE_INDENT and not text[line_start:pos].strip(" \t>"):
                    run_end = pos + 3
                    while run_end < n and text[run_end] == char:
                        run_end += 1
                    line_end = text.find("\n", run_end)
                    if line_end < 0:
                        line_end = n
                    found.append(
                        (line_start, line_end, char, run_end - pos, text[run_end:line_end])
                    )
            pos = text.find(marker, pos + 1)
    found.sort()
    return found


def _fenced_blocks(text: str) -> list[tuple[int, int]]:
    blocks: list[tuple[int, int]] = []
    open_at = -1
    open_char = ""
    open_len = 0
    for line_start, line_end, char, length, rest in _fence_lines(text):
        if open_at < 0:
            if char == "`" and "`" in rest:
                continue  # "```code```" on one line is an inline span, not a fence
            open_at, open_char, open_len = line_start, char, length
        elif line_start > open_at and char == open_char and length >= open_len and not rest.strip():
            blocks.append((open_at, line_end))
            open_at = -1
    if open_at >= 0:
        blocks.append((open_at, len(text)))
    return blocks


def _inline_spans(text: str, start: int, end: int, blanks: list[int]) -> list[tuple[int, int]]:
    """Inline code spans in ``text[start:end]`` (a region with no fenced block).

    ``blanks`` holds the start of every blank-line break in ``text``, sorted: a span
    cannot cross one, and a bisect answers that without rescanning the text.
    """
    if text.find("`", start, end) < 0:
        return []
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text, start, end)]
    # For each run length, the indices of the runs with that length, in order, so the
    # matching closer is found without rescanning (no quadratic blow-up on hostile input).
    by_len: dict[int, list[int]] = {}
    for i, (s, e) in enumerate(runs):
        by_len.setdefault(e - s, []).append(i)
    cursor_by_len: dict[int, int] = dict.fromkeys(by_len, 0)
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        s, e = runs[i]
        n = e - s
        same = by_len[n]
        k = cursor_by_len[n]
        while k < len(same) and same[k] <= i:
            k += 1
        cursor_by_len[n] = k
        if k < len(same):
            j = same[k]
            closer_start, closer_end = runs[j]
            b = bisect_left(blanks, e)
            if b == len(blanks) or blanks[b] >= closer_start:
                spans.append((s, closer_end))
                i = j + 1
                continue
        i += 1  # an unmatched run is literal text
    return spans
