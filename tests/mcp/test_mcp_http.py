"""Streamable HTTP on 127.0.0.1: one shared server, many clients, no lost route events."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from mcp_support import server_env, skillrt_cmd

#: Soak length: 30 s by default (CI); SKILLRT_MCP_SOAK_S shortens it for local runs.
SOAK_S = float(os.environ.get("SKILLRT_MCP_SOAK_S", "30"))
CLIENTS = 8
QUERIES = (
    "review my pull request for security problems",
    "write a commit message for this diff",
    "fix the failing CI checks on GitHub",
    "what's the capital of France",
    "code review please",
)


@contextmanager
def http_server(
    root: Path, state: Path, *extra: str
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    proc = subprocess.Popen(
        skillrt_cmd("mcp", "--root", str(root), "--state", str(state), "--http", "0", *extra),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=state.parent,
        env={**os.environ, **server_env()},
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        if not line:
            raise AssertionError(f"server did not start (exit {proc.wait(10)})")
        url = json.loads(line)["url"]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def route_events(state: Path) -> int:
    with sqlite3.connect(state / "state.db") as conn:
        return int(conn.execute("SELECT COUNT(*) FROM route_events").fetchone()[0])


def test_http_basics(catalogue: Path, state: Path) -> None:
    from mcp import Client

    async def scenario(url: str) -> None:
        for mode in ("legacy", "auto"):
            async with Client(url, mode=mode) as client:
                tools = {t.name for t in (await client.list_tools()).tools}
                assert "load_skill" in tools
                ok = await client.call_tool("load_skill", {"name": "code-review"})
                assert not ok.is_error and ok.content[0].text.startswith("# Code Review")
                bad = await client.call_tool(
                    "read_skill_resource", {"name": "code-review", "path": "../../etc/passwd"}
                )
                assert bad.is_error
                assert json.loads(bad.content[0].text)["code"] == "PathTraversalBlocked"

    with http_server(catalogue, state) as (url, _):
        anyio.run(scenario, url)


def test_http_refuses_foreign_host_header(catalogue: Path, state: Path) -> None:
    """DNS-rebinding protection: a request naming another host is refused."""
    import http.client

    with http_server(catalogue, state) as (url, _):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
        conn.request(
            "POST",
            "/mcp",
            body,
            {
                "Host": "evil.example:80",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
            },
        )
        assert conn.getresponse().status in (400, 403, 421)


def test_http_route_with_a_lone_surrogate(catalogue: Path, state: Path) -> None:
    """Raw JSON-RPC: the SDK client could not even send this text; stdio serves it, and
    so must HTTP (the SDK's parser alone answers a parse error)."""
    import http.client

    def post(port: int, payload: str, session: str | None) -> tuple[int, str, str | None]:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-06-18",
        }
        if session:
            headers["Mcp-Session-Id"] = session
        conn.request("POST", "/mcp", payload.encode(), headers)
        reply = conn.getresponse()
        return reply.status, reply.read().decode(), reply.getheader("mcp-session-id")

    init = {"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}  # fmt: skip
    with http_server(catalogue, state) as (url, _):
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        status, _, session = post(
            port, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}),
            None,
        )  # fmt: skip
        assert status == 200 and session
        post(port, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), session)
        status, body, _ = post(
            port,
            '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": '
            '"route_skills", "arguments": {"query": "review my pull request \\ud800"}}}',
            session,
        )
    assert status == 200, body
    data = json.loads(next(line[5:] for line in body.splitlines() if line.startswith("data:")))
    assert data["id"] == 2 and "result" in data and not data["result"].get("isError"), data
    routed = json.loads(data["result"]["content"][0]["text"])
    assert "route_id" in routed


@pytest.mark.slow
def test_eight_clients_soak(catalogue: Path, state: Path) -> None:
    """8 clients call route_skills and load_skill at once for SOAK_S seconds: no error,
    and exactly one route event per route_skills call."""
    from mcp import Client

    calls = {"route": 0, "activate": 0}
    errors: list[str] = []

    async def worker(url: str, index: int, deadline: float) -> None:
        rng = random.Random(index)
        mode = "legacy" if index % 2 else "auto"
        async with Client(url, mode=mode) as client:
            names = ("code-review", "commit-messages", "acme:gh-fix-ci", "hostile")
            while time.monotonic() < deadline:
                r = await client.call_tool("route_skills", {"query": rng.choice(QUERIES)})
                if r.is_error:
                    errors.append(r.content[0].text)
                else:
                    calls["route"] += 1
                a = await client.call_tool("load_skill", {"name": rng.choice(names)})
                if a.is_error:
                    errors.append(a.content[0].text)
                else:
                    calls["activate"] += 1

    async def scenario(url: str) -> None:
        deadline = time.monotonic() + SOAK_S
        async with anyio.create_task_group() as tg:
            for i in range(CLIENTS):
                tg.start_soon(worker, url, i, deadline)

    with http_server(catalogue, state, "--poll", "0.5") as (url, proc):
        anyio.run(scenario, url)
        assert proc.poll() is None, "server died"
    # Counted once the server has stopped: events are written in batches after the
    # answer, and a stopping server writes what it still holds.
    assert proc.returncode is not None
    recorded = route_events(state)
    print(f"soak {SOAK_S:.0f}s x {CLIENTS} clients: {calls}, route events {recorded}")
    assert errors == []
    assert calls["route"] > CLIENTS and calls["activate"] > CLIENTS
    assert recorded == calls["route"], (recorded, calls)
