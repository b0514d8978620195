"""Gemini CLI: the skill in the user's own message, where the model reads instructions.

Gemini CLI wraps a ``BeforeAgent`` hook's ``additionalContext`` in ``<hook_context>``
tags, and its system prompt tells the model to treat that as read-only data, never as
instructions. The one hook channel it treats as the user's words is ``BeforeModel``:
its ``hookSpecificOutput.llm_request.messages`` replace the text of the request's
messages (the system instruction cannot be changed there, and the change is not kept
in the session's history: it applies to that one model call). So, installed with
``--via-model``:

1. ``BeforeAgent`` routes the prompt as usual and keeps what the turn adds (the
   ``Using skill:`` block, or a one-line reminder) in the session's record
   (``<state>/sessions/gemini-<session>.json``), printing only the line the person sees;
2. ``BeforeModel``, on every model call of the session, appends each recorded block to
   the user message it belongs to (found by its prompt's text), so the model reads the
   skill as part of what the user wrote, once per request, turn after turn. A block
   whose message is no longer in the request (the history was compressed) is marked
   gone, and its skill is injected again the next time a prompt needs it.

This runs on every model call: the standard library and :mod:`skillrt.fastjson` only,
no daemon and no runtime.
"""

from __future__ import annotations

import os

from skillrt import fastjson

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

#: Blocks a record keeps (the oldest go first): a session of thousands of prompts must
#: not make each model call read a huge file.
MAX_ENTRIES = 200
#: Separates the user's words from what skillrt adds to them.
LEAD = "\n\n"


def record_path(state_dir: str, session_id: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:128]
    return os.path.join(state_dir, "sessions", f"gemini-{safe or 'none'}.json")


def read_record(path: str) -> dict[str, Any]:
    """The session's record (an empty one when missing or unreadable)."""
    from skillrt.fileopen import open_regular

    try:
        fh, _st = open_regular(path)
        with fh:
            data = fastjson.loads(fh.read(8 * 1024 * 1024))
    except (OSError, ValueError):
        return {"entries": []}
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        return {"entries": []}
    return data


def write_record(path: str, record: dict[str, Any]) -> None:
    """Write the record whole (a temporary file, then a rename)."""
    record["entries"] = record["entries"][-MAX_ENTRIES:]
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(fastjson.dumps(record))
    os.replace(tmp, path)


def loaded(record: dict[str, Any]) -> list[str]:
    """Skills whose body a recorded block carries and that are still in the session."""
    out: list[str] = []
    for entry in record["entries"]:
        if isinstance(entry, dict) and not entry.get("gone"):
            out.extend(str(s) for s in entry.get("skills") or ())
    return out


def remember(record: dict[str, Any], prompt: str, context: dict[str, Any]) -> bool:
    """Keep what this turn adds (``context``: the turn context as JSON); False when it
    adds nothing."""
    text = str(context.get("text") or "")
    if not text:
        return False
    record["entries"].append(
        {"prompt": prompt, "text": text, "skills": list(context.get("skills") or ())}
    )
    return True


def apply(record: dict[str, Any], messages: list[Any]) -> tuple[bool, bool]:
    """Append each recorded block to its user message in ``messages`` (in place); mark
    the blocks whose message is gone. Whether the messages changed, and the record."""
    changed = gone = False
    claimed: set[int] = set()
    users = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, dict) and m.get("role") == "user" and isinstance(m.get("content"), str)
    ]
    after = 0  # entries and messages are both in order: look on from the last match
    for entry in record["entries"]:
        if not isinstance(entry, dict) or entry.get("gone"):
            continue
        prompt, text = str(entry.get("prompt") or ""), str(entry.get("text") or "")
        found = _find(messages, users, claimed, prompt, after)
        if found is None:
            entry["gone"] = gone = True
            continue
        at = users[found]
        after = found + 1
        claimed.add(at)
        content = messages[at]["content"]
        if text not in content:  # a client that kept our text already has it
            messages[at]["content"] = content + LEAD + text
            changed = True
    return changed, gone


def _find(
    messages: list[Any], users: list[int], claimed: set[int], prompt: str, after: int = 0
) -> int | None:
    """The place in ``users`` of the first unclaimed user message, from ``users[after]``
    on (then from the start), holding ``prompt`` as the user wrote it: the whole text,
    or its end (Gemini CLI joins the session context and the first prompt into one
    message), or followed by what a hook appended."""
    for place in _from(after, len(users)):
        i = users[place]
        if i in claimed:
            continue
        content: str = messages[i]["content"]
        if (
            content == prompt
            or content.endswith("</session_context>" + prompt)
            or content.startswith((prompt + LEAD, prompt + "<hook_context>"))
            or ("</session_context>" + prompt + LEAD) in content
        ):
            return place
    return None


def _from(after: int, n: int) -> Iterator[int]:
    """``after``, ``after + 1``, ... ``n - 1``, then ``0`` ... ``after - 1``."""
    yield from range(after, n)
    yield from range(min(after, n))


def render(messages: list[Any]) -> str:
    """What ``BeforeModel`` prints: the messages to send instead."""
    output = {"hookEventName": "BeforeModel", "llm_request": {"messages": messages}}
    return fastjson.dumps({"hookSpecificOutput": output})
