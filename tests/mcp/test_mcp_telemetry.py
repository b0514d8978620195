"""Telemetry never blocks or fails route_skills: a locked or read-only store is a warning."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest
from mcp_support import server_env, skillrt_cmd

from skillrt.config import RootConfig, RuntimeConfig
from skillrt.mcp import SkillService, event_writer
from skillrt.runtime import SkillRuntime
from skillrt.store import open_location

WAIT_S = 30  # hang guard only


@asynccontextmanager
async def client_with_stderr(root: Path, state: Path, errlog: TextIO) -> AsyncIterator[Any]:
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from mcp import Client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skillrt", "mcp", "--root", str(root), "--state", str(state), "--poll", "0"],
        env=server_env(),
        cwd=str(state.parent),
    )
    async with Client(stdio_client(params, errlog=errlog)) as client:
        yield client


def route_count(state: Path) -> int:
    conn = sqlite3.connect(f"file:{state / 'state.db'}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM route_events").fetchone()[0])
    finally:
        conn.close()


async def routes_ok(client: Any, n: int) -> list[str]:
    ids = []
    for i in range(n):
        result = await client.call_tool("route_skills", {"query": f"review my pull request {i}"})
        assert not result.is_error, result.content[0].text
        ids.append(result.structured_content["route_id"])
    return ids


def test_locked_store_never_blocks_route_skills(catalogue: Path, state: Path) -> None:
    async def scenario(errlog: TextIO, log_path: Path) -> None:
        async with client_with_stderr(catalogue, state, errlog) as client:
            await routes_ok(client, 1)
            with anyio.fail_after(WAIT_S):
                while route_count(state) < 1:
                    await anyio.sleep(0.05)
            holder = sqlite3.connect(state / "state.db", isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock...
            try:
                # ...and every route still answers while the lock is held,
                await routes_ok(client, 3)
                # the server says why its events wait (hold the lock until it does),
                with anyio.fail_after(WAIT_S):
                    while "locked or unavailable" not in log_path.read_text():
                        await anyio.sleep(0.05)
                assert route_count(state) == 1  # and nothing could be written meanwhile.
            finally:
                holder.execute("COMMIT")
                holder.close()
            with anyio.fail_after(WAIT_S):  # queued events land once the lock is gone
                while route_count(state) < 4:
                    await anyio.sleep(0.05)

    with tempfile.NamedTemporaryFile("w+", suffix=".log") as errlog:
        anyio.run(scenario, errlog, Path(errlog.name))


def _immutable(path: Path, on: bool) -> bool:
    chattr = shutil.which("chattr")
    if chattr is None:
        return False
    done = subprocess.run([chattr, "+i" if on else "-i", str(path)], capture_output=True)
    return done.returncode == 0


def test_read_only_store_never_fails_route_skills(catalogue: Path, state: Path) -> None:
    """A state database the process cannot write (immutable file: refused even to root)."""
    subprocess.run(
        skillrt_cmd("list", "--root", str(catalogue), "--state", str(state), "--json"),
        check=True,
        capture_output=True,
        env={**os.environ, **server_env()},
    )
    db = state / "state.db"
    with sqlite3.connect(db) as conn:  # fold the WAL in, so the file alone is the database
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if not _immutable(db, True):
        pytest.skip("cannot make a file immutable here (chattr +i)")
    try:

        async def scenario(errlog: TextIO) -> None:
            async with client_with_stderr(catalogue, state, errlog) as client:
                await routes_ok(client, 3)

        with tempfile.TemporaryFile("w+") as errlog:
            anyio.run(scenario, errlog)
            errlog.seek(0)
            stderr = errlog.read()
    finally:
        _immutable(db, False)
    assert "was not recorded" in stderr, stderr
    assert route_count(state) == 0


def test_read_only_store_in_process(
    catalogue: Path, state: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The library path: a runtime over a store opened read-only."""
    config = RuntimeConfig(project_dir=state.parent, state_dir=state)
    open_location(config.state_db).schema_version()  # create and migrate it first
    runtime = SkillRuntime(
        config,
        roots=[RootConfig(catalogue, scope="flag")],
        store=open_location(config.state_db, read_only=True),
    )
    writer = event_writer(runtime)
    assert writer is not None and writer.read_only
    service = SkillService(runtime, events=writer)
    service.start()
    with caplog.at_level("WARNING", logger="skillrt.telemetry"):
        out = service.call_tool("route_skills", {"query": "review my pull request"})
        assert not out.is_error, out.text
        assert json.loads(out.text)["route_id"]
        assert writer.flush(WAIT_S)
    writer.close()
    assert writer.dropped == 1 and route_count(state) == 0
    assert any("was not recorded" in m for m in caplog.messages)
