"""The stdio transport's input, with lone-surrogate escapes repaired before the SDK parses.

JSON allows ``"\\ud800"``; the SDK's parser (pydantic) refuses the whole line, and the
request is dropped without an answer, so the client waits for good. Each line is
handed over with such escapes as ``\\ufffd`` (:func:`skillrt.wellformed.repair_json_escapes`):
the request is served, its text as well formed as any other surface makes it.

Passing our own input stream skips the SDK's claim of fd 0, so :func:`claimed_stdin`
does the same: the wire is read from a private duplicate, and fd 0 points at the null
device while serving (a handler or a child process reads EOF, never the protocol).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator, Sequence
from typing import BinaryIO

from skillrt.wellformed import repair_json_escapes

__all__ = ["RepairedLines", "claimed_stdin"]


class RepairedLines:
    """Async iteration over a binary stream's lines (UTF-8, bad bytes replaced), each
    with its lone-surrogate escapes repaired: what the SDK's ``stdio_server`` reads."""

    def __init__(self, stream: BinaryIO, before: Sequence[bytes] = ()) -> None:
        import anyio  # here: the stdin is claimed, and initialize answered, before it

        text = io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline=None)
        self._file = anyio.wrap_file(text)
        #: Lines read before the SDK was loaded (the handshake), served first.
        self._before = list(before)

    def __aiter__(self) -> RepairedLines:
        return self

    async def __anext__(self) -> str:
        if self._before:
            return repair_json_escapes(self._before.pop(0).decode("utf-8", "replace"))
        line = await self._file.readline()
        if not line:
            raise StopAsyncIteration
        return repair_json_escapes(line)


@contextlib.contextmanager
def claimed_stdin() -> Iterator[BinaryIO]:
    """This process's stdin for the transport alone (see the module docstring)."""
    try:
        fd: int | None = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    private = None if fd is None else _divert(fd)
    if fd is None or private is None:
        yield sys.stdin.buffer  # no descriptor to divert: serve the stream in place
        return
    try:
        # closefd=False: a worker thread may still be blocked reading it on the way out.
        yield os.fdopen(private, "rb", closefd=False)
    finally:
        with contextlib.suppress(OSError):
            os.dup2(private, fd)


def _divert(fd: int) -> int | None:
    """A private duplicate of ``fd`` (not inheritable), with ``fd`` itself moved to the
    null device; None, and nothing changed, when that cannot be done."""
    try:
        null = os.open(os.devnull, os.O_RDONLY)
    except OSError:
        return None
    try:
        private = os.dup(fd)
    except OSError:
        os.close(null)
        return None
    try:
        os.dup2(null, fd)
    except OSError:
        os.close(private)
        return None
    finally:
        os.close(null)
    return private
