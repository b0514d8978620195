"""skillrt as an MCP server: tools, ``skill://`` resources, hot reload.

:class:`SkillService` holds the behaviour (no MCP SDK import, usable in tests and other
servers); :mod:`skillrt.mcp.server` binds it to the official ``mcp`` SDK and is imported
only when a server is started::

    from skillrt.mcp import serve
    serve(runtime)              # stdio
    serve(runtime, http=8765)   # streamable HTTP on 127.0.0.1:8765/mcp
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.config import McpConfig
    from skillrt.mcp.service import Changes, SkillService, ToolOutcome
    from skillrt.runtime import SkillRuntime
    from skillrt.telemetry.writer import RouteEventWriter

#: Public name -> the module that defines it, imported on first use: ``skillrt mcp
#: --with-hook`` answers ``initialize`` from :mod:`skillrt.mcp.early` before the service
#: (and the config, the registry and the store it needs) is loaded.
_EXPORTS = {
    "Changes": "skillrt.mcp.service",
    "SkillService": "skillrt.mcp.service",
    "ToolOutcome": "skillrt.mcp.service",
}

__all__ = ["Changes", "SkillService", "ToolOutcome", "event_writer", "serve"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skillrt.mcp' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


def event_writer(runtime: SkillRuntime) -> RouteEventWriter | None:
    """The background route-event writer a long-lived server should use (None when
    telemetry is off or the store is in memory: then the runtime records directly)."""
    from skillrt.telemetry.writer import RouteEventWriter

    if not runtime.config.telemetry.enabled or runtime.store.is_memory:
        return None
    return RouteEventWriter(
        runtime.store,
        write_timeout_ms=runtime.config.telemetry.write_timeout_ms,
        record_query_text=runtime.config.routing.record_query_text,
        read_only=runtime.store.read_only,
    )


def serve(
    runtime: SkillRuntime,
    *,
    http: int | None = None,
    config: McpConfig | None = None,
    announce: Callable[[str], None] | None = None,
) -> None:
    """Serve ``runtime`` over stdio (default) or streamable HTTP on loopback port ``http``.

    Blocks until the client disconnects (stdio) or the process is interrupted (HTTP).
    """
    import anyio

    from skillrt.mcp import server
    from skillrt.mcp.service import SkillService

    service = SkillService(runtime, config, events=event_writer(runtime))
    if http is None:
        anyio.run(server.serve_stdio, service)
    else:
        anyio.run(lambda: server.serve_http(service, http, announce=announce))
