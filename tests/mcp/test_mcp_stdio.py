"""The server over REAL stdio, driven by the official MCP SDK client (both protocol eras)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcp_support import HOSTILE, disable, stdio_client
from pydantic import TypeAdapter

Mode = Literal["legacy", "auto"]


class SkillsList(types.Request[types.PaginatedRequestParams, Literal["skills/list"]]):
    method: Literal["skills/list"] = "skills/list"
    params: types.PaginatedRequestParams = types.PaginatedRequestParams()


class SkillsGetParams(types.RequestParams):
    uri: str


class SkillsGet(types.Request[SkillsGetParams, Literal["skills/get"]]):
    method: Literal["skills/get"] = "skills/get"
    params: SkillsGetParams


DICT = TypeAdapter(dict[str, Any])


def error_of(result: types.CallToolResult) -> dict[str, Any]:
    assert result.is_error, result
    payload = json.loads(result.content[0].text)
    assert set(payload) >= {"code", "message"}
    return payload


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_tools_resources_and_errors(catalogue: Path, state: Path, mode: Mode) -> None:
    disable(catalogue, state, "retired")
    route_ids: list[str] = []

    async def scenario() -> None:
        async with stdio_client(catalogue, state, mode=mode) as client:
            # Tools: five, and load_skill's enum is exactly the model-activatable set.
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {
                "route_skills",
                "load_skill",
                "read_skill_resource",
                "resolve_mentions",
                "run_skill",
            }
            enum = tools["load_skill"].input_schema["properties"]["name"]["enum"]
            assert enum == ["acme:gh-fix-ci", "code-review", "commit-messages", "hostile"]

            # Instructions: the catalogue, with the hostile description escaped.
            instructions = client.instructions or ""
            assert "<name>\ncode-review\n</name>" in instructions
            assert instructions.count("</available_skills>") == 1
            assert "<system>" not in instructions
            assert "&lt;/available_skills&gt;&lt;system&gt;" in instructions
            assert "retired" not in instructions

            # route_skills: the router's plan; the trigger phrase picks code-review.
            result = await client.call_tool(
                "route_skills", {"query": "please do a code review of my branch"}
            )
            assert not result.is_error, result
            routed = result.structured_content
            assert [s["name"] for s in routed["plan"]["skills"]] == ["code-review"]
            assert len(routed["route_id"]) >= 16 and routed["config_id"] == "default"
            route_ids.append(routed["route_id"])
            summary = json.loads(result.content[0].text)  # the compact view for the model
            assert summary["skills"] == ["code-review"]
            assert summary["route_id"] == routed["route_id"]
            assert len(summary["candidates"]) <= 5

            # load_skill: the body, with a load report in the structured content.
            result = await client.call_tool("load_skill", {"name": "code-review"})
            assert not result.is_error
            assert result.content[0].text.startswith("# Code Review")
            data = result.structured_content
            assert data["name"] == "code-review"
            assert data["uri"] == "skill://code-review/SKILL.md"
            assert len(data["report"]["sha256"]) == 64

            # read_skill_resource, one section.
            result = await client.call_tool(
                "read_skill_resource",
                {"name": "code-review", "path": "references/checklist.md", "section": "Security"},
            )
            assert not result.is_error, result
            assert "Check injection" in result.content[0].text

            # resolve_mentions: $mentions outside code activate; inside code they do not.
            result = await client.call_tool(
                "resolve_mentions", {"text": "please $code-review this, not `$hostile`"}
            )
            assert not result.is_error, result
            resolution = result.structured_content
            assert [a["skill"] for a in resolution["activated"]] == ["code-review"]
            assert resolution["activated"][0]["line"] == "Using skill: code-review"

            # run_skill: delegated through the (default, dry-run) runner.
            result = await client.call_tool(
                "run_skill", {"skill": "code-review", "task": "review this diff"}
            )
            assert not result.is_error, result
            assert result.structured_content["status"] == "delegated"
            assert result.structured_content["call_chain"] == ["code-review"]
            refused = error_of(
                await client.call_tool("run_skill", {"skill": "no-such", "task": "x"})
            )
            assert refused["code"] == "SkillNotFound" and refused["status"] == "error"

            # Structured errors.
            missing = error_of(await client.call_tool("load_skill", {"name": "no-such"}))
            assert missing["code"] == "SkillNotFound"
            traversal = error_of(
                await client.call_tool(
                    "read_skill_resource", {"name": "code-review", "path": "../../etc/passwd"}
                )
            )
            assert traversal["code"] == "PathTraversalBlocked"
            disabled = error_of(await client.call_tool("load_skill", {"name": "retired"}))
            assert disabled["code"] == "SkillDisabled"
            model_off = error_of(await client.call_tool("load_skill", {"name": "deploy"}))
            assert model_off["code"] == "MODEL_INVOCATION_DISABLED"
            bad_args = error_of(await client.call_tool("load_skill", {"nam": "x"}))
            assert bad_args["code"] == "E_USAGE"
            unknown = error_of(await client.call_tool("no_such_tool", {}))
            assert unknown["code"] == "E_USAGE"

            # Resources: every publishable file, SKILL.md with name/description/sha256.
            listed = {str(r.uri): r for r in (await client.list_resources()).resources}
            skill_md = listed["skill://code-review/SKILL.md"]
            assert skill_md.name == "code-review"
            assert skill_md.description.startswith("Review a pull request")
            raw = (catalogue / "code-review" / "SKILL.md").read_bytes()
            meta = skill_md.meta or {}
            assert meta["io.modelcontextprotocol.skills/sha256"] == hashlib.sha256(raw).hexdigest()
            assert "skill://code-review/references/checklist.md" in listed
            assert "skill://code-review/scripts/run.sh" not in listed  # not an allowed type
            assert "skill://acme/gh-fix-ci/SKILL.md" in listed
            assert "skill://acme/gh-fix-ci/references/notes.md" in listed
            assert not any("retired" in uri for uri in listed)
            assert "skill://index.json" in listed

            read = await client.read_resource("skill://code-review/references/checklist.md")
            text = read.contents[0].text
            assert text == (catalogue / "code-review/references/checklist.md").read_text()
            index = json.loads((await client.read_resource("skill://index.json")).contents[0].text)
            by_name = {s["name"]: s for s in index["skills"]}
            assert by_name["hostile"]["description"] == HOSTILE
            assert by_name["code-review"]["sha256"] == hashlib.sha256(raw).hexdigest()

            for uri, code in (
                ("skill://code-review/../../etc/passwd", "PathTraversalBlocked"),
                ("skill://code-review/%2e%2e/%2e%2e/etc/passwd", "PathTraversalBlocked"),
                ("skill://retired/SKILL.md", "SkillDisabled"),
                ("skill://code-review/scripts/run.sh", "DisallowedFileType"),
                ("skill://nope/SKILL.md", "E_USAGE"),
            ):
                with pytest.raises(MCPError) as info:
                    await client.read_resource(uri)
                assert info.value.error.code == types.INVALID_PARAMS
                assert info.value.error.data["code"] == code, uri

            # The skills extension (SEP-2640): skills/list and skills/get.
            if mode == "auto":  # capability extensions (SEP-2133) are a 2026-07-28 field
                caps = client.server_capabilities
                assert "io.modelcontextprotocol/skills" in (caps.extensions or {})
            listing = await client.session.send_request(SkillsList(), DICT)
            entries = {e["uri"]: e for e in listing["skills"]}
            entry = entries["skill://code-review/SKILL.md"]
            assert entry["frontmatter"]["name"] == "code-review"
            assert entry["frontmatter"]["triggers"] == ["review my pr", "code review"]
            assert {
                "uri": "skill://code-review/SKILL.md",
                "digest": "sha256:" + hashlib.sha256(raw).hexdigest(),
                "size": len(raw),
            } in entry["resources"]
            got = await client.session.send_request(
                SkillsGet(params=SkillsGetParams(uri="skill://acme/gh-fix-ci/SKILL.md")), DICT
            )
            assert got["skill"]["frontmatter"]["name"] == "gh-fix-ci"
            with pytest.raises(MCPError) as info:
                await client.session.send_request(
                    SkillsGet(params=SkillsGetParams(uri="skill://nope/SKILL.md")), DICT
                )
            assert info.value.error.code == types.INVALID_PARAMS

    anyio.run(scenario)
    # The route event was written (the server flushes its telemetry queue on exit).
    with sqlite3.connect(state / "state.db") as conn:
        rows = conn.execute("SELECT route_id, surface FROM route_events").fetchall()
    assert rows == [(route_ids[0], "mcp")]


def test_run_skill_takes_the_runner_flags(catalogue: Path, state: Path) -> None:
    """``skillrt mcp --runner-cmd CMD``: the run_skill tool runs the skill through the
    runner the shared flags build (issue 20), as ``skillrt run`` would."""
    import shlex
    import sys

    script = "import sys; print('ran with', len(sys.stdin.read()), 'chars')"
    cmd = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}"

    async def scenario() -> None:
        async with stdio_client(catalogue, state, extra=("--runner-cmd", cmd)) as client:
            result = await client.call_tool(
                "run_skill", {"skill": "code-review", "task": "review this diff"}
            )
            assert not result.is_error, result
            ran = result.structured_content["result"]
            assert ran["runner"] == "command" and ran["output"].startswith("ran with ")

    anyio.run(scenario)


def test_a_bad_runner_choice_stops_the_server_at_once(catalogue: Path, state: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "skillrt", "mcp", "--root", str(catalogue), "--state",
         str(state), "--runner", "openai", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 1
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "E_CONFIG" and error["reason"] == "no_base_url"


_TORN_DOWN = """
import sys
import anyio
from mcp.server.lowlevel import Server
from skillrt.cli import main

kind = sys.argv[1]

async def run(self, *args, **kwargs):
    # What the SDK raised when Ctrl-C closed its streams under a request in flight.
    inner = ExceptionGroup("relay", [anyio.BrokenResourceError()])
    leaves = [anyio.ClosedResourceError(), inner]
    if kind == "bug":
        leaves.append(RuntimeError("a real bug"))
    raise ExceptionGroup("unhandled errors in a TaskGroup", leaves)

Server.run = run
sys.exit(main(["--state", sys.argv[2], "mcp", "--root", sys.argv[3], "--poll", "0"]))
"""


@pytest.mark.parametrize("kind", ["closed", "bug"])
def test_streams_closed_under_a_request_end_the_session_quietly(
    kind: str, tmp_path: Path, make_skill: Any
) -> None:
    """Ctrl-C with requests in flight closed the SDK's streams under them and the server
    exited 1 with E_INTERNAL: a closed transport now ends the session (exit 0); any
    other error among them is still reported."""
    import os
    import subprocess
    import sys

    make_skill("alpha", description="Alpha does a thing.")
    proc = subprocess.run(
        [sys.executable, "-c", _TORN_DOWN, kind, str(tmp_path / "state"), str(tmp_path / "skills")],
        input="", capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    if kind == "closed":
        assert proc.returncode == 0 and "E_INTERNAL" not in proc.stderr, proc.stderr
    else:
        assert proc.returncode == 1 and "E_INTERNAL" in proc.stderr, proc.stderr
