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
import zlib

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
#: A record larger than this loses its oldest blocks (each model call reads it whole).
MAX_RECORD_BYTES = 4 * 1024 * 1024
#: What Gemini CLI sends as the user's words but wrote itself: its retry nudges and loop
#: recovery (``[System: ...]``, ``System: Potential loop detected. ...``) and its
#: next-speaker check's ``Please continue.``: none is a prompt to route.
_SYNTHETIC = ("[System: ", "System: Potential loop detected.")
_CONTINUE = "Please continue."
#: A retry nudge Gemini CLI appends to the last user message (``"\n[System: ...]"``).
_NUDGE = "\n[System: "
#: Gemini CLI's IDE mode puts the editor's state before the prompt, in one message.
_EDITOR = (
    "Here is the user's editor context",
    "Here is a summary of changes in the user's editor context",
)
_FENCE_OPEN, _FENCE_CLOSE = "```json", "\n```"


def record_path(state_dir: str, session_id: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:128]
    return os.path.join(state_dir, "sessions", f"gemini-{safe or 'none'}.json")


def read_record(path: str) -> dict[str, Any]:
    """The session's record (an empty one when missing or unreadable)."""
    from skillrt.fileopen import open_regular

    try:
        fh, _st = open_regular(path)
        with fh:
            data = fastjson.loads(fh.read(2 * MAX_RECORD_BYTES))
    except Exception:  # unreadable, cut short, not JSON: a record starts afresh
        return {"entries": []}
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        return {"entries": []}
    return data


def write_record(path: str, record: dict[str, Any]) -> None:
    """Write the record whole (a temporary file, then a rename), at most
    :data:`MAX_ENTRIES` blocks and about :data:`MAX_RECORD_BYTES` (the oldest go first;
    the newest always stays)."""
    record["entries"] = record["entries"][-MAX_ENTRIES:]
    text = fastjson.dumps(record)
    while len(text) > MAX_RECORD_BYTES and len(record["entries"]) > 1:
        entries = record["entries"]
        record["entries"] = entries[max(1, len(entries) // 4) :]
        text = fastjson.dumps(record)
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def loaded(record: dict[str, Any]) -> list[str]:
    """Skills whose body a recorded block carries and that are still in the session."""
    out: list[str] = []
    for entry in record["entries"]:
        if isinstance(entry, dict) and not entry.get("gone"):
            out.extend(str(s) for s in entry.get("skills") or ())
    return out


def remember(
    record: dict[str, Any],
    prompt: str,
    context: dict[str, Any],
    *,
    empty: bool = False,
    before: str | None = None,
) -> dict[str, Any] | None:
    """Keep what this turn adds (``context``: the turn context as JSON) and return its
    block; None when it adds nothing, unless ``empty``: then an empty block still marks
    the prompt routed. ``before``: the :func:`anchor` of the prompt's message."""
    text = str(context.get("text") or "")
    if not text and not empty:
        return None
    entry: dict[str, Any] = {
        "prompt": prompt,
        "text": text,
        "skills": list(context.get("skills") or ()),
    }
    if before is not None:
        entry["before"] = before
    record["entries"].append(entry)
    return entry


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


def contents(messages: list[Any]) -> list[str | None]:
    """Each message's text as the client sent it (None where it is not a string): what
    the matching reads, before any block is added."""
    return [
        m["content"] if isinstance(m, dict) and isinstance(m.get("content"), str) else None
        for m in messages
    ]


def own_words(content: str) -> str:
    """What the user wrote in a user message: the session context and the editor's
    state Gemini CLI puts before it, and a retry nudge after it, left out; "" for a
    message Gemini CLI wrote itself (:data:`_SYNTHETIC`)."""
    text = content
    if text.lstrip().startswith(SESSION_OPEN):
        _head, close, text = text.partition(SESSION_CLOSE)
        if not close:
            return ""
    if text.startswith(_EDITOR):
        # JSON.stringify escapes newlines in strings: the first fence after it closes it.
        _head, fence, rest = text.partition(_FENCE_OPEN)
        _state, close, text = rest.partition(_FENCE_CLOSE)
        if not (fence and close):
            return ""
    if text.startswith(_SYNTHETIC) or text.strip() == _CONTINUE:
        return ""
    cut = text.rfind(_NUDGE)
    if cut >= 0 and text.endswith("]"):
        text = text[:cut]
    return text


def anchor(texts: list[str | None], at: int) -> str:
    """A fingerprint of the text before message ``at`` (length and CRC-32; "" at the
    start): a prompt typed again later, or left after a compression, has another."""
    for i in range(at - 1, -1, -1):
        text = texts[i]
        if text:
            data = text.encode("utf-8", "surrogatepass")
            return f"{len(data)}:{zlib.crc32(data):08x}"
    return ""


def new_prompt(
    messages: list[Any], texts: list[str | None], claimed: set[int]
) -> tuple[int, str] | None:
    """The last user message when no recorded block claims it: its index and the
    prompt as the user wrote it (:func:`own_words`); None when it is claimed, holds no
    words, or Gemini CLI wrote it."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, dict) and message.get("role") == "user":
            text = texts[i]
            if i in claimed or text is None:
                return None
            words = own_words(text)
            return (i, words) if words.strip() else None
    return None


def history(
    messages: list[Any], texts: list[str | None], before: int, turns: int
) -> list[dict[str, str]]:
    """The last ``turns`` messages before message ``before``, as the router reads them
    (``{"role", "content"}``, oldest first; the user's own words, no skill block)."""
    out: list[dict[str, str]] = []
    for i in range(min(before, len(messages)) - 1, -1, -1):
        if len(out) >= turns:
            break
        text = texts[i]
        if text is None:
            continue
        user = messages[i].get("role") == "user"
        words = (own_words(text) if user else text).strip()
        if words:
            role = "user" if user else "assistant"
            out.append({"role": role, "content": well_formed(words)})
    out.reverse()
    return out


def apply(
    record: dict[str, Any], messages: list[Any], texts: list[str | None] | None = None
) -> tuple[bool, bool, set[int]]:
    """Append each recorded block to its user message in ``messages`` (in place; found
    in ``texts``, the messages' text before any block, :func:`contents`); mark the blocks
    whose message is gone. Whether the messages changed, whether the record did, and
    the indices of the messages the blocks claim."""
    texts = contents(messages) if texts is None else texts
    changed = gone = False
    claimed: set[int] = set()
    users = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, dict) and m.get("role") == "user" and texts[i] is not None
    ]
    words = [own_words(str(texts[i])) for i in users]
    anchors: dict[int, str] = {}
    after = 0  # entries and messages are both in order: look on from the last match
    for entry in record["entries"]:
        if not isinstance(entry, dict) or entry.get("gone"):
            continue
        prompt, text = str(entry.get("prompt") or ""), str(entry.get("text") or "")
        before = entry.get("before")
        found = None
        for place in _from(after, len(users)):
            i = users[place]
            if i in claimed or not _holds(words[place], prompt):
                continue
            if isinstance(before, str):
                if i not in anchors:
                    anchors[i] = anchor(texts, i)
                if anchors[i] != before:
                    continue
            found = place
            break
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


def _holds(words: str, prompt: str) -> bool:
    """Whether a user message's own words (:func:`own_words`) are ``prompt``: the
    whole text, or followed by what a hook appended."""
    return words == prompt or words.startswith((prompt + LEAD, prompt + "<hook_context>"))


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
