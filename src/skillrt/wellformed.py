"""Well-formed text at the edges: lone surrogates become U+FFFD before anything reads them.

JSON can carry a lone surrogate (``"\\ud800"``) and ``json`` decodes it into a ``str``
that no UTF-8 encoder accepts; a command-line argument with bytes that are not UTF-8
arrives as lone surrogates too (Python's ``surrogateescape``). Such text crashes a
tokenizer, a SQLite write or a UTF-8 stdout, so every surface hands the library its
request text through :func:`well_formed`: a route, a prompt, a labelled query, a
catalogue line. The standard library only (the prompt hook imports this).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from typing import Any

__all__ = ["escape_surrogates", "repair_json_escapes", "well_formed", "well_formed_json"]


def well_formed(text: str) -> str:
    """``text`` with every unpaired surrogate replaced by U+FFFD (a surrogate pair left
    as two code points is joined); ``text`` itself when it is already well formed."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # UTF-16 round trip: pairs decode to their character, lone halves to U+FFFD.
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


def well_formed_json(value: Any) -> Any:
    """A decoded JSON value with :func:`well_formed` applied to every string (keys too)."""
    if isinstance(value, str):
        return well_formed(value)
    if isinstance(value, list):
        return [well_formed_json(v) for v in value]
    if isinstance(value, dict):
        return {well_formed(str(k)): well_formed_json(v) for k, v in value.items()}
    return value


def escape_surrogates(json_text: str) -> str:
    """JSON text (from an encoder that keeps non-ASCII as is) with every surrogate
    written as its ``\\uXXXX`` escape: the same document, now encodable as UTF-8.
    Surrogates can only sit inside strings, where an escape means the same."""
    try:
        json_text.encode("utf-8")
    except UnicodeEncodeError:
        return "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in json_text)
    return json_text


_HEX = "0123456789abcdefABCDEF"


def repair_json_escapes(text: str) -> str:
    """JSON text with each ``\\uXXXX`` escape of an unpaired surrogate replaced by
    ``\\ufffd``, for parsers that refuse them (pydantic's, under the MCP SDK).

    Escaped backslashes are skipped, so ``"\\\\ud800"`` (a backslash, then ``ud800``)
    is left alone; a high-low escape pair is kept.
    """
    if "\\u" not in text:
        return text
    out: list[str] = []
    i, n, last = 0, len(text), 0
    while True:
        i = text.find("\\", i)
        if i < 0 or i + 1 >= n:
            break
        if text[i + 1] != "u":
            i += 2  # another escape (\\, \", \n, ...): never the start of \u
            continue
        code = _escape(text, i)
        if code is None or not 0xD800 <= code <= 0xDFFF:
            i += 2
            continue
        if code <= 0xDBFF:
            low = _escape(text, i + 6) if text.startswith("\\u", i + 6) else None
            if low is not None and 0xDC00 <= low <= 0xDFFF:
                i += 12  # a proper pair
                continue
        out.append(text[last:i])
        out.append("\\ufffd")
        i += 6
        last = i
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _escape(text: str, i: int) -> int | None:
    """The code unit of the ``\\uXXXX`` escape at ``text[i]``, or None if malformed."""
    digits = text[i + 2 : i + 6]
    if len(digits) != 4 or any(c not in _HEX for c in digits):
        return None
    return int(digits, 16)
