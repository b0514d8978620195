"""The hook contract of each client: what arrives on stdin, what to print on stdout
(each client itself: :mod:`skillrt.clients`).

- ``claude-code``: a ``UserPromptSubmit`` hook. Input: ``session_id``,
  ``transcript_path`` (JSONL), ``cwd``, ``permission_mode``, ``hook_event_name``,
  ``prompt``. Output (exit 0): ``{"hookSpecificOutput": {"hookEventName":
  "UserPromptSubmit", "additionalContext": ...}, "systemMessage": ...}``; nothing when
  no skill applies.
- ``codex``: Codex CLI's ``UserPromptSubmit`` hook, the same contract (its transcript is
  Codex's own JSONL).
- ``gemini``: Gemini CLI's ``BeforeAgent`` hook: the same fields in, and
  ``hookSpecificOutput.additionalContext`` with ``hookEventName: "BeforeAgent"`` out
  (stdout must be that JSON or nothing); with ``--via-model`` (what ``install gemini``
  writes) the text goes through its ``BeforeModel`` hook instead, into the user's own
  message (:mod:`skillrt.hooks.model_channel`).

``additionalContext`` goes to the model; ``systemMessage`` (the ``Using skill:`` lines
and ``$`` mention messages) is shown to the person.
"""

from __future__ import annotations

from skillrt import fastjson
from skillrt.clients import CLIENTS
from skillrt.wellformed import well_formed

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from typing import Any

#: Gemini CLI's model-call event (``--via-model``: see :mod:`skillrt.hooks.model_channel`).
MODEL_EVENT = "BeforeModel"


class HookInputError(ValueError):
    """The hook's stdin is not the JSON the client sends."""


class HookInput:
    """The fields skillrt reads (a plain class: dataclasses cost an import per prompt)."""

    __slots__ = ("cwd", "event", "llm_request", "prompt", "session_id", "transcript_path")

    def __init__(
        self,
        prompt: str,
        cwd: str | None = None,
        transcript_path: str | None = None,
        session_id: str | None = None,
        event: str | None = None,
        llm_request: dict[str, Any] | None = None,
    ) -> None:
        self.prompt = prompt
        self.cwd = cwd
        self.transcript_path = transcript_path
        self.session_id = session_id
        self.event = event
        #: Gemini CLI's ``BeforeModel`` input: the request about to be sent.
        self.llm_request = llm_request


def parse_input(raw: bytes | str) -> HookInput:
    """The fields skillrt uses from the hook's JSON (raises HookInputError)."""
    try:
        data = fastjson.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise HookInputError(f"hook input is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise HookInputError("hook input is not a JSON object")
    request = data.get("llm_request")
    if data.get("hook_event_name") == MODEL_EVENT:
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            raise HookInputError("BeforeModel input has no 'llm_request.messages' list")
        data = {**data, "prompt": ""}
    prompt = data.get("prompt")
    if not isinstance(prompt, str):
        raise HookInputError("hook input has no 'prompt' string")

    def opt(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) and value else None

    return HookInput(
        prompt=well_formed(prompt),  # JSON's "\\ud800" is a str no encoder takes
        cwd=opt("cwd"),
        transcript_path=opt("transcript_path"),
        session_id=opt("session_id"),
        event=opt("hook_event_name"),
        llm_request=request if isinstance(request, dict) else None,
    )


def shown(context: dict[str, Any]) -> list[str]:
    """The lines for the person: ``Using skill:`` and the ``$`` mention messages."""
    return [*context.get("lines", ()), *(d["message"] for d in context.get("diagnostics", ()))]


def render(client: str, context: dict[str, Any]) -> str:
    """What to print for a turn context (``TurnContext`` as JSON): "" when empty."""
    text = str(context.get("text") or "")
    if not text:
        return ""
    shown_lines = shown(context)
    out: dict[str, Any] = {
        "hookSpecificOutput": {"hookEventName": CLIENTS[client].event, "additionalContext": text}
    }
    if shown_lines:
        out["systemMessage"] = "\n".join(shown_lines)
    return fastjson.dumps(out)


def render_message_only(context: dict[str, Any]) -> str:
    """``BeforeAgent`` with ``--via-model``: only the person's line (the model gets the
    text through ``BeforeModel``); "" when there is none."""
    lines = shown(context)
    return fastjson.dumps({"systemMessage": "\n".join(lines)}) if lines else ""
