"""The handshake answered before the SDK is loaded (issue 27: Codex's first request went
out before skillrt's tools were listed): the answer is the SDK's own, for every
protocol version the SDK negotiates, and the session then runs as usual."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp_support import server_env, skillrt_cmd
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from skillrt.mcp.early import initialize_request, sdk_handshake_versions


def session(
    catalogue: Path,
    state: Path,
    lines: list[dict[str, Any]],
    *extra: str,
    wanted: set[Any] | None = None,
) -> tuple[list[dict[str, Any]], str]:
    """Send ``lines`` to a real `skillrt mcp` over stdio and read until every request is
    answered (or the ids ``wanted``; bounded); its answers and its stderr."""
    import selectors
    import tempfile
    import time

    errors = tempfile.TemporaryFile()  # noqa: SIM115 (read back after the process ends)
    proc = subprocess.Popen(
        skillrt_cmd("mcp", "--root", str(catalogue), "--state", str(state), "--poll", "0",
                    "--log-level", "DEBUG", *extra),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
        env={**os.environ, **server_env()}, cwd=state.parent,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    if wanted is None:
        wanted = {x["id"] for x in lines if "id" in x}
    proc.stdin.write("".join(json.dumps(x) + "\n" for x in lines).encode())
    proc.stdin.flush()
    answers: list[dict[str, Any]] = []
    buffer = b""
    deadline = time.monotonic() + 120
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while wanted - {a.get("id") for a in answers} and time.monotonic() < deadline:
            if not sel.select(timeout=1):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if line.strip():
                    answers.append(json.loads(line))
    proc.stdin.close()
    proc.wait(timeout=60)
    proc.stdout.close()
    errors.seek(0)
    return answers, errors.read().decode()


def initialize(version: str, rid: Any = 1) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {},
              "clientInfo": {"name": "t", "version": "1"}}  # fmt: skip
    return {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}


def test_the_version_table_is_the_sdks() -> None:
    assert sdk_handshake_versions() == (HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION)


@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, "1999-01-01"])
def test_the_early_answer_is_the_sdks_own(catalogue: Path, state: Path, version: str) -> None:
    answers, stderr = session(catalogue, state, [
        initialize(version, rid="a-1"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ])  # fmt: skip
    assert [a.get("id") for a in answers] == ["a-1", 2]  # one answer each: the SDK's dropped
    result = answers[0]["result"]
    expected = version if version in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
    assert result["protocolVersion"] == expected
    assert result["serverInfo"]["name"] == "skillrt" and "code-review" in result["instructions"]
    assert "otherwise than sent early" not in stderr  # the SDK said the same
    names = {t["name"] for t in answers[1]["result"]["tools"]}
    assert "load_skill" in names and "activate_skill" not in names
    # Codex starts its first turn ~1 s after initialize, with the tools listed by then:
    # the list after `initialized` goes out before the SDK is loaded.
    assert "answered initialize early" in stderr and "answered tools/list early" in stderr


@pytest.mark.parametrize(
    "lines",
    [
        [{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}],  # before `initialized`
        [
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "x"}},
        ],
        [
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        ],  # the id initialize had
        [
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": 5}},
        ],
        [
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"id": 2, "method": "tools/list"},
        ],  # not JSON-RPC 2.0: the SDK cannot read it
    ],
    ids=["before-initialized", "a-cursor", "a-used-id", "bad-meta", "no-jsonrpc"],
)
def test_a_list_the_sdk_must_judge_is_left_to_it(
    catalogue: Path, state: Path, lines: list[dict[str, Any]]
) -> None:
    readable = "jsonrpc" in lines[-1]
    answers, stderr = session(catalogue, state, [initialize("2025-06-18"), *lines],
                              wanted={1, lines[-1]["id"]} if readable else {1})  # fmt: skip
    assert "answered tools/list early" not in stderr
    assert "otherwise than sent early" not in stderr
    if readable:  # answered once, by the SDK (an error for the bad params)
        assert len([a for a in answers if a.get("id") == lines[-1]["id"]]) >= 1


def test_lines_read_early_reach_the_sdk_whole_and_in_order(catalogue: Path, state: Path) -> None:
    """What follows the early answers (a call, a second list) is served by the SDK as
    sent."""
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "load_skill", "arguments": {"name": "code-review"}}}  # fmt: skip
    answers, stderr = session(catalogue, state, [
        initialize("2025-06-18"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        call,
        {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
    ])  # fmt: skip
    by_id = {a.get("id"): a for a in answers}
    assert len(answers) == 4 and set(by_id) == {1, 2, 3, 4}, stderr  # (served concurrently)
    assert "Review" in json.dumps(by_id[3]["result"])
    assert by_id[4]["result"] == by_id[2]["result"]


def test_a_first_line_that_is_not_initialize_goes_to_the_sdk(catalogue: Path, state: Path) -> None:
    answers, _ = session(catalogue, state, [
        {"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
        initialize("2025-06-18", rid=8),
    ])  # fmt: skip
    by_id = {a.get("id"): a for a in answers}
    assert "result" in by_id[8] and 7 in by_id  # the SDK answers both, as it would


def test_the_old_tool_name_still_works_unlisted(catalogue: Path, state: Path) -> None:
    answers, _ = session(catalogue, state, [
        initialize("2025-06-18"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "activate_skill", "arguments": {"name": "code-review"}}},
    ])  # fmt: skip
    result = next(a for a in answers if a.get("id") == 3)["result"]
    assert not result.get("isError") and "Review" in json.dumps(result)


def test_with_a_hook_the_instructions_do_not_ask_to_route_again(
    catalogue: Path, state: Path
) -> None:
    listing = [{"jsonrpc": "2.0", "method": "notifications/initialized"},
               {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]  # fmt: skip
    plain, _ = session(catalogue, state, [initialize("2025-06-18")])
    hooked, _ = session(catalogue, state, [initialize("2025-06-18"), *listing], "--with-hook")
    assert "call route_skills with the user's request" in plain[0]["result"]["instructions"]
    text = hooked[0]["result"]["instructions"]
    assert "route_skills with the user's request" not in text
    assert "do not call route_skills" in text
    # No catalogue: the client lists its own skills, the hook brings the one a message
    # needs, and load_skill's enum names every skill (the fixed text is what lets the
    # answer go out before the skills are read).
    assert "Review a pull request" in plain[0]["result"]["instructions"]
    assert "code-review" not in text and "Review a pull request" not in text
    tools = {t["name"]: t for t in hooked[1]["result"]["tools"]}
    assert "code-review" in tools["load_skill"]["inputSchema"]["properties"]["name"]["enum"]


def test_with_a_hook_initialize_is_answered_before_the_config_is_read(
    catalogue: Path, state: Path
) -> None:
    """The hooked answer needs nothing the config, the skills or the store give: a
    config that fails to load is reported after the client got its answer."""
    bad = state.parent / "broken.yaml"
    bad.write_text("routing: [not, a, mapping\n")
    answers, stderr = session(catalogue, state, [initialize("2025-06-18")], "--with-hook",
                              "--config", str(bad))  # fmt: skip
    assert answers and answers[0]["id"] == 1 and "instructions" in answers[0]["result"]
    assert "E_CONFIG" in stderr
    plain, _ = session(catalogue, state, [initialize("2025-06-18")], "--config", str(bad))
    assert plain == []  # without the hook the answer waits for the catalogue, and fails


def test_an_id_with_a_lone_surrogate_is_answered_as_the_sdk_reads_it(
    catalogue: Path, state: Path
) -> None:
    # json.dumps writes the id as "\ud800": JSON allows it, UTF-8 cannot encode it.
    answers, stderr = session(catalogue, state, [
        initialize("2025-06-18", rid="\ud800"),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ], wanted={"\ufffd", 2})  # fmt: skip
    assert [a.get("id") for a in answers] == ["\ufffd", 2], stderr
    assert "result" in answers[0] and "otherwise than sent early" not in stderr


def _odd(**changes: Any) -> dict[str, Any]:
    request = initialize("2025-06-18")
    params = {k: v for k, v in {**request["params"], **changes}.items() if v is not None}
    return {**request, "params": params}


@pytest.mark.parametrize(
    "request_",
    [
        _odd(protocolVersion=20250618),
        _odd(clientInfo=None),
        _odd(capabilities=None),
        _odd(clientInfo={"name": "t"}),
        _odd(capabilities=[]),
        {**initialize("2025-06-18"), "params": {}},
    ],
    ids=[
        "version-not-a-string",
        "no-client-info",
        "no-capabilities",
        "client-info-no-version",
        "capabilities-a-list",
        "empty-params",
    ],
)
def test_an_initialize_the_sdk_refuses_is_not_answered_early(
    catalogue: Path, state: Path, request_: dict[str, Any]
) -> None:
    line = json.dumps(request_).encode() + b"\n"
    assert initialize_request(line) is None
    assert initialize_request(json.dumps(initialize("2025-06-18")).encode())
    answers, stderr = session(catalogue, state, [request_])
    assert [a.get("id") for a in answers] == [1]
    assert "error" in answers[0] and "result" not in answers[0]  # the SDK's own answer
    assert "otherwise than sent early" not in stderr


def test_a_line_that_is_not_json_rpc_2_is_never_answered_early() -> None:
    """The SDK cannot read such a line and answers nothing: neither may the early path."""
    from skillrt.mcp.early import initialize_request, is_initialized, list_tools_id

    def line(message: dict[str, Any]) -> bytes:
        return json.dumps(message).encode() + b"\n"

    request = initialize("2025-06-18")
    bare = {k: v for k, v in request.items() if k != "jsonrpc"}
    assert initialize_request(line(request)) and initialize_request(line(bare)) is None
    assert is_initialized(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    assert not is_initialized(line({"method": "notifications/initialized"}))
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert list_tools_id(line(listing)) == 2
    assert list_tools_id(line({**listing, "params": {"_meta": {"progressToken": 0}}})) == 2
    assert list_tools_id(line({**listing, "params": {"_meta": {"progressToken": True}}})) is None
    assert list_tools_id(line({**listing, "params": {"other": 1}})) is None
    assert list_tools_id(line({**listing, "jsonrpc": "1.0"})) is None
