"""Cut activated mentions and command lines out of a message, tidying only the seams.

Only the whitespace right at each cut changes, so code blocks and the rest of the
message keep their exact bytes: a cut at the start of a line drops the spaces after it,
a cut at the end of a line drops the spaces before it, a cut before punctuation closes
the gap (``use $tdd, then`` -> ``use, then``) and a cut between words leaves one space.
"""

from __future__ import annotations

from collections.abc import Iterable

_HSPACE = " \t"
_CLOSERS = frozenset(",.;:!?)]}…")


def remove_spans(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` without ``spans`` (``[start, end)``, may overlap), seams tidied, stripped."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    if not merged:
        return text
    pieces: list[str] = []
    pos = 0
    for start, end in merged:
        left = text[pos:start]
        pieces.append(left)
        pos = end
        if text[end - 1 : end] == "\n":
            continue  # a whole line went: nothing to tidy, keep the next line's indent
        # Seam between what is kept so far and what follows this cut.
        right_start = pos
        while right_start < len(text) and text[right_start] in _HSPACE:
            right_start += 1
        last = _tail(pieces)
        at_line_start = last == "" or last.endswith("\n")
        next_char = text[right_start] if right_start < len(text) else "\n"
        if at_line_start:
            pos = right_start
        elif next_char in "\r\n" or next_char in _CLOSERS:
            _rstrip_tail(pieces)
            pos = right_start
        else:
            had_space = right_start > end or last[-1:] in (" ", "\t")
            _rstrip_tail(pieces)
            if had_space:
                pieces.append(" ")
            pos = right_start
    pieces.append(text[pos:])
    return "".join(pieces).strip()


def _tail(pieces: list[str]) -> str:
    """The kept text so far with trailing spaces/tabs removed (only the seam matters)."""
    for piece in reversed(pieces):
        stripped = piece.rstrip(_HSPACE)
        if stripped:
            return stripped
    return ""


def _rstrip_tail(pieces: list[str]) -> None:
    while pieces:
        stripped = pieces[-1].rstrip(_HSPACE)
        if stripped:
            pieces[-1] = stripped
            return
        pieces.pop()
