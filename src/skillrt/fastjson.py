"""JSON for the per-prompt path without importing :mod:`json`.

``import json`` pulls in :mod:`re` and compiles its patterns: ~10 ms of CPU at every
prompt, a fifth of the hook's budget. The C accelerator :mod:`_json` that :mod:`json`
itself uses does the real work here: its scanner parses, its string escaper encodes.
Where ``_json`` is missing (another Python implementation) the :mod:`json` module is
used instead. Output is compact, like ``json.dumps(..., ensure_ascii=False,
separators=(",", ":"))``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

try:
    import _json
except ImportError:  # pragma: no cover - CPython always has it
    _json = None  # type: ignore[assignment]


class _Context:
    """What ``_json.make_scanner`` reads from a ``json.JSONDecoder``."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


_WHITESPACE = " \t\n\r"
_scan: Callable[[str, int], tuple[Any, int]] | None = (
    _json.make_scanner(_Context()) if _json is not None else None  # type: ignore[arg-type]
)


def loads(data: str | bytes | bytearray) -> Any:
    """Parse one JSON document (raises ValueError, like :func:`json.loads`; also for a
    document nested past the recursion limit, where :mod:`json` raises RecursionError)."""
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    if text.startswith("\ufeff"):
        raise ValueError("Unexpected UTF-8 BOM")
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration as exc:
        raise ValueError(f"Expecting value: char {exc.value}") from None
    except SystemError:
        # The scanner builds its error from json.decoder, found only when something
        # imported it already; else it fails like this (a document cut short, a bad
        # escape). json says what is wrong, on this error path only.
        import json

        return json.loads(text)  # raises json.JSONDecodeError, a ValueError
    except RecursionError:
        # Hostile input, one bad document like any other (the stack has unwound).
        raise ValueError("too deeply nested to parse") from None
    rest = text[end:]
    if rest.strip(_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def dumps(value: Any) -> str:
    """Compact JSON of dicts (string keys), lists, tuples, strings, numbers, booleans
    and None; anything else is a TypeError, a NaN, an infinity or a value nested past
    the recursion limit a ValueError. A lone surrogate in a string is written as its
    ``\\u`` escape, so the text always encodes as UTF-8."""
    if _json is None:  # pragma: no cover
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    parts: list[str] = []
    try:
        _encode(value, parts)
    except RecursionError:
        raise ValueError("too deeply nested to encode") from None
    text = "".join(parts)
    if text.isascii():
        return text
    from skillrt.wellformed import escape_surrogates

    return escape_surrogates(text)  # a lone surrogate as its escape: UTF-8 out


def _encode(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_json.encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"out of range float values are not JSON: {value!r}")
        out.append(float.__repr__(value))
    elif isinstance(value, dict):
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                raise TypeError(f"keys must be str, not {type(key).__name__}")
            if i:
                out.append(",")
            out.append(_json.encode_basestring(key))
            out.append(":")
            _encode(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode(item, out)
        out.append("]")
    else:
        raise TypeError(f"{type(value).__name__} is not JSON serializable")
