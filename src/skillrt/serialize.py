"""Turn result values (dataclasses, paths, enums) into JSON-ready data.

Surfaces print what this returns; they never assemble JSON by hand.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any


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
