"""skillrt as an MCP server: tools, ``skill://`` resources, hot reload.

:class:`SkillService` holds the behaviour (no MCP SDK import, usable in tests and other
servers); :mod:`skillrt.mcp.server` binds it to the official ``mcp`` SDK and is imported
only when a server is started::

    from skillrt.mcp import serve
    serve(runtime)              # stdio
    serve(runtime, http=8765)   # streamable HTTP on 127.0.0.1:8765/mcp
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from skillrt.mcp.service import Changes, SkillService, ToolOutcome

if TYPE_CHECKING:
    from skillrt.config import McpConfig
    from skillrt.runtime import SkillRuntime

__all__ = ["Changes", "SkillService", "ToolOutcome", "serve"]


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

    service = SkillService(runtime, config)
    if http is None:
        anyio.run(server.serve_stdio, service)
    else:
        anyio.run(lambda: server.serve_http(service, http, announce=announce))
