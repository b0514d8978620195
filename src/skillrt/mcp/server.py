"""The MCP server: the only module of skillrt that imports the MCP SDK (``mcp`` 2.x).

Built on the SDK's low-level :class:`mcp.server.lowlevel.Server` because every list is
dynamic: ``load_skill``'s enum, the ``skill://`` resources and the instructions all
follow the skills on disk. Behaviour lives in :class:`~skillrt.mcp.service.SkillService`
(plain Python, run in worker threads); this module maps it to wire types, serves stdio
or streamable HTTP (loopback only), and sends list-changed notifications after a hot
reload, to both protocol eras the SDK serves:

- 2025-era sessions (``initialize`` handshake; today's desktop clients) get
  ``notifications/tools/list_changed`` / ``resources/list_changed`` on their
  connection's standalone channel;
- 2026-07-28 sessions get the same events on their ``subscriptions/listen`` streams.

The server also speaks the MCP skills extension (SEP-2640,
``io.modelcontextprotocol/skills``): ``skills/list`` and ``skills/get``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO, cast

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skillrt.errors import SkillrtError
from skillrt.mcp.early import SERVER_INFO, AnswerFilter, Handshake
from skillrt.mcp.http_input import RepairedBodies
from skillrt.mcp.publish import ResourceInfo
from skillrt.mcp.service import Changes, SkillService, ToolOutcome
from skillrt.mcp.stdin import RepairedLines, claimed_stdin
from skillrt.mcp.tools import tool_wire

log = logging.getLogger("skillrt.mcp")

SKILLS_EXTENSION = "io.modelcontextprotocol/skills"
LOOPBACK = "127.0.0.1"
SERVER_NAME = SERVER_INFO["name"]


class GetSkillParams(types.RequestParams):
    """``skills/get`` params: the URI of a skill's SKILL.md."""

    uri: str


def _version() -> str:
    from skillrt.version import __version__

    return __version__


def _to_mcp_error(err: SkillrtError) -> MCPError:
    # Invalid params (-32602) is what resources/read uses for an unknown resource; the
    # skillrt code (PathTraversalBlocked, SkillDisabled, ...) travels in ``data``.
    return MCPError(code=types.INVALID_PARAMS, message=err.message, data=err.to_dict())


def _tool_result(outcome: ToolOutcome) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=outcome.text)],
        structured_content=outcome.data,
        is_error=outcome.is_error,
    )


def _resource(info: ResourceInfo) -> types.Resource:
    return types.Resource(
        uri=info.uri,
        name=info.name,
        title=info.title,
        description=info.description,
        mime_type=info.mime_type,
        size=info.size,
        _meta=info.meta or None,
    )


class Notifier:
    """Fans list-changed events out to every connected client, whatever its era."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        # Legacy connections, keyed by the SDK's per-connection object; each entry is
        # dropped when its connection closes.
        self._legacy: dict[object, Any] = {}

    async def middleware(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Remember each handshake-era connection the first time it sends something."""
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            conn = getattr(ctx.session, "_connection", None)
            key: object = conn if conn is not None else ctx.session
            if key not in self._legacy:
                self._legacy[key] = ctx.session
                stack = getattr(conn, "exit_stack", None)
                if stack is not None:
                    stack.callback(self._legacy.pop, key, None)
        return await call_next(ctx)

    @property
    def legacy_connections(self) -> int:
        return len(self._legacy)

    async def publish(self, changes: Changes) -> None:
        if changes.tools:
            await self.bus.publish(ToolsListChanged())
        if changes.resources:
            await self.bus.publish(ResourcesListChanged())
        for session in list(self._legacy.values()):
            try:
                if changes.tools:
                    await session.send_tool_list_changed()
                if changes.resources:
                    await session.send_resource_list_changed()
            except Exception:  # a dead connection must not stop the others
                log.debug("could not notify a closed session", exc_info=True)


def build_server(service: SkillService) -> tuple[Server[Any], Notifier]:
    """The SDK server for ``service`` (started: its first snapshot is built)."""
    notifier = Notifier()

    async def run(fn: Callable[..., Any], *args: Any) -> Any:
        return await anyio.to_thread.run_sync(fn, *args)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool.model_validate(tool_wire(s)) for s in service.tools()]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        outcome = await run(service.call_tool, params.name, params.arguments)
        return _tool_result(outcome)

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        try:
            items, cursor = service.list_resources(params.cursor if params else None)
        except SkillrtError as err:
            raise _to_mcp_error(err) from err
        return types.ListResourcesResult(
            resources=[_resource(i) for i in items], next_cursor=cursor
        )

    async def list_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template="skill://{skill}/{+path}",
                    name="skill-file",
                    title="A file of a skill",
                    description="Any file of a published skill, e.g. "
                    "skill://code-review/references/checklist.md; a namespaced skill "
                    "ns:name lives under skill://ns/name/.",
                )
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            content = await run(service.read_resource, params.uri)
        except SkillrtError as err:
            raise _to_mcp_error(err) from err
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(
                    uri=content.uri,
                    text=content.text,
                    mime_type=content.mime_type,
                    _meta=content.meta or None,
                )
            ]
        )

    async def skills_list(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams
    ) -> dict[str, Any]:
        try:
            result: dict[str, Any] = await run(service.skills_list, params.cursor)
        except SkillrtError as err:
            raise _to_mcp_error(err) from err
        return result

    async def skills_get(ctx: ServerRequestContext[Any], params: GetSkillParams) -> dict[str, Any]:
        try:
            result: dict[str, Any] = await run(service.skills_get, params.uri)
        except SkillrtError as err:
            raise _to_mcp_error(err) from err
        return result

    def input_schema(name: str) -> dict[str, Any] | None:
        spec = next((s for s in service.tools() if s.name == name), None)
        return None if spec is None else spec.input_schema

    server: Server[Any] = Server(
        SERVER_INFO["name"],
        version=_version(),
        title=SERVER_INFO["title"],
        description=SERVER_INFO["description"],
        instructions=service.instructions,
        get_tool_input_schema=input_schema,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscriptions_listen=ListenHandler(notifier.bus),
    )
    server.add_request_handler("skills/list", types.PaginatedRequestParams, skills_list)
    server.add_request_handler("skills/get", GetSkillParams, skills_get)
    server.extensions[SKILLS_EXTENSION] = {}
    server.middleware.append(notifier.middleware)
    return server, notifier


def init_options(server: Server[Any]) -> Any:
    return server.create_initialization_options(
        NotificationOptions(tools_changed=True, resources_changed=True)
    )


async def watch(
    service: SkillService,
    server: Server[Any],
    notifier: Notifier,
    *,
    on_change: Callable[[Changes], Awaitable[None]] | None = None,
) -> None:
    """Poll the roots forever; reload and notify clients when skills change."""
    interval = service.config.poll_interval_s
    if interval <= 0:
        return
    while True:
        await anyio.sleep(interval)
        try:
            changes = await anyio.to_thread.run_sync(service.check_for_changes)
        except Exception:  # a broken poll must not kill the server; try again later
            log.exception("checking the skill roots failed")
            continue
        if changes is None or not changes.any:
            continue
        server.instructions = service.instructions
        await notifier.publish(changes)
        if on_change is not None:
            await on_change(changes)


async def serve_stdio(
    service: SkillService, wire: BinaryIO | None = None, handshake: Handshake | None = None
) -> None:
    """Serve over this process's stdin/stdout until the client closes stdin.

    ``wire`` is the claimed stdin when the caller already read the client's first lines
    (``handshake``: what was answered early, see :mod:`skillrt.mcp.early`)."""
    # The snapshot now (unless the early answers made it); the router's index beside
    # the session: a client's first turn waits for the tool list, not for the index.
    if not service.started:
        await anyio.to_thread.run_sync(service.start)
    service.warm_in_background()
    server, notifier = build_server(service)
    try:
        with contextlib.ExitStack() as stack:
            if wire is None:
                wire = stack.enter_context(claimed_stdin())
            before = handshake.lines if handshake is not None else ()
            stdin = cast("anyio.AsyncFile[str]", RepairedLines(wire, before))
            async with (
                stdio_server(stdin=stdin) as (read, write),
                anyio.create_task_group() as tg,
            ):
                tg.start_soon(watch, service, server, notifier)
                out = AnswerFilter(write, handshake) if handshake is not None else write
                await server.run(read, out, init_options(server))
                tg.cancel_scope.cancel()
    except* (anyio.BrokenResourceError, anyio.ClosedResourceError):
        # The SDK's streams were closed under a request in flight: the client went away
        # or Ctrl-C is tearing the server down. That ends the session; it is no error.
        log.debug("the stdio transport closed under a request; ending")
    finally:
        await _close_events(service)


async def _close_events(service: SkillService) -> None:
    """Flush queued route events before the process exits."""
    if service.events is not None:
        await anyio.to_thread.run_sync(service.events.close)


def bind_loopback(port: int) -> socket.socket:
    """A listening TCP socket on 127.0.0.1 (port 0 picks a free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((LOOPBACK, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


async def serve_http(
    service: SkillService, port: int, *, announce: Callable[[str], None] | None = None
) -> None:
    """Serve streamable HTTP at ``http://127.0.0.1:<port>/mcp`` (loopback only)."""
    import uvicorn

    await anyio.to_thread.run_sync(lambda: service.start(warm=True))
    server, notifier = build_server(service)
    # One body cap for both: past it the SDK answers 413, and the repair reads no more.
    limit = DEFAULT_MAX_REQUEST_BODY_SIZE
    app = RepairedBodies(
        server.streamable_http_app(host=LOOPBACK, max_request_body_size=limit), limit
    )
    sock = bind_loopback(port)
    url = f"http://{LOOPBACK}:{sock.getsockname()[1]}/mcp"
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    web = uvicorn.Server(config)
    if announce is not None:
        announce(url)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch, service, server, notifier)
            try:
                await web.serve(sockets=[sock])
            finally:
                tg.cancel_scope.cancel()
                sock.close()
    finally:
        await _close_events(service)


def announce_stderr(url: str) -> None:
    sys.stderr.write(json.dumps({"event": "listening", "url": url}) + "\n")
    sys.stderr.flush()
