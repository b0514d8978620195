"""The HTTP transport's request bodies, with lone-surrogate escapes repaired before the
SDK parses them: what :mod:`skillrt.mcp.stdin` does for stdio lines.

JSON allows ``"\\ud800"``; the SDK's parser (pydantic) refuses the whole body with a
parse error, so a request one surface serves would fail on the other. The body of each
POST is gathered (the SDK reads it whole anyway) and handed over with such escapes as
``\\ufffd``. Only the ASCII escape text changes: the body is read as Latin-1, a
one-to-one map of bytes, so every other byte reaches the SDK unchanged. A body past
``limit`` (the SDK's own cap on a request body) is passed on as it came, unread past the
cap, for the SDK to refuse (413): the gathering never holds more than the SDK would.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
import anyio.to_thread

from skillrt.wellformed import repair_json_escapes

__all__ = ["RepairedBodies", "repair_body"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


#: Bodies up to this size are repaired on the event loop (well under a millisecond).
INLINE_BYTES = 64 * 1024
#: The escape of a surrogate, paired or not: only a body with one needs the (slower,
#: pure-Python) repair.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def repair_body(body: bytes) -> bytes:
    """``body`` with each escaped lone surrogate as ``\\ufffd`` (see the module)."""
    if _SURROGATE_ESCAPE.search(body) is None:
        return body
    return repair_json_escapes(body.decode("latin-1")).encode("latin-1")


class RepairedBodies:
    """ASGI middleware: POST bodies reach ``app`` repaired, as one message."""

    def __init__(self, app: App, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST" or self._over(scope):
            await self.app(scope, receive, send)  # the SDK refuses an oversized one unread
            return
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message.get("type") != "http.request":  # the client went away
                break
            size += len(message.get("body", b""))
            if size > self.limit:  # the SDK answers 413; hand over what came, as it came
                break
            if not message.get("more_body", False):
                body = b"".join(m.get("body", b"") for m in messages)
                if len(body) > INLINE_BYTES:  # ~0.25 s a MiB of escapes: off the event loop
                    body = await anyio.to_thread.run_sync(repair_body, body)
                else:
                    body = repair_body(body)
                messages = [{"type": "http.request", "body": body}]
                break
        await self.app(scope, _replay(messages, receive), send)

    def _over(self, scope: Scope) -> bool:
        """The request says its body is longer than the cap (``Content-Length``)."""
        for key, value in scope.get("headers") or ():
            if key.lower() == b"content-length":
                try:
                    return int(value) > self.limit
                except ValueError:
                    return False
        return False


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that gives ``messages`` in order, then defers to the real one."""
    pending = list(reversed(messages))

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay
