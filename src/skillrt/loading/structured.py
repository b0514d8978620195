"""Section hints for JSON and YAML resources: a hint names a top-level key.

These files have no headings. ``section_hint="pitfalls"`` (``#``s are ignored) picks
the value of that top-level key: for JSON re-serialised as ``{"key": value}`` with
two-space indents, for YAML the key's own lines as written (comments kept, nothing
parsed, so no alias bomb can be expanded).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from skillrt.loading.sections import normalise_heading, parse_hint

_YAML_KEY = re.compile(
    r"^(?![\s#%]|-[ \t]|-$|\?[ \t]|---|\.\.\.)"  # not indented, a comment, a list item, ...
    r"""(?:"([^"\n]*)"|'([^'\n]*)'|([^:\n]+?))"""  # "quoted", 'quoted' or plain key
    r"[ \t]*:(?:[ \t]|$)",
    re.M,
)
_YAML_DOC = re.compile(r"^(?:---|\.\.\.)(?:[ \t]|$)", re.M)

KIND_BY_SUFFIX = {".json": "json", ".yaml": "yaml", ".yml": "yaml"}


@dataclass(frozen=True)
class KeyExcerpt:
    key: str
    text: str


def _pick(keys: list[str], wanted: str) -> str | None:
    if wanted in keys:
        return wanted
    low = normalise_heading(wanted)
    return next((k for k in keys if normalise_heading(k) == low), None)


def top_level_keys(text: str, kind: str) -> list[str]:
    """The top-level keys of a JSON object or YAML mapping (empty when there are none)."""
    if kind == "json":
        try:
            data = json.loads(text)
        except ValueError:
            return []
        return [str(k) for k in data] if isinstance(data, dict) else []
    return [
        m.group(1) or m.group(2) or (m.group(3) or "").strip() for m in _YAML_KEY.finditer(text)
    ]


def key_excerpt(text: str, kind: str, hint: str) -> KeyExcerpt | None:
    """The top-level entry ``hint`` names, or None when there is no such key."""
    _, wanted = parse_hint(hint)
    wanted = wanted.strip().rstrip(":").strip()
    if not wanted:
        return None
    if kind == "json":
        try:
            data = json.loads(text)
        except ValueError:
            return None
        if not isinstance(data, dict):
            return None
        key = _pick([str(k) for k in data], wanted)
        if key is None:
            return None
        value = data[key]
        return KeyExcerpt(key, json.dumps({key: value}, indent=2, ensure_ascii=False) + "\n")
    matches = list(_YAML_KEY.finditer(text))
    names = [m.group(1) or m.group(2) or (m.group(3) or "").strip() for m in matches]
    key = _pick(names, wanted)
    if key is None:
        return None
    i = names.index(key)
    start = matches[i].start()
    end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
    doc = _YAML_DOC.search(text, matches[i].end(), end)
    if doc is not None:
        end = doc.start()
    return KeyExcerpt(key, text[start:end].rstrip("\n") + "\n")
