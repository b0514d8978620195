"""The one JSON serializer: result values (dataclasses, paths, enums, errors) to JSON.

:func:`to_jsonable` turns a value into JSON-ready data (errors' ``to_dict`` uses it too);
:func:`to_json` writes it as text. Surfaces print what these return; they never
assemble JSON by hand. (The prompt hook's :mod:`skillrt.fastjson` only encodes data that
is plain already, without importing :mod:`json`.)
"""

from __future__ import annotations

import dataclasses
import enum
import math
import types
import typing
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any, TypeVar

T = TypeVar("T")


def to_jsonable(value: Any) -> Any:
    """Recursively convert ``value``; a ``to_dict()`` method wins over dataclass fields."""
    # Exact built-in types first: CLI output is mostly plain dicts, lists and strings.
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is dict:
        return {k if type(k) is str else str(k): to_jsonable(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [to_jsonable(v) for v in value]
    if isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return to_jsonable(to_dict())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_jsonable(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not f.name.startswith("_")
        }
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((to_jsonable(v) for v in value), key=str)
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, enum.Enum):
        return to_jsonable(value.value)
    if hasattr(value, "tolist"):  # numpy scalars and arrays, without importing numpy
        return to_jsonable(value.tolist())
    return str(value)


def to_json(value: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON text (UTF-8 kept, lone surrogates escaped): compact, or
    indented by ``indent``."""
    import json

    from skillrt.wellformed import escape_surrogates

    data = to_jsonable(value)
    if indent is not None:
        text = json.dumps(data, ensure_ascii=False, indent=indent)
    else:
        # Compact is several times faster: the C encoder only runs without ``indent``.
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    # A lone surrogate (from a request's JSON or argv) as its escape: UTF-8 out, always.
    return text if text.isascii() else escape_surrogates(text)


def from_jsonable(cls: type[T], data: Any) -> T:
    """Rebuild a (frozen) dataclass from :func:`to_jsonable`'s output, following the
    field annotations into nested dataclasses and tuples (what a process receives from
    the daemon). Fields missing from ``data`` keep their defaults; unknown keys are
    ignored."""
    hints = typing.get_type_hints(cls)
    kwargs = {
        f.name: _convert(hints.get(f.name, Any), data[f.name])
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        if f.init and f.name in data
    }
    return cls(**kwargs)


def _convert(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    if dataclasses.is_dataclass(hint) and isinstance(hint, type) and isinstance(value, dict):
        return from_jsonable(hint, value)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is tuple and isinstance(value, list):
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v) for v in value)
        return tuple(_convert(a, v) for a, v in zip(args, value, strict=False))
    if origin is list and isinstance(value, list) and args:
        return [_convert(args[0], v) for v in value]
    if origin in (typing.Union, types.UnionType):
        for arg in args:
            if arg is not type(None):
                return _convert(arg, value)
    return value
