"""Conversation history for routing (seed 001 §4.1): used lightly, and documented so.

History feeds two things only:

* ``context_readiness``: a skill the recent messages name (``Using skill: x``,
  ``$x``, or its name in words) or talk about (lexical overlap) is readier to run in
  this conversation than one that came up cold;
* "do that again" follow-ups: a query that refers back ("again", "same as before",
  "再来一次") recalls the skill the history last named, as a rule candidate.

A history file is a JSON list of strings or of ``{"role", "content"}`` messages (or an
object with a ``messages`` list); anything else is read as one message per line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skillrt.errors import UsageError

__all__ = ["HistoryInput", "is_follow_up", "load_history", "message_texts"]

HistoryInput = Sequence[str | Mapping[str, Any]]

_FOLLOW_UP = re.compile(
    r"(?<!\w)(?:again|once more|one more time|same (?:thing|as before|as last time|way)"
    r"|do (?:that|it|this) (?:again|too)|repeat (?:that|it|the last)|like before)(?!\w)"
    r"|再来一次|再做一次|再来一遍|重复一下|同样的|和刚才一样",
    re.IGNORECASE,
)
MAX_HISTORY_BYTES = 2_000_000


def is_follow_up(query: str) -> bool:
    return _FOLLOW_UP.search(query) is not None


def message_texts(history: HistoryInput | None, *, turns: int) -> list[str]:
    """The text of the last ``turns`` messages (strings, or ``content`` of mappings)."""
    if not history or turns <= 0:
        return []
    out: list[str] = []
    for item in list(history)[-turns:]:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Mapping):
            content = item.get("content")
            if isinstance(content, str):
                out.append(content)
            elif isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
                out.extend(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return [t for t in out if t.strip()]


def load_history(path: Path | str) -> list[str | dict[str, Any]]:
    """Read a history file (see the module docstring). Bad files raise UsageError."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_HISTORY_BYTES:
            raise UsageError(
                f"history file {path} is {size} bytes, over {MAX_HISTORY_BYTES}", path=str(path)
            )
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise UsageError(
            f"cannot read history file {path}: {exc.strerror}", path=str(path)
        ) from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"history file {path} is not UTF-8", path=str(path)) from exc
    stripped = text.strip()
    if stripped.startswith(("[", "{")):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise UsageError(
                f"history file {path} is not valid JSON: {exc.msg} (line {exc.lineno})",
                path=str(path),
            ) from exc
        if isinstance(data, Mapping):
            data = data.get("messages")
        if not isinstance(data, list):
            raise UsageError(f"history file {path} must be a JSON list of messages", path=str(path))
        out: list[str | dict[str, Any]] = []
        for item in data:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, Mapping):
                out.append(dict(item))
        return out
    return [line for line in text.splitlines() if line.strip()]
