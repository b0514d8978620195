"""Markdown headings and excerpts (seed 003 §3.2, §5.3).

:func:`scan_headings` finds ATX headings (``#`` to ``######``, up to three leading
spaces, optional closing ``#``s) and setext headings (a paragraph underlined with ``===``
or ``---``), and ignores anything inside fenced code blocks (``` or ~~~, longer fences,
info strings; an unclosed fence runs to the end). A ``---`` after a blank line is a
thematic break, not a heading, and a leading YAML front matter block is skipped.

Speed: a 2 MB reference is scanned with one multiline regex that only stops on lines
that could matter (``#``, fences, underlines), so the Python loop runs per candidate line,
not per line. Texts are expected with ``\\n`` line ends (the loader normalises them).
"""

from __future__ import annotations

import difflib
import re
import threading
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

# Lines that may be structural: an ATX heading (hashes, text), a fence (run, info), or
# a setext underline. The pattern starts with a literal "\n" rather than "^" under re.M,
# and a lookahead on the first significant character: CPython then jumps between
# newlines with a fast search instead of trying every offset (about 5x on 2 MB).
_CANDIDATE = re.compile(
    r"\n {0,3}(?=[#`~=-])(?:"
    r"(#{1,6})(?:[ \t]+([^\n]*))?(?=\n|\Z)"
    r"|(`{3,}|~{3,})([^\n]*)"
    r"|(=+|-+)[ \t]*(?=\n|\Z))"
)
_FM_CLOSE = re.compile(r"\n(?:---|\.\.\.)[ \t]*(?=\n|\Z)")
_ATX_CLOSE = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_HR = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_ATX_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_FENCE_OPEN = re.compile(r"^ {0,3}(?:`{3,}|~{3,})")
_CONTAINER = re.compile(r"^ {0,3}(?:[-+*][ \t]|[-+*]$|\d{1,9}[.)](?:[ \t]|$)|>)")
_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_HINT = re.compile(r"^(#{1,6})[ \t]*(.*?)$")
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*[.)]?|[ivxlc]+[.)])\s+")
_INLINE_MARKS = re.compile(r"[`*_]+")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Heading:
    """A heading: its level, its text, and where it sits in the document."""

    level: int
    text: str
    #: Offset of the heading's first line (a setext heading starts at its paragraph).
    start: int
    #: Offset just past the heading (past the underline for setext).
    end: int

    def render(self) -> str:
        """The heading as an ATX line, which is also a valid ``section_hint``."""
        return f"{'#' * self.level} {self.text}"


def _front_matter_end(text: str) -> int:
    """Offset after a leading YAML front matter block, or 0."""
    if not text.startswith("---\n"):
        return 0
    m = _FM_CLOSE.search(text, 3)
    if m is None:
        return 0
    return min(len(text), m.end() + 1)


def _is_blank(line: str) -> bool:
    return not line.strip()


def _setext_paragraph(text: str, line_start: int) -> tuple[int, str] | None:
    """If the line at ``line_start`` underlines a paragraph, its (start, text)."""
    lines: list[str] = []
    pos = line_start
    first = line_start
    while pos > 0:
        prev_start = text.rfind("\n", 0, pos - 1) + 1
        line = text[prev_start : pos - 1]
        if _is_blank(line):
            break
        if _ATX_LINE.match(line) or _FENCE_OPEN.match(line) or _HR.match(line):
            break
        if _UNDERLINE.match(line):
            break  # under a heading already, or an underline-like line: not a paragraph
        if _CONTAINER.match(line):
            return None  # a list item or a quote: '---' under it is a thematic break
        lines.append(line)
        first = prev_start
        pos = prev_start
    if not lines:
        return None
    lines.reverse()
    if lines[0].startswith(("    ", "\t")):
        return None  # indented code, not a paragraph
    return first, " ".join(line.strip() for line in lines)


def scan_headings(text: str) -> list[Heading]:
    """Every heading of a Markdown text, in order (see the module docstring for rules)."""
    # Match on "\n" + text so every line, the first included, follows a newline; a line
    # starting at ``src`` offset k starts at ``text`` offset k - 1.
    src = "\n" + text
    last = len(text)
    headings: list[Heading] = []
    skip_to = _front_matter_end(text)  # candidates before this are front matter
    fence_char = ""  # inside a fence: its character and length
    fence_len = 0
    append = headings.append
    for m in _CANDIDATE.finditer(src, skip_to):
        hashes, content, fence, info, underline = m.groups()
        if fence_char:
            closes = fence is not None and fence[0] == fence_char and len(fence) >= fence_len
            if closes and not info.strip():
                fence_char = ""
            continue
        line_start = m.start()  # == the line's offset in ``text``
        if hashes is not None:
            title = content.strip() if content else ""
            if title.endswith("#"):
                title = _ATX_CLOSE.sub("", title).strip() if title.strip("#") else ""
            append(Heading(len(hashes), title, line_start, min(m.end(), last)))
        elif fence is not None:
            if fence[0] == "`" and "`" in info:
                continue  # not a fence: a backtick fence's info string has no backtick
            fence_char, fence_len = fence[0], len(fence)
        elif line_start > 0:
            para = _setext_paragraph(src, line_start + 1)
            if para is not None:
                while headings and headings[-1].start >= para[0] - 1:
                    headings.pop()
                level = 1 if underline[0] == "=" else 2
                append(Heading(level, para[1], para[0] - 1, min(m.end(), last)))
    return headings


_CACHE: OrderedDict[str, tuple[Heading, ...]] = OrderedDict()
_CACHE_SIZE = 32
_CACHE_LOCK = threading.Lock()


def clear_heading_cache() -> None:
    with _CACHE_LOCK:
        _CACHE.clear()


def scan_headings_cached(key: str, text: str) -> list[Heading]:
    """:func:`scan_headings` memoised by a content hash (``key``): a warm process that
    reads sections of the same big reference again skips the scan. Bounded (LRU)."""
    with _CACHE_LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return list(hit)
    headings = scan_headings(text)
    with _CACHE_LOCK:
        _CACHE[key] = tuple(headings)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return headings


# -- matching -----------------------------------------------------------------------------
def normalise_heading(text: str) -> str:
    """Case-, width- and whitespace-insensitive form of a heading text."""
    if not text.isascii():  # NFKC is the identity on ASCII; skip it on the hot path
        text = unicodedata.normalize("NFKC", text)
    text = text.casefold()
    return _SPACE.sub(" ", text).strip().rstrip(":：").strip()


def _loose(text: str) -> str:
    """A looser form: no numbering ("2.1 "), no inline code/emphasis marks."""
    text = _INLINE_MARKS.sub("", normalise_heading(text))
    return _NUMBERING.sub("", text).strip()


def parse_hint(hint: str) -> tuple[int | None, str]:
    """``"## Security"`` -> (2, "Security"); ``"Security"`` -> (None, "Security")."""
    value = hint.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "`'\"":
        value = value[1:-1].strip()
    m = _HINT.match(value)
    if m and m.group(2):
        return len(m.group(1)), _ATX_CLOSE.sub("", m.group(2)).strip() or m.group(2)
    return None, value


def find_heading(headings: Sequence[Heading], hint: str) -> int | None:
    """Index of the first heading matching ``hint`` (exact level when it has ``#``s)."""
    level, wanted = parse_hint(hint)
    if not wanted:
        return None
    pool = [(i, h) for i, h in enumerate(headings) if level is None or h.level == level]
    exact = normalise_heading(wanted)
    for i, h in pool:
        if normalise_heading(h.text) == exact:
            return i
    loose = _loose(wanted)
    if loose:
        for i, h in pool:
            if _loose(h.text) == loose:
                return i
    return None


def suggest(headings: Sequence[Heading], hint: str, limit: int = 3) -> list[str]:
    """Headings that look like ``hint``, best first, rendered as hints."""
    _, wanted = parse_hint(hint)
    rendered = {normalise_heading(h.text): h.render() for h in headings}
    close = difflib.get_close_matches(normalise_heading(wanted), list(rendered), limit, 0.5)
    out = [rendered[c] for c in close]
    low = normalise_heading(wanted)
    for h in headings:
        if len(out) >= limit:
            break
        if low and low in normalise_heading(h.text) and h.render() not in out:
            out.append(h.render())
    return out


def section_end(text: str, headings: Sequence[Heading], index: int) -> int:
    """End offset of the section opened by ``headings[index]``: the next heading of the
    same or a higher level, else the end of the text."""
    level = headings[index].level
    for h in headings[index + 1 :]:
        if h.level <= level:
            return h.start
    return len(text)


# -- cutting ------------------------------------------------------------------------------
def cut_point(
    text: str, start: int, end: int, budget: int, headings: Sequence[Heading] = ()
) -> int:
    """Where to cut ``text[start:end]`` to keep at most ``budget`` chars: the last heading,
    else paragraph break, else line end in the second half of the budget; else exactly."""
    if end - start <= budget:
        return end
    limit = start + max(0, budget)
    floor = start + budget // 2
    best = -1
    for h in headings:
        if h.start > limit:
            break
        if floor < h.start <= limit:
            best = h.start
    if best > start:
        return best
    para = text.rfind("\n\n", floor, limit)
    if para >= 0:
        return para + 1
    line = text.rfind("\n", floor, limit)
    if line >= 0:
        return line + 1
    return limit


def outline(headings: Sequence[Heading], budget: int) -> tuple[str, int]:
    """Headings rendered as ``## A; ## B; …`` within ``budget`` chars; (text, left out)."""
    if not headings:
        return "", 0
    # Shallowest levels first: they name the sections worth asking for; deeper ones
    # only fill what budget is left. Shown in document order.
    ordered = sorted(headings, key=lambda h: (h.level, h.start))
    parts: list[str] = []
    used = 0
    for h in ordered:
        item = h.render()
        extra = len(item) + (2 if parts else 0)
        if used + extra > budget:
            break
        parts.append(item)
        used += extra
    shown = {id(h) for h in ordered[: len(parts)]}
    parts = [h.render() for h in headings if id(h) in shown]
    return "; ".join(parts), len(headings) - len(parts)
