"""A fast, conservative reader for the small YAML subset that frontmatter nearly always uses.

PyYAML's constructor costs ~150 µs for a typical frontmatter; discovering 10,000
skills cold spends most of its time there. This reader handles the common shapes
(``key: scalar``, quoted scalars, ``|``/``>`` block scalars, block and flow lists of
scalars, nested mappings) in a fraction of that and returns ``None`` the moment it sees
anything it is not sure about (anchors, tags, escapes, multi-line plain or quoted
scalars, non-printable characters, ...). The caller then uses PyYAML, so the result is
always exactly what ``yaml.safe_load`` returns; a property test holds it to that.

Plain scalars are typed with PyYAML's own implicit resolvers (YAML 1.1: ``yes`` is a
bool, ``~`` is null); only str, bool, null and plain decimal ints/floats are built here.
"""

from __future__ import annotations

import re
from typing import Any

_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*):(?:[ ]+(.*))?$")
_DEC_INT = re.compile(r"-?(?:0|[1-9][0-9]*)$")
_DEC_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+$")
# Characters PyYAML's reader rejects, plus the Unicode line breaks it folds (NEL, LS, PS)
# and tabs (separators whose rules differ between contexts): all sent to PyYAML.
_UNSAFE = re.compile(
    "[^\x0a\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]"
)
_PLAIN_FIRST_BAD = frozenset("-?:,[]{}#&*!|>'\"%@`")
_BLOCK_HEADER = re.compile(r"([|>])([-]?)$")

_STR = "tag:yaml.org,2002:str"
#: Nested mappings deeper than this go to PyYAML (and its depth check); kept below
#: frontmatter.MAX_NESTING so a fast result never needs that check.
MAX_DEPTH = 24
#: YAML's simple keys end within 1,024 characters of their start; PyYAML refuses a
#: longer one ("could not find expected ':'"), so such a key is left to it.
MAX_SIMPLE_KEY = 1024
_resolvers: dict[str, list[tuple[str, re.Pattern[str]]]] | None = None


class _Unsure(Exception):
    """Raised internally to hand the text to PyYAML."""


def _resolver_table() -> dict[str, list[tuple[str, re.Pattern[str]]]]:
    global _resolvers
    if _resolvers is None:
        from yaml.resolver import Resolver

        _resolvers = {k: list(v) for k, v in Resolver.yaml_implicit_resolvers.items()}
    return _resolvers


def parse(source: str) -> dict[str, Any] | None:
    """``yaml.safe_load(source)`` for simple frontmatter, else ``None`` (use PyYAML)."""
    if _UNSAFE.search(source):
        return None
    try:
        doc = _Doc(source)
        pos = doc.sig[0]
        if pos >= doc.n:
            return None  # empty document: PyYAML says None; let it
        data, pos = doc.mapping(pos, 0, 1)
        if doc.sig[pos] < doc.n:
            return None
        return data
    except (_Unsure, RecursionError):
        return None


class _Doc:
    """The source cut into lines, with each line's indentation and where the next
    meaningful line is, computed once."""

    __slots__ = ("filled", "ind", "lines", "n", "sig")

    def __init__(self, source: str) -> None:
        lines = source.split("\n")
        n = len(lines)
        ind = [0] * n
        # sig[i]: first line >= i that is neither blank nor a whole-line comment.
        # filled[i]: first line >= i that is not blank. Both have a sentinel at n.
        sig = [n] * (n + 1)
        filled = [n] * (n + 1)
        nxt_sig = nxt_filled = n
        for i in range(n - 1, -1, -1):
            line = lines[i]
            body = line.lstrip(" ")
            ind[i] = len(line) - len(body)
            if body:
                nxt_filled = i
                if body[0] != "#":
                    nxt_sig = i
            sig[i] = nxt_sig
            filled[i] = nxt_filled
        self.lines, self.n, self.ind, self.sig, self.filled = lines, n, ind, sig, filled

    def mapping(self, pos: int, indent: int, depth: int) -> tuple[dict[str, Any], int]:
        if depth > MAX_DEPTH:
            raise _Unsure
        out: dict[str, Any] = {}
        lines, ind, sig, n = self.lines, self.ind, self.sig, self.n
        while True:
            pos = sig[pos]
            if pos >= n:
                return out, pos
            here = ind[pos]
            if here < indent:
                return out, pos
            if here > indent:
                raise _Unsure
            m = _KEY_LINE.match(lines[pos], here)
            if m is None:
                raise _Unsure
            key = m.group(1)
            if len(key) > MAX_SIMPLE_KEY:
                raise _Unsure
            if _key_tag(key) is not _STR:
                raise _Unsure  # `yes:` or `null:` keys are not strings in YAML 1.1
            rest = m.group(2)
            pos += 1
            if rest is not None:
                rest = rest.rstrip(" ")
            if not rest or rest[0] == "#":
                out[key], pos = self.nested(pos, indent, depth)
                continue
            header = _BLOCK_HEADER.match(rest) if rest[0] in "|>" else None
            if header is not None:
                out[key], pos = self.block_scalar(pos, indent, header.group(1), header.group(2))
                continue
            more = self.filled[pos] < n and ind[self.filled[pos]] > indent
            if more and rest[0] not in "\"'[":
                out[key], pos = self.plain_lines(rest, pos, indent)
                continue
            if more:
                raise _Unsure  # a scalar continued on more-indented lines
            out[key] = _inline_value(rest)

    def nested(self, pos: int, indent: int, depth: int) -> tuple[Any, int]:
        """The value of ``key:`` with nothing after it: a block list, a mapping, or null."""
        nxt = self.sig[pos]
        if nxt >= self.n:
            return None, nxt
        line = self.lines[nxt]
        here = self.ind[nxt]
        body = line[here:]
        if (body == "-" or body.startswith("- ")) and here >= indent:
            return self.sequence(nxt, here)
        if here > indent:
            if _KEY_LINE.match(line, here):
                return self.mapping(nxt, here, depth + 1)
            if body[0] in "\"'[":
                raise _Unsure  # a quoted or flow value on its own line
            return self.plain_lines("", nxt, indent)
        return None, pos

    def sequence(self, pos: int, indent: int) -> tuple[list[Any], int]:
        out: list[Any] = []
        lines, ind, sig, filled, n = self.lines, self.ind, self.sig, self.filled, self.n
        while True:
            pos = sig[pos]
            if pos >= n:
                return out, pos
            here = ind[pos]
            if here < indent:
                return out, pos
            body = lines[pos][here:]
            if here > indent or not body.startswith("- "):
                if here == indent and body[0] != "-":
                    return out, pos  # a zero-indented list ended at the next key
                raise _Unsure
            item = body[2:].strip(" ")
            if not item or item[0] in "#|>":
                raise _Unsure
            out.append(_inline_value(item))
            pos += 1
            if filled[pos] < n and ind[filled[pos]] > indent:
                raise _Unsure  # an item continued on more-indented lines

    def plain_lines(self, first: str, pos: int, indent: int) -> tuple[Any, int]:
        """A plain scalar folded over more-indented lines: breaks become spaces, blank
        lines become newlines. ``first`` is the text on the key's line ("" if none)."""
        parts: list[str] = []
        if first:
            if first[0] in _PLAIN_FIRST_BAD:
                raise _Unsure
            parts.append(first)
        blanks = 0
        lines, ind, n = self.lines, self.ind, self.n
        while pos < n:
            stripped = lines[pos].strip(" ")
            if not stripped:
                blanks += 1
                pos += 1
                continue
            if ind[pos] <= indent:
                break
            if not parts and stripped[0] in _PLAIN_FIRST_BAD:
                raise _Unsure
            if parts:
                parts.append("\n" * blanks if blanks else " ")
            parts.append(stripped)
            blanks = 0
            pos += 1
        text = "".join(parts)
        if not text or " #" in text or text[0] == "#" or ": " in text or text.endswith(":"):
            raise _Unsure
        for segment in text.split("\n"):
            if segment.startswith("#") or segment.endswith(":"):
                raise _Unsure
        return _typed(text), pos

    def block_scalar(self, pos: int, indent: int, style: str, chomp: str) -> tuple[str, int]:
        """A ``|``/``>`` scalar (clip or strip chomping) whose lines share one indentation."""
        content: list[str] = []
        block_indent = -1
        lines, ind, n = self.lines, self.ind, self.n
        while pos < n:
            line = lines[pos]
            if len(line) == ind[pos]:  # blank (spaces only)
                if line and (block_indent < 0 or len(line) > block_indent):
                    raise _Unsure  # whitespace-only lines that may be content
                if block_indent < 0:
                    raise _Unsure  # leading blank lines: indentation rules get subtle
                content.append("")
                pos += 1
                continue
            here = ind[pos]
            if block_indent < 0:
                if here <= indent:
                    raise _Unsure  # empty block scalar
                block_indent = here
            if here < block_indent:
                if here > indent:
                    raise _Unsure  # less indented but still inside: an error in YAML
                break
            if here > block_indent and style == ">":
                raise _Unsure  # more-indented lines fold differently
            content.append(line[block_indent:])
            pos += 1
        if pos >= n and lines[-1]:
            raise _Unsure  # the last line has no line break: clipping differs
        while content and content[-1] == "":
            content.pop()
        if not content:
            raise _Unsure
        if style == "|":
            text = "\n".join(content)
        else:
            parts: list[str] = []
            blanks = 0
            for item in content:
                if item == "":
                    blanks += 1
                    continue
                if parts:
                    parts.append("\n" * blanks if blanks else " ")
                parts.append(item)
                blanks = 0
            text = "".join(parts)
        return (text if chomp == "-" else text + "\n"), pos


def _inline_value(text: str) -> Any:
    first = text[0]
    if first in "\"'":
        return _quoted(text)
    if first == "[":
        return _flow_sequence(text)
    return _plain(text)


def _after_close(rest: str) -> None:
    """Only a comment may follow a closed quote or flow list on its line."""
    rest = rest.lstrip(" ")
    if rest and not rest.startswith("#"):
        raise _Unsure


def _quoted(text: str) -> str:
    value, end = _quoted_at(text, 0, text[0])
    tail = text[end:]
    if tail and not tail.startswith(" "):
        raise _Unsure
    _after_close(tail)
    return value


def _flow_sequence(text: str) -> list[Any]:
    """``[a, "b", 'c']`` on one line: plain or quoted scalars, no nesting."""
    out: list[Any] = []
    i = 1
    n = len(text)
    while True:
        while i < n and text[i] == " ":
            i += 1
        if i >= n:
            raise _Unsure  # continues on the next line
        if text[i] == "]" and not out:
            i += 1
            break
        if text[i] in "\"'":
            quote = text[i]
            item, i = _quoted_at(text, i, quote)
            out.append(item)
        else:
            j = i
            while j < n and text[j] not in ",]":
                j += 1
            item_text = text[i:j].rstrip(" ")
            if (
                not item_text
                or item_text[0] in _PLAIN_FIRST_BAD
                or any(c in item_text for c in "[]{}#:")
            ):
                raise _Unsure
            out.append(_typed(item_text))
            i = j
        while i < n and text[i] == " ":
            i += 1
        if i >= n:
            raise _Unsure
        if text[i] == "]":
            i += 1
            break
        if text[i] != ",":
            raise _Unsure
        i += 1
        while i < n and text[i] == " ":
            i += 1
        if i < n and text[i] == "]":
            raise _Unsure  # trailing comma
    tail = text[i:]
    if tail and not tail.startswith(" "):
        raise _Unsure
    _after_close(tail)
    return out


def _quoted_at(text: str, i: int, quote: str) -> tuple[str, int]:
    """The quoted scalar starting at ``text[i]``; returns (value, index after it)."""
    if quote == '"':
        end = text.find('"', i + 1)
        if end < 0:
            raise _Unsure
        value = text[i + 1 : end]
        if "\\" in value:
            raise _Unsure
        return value, end + 1
    pos = i + 1
    chars: list[str] = []
    while True:
        j = text.find("'", pos)
        if j < 0:
            raise _Unsure
        chars.append(text[pos:j])
        if text.startswith("''", j):
            chars.append("'")
            pos = j + 2
            continue
        return "".join(chars), j + 1


def _plain(text: str) -> Any:
    if text[0] in _PLAIN_FIRST_BAD:
        raise _Unsure
    cut = text.find(" #")
    if cut >= 0:
        text = text[:cut].rstrip(" ")
    if ": " in text or text.endswith(":"):
        raise _Unsure
    return _typed(text)


_key_tags: dict[str, str] = {}


def is_string_key(key: str) -> bool:
    """True when ``key`` written plain (unquoted) is a string in YAML 1.1 (``1``,
    ``null`` and ``yes`` are not)."""
    return _key_tag(key) is _STR


def _key_tag(key: str) -> str:
    """``_resolve`` for keys, memoised: frontmatter repeats the same few keys."""
    tag = _key_tags.get(key)
    if tag is None:
        tag = _resolve(key)
        if len(_key_tags) < 4096:
            _key_tags[key] = tag
    return tag


def _resolve(value: str) -> str:
    table = _resolver_table()
    for tag, regexp in table.get(value[:1], ()):
        if regexp.match(value):
            return tag
    return _STR


def _typed(value: str) -> Any:
    tag = _resolve(value)
    if tag is _STR:
        return value
    kind = tag.rsplit(":", 1)[-1]
    if kind == "bool":
        return value.lower() in ("yes", "true", "on")
    if kind == "null":
        return None
    if kind == "int" and _DEC_INT.match(value):
        return int(value)
    if kind == "float" and _DEC_FLOAT.match(value):
        return float(value)
    raise _Unsure
