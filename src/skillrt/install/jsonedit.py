"""Edit a JSON text in place: carry a change of its data into the text, touching only
the members and elements that changed.

``install`` changes a client's settings file (a hook entry added, one removed); a
person wrote that file, with their own layout: inline objects on one line inside an
indented file, a compact array, their spacing. Re-serialising the whole document
would rewrite all of it, so :func:`edit_text` parses the text with each value's place,
compares the old data with the new, and splices: a removed member or element is cut
with its comma, an added one is written after the last sibling in the container's own
style (its own line and indentation in a multi-line container, inline in an inline
one), a changed scalar is replaced where it stands. Everything else keeps its bytes.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Style", "blank_comments", "edit_text"]

_WS = " \t\r\n"


@dataclass
class _Node:
    """A value's place in the text: ``text[start:end]`` is the value."""

    start: int
    end: int
    #: ``(key, value)`` members of an object, in order.
    members: list[tuple[str, _Node]] = field(default_factory=list)
    #: Elements of an array, in order.
    items: list[_Node] = field(default_factory=list)
    kind: str = "value"  # "object" | "array" | "value"


@dataclass(frozen=True)
class Style:
    """How new JSON is written: the indent unit, the separators, escaping."""

    indent: str = "  "
    item_sep: str = ", "
    key_sep: str = ": "
    ensure_ascii: bool = True

    @classmethod
    def of(cls, text: str) -> Style:
        skeleton = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
        colon = re.search(r'"":(\s?)', skeleton)
        key_sep = ": " if colon is None or colon.group(1) else ":"
        comma = re.search(r",([ \t]?)\S", skeleton)
        item_sep = (", " if comma.group(1) else ",") if comma else ", "
        indent = "  "
        match = re.search(r"\n([ \t]+)\S", skeleton)
        if match:
            found = match.group(1)
            indent = "\t" if found.startswith("\t") else found
            lines = re.findall(r"\n( +)\S", skeleton)
            widths = sorted({len(w) for w in lines})
            if widths and set(found) == {" "}:
                indent = " " * widths[0]
        return cls(indent, item_sep, key_sep, text.isascii())

    def dump(self, value: Any, base: str, multiline: bool) -> str:
        """``value`` as JSON text starting at a line indented ``base``."""
        if not multiline or not isinstance(value, dict | list) or not value:
            return json.dumps(
                value, separators=(self.item_sep, self.key_sep), ensure_ascii=self.ensure_ascii
            )
        text = json.dumps(
            value,
            indent=self.indent,
            separators=(",", self.key_sep),
            ensure_ascii=self.ensure_ascii,
        )
        return text.replace("\n", "\n" + base)


def edit_text(text: str, old: Any, new: Any, *, comments: bool = False) -> str:
    """``text`` (whose data is ``old``) changed so that its data is ``new``. With
    ``comments``, the text may hold ``//`` and ``/* */`` comments (Gemini CLI's
    settings): they are kept where they stand."""
    if old == new:
        return text
    plain = blank_comments(text) if comments else text  # every offset as in ``text``
    root = _Parser(plain).parse()
    style = Style.of(plain)
    edits: list[tuple[int, int, str]] = []
    _diff(plain, root, old, new, style, edits)
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def blank_comments(text: str) -> str:
    """``text`` with each ``//`` and ``/* */`` comment outside a string replaced by
    spaces (its line breaks kept, so every offset stays): what Gemini CLI's settings
    loader (strip-json-comments) hands to its JSON parser."""
    chars: list[str] | None = None
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] in "/*":
            if text[i + 1] == "/":
                end = text.find("\n", i)
                end = n if end < 0 else end
            else:
                end = text.find("*/", i + 2)
                end = n if end < 0 else end + 2
            if chars is None:
                chars = list(text)
            chars[i:end] = [ch if ch in "\r\n" else " " for ch in text[i:end]]
            i = end
            continue
        i += 1
    return text if chars is None else "".join(chars)


# -- the diff ---------------------------------------------------------------------------
def _diff(
    text: str, node: _Node, old: Any, new: Any, style: Style, edits: list[tuple[int, int, str]]
) -> None:
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict) and node.kind == "object":
        siblings = [n for _, n in node.members]
        gone = {i for i, (k, _) in enumerate(node.members) if k not in new}
        # A key written twice holds its last value (as every parser reads it): the
        # earlier one is dead text, left as it stands.
        last = {k: i for i, (k, _) in enumerate(node.members)}
        for i, (key, place) in enumerate(node.members):
            if key in new and last[key] == i:
                _diff(text, place, old[key], new[key], style, edits)
        added = [(k, new[k]) for k in new if k not in old]
        _splice(text, node, siblings, gone, added, style, edits)
        return
    if isinstance(old, list) and isinstance(new, list) and node.kind == "array":
        a = [json.dumps(x, sort_keys=True) for x in old]
        b = [json.dumps(x, sort_keys=True) for x in new]
        ops = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
        removed: set[int] = set()
        in_place: dict[int, Any] = {}
        tail: list[tuple[str | None, Any]] = []
        for tag, i1, i2, j1, j2 in ops:
            if tag == "equal":
                continue
            if tag == "replace" and i2 - i1 == j2 - j1:
                in_place.update(zip(range(i1, i2), new[j1:j2], strict=True))
                continue
            if tag in ("delete", "replace"):
                removed.update(range(i1, i2))
            tail.extend((None, v) for v in new[j1:j2])
        result = [in_place.get(i, x) for i, x in enumerate(old) if i not in removed]
        if result + [v for _, v in tail] != new:  # not "change some, cut some, add at the end"
            _replace(text, node, new, style, edits)
            return
        for i, value in in_place.items():
            _diff(text, node.items[i], old[i], value, style, edits)
        _splice(text, node, node.items, removed, tail, style, edits)
        return
    _replace(text, node, new, style, edits)


def _replace(
    text: str, node: _Node, new: Any, style: Style, edits: list[tuple[int, int, str]]
) -> None:
    base = _line_indent(text, node.start)
    multiline = "\n" in text[node.start : node.end] or (
        node.kind == "value" and _is_multiline_file(text)
    )
    edits.append((node.start, node.end, style.dump(new, base, multiline)))


def _splice(
    text: str,
    node: _Node,
    siblings: list[_Node],
    removed: set[int],
    added: list[tuple[str | None, Any]],
    style: Style,
    edits: list[tuple[int, int, str]],
) -> None:
    """Cut the ``removed`` siblings (each run of them with one comma) and write ``added``
    after the last sibling kept."""
    kept = [n for i, n in enumerate(siblings) if i not in removed]
    if not kept and (removed or added):
        if added:  # everything goes: the container's inside is written anew
            _append(text, node, [], added, style, edits, replace_inner=True)
        else:
            edits.append((node.start + 1, node.end - 1, ""))
        return
    starts = [_start(text, node, n) for n in siblings]
    i = 0
    while i < len(siblings):
        if i not in removed:
            i += 1
            continue
        j = i
        while j + 1 < len(siblings) and j + 1 in removed:
            j += 1
        if i > 0:  # from the end of the sibling before: ", <run>"
            edits.append((siblings[i - 1].end, siblings[j].end, ""))
        else:  # a leading run: "<run>, " up to the next sibling
            edits.append((starts[i], starts[j + 1], ""))
        i = j + 1
    if added:
        _append(text, node, kept, added, style, edits)


def _start(text: str, node: _Node, sibling: _Node) -> int:
    return _member_start(text, sibling) if node.kind == "object" else sibling.start


def _append(
    text: str,
    node: _Node,
    kept: list[_Node],
    entries: list[tuple[str | None, Any]],
    style: Style,
    edits: list[tuple[int, int, str]],
    *,
    replace_inner: bool = False,
) -> None:
    """Write ``entries`` after the container's last kept sibling, in its style (or as
    the container's whole inside)."""
    inner = text[node.start + 1 : node.end - 1]
    if kept:
        last = kept[-1]
        first_start = _start(text, node, kept[0])
        multiline = "\n" in text[node.start : first_start]
        base = _line_indent(text, first_start) if multiline else ""
        parts = [_entry(k, v, style, base, multiline) for k, v in entries]
        joiner = ",\n" + base if multiline else style.item_sep
        edits.append((last.end, last.end, joiner + joiner.join(parts)))
        return
    outer = _line_indent(text, node.start)
    multiline = _is_multiline_file(text) or "\n" in inner
    base = outer + style.indent if multiline else ""
    parts = [_entry(k, v, style, base, multiline) for k, v in entries]
    if multiline:
        body = "\n" + base + (",\n" + base).join(parts) + "\n" + outer
    else:
        body = style.item_sep.join(parts)
    edits.append((node.start + 1, node.end - 1, body))


def _entry(key: str | None, value: Any, style: Style, base: str, multiline: bool) -> str:
    dumped = style.dump(value, base, multiline)
    if key is None:
        return dumped
    return json.dumps(key, ensure_ascii=style.ensure_ascii) + style.key_sep + dumped


def _member_start(text: str, value: _Node) -> int:
    """Where a member starts: its key's opening quote (found back from its value)."""
    i = text.rfind(":", 0, value.start)
    j = i - 1
    while j >= 0 and text[j] in _WS:
        j -= 1
    # j is the key's closing quote; walk back to its opening one
    k = j - 1
    while k >= 0:
        if text[k] == '"':
            backslashes = 0
            m = k - 1
            while m >= 0 and text[m] == "\\":
                backslashes += 1
                m -= 1
            if backslashes % 2 == 0:
                return k
        k -= 1
    return value.start


def _line_indent(text: str, at: int) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    indent = ""
    for ch in text[line_start:at]:
        if ch not in " \t":
            break
        indent += ch
    return indent


def _is_multiline_file(text: str) -> bool:
    return "\n" in text.strip()


# -- the parser -------------------------------------------------------------------------
class _Parser:
    """A JSON parser that keeps each value's place (the text is valid JSON)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def parse(self) -> _Node:
        self._ws()
        node = self._value()
        return node

    def _ws(self) -> None:
        text, i = self.text, self.i
        while i < len(text) and text[i] in _WS:
            i += 1
        self.i = i

    def _value(self) -> _Node:
        ch = self.text[self.i]
        if ch == "{":
            return self._object()
        if ch == "[":
            return self._array()
        if ch == '"':
            start = self.i
            self._string()
            return _Node(start, self.i)
        start = self.i
        while self.i < len(self.text) and self.text[self.i] not in _WS + ",]}":
            self.i += 1
        return _Node(start, self.i)

    def _string(self) -> str:
        start = self.i
        self.i += 1
        text = self.text
        while text[self.i] != '"':
            self.i += 2 if text[self.i] == "\\" else 1
        self.i += 1
        value: str = json.loads(text[start : self.i])
        return value

    def _object(self) -> _Node:
        node = _Node(self.i, -1, kind="object")
        self.i += 1
        self._ws()
        if self.text[self.i] == "}":
            self.i += 1
            node.end = self.i
            return node
        while True:
            self._ws()
            key = self._string()
            self._ws()
            self.i += 1  # :
            self._ws()
            node.members.append((key, self._value()))
            self._ws()
            if self.text[self.i] == ",":
                self.i += 1
                continue
            self.i += 1  # }
            node.end = self.i
            return node

    def _array(self) -> _Node:
        node = _Node(self.i, -1, kind="array")
        self.i += 1
        self._ws()
        if self.text[self.i] == "]":
            self.i += 1
            node.end = self.i
            return node
        while True:
            self._ws()
            node.items.append(self._value())
            self._ws()
            if self.text[self.i] == ",":
                self.i += 1
                continue
            self.i += 1  # ]
            node.end = self.i
            return node
