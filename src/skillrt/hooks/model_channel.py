"""Gemini CLI: the skill in the user's own message, where the model reads instructions.

Gemini CLI wraps a ``BeforeAgent`` hook's ``additionalContext`` in ``<hook_context>``
tags, and its system prompt tells the model to treat that as read-only data, never as
instructions. The one hook channel it treats as the user's words is ``BeforeModel``:
its ``hookSpecificOutput.llm_request.messages`` replace the text of the request's
messages (the system instruction cannot be changed there, and the change is not kept
in the session's history: it applies to that one model call). So ``install gemini``
writes one ``BeforeModel`` hook (``--via-model``), and on each model call of Gemini's
own conversation it:

1. appends each block of the session's record (``<state>/sessions/gemini-<session>.json``)
   to the user message it belongs to (found by its prompt's text), so the model reads
   the skill as part of what the user wrote, once per request, turn after turn; a
   block whose message is no longer in the request (the history was compressed) is
   marked gone, and its skill is injected again the next time a prompt needs it;
2. routes the last user message when no block claims it yet (:func:`new_prompt`: a
   new prompt; a tool result has no text in the hook's view, so the later calls of a
   turn find its prompt claimed), and records what that turn adds, or an empty block
   when it adds nothing, so the prompt is routed once.

A request whose first message is not Gemini's ``<session_context>`` is not the main
conversation (a subagent's chat): it is left alone. An older install's ``BeforeAgent``
hook records the block first; the ``BeforeModel`` hook then finds the prompt claimed.
A model call that routes nothing reads the standard library, :mod:`skillrt.fastjson`
and a small file only.
"""

from __future__ import annotations

import os

from skillrt import fastjson
from skillrt.wellformed import well_formed

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

#: Blocks a record keeps (the oldest go first): a session of thousands of prompts must
#: not make each model call read a huge file.
MAX_ENTRIES = 200
#: Separates the user's words from what skillrt adds to them.
LEAD = "\n\n"
#: How Gemini CLI's own conversation opens (its first message; a subagent's does not).
SESSION_OPEN, SESSION_CLOSE = "<session_context>", "</session_context>"


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


def remember(
    record: dict[str, Any], prompt: str, context: dict[str, Any], *, empty: bool = False
) -> bool:
    """Keep what this turn adds (``context``: the turn context as JSON); False when it
    adds nothing, unless ``empty``: then an empty block still marks the prompt routed."""
    text = str(context.get("text") or "")
    if not text and not empty:
        return False
    record["entries"].append(
        {"prompt": prompt, "text": text, "skills": list(context.get("skills") or ())}
    )
    return True


def main_conversation(messages: list[Any]) -> bool:
    """Whether ``messages`` are Gemini CLI's own conversation: its first message opens
    with the session context (after a compression too); a subagent's chat does not."""
    first = messages[0] if messages else None
    return (
        isinstance(first, dict)
        and first.get("role") == "user"
        and isinstance(first.get("content"), str)
        and first["content"].lstrip().startswith(SESSION_OPEN)
    )


def new_prompt(messages: list[Any], claimed: set[int]) -> tuple[int, str] | None:
    """The last user message when no recorded block claims it: its index and the
    prompt as the user wrote it (the session context before it left out); None when it
    is claimed, or holds no words."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if i in claimed or not isinstance(content, str):
                return None
            if content.lstrip().startswith(SESSION_OPEN):
                _head, close, prompt = content.partition(SESSION_CLOSE)
                content = prompt if close else ""
            return (i, content) if content.strip() else None
    return None


def history(messages: list[Any], before: int, turns: int) -> list[dict[str, str]]:
    """The last ``turns`` messages before message ``before``, as the router reads them
    (``{"role", "content"}``, oldest first, the session context left out)."""
    out: list[dict[str, str]] = []
    for i in range(min(before, len(messages)) - 1, -1, -1):
        if len(out) >= turns:
            break
        message = messages[i]
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            continue
        content: str = message["content"]
        if content.lstrip().startswith(SESSION_OPEN):
            content = content.partition(SESSION_CLOSE)[2]
        if content.strip():
            role = "user" if message.get("role") == "user" else "assistant"
            out.append({"role": role, "content": well_formed(content.strip())})
    out.reverse()
    return out


def apply(record: dict[str, Any], messages: list[Any]) -> tuple[bool, bool, set[int]]:
    """Append each recorded block to its user message in ``messages`` (in place); mark
    the blocks whose message is gone. Whether the messages changed, whether the record
    did, and the indices of the messages the blocks claim."""
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
        if text and text not in content:  # a client that kept our text already has it
            messages[at]["content"] = content + LEAD + text
            changed = True
    return changed, gone, claimed


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


def render(messages: list[Any] | None, lines: list[str] | None = None) -> str:
    """What ``BeforeModel`` prints: the messages to send instead (None: unchanged) and
    the person's lines (``systemMessage``); "" when there is neither."""
    out: dict[str, Any] = {}
    if messages is not None:
        out["hookSpecificOutput"] = {
            "hookEventName": "BeforeModel",
            "llm_request": {"messages": messages},
        }
    if lines:
        out["systemMessage"] = "\n".join(lines)
    return fastjson.dumps(out) if out else ""
