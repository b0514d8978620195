"""The HTTP transport's request bodies, with lone-surrogate escapes repaired before the
SDK parses them: what :mod:`skillrt.mcp.stdin` does for stdio lines.

JSON allows ``"\\ud800"``; the SDK's parser (pydantic) refuses the whole body with a
parse error, so a request one surface serves would fail on the other. The body of each
POST is gathered (the SDK reads it whole anyway) and handed over with such escapes as
``\\ufffd``. Only the ASCII escape text changes: the body is read as Latin-1, a
one-to-one map of bytes, so every other byte reaches the SDK unchanged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from skillrt.wellformed import repair_json_escapes

__all__ = ["RepairedBodies", "repair_body"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def repair_body(body: bytes) -> bytes:
    """``body`` with each escaped lone surrogate as ``\\ufffd`` (see the module)."""
    if b"\\u" not in body:
        return body
    return repair_json_escapes(body.decode("latin-1")).encode("latin-1")


class RepairedBodies:
    """ASGI middleware: POST bodies reach ``app`` repaired, as one message."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message.get("type") != "http.request":  # the client went away
                await self.app(scope, _replay(message, receive), send)
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = repair_body(b"".join(chunks))
        await self.app(scope, _replay({"type": "http.request", "body": body}, receive), send)


def _replay(first: Message, receive: Receive) -> Receive:
    """A ``receive`` that gives ``first`` once, then defers to the real one."""
    pending = [first]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay
