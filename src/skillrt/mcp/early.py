"""Answer an MCP client's first requests before the SDK is loaded.

Importing the official MCP SDK takes about a second (its protocol models), and clients
start their servers with every session: Codex sends its first model request about a
second after ``initialize`` was answered, with the tools listed by then and no others.
So ``skillrt mcp`` over stdio reads the first lines itself (:class:`EarlyInput`):

- ``initialize`` is answered at once, with the SDK's own choices (the protocol version
  the SDK would negotiate, read from the SDK's version table without importing the SDK,
  and the capabilities the server registers) and the instructions (a fixed text beside a
  prompt hook; else the catalogue, which needs only the skills' frontmatter);
- a ``tools/list`` that follows the ``initialized`` notification is answered from the
  snapshot (:func:`skillrt.mcp.tools.tool_wire`, the same dicts the SDK is given).

The lines are then handed to the SDK in order, and its own answers to the requests
answered early are dropped (:class:`AnswerFilter`): compared with the ones sent, and a
difference logged, which a test keeps from happening.

Nothing here imports the SDK.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import select
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from skillrt.wellformed import repair_json_escapes

log = logging.getLogger("skillrt.mcp")

__all__ = [
    "CAPABILITIES",
    "SERVER_INFO",
    "AnswerFilter",
    "EarlyInput",
    "Handshake",
    "answer",
    "initialize_request",
]

#: What the server says it is (the SDK's ``Server`` is built with the same).
SERVER_INFO = {
    "name": "skillrt",
    "title": "skillrt",
    "description": "Agent Skills: routing, progressive loading and delegation",
}
#: The capabilities the server's handlers give a handshake-era session.
CAPABILITIES = {
    "resources": {"listChanged": True, "subscribe": False},
    "tools": {"listChanged": True},
}
#: How long a line the client has begun may take to end when it is handed over.
PARTIAL_LINE_S = 5.0
#: Versions the SDK negotiates through ``initialize``, if its table cannot be read.
_FALLBACK_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


@dataclass(frozen=True)
class Handshake:
    """The lines read before the SDK was loaded (handed to it in order), and what was
    answered to them: request id -> (method, result sent)."""

    lines: tuple[bytes, ...] = ()
    answered: Mapping[Any, tuple[str, dict[str, Any]]] = field(default_factory=dict)


class EarlyInput:
    """Lines of the client's stream read with ``os.read`` on its descriptor (a buffered
    read would keep what follows in a buffer the SDK's reader never sees), each wait
    bounded when asked; :meth:`rest` hands over what was read past them."""

    def __init__(self, wire: BinaryIO) -> None:
        self._wire = wire
        try:
            self._fd: int | None = wire.fileno()
        except (AttributeError, OSError, ValueError):  # a stream without a descriptor
            self._fd = None
        self._buffer = b""
        self._eof = False

    def readline(self, timeout: float | None = None) -> bytes | None:
        """The next line (``b""`` at the end of the stream); None when ``timeout``
        seconds pass without one, or the stream cannot be waited on."""
        if self._fd is None:
            return self._wire.readline() if timeout is None else None
        while b"\n" not in self._buffer and not self._eof:
            if timeout is not None:
                try:
                    ready, _, _ = select.select([self._fd], [], [], timeout)
                except (OSError, ValueError):
                    return None
                if not ready:
                    return None
            chunk = os.read(self._fd, 65536)
            self._eof = not chunk
            self._buffer += chunk
        line, sep, rest = self._buffer.partition(b"\n")
        self._buffer = rest
        return line + sep

    def rest(self, timeout: float = PARTIAL_LINE_S) -> tuple[bytes, ...]:
        """The lines read past the last one taken. A line begun is read to its end (the
        SDK's reader starts at a line's beginning), for at most ``timeout`` seconds: a
        client stalled mid-line past that has its part handed on as a line of its own,
        which the SDK refuses as it would any broken line."""
        if self._fd is not None:
            deadline = time.monotonic() + timeout
            while self._buffer and not self._buffer.endswith(b"\n") and not self._eof:
                try:
                    ready, _, _ = select.select(
                        [self._fd], [], [], max(0.0, deadline - time.monotonic())
                    )
                except (OSError, ValueError):
                    break
                if not ready:
                    log.warning("the client's line was still incomplete after %g s", timeout)
                    break
                chunk = os.read(self._fd, 65536)
                self._eof = not chunk
                self._buffer += chunk
        lines = []
        while self._buffer:
            line, sep, self._buffer = self._buffer.partition(b"\n")
            lines.append(line + sep)
        return tuple(lines)


def _message(line: bytes) -> Any:
    """``line`` as the SDK will read it (:class:`skillrt.mcp.stdin.RepairedLines`): bad
    bytes and lone-surrogate escapes replaced, so an answer's id is the one the SDK
    sees; None when it is not JSON."""
    text = repair_json_escapes(line.decode("utf-8", "replace"))
    try:
        return json.loads(text) if text.strip() else None
    except (ValueError, RecursionError):
        return None


def initialize_request(line: bytes) -> dict[str, Any] | None:
    """The ``initialize`` request on ``line``, when it is one the SDK takes."""
    message = _message(line)
    if isinstance(message, dict) and message.get("method") == "initialize" and _valid(message):
        return message
    return None


def is_initialized(line: bytes) -> bool:
    """Whether ``line`` is the client's ``notifications/initialized``."""
    message = _message(line)
    return (
        isinstance(message, dict)
        and message.get("jsonrpc") == "2.0"
        and message.get("method") == "notifications/initialized"
        and "id" not in message
    )


def list_tools_id(line: bytes) -> Any:
    """The id of a ``tools/list`` request for the first page on ``line``; None for any
    other line. Only a request the SDK would answer with the list is answered early:
    a cursor, unknown or malformed params, or a malformed message are left to it."""
    message = _message(line)
    if not isinstance(message, dict) or message.get("method") != "tools/list":
        return None
    rid, params = message.get("id"), message.get("params")
    if message.get("jsonrpc") != "2.0" or isinstance(rid, bool) or not isinstance(rid, int | str):
        return None
    if params is None:
        return rid
    if not isinstance(params, dict) or not set(params) <= {"cursor", "_meta"}:
        return None
    meta = params.get("_meta")
    if params.get("cursor") is not None or (meta is not None and not _plain_meta(meta)):
        return None
    return rid


def _plain_meta(meta: Any) -> bool:
    """A request ``_meta`` the SDK takes: an object whose progress token, if any, is a
    string or an integer."""
    if not isinstance(meta, dict):
        return False
    token = meta.get("progressToken")
    return token is None or (isinstance(token, int | str) and not isinstance(token, bool))


def _valid(request: dict[str, Any]) -> bool:
    """Whether the SDK takes this ``initialize`` (its id and the fields its params
    require): one it refuses is left to the SDK, which answers it with its error."""
    rid, params = request.get("id"), request.get("params")
    if request.get("jsonrpc") != "2.0":
        return False
    if isinstance(rid, bool) or not isinstance(rid, int | str) or not isinstance(params, dict):
        return False
    info = params.get("clientInfo")
    return (
        isinstance(params.get("protocolVersion"), str)
        and isinstance(params.get("capabilities"), dict)
        and isinstance(info, dict)
        and isinstance(info.get("name"), str)
        and isinstance(info.get("version"), str)
    )


def answer(request: dict[str, Any], *, instructions: str, version: str) -> dict[str, Any]:
    """The ``initialize`` result the SDK would give ``request``."""
    versions, latest = sdk_handshake_versions()
    requested = request["params"].get("protocolVersion")
    negotiated = requested if requested in versions else latest
    return {
        "capabilities": CAPABILITIES,
        "instructions": instructions,
        "protocolVersion": negotiated,
        "serverInfo": {**SERVER_INFO, "version": version},
    }


def send(out: BinaryIO, request_id: Any, result: dict[str, Any]) -> None:
    """Write one JSON-RPC response line and flush it."""
    message = {"jsonrpc": "2.0", "id": request_id, "result": result}
    out.write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")
    out.flush()


def sdk_handshake_versions() -> tuple[tuple[str, ...], str]:
    """``(HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION)`` of the installed SDK,
    from its ``mcp_types/version.py`` executed alone (the package's import is the
    second this module saves)."""
    try:
        spec = importlib.util.find_spec("mcp_types")
        where = list(spec.submodule_search_locations or ()) if spec else []
        path = os.path.join(where[0], "version.py") if where else ""
        loaded = importlib.util.spec_from_file_location("skillrt._mcp_versions", path)
        if loaded is None or loaded.loader is None:
            raise ImportError(path)
        table = importlib.util.module_from_spec(loaded)
        loaded.loader.exec_module(table)  # the SDK's own constants; it imports only typing
        versions = tuple(table.HANDSHAKE_PROTOCOL_VERSIONS)
        return versions, str(table.LATEST_HANDSHAKE_VERSION)
    except (OSError, AttributeError, TypeError, SyntaxError, ImportError, ValueError):
        log.debug("the SDK's version table could not be read; using the known versions")
        return _FALLBACK_VERSIONS, _FALLBACK_VERSIONS[-1]


def _equal(sent: dict[str, Any], sdk: dict[str, Any]) -> bool:
    return sent == sdk


def same_result(sent: dict[str, Any], sdk: dict[str, Any]) -> bool:
    """Whether the SDK's own answer says what was sent (its ``serverInfo`` may add
    fields such as icons; the rest must match)."""
    keys = ("capabilities", "instructions", "protocolVersion")
    info = sdk.get("serverInfo") or {}
    return all(sent.get(k) == sdk.get(k) for k in keys) and all(
        info.get(k) == v for k, v in sent["serverInfo"].items()
    )


class AnswerFilter:
    """The SDK's write stream, less its answers to the requests answered early (each
    compared with what was sent; a difference is logged). Everything else passes."""

    def __init__(self, stream: Any, handshake: Handshake) -> None:
        self._stream = stream
        self._pending = dict(handshake.answered)

    async def send(self, item: Any) -> None:
        if self._pending:
            message = getattr(item, "message", None)
            dump = getattr(message, "model_dump_json", None)
            data = json.loads(dump(by_alias=True, exclude_unset=True)) if dump else {}
            rid = data.get("id")
            if rid in self._pending and ("result" in data or "error" in data):
                method, sent = self._pending.pop(rid)
                same = same_result if method == "initialize" else _equal
                if "result" not in data or not same(sent, data["result"]):
                    log.warning("the SDK answered %s otherwise than sent early: %s (sent %s)",
                                method, data, sent)  # fmt: skip
                return
        await self._stream.send(item)

    async def __aenter__(self) -> AnswerFilter:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._stream.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
