"""Answer an MCP client's ``initialize`` before the SDK is loaded.

Importing the official MCP SDK takes about a second (its protocol models), and clients
start their servers with every session: Codex sent its first request before skillrt's
tools were listed. So ``skillrt mcp`` over stdio reads the first line itself; when it is
``initialize``, it answers at once, with the SDK's own choices (the protocol version the
SDK would negotiate, read from the SDK's version table without importing the SDK, and
the capabilities the server registers) and the skill catalogue as instructions (which
needs only the skills' frontmatter). The same line is then handed to the SDK once it is
loaded, and the SDK's own answer is dropped (:class:`AnswerFilter`): compared with the
one sent, and a difference logged, which a test keeps from happening.

Nothing here imports the SDK.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
from dataclasses import dataclass
from typing import Any, BinaryIO

from skillrt.wellformed import repair_json_escapes

log = logging.getLogger("skillrt.mcp")

__all__ = [
    "CAPABILITIES",
    "SERVER_INFO",
    "AnswerFilter",
    "Handshake",
    "answer",
    "read_handshake",
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
#: Versions the SDK negotiates through ``initialize``, if its table cannot be read.
_FALLBACK_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


@dataclass(frozen=True)
class Handshake:
    """The client's first line, and what was answered to it (when it was initialize)."""

    line: bytes
    #: The ``id`` of an ``initialize`` request answered early; None: nothing answered.
    request_id: Any = None
    #: The result sent.
    result: dict[str, Any] | None = None


def read_handshake(wire: BinaryIO) -> tuple[bytes, dict[str, Any] | None]:
    """The first line from the client, and its request when it is ``initialize``."""
    line = wire.readline()
    # Read as the SDK will read it (:class:`skillrt.mcp.stdin.RepairedLines`): bad bytes
    # and lone-surrogate escapes replaced, so the answer's id is the one the SDK sees.
    text = repair_json_escapes(line.decode("utf-8", "replace"))
    try:
        message = json.loads(text) if text.strip() else None
    except (ValueError, RecursionError):
        return line, None
    if isinstance(message, dict) and message.get("method") == "initialize" and _valid(message):
        return line, message
    return line, None


def _valid(request: dict[str, Any]) -> bool:
    """Whether the SDK takes this ``initialize`` (its id and the fields its params
    require): one it refuses is left to the SDK, which answers it with its error."""
    rid, params = request.get("id"), request.get("params")
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


def same_result(sent: dict[str, Any], sdk: dict[str, Any]) -> bool:
    """Whether the SDK's own answer says what was sent (its ``serverInfo`` may add
    fields such as icons; the rest must match)."""
    keys = ("capabilities", "instructions", "protocolVersion")
    info = sdk.get("serverInfo") or {}
    return all(sent.get(k) == sdk.get(k) for k in keys) and all(
        info.get(k) == v for k, v in sent["serverInfo"].items()
    )


class AnswerFilter:
    """The SDK's write stream, less its answer to the ``initialize`` answered early
    (compared with what was sent; a difference is logged). Everything else passes."""

    def __init__(self, stream: Any, handshake: Handshake) -> None:
        self._stream = stream
        self._handshake = handshake
        self._pending = handshake.request_id is not None

    async def send(self, item: Any) -> None:
        if self._pending:
            message = getattr(item, "message", None)
            dump = getattr(message, "model_dump_json", None)
            data = json.loads(dump(by_alias=True, exclude_unset=True)) if dump else {}
            if data.get("id") == self._handshake.request_id and (
                "result" in data or "error" in data
            ):
                self._pending = False
                sent = self._handshake.result or {}
                if "result" not in data or not same_result(sent, data["result"]):
                    log.warning("the SDK answered initialize otherwise than sent early: "
                                "%s (sent %s)", data, sent)  # fmt: skip
                return
        await self._stream.send(item)

    async def __aenter__(self) -> AnswerFilter:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._stream.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
