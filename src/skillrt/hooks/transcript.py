"""The last turns of a conversation, read from a client's transcript file (bounded).

Understood, line by line (JSONL), from the end of the file:

- Claude Code: ``{"type": "user"|"assistant", "message": {"role", "content"}}`` with
  ``content`` a string or a list of blocks (only ``{"type": "text"}`` blocks count;
  tool calls, tool results, meta and side-chain lines are skipped);
- Codex CLI: ``{"type": "response_item", "payload": {"type": "message", "role",
  "content": [{"type": "input_text"|"output_text", "text"}]}}``;
- Gemini CLI (0.5x and later, JSONL): ``{"id", "type": "user"|"gemini", "content"}``
  with ``content`` a string or a list of ``{"text"}`` parts (its ``<session_context>``
  and ``<hook_context>`` parts are not the conversation);

and an older Gemini CLI session file (one JSON document with a ``messages`` list of
``{"type": "user"|"gemini", "content"}``).

:func:`loaded_skills` reads the same file for what skillrt already put in the
conversation's context: the skills whose injection block (``[Skill: <name> | ...``)
stands in it since the client last compacted or rewound it.

Only the file's last :data:`TAIL_BYTES` are read (a JSON document only up to
:data:`MAX_DOCUMENT_BYTES`); anything unreadable gives no history rather than an
error: a FIFO or device named as the transcript is not waited on, a line nested past
the parser's recursion limit is skipped like any unreadable line.
"""

from __future__ import annotations

from skillrt import fastjson
from skillrt.clients import CLIENTS
from skillrt.fileopen import open_regular
from skillrt.wellformed import well_formed

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from typing import Any

#: Bytes read from the end of a JSONL transcript.
TAIL_BYTES = 256 * 1024
#: A whole-document transcript (Gemini CLI) larger than this is not read.
MAX_DOCUMENT_BYTES = 4 * 1024 * 1024
DEFAULT_TURNS = 6
DEFAULT_CHARS = 4_000
#: Wrappers a client adds as user messages; they are not the conversation.
_SYNTHETIC = ("<environment_context>", "<user_instructions>", "<command-name>", "<local-command",
              "<session_context>")  # fmt: skip
#: Parts a client adds to a user message that are not the user's words (Gemini CLI).
_ADDED_PARTS = ("<hook_context>", "<session_context>")
_TEXT_BLOCKS = ("text", "input_text", "output_text")
#: Each client's reader of its transcript lines (:mod:`skillrt.clients`).
_READERS = tuple(c.read_message for c in CLIENTS.values() if c.read_message is not None)
_ROLES = {"user": "user", "assistant": "assistant", "gemini": "assistant", "model": "assistant"}


def read_history(
    path: str | None,
    *,
    prompt: str | None = None,
    turns: int = DEFAULT_TURNS,
    max_chars: int = DEFAULT_CHARS,
) -> list[dict[str, str]]:
    """The last ``turns`` messages as ``{"role", "content"}``, newest last, at most
    ``max_chars`` characters in all (older messages go first, then the oldest kept one is
    cut). ``prompt``, when it is already the transcript's last message, is left out."""
    if not path or turns <= 0 or max_chars <= 0:
        return []
    try:
        messages = _read(path, turns + 1)  # one more: it may be the prompt itself
    except (OSError, ValueError):
        return []
    if prompt is not None and messages and messages[-1] == {"role": "user", "content": prompt}:
        messages.pop()
    return recent(messages, turns=turns, max_chars=max_chars)


def recent(
    messages: list[dict[str, str]], *, turns: int = DEFAULT_TURNS, max_chars: int = DEFAULT_CHARS
) -> list[dict[str, str]]:
    """The last ``turns`` of ``messages``, at most ``max_chars`` characters in all (older
    messages go first, then the oldest kept one is cut)."""
    out: list[dict[str, str]] = []
    left = max_chars
    for message in reversed(messages[-turns:]):
        if left <= 0:
            break
        text = message["content"]
        if len(text) > left:
            text = text[-left:]  # the end of a long message is what the next one follows
        out.append({"role": message["role"], "content": text})
        left -= len(text)
    out.reverse()
    return out


def _read(path: str, limit: int) -> list[dict[str, str]]:
    # Non-blocking: a FIFO named as the transcript would otherwise hang the hook.
    fh, st = open_regular(path)
    with fh:
        size = st.st_size
        start = max(0, size - TAIL_BYTES)
        fh.seek(start)
        data = fh.read(TAIL_BYTES)
    if start == 0 and data.lstrip()[:1] == b"{" and size <= MAX_DOCUMENT_BYTES:
        document = _document(data)
        if document is not None:
            return document
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first line is cut
    # Newest first, and stop once enough messages are found: the lines before them
    # (long tool results, file contents) are never parsed.
    messages: list[dict[str, str]] = []
    for raw in reversed(lines):
        if len(messages) >= limit:
            break
        if not raw.strip():
            continue
        try:
            entry = fastjson.loads(raw)
        except ValueError:
            continue
        message = _message(entry) if isinstance(entry, dict) else None
        if message is not None:
            messages.append(message)
    messages.reverse()
    return messages


def _document(data: bytes) -> list[dict[str, str]] | None:
    """A whole-file JSON transcript with a ``messages`` list (Gemini CLI), else None."""
    try:
        doc = fastjson.loads(data)
    except ValueError:
        return None  # JSONL: one object per line
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        return None
    out = []
    for item in doc["messages"]:
        if isinstance(item, dict):
            role = _ROLES.get(str(item.get("type") or item.get("role")))
            text = _text(item.get("content"))
            if role and text:
                out.append({"role": role, "content": text})
    return out


def _message(entry: dict[str, Any]) -> dict[str, str] | None:
    if entry.get("isMeta") or entry.get("isSidechain"):
        return None
    for client in _READERS:
        found = client(entry)
        if found is not None:
            break
    else:
        return None
    role = _ROLES.get(found[0])
    text = _text(found[1])
    if role is None or not text or text.lstrip().startswith(_SYNTHETIC):
        return None
    return {"role": role, "content": text}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return well_formed(content.strip())
    if isinstance(content, list):
        parts = [
            str(block.get("text", ""))
            for block in content
            if isinstance(block, dict)
            and block.get("type", "text") in _TEXT_BLOCKS
            and not str(block.get("text", "")).startswith(_ADDED_PARTS)
        ]
        return well_formed("\n".join(p for p in parts if p).strip())
    return ""


#: Bytes of a transcript :func:`loaded_skills` reads, from the end.
LOADED_SCAN_BYTES = 32 * 1024 * 1024
_SCAN_CHUNK = 1024 * 1024
#: What a client writes when it compacts or rewinds a conversation: what came before is
#: no longer what the model sees (Claude Code's compact boundary, Codex's compacted
#: item, Gemini CLI's message list replaced or rewound).
_RESETS = (
    b'"subtype":"compact_boundary"',
    b'"subtype": "compact_boundary"',
    b'"type":"compacted"',
    b'"type": "compacted"',
    b'{"$set":{"messages"',
    b'{"$rewindTo"',
)
_BLOCK = b"[Skill: "
#: Bytes of a chunk's successor read with it: a block's header (its marker, a name of up
#: to 400 bytes, `` |``) or a reset marker across the edge.
_OVERLAP = 512


def loaded_skills(path: str | None) -> set[str]:
    """The skills whose injection block stands in the transcript at ``path`` after its
    last compaction (or rewind): they are in the model's context already. Reads at most
    :data:`LOADED_SCAN_BYTES` from the end; anything unreadable gives the empty set."""
    if not path:
        return set()
    try:
        fh, st = open_regular(path)
    except (OSError, ValueError):
        return set()
    found: set[str] = set()
    with fh:
        end = st.st_size
        floor = max(0, end - LOADED_SCAN_BYTES)
        carry = b""
        while end > floor:
            start = max(floor, end - _SCAN_CHUNK)
            try:
                fh.seek(start)
                # With the start of the chunk after it: a marker across the edge is
                # read whole (however long the line it stands in).
                data = fh.read(end - start) + carry
            except OSError:
                break
            reset = max(data.rfind(marker) for marker in _RESETS)
            found.update(_block_names(data[reset + 1 :] if reset >= 0 else data))
            if reset >= 0:
                break
            carry = data[:_OVERLAP]
            end = start
    return found


def _block_names(data: bytes) -> set[str]:
    names: set[str] = set()
    at = data.find(_BLOCK)
    while at >= 0:
        stop = data.find(b" |", at, at + 400)
        if stop > at:
            raw = data[at + len(_BLOCK) : stop]
            try:
                name = raw.decode("utf-8")
                if "\\u" in name:  # a non-ASCII name, as JSON escapes it
                    name = fastjson.loads(b'"' + raw + b'"')
            except (UnicodeDecodeError, ValueError):
                name = ""
            if name and len(name) <= 200 and '"' not in name and "\n" not in name:
                names.add(name)
        at = data.find(_BLOCK, at + 1)
    return names
