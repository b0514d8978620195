"""The HTTP transport's body repair (mcp/http_input.py) as an ASGI wrapper: what reaches
the SDK, and how much of a body it reads before the SDK's own cap."""

from __future__ import annotations

from typing import Any

import anyio

from skillrt.mcp.http_input import RepairedBodies

Message = dict[str, Any]


def drive(chunks: list[bytes], *, limit: int, method: str = "POST") -> tuple[list[Message], int]:
    """Run the wrapper over a request whose body comes in ``chunks``; returns what the
    wrapped app received and how many messages the wrapper itself read first."""
    incoming: list[Message] = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]
    read = 0
    seen: list[Message] = []

    async def receive() -> Message:
        nonlocal read
        read += 1
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def app(scope: Any, receive_: Any, send: Any) -> None:
        while True:
            message = await receive_()
            seen.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                return

    async def send(message: Message) -> None:
        return None

    read_before_app = 0

    async def main() -> None:
        nonlocal read_before_app
        wrapper = RepairedBodies(app, limit)

        async def counting_app(scope: Any, receive_: Any, send_: Any) -> None:
            nonlocal read_before_app
            read_before_app = read
            await app(scope, receive_, send_)

        wrapper.app = counting_app
        await wrapper({"type": "http", "method": method}, receive, send)

    anyio.run(main)
    return seen, read_before_app


def test_a_body_in_chunks_reaches_the_app_repaired_as_one_message() -> None:
    seen, _ = drive([b'{"q": "a \\ud8', b'00 b", "ok": "\\u00e9"}'], limit=1 << 20)
    assert seen == [{"type": "http.request", "body": b'{"q": "a \\ufffd b", "ok": "\\u00e9"}'}]


def test_a_body_over_the_cap_is_passed_on_as_it_came_without_reading_the_rest() -> None:
    chunks = [b"x" * 1000 for _ in range(50)]
    seen, read_first = drive(chunks, limit=2500)
    assert read_first == 3  # stopped once past the cap, not after 50 chunks
    assert b"".join(m["body"] for m in seen) == b"".join(chunks)  # the rest streamed on
    assert len(seen) == 50


def test_other_methods_are_not_touched() -> None:
    seen, read_first = drive([b'"\\ud800"'], limit=1 << 20, method="GET")
    assert read_first == 0 and seen[0]["body"] == b'"\\ud800"'


def test_a_body_announced_over_the_cap_is_not_read_at_all() -> None:
    incoming = [{"type": "http.request", "body": b"x" * 10, "more_body": True}]
    read = 0
    reached: list[bool] = []

    async def receive() -> Message:
        nonlocal read
        read += 1
        return incoming.pop(0)

    async def app(scope: Any, receive_: Any, send: Any) -> None:
        reached.append(read == 0)  # the SDK refuses it (413) before reading anything

    async def send(message: Message) -> None:
        return None

    scope = {"type": "http", "method": "POST", "headers": [(b"content-length", b"5000000")]}
    anyio.run(RepairedBodies(app, 4_194_304), scope, receive, send)
    assert reached == [True]
