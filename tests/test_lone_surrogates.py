"""A request with an unpaired surrogate routes on every surface (issue 22).

JSON's ``"\\ud800"`` decodes to a ``str`` no UTF-8 encoder takes, and so does a
command-line argument with bytes that are not UTF-8: such text once crashed the
tokenizer (``E_INTERNAL``, no hook context). It is now made well formed where it enters
(route, turn context, hook, eval, MCP) and escaped where JSON leaves (fastjson,
serialize).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pydantic_core
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillrt import fastjson
from skillrt.config import RootConfig, RuntimeConfig
from skillrt.runtime import SkillRuntime
from skillrt.serialize import to_json
from skillrt.wellformed import repair_json_escapes, well_formed, well_formed_json

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples" / "skills"
sys.path.insert(0, str(REPO / "tests" / "hooks"))
from hook_support import build_skills, claude_payload, env, hook_output, skillrt  # noqa: E402

SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
#: Text with lone (and sometimes paired) surrogates mixed into ordinary words.
HOSTILE_TEXT = st.lists(
    st.sampled_from(["review", "my", "pull", "request", "code", " ", "$", "deploy"])
    | SURROGATES
    | st.text(max_size=3),
    min_size=1,
    max_size=12,
).map("".join)


# -- the helpers ---------------------------------------------------------------------


@given(st.text())
def test_well_formed_text_is_unchanged(text: str) -> None:
    assert well_formed(text) == text


PLAIN = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=5)


@given(st.lists(st.tuples(PLAIN, SURROGATES), max_size=6), PLAIN)
def test_each_lone_surrogate_becomes_one_replacement_character(
    parts: list[tuple[str, str]], tail: str
) -> None:
    """Surrogates between plain characters are all unpaired: each one is replaced."""
    text = "".join(a + b for a, b in parts) + tail
    expected = "".join(a + "\ufffd" for a, _ in parts) + tail
    assert well_formed(text) == expected
    well_formed(text).encode("utf-8")


@given(st.recursive(st.text() | SURROGATES, lambda x: st.lists(x) | st.dictionaries(st.text(), x)))
def test_repaired_json_parses_everywhere_like_the_well_formed_value(value: Any) -> None:
    """Any JSON (as json.dumps escapes it) repaired: pydantic's strict parser (the MCP
    SDK's) accepts it and reads what well_formed_json makes of the original."""
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            continue  # a raw surrogate cannot be on a UTF-8 wire at all
        repaired = repair_json_escapes(text)
        assert json.loads(repaired) == well_formed_json(json.loads(text))
        assert pydantic_core.from_json(repaired) == json.loads(repaired)


@given(st.recursive(st.text() | SURROGATES, lambda x: st.lists(x) | st.dictionaries(st.text(), x)))
def test_http_bodies_are_repaired_byte_for_byte_like_text(value: Any) -> None:
    """The HTTP transport repairs raw UTF-8 bodies: the same result as the text repair,
    and a body with nothing to repair is passed through as the same bytes."""
    from skillrt.mcp.http_input import repair_body

    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
        try:
            body = text.encode("utf-8")
        except UnicodeEncodeError:
            continue
        repaired = repair_body(body)
        assert repaired.decode("utf-8") == repair_json_escapes(text)
        if repair_json_escapes(text) == text:
            assert repaired == body
        assert pydantic_core.from_json(repaired) == well_formed_json(json.loads(text))


def test_repair_leaves_escaped_backslashes_and_pairs_alone() -> None:
    assert repair_json_escapes(r'"\\ud800"') == r'"\\ud800"'
    assert repair_json_escapes(r'"\ud83d\ude00"') == r'"\ud83d\ude00"'
    assert repair_json_escapes(r'"a\ud800b\udc00"') == r'"a\ufffdb\ufffd"'
    assert repair_json_escapes(r'"\\\ud800"') == r'"\\\ufffd"'


@given(HOSTILE_TEXT)
def test_fastjson_output_is_always_utf8_and_reads_back(text: str) -> None:
    out = fastjson.dumps({"prompt": text, text: [text]})
    out.encode("utf-8")
    assert fastjson.loads(out) == json.loads(json.dumps({"prompt": text, text: [text]}))
    to_json({"q": text}).encode("utf-8")
    to_json({"q": text}, indent=2).encode("utf-8")


# -- the library ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SkillRuntime]:
    base = tmp_path_factory.mktemp("surrogates")
    config = RuntimeConfig().replace_section(project_dir=base, state_dir=base / ".skillrt")
    with SkillRuntime(config, roots=(RootConfig(EXAMPLES),)) as rt:
        yield rt


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=HOSTILE_TEXT)
def test_route_and_turn_context_take_any_text(runtime: SkillRuntime, text: str) -> None:
    result = runtime.route(text, history=[text, {"role": "user", "content": text}])
    to_json(result).encode("utf-8")
    ctx = runtime.turn_context(text, history=[{"role": "user", "content": text}])
    to_json(ctx).encode("utf-8")


def test_a_lone_surrogate_routes_like_a_replacement_character(runtime: SkillRuntime) -> None:
    hostile = runtime.route("please review my pull request \ud800 for bugs")
    plain = runtime.route("please review my pull request \ufffd for bugs")
    assert hostile.plan.names == plain.plan.names


# -- the surfaces --------------------------------------------------------------------


def test_cli_route_with_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "skillrt",
            "--json",
            "route",
            "--root",
            str(EXAMPLES),
            b"review my pull request \xff\xfe for bugs",
        ],  # fmt: skip
        capture_output=True,
        cwd=tmp_path,
        env=env(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "plan" in json.loads(proc.stdout)


def test_hook_prompt_with_a_lone_surrogate(tmp_path: Path, make_skill: Callable[..., Path]) -> None:
    skills = build_skills(tmp_path / "skills", make_skill)
    project = tmp_path / "project"
    project.mkdir()
    payload = claude_payload("please do a code review of my pr \ud800", project)
    assert "\\ud800" in payload
    proc = skillrt("hook", "claude-code", "--root", str(skills), "--no-daemon", cwd=project,
                   stdin=payload)  # fmt: skip
    out = hook_output(proc)
    assert out is not None and out["systemMessage"] == "Using skill: code-review"


def test_daemon_requests_with_lone_surrogates(
    tmp_path: Path, make_skill: Callable[..., Path]
) -> None:
    skills = build_skills(tmp_path / "skills", make_skill)
    project = tmp_path / "project"
    project.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillrt", "serve", "--root", str(skills), "--poll", "0.2"],
        cwd=project, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        event = json.loads(proc.stderr.readline() or "{}")
        assert event.get("event") == "listening", event
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(60)  # a guard against a hang, not a performance bound
            sock.connect(event["address"])
            f = sock.makefile("rwb")
            for line in [
                b'{"id": 1, "op": "route", "args": {"query": "a code review of my pr \\ud800"}}',
                b'{"id": 2, "op": "context", "args": {"prompt": "review my pr \\udcff"}}',
                b'{"id": 3, "op": "context", "args": {"prompt": "$code-revie\\ud800w now"}}',
            ]:
                f.write(line + b"\n")
                f.flush()
                reply = json.loads(f.readline())
                assert reply["ok"] is True, (line, reply)
        # the hook through the daemon
        payload = claude_payload("please do a code review of my pr \ud800", project)
        out = hook_output(skillrt("hook", "claude-code", "--root", str(skills), cwd=project,
                                  stdin=payload))  # fmt: skip
        assert out is not None and out["systemMessage"] == "Using skill: code-review"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


def test_eval_with_lone_surrogates_in_queries_and_catalogue(tmp_path: Path) -> None:
    catalogue = tmp_path / "skills.jsonl"
    catalogue.write_text(
        '{"name": "code-review", "description": "Review a pull request \\ud800 for bugs."}\n'
        '{"name": "deploy", "description": "Deploy the service \\udfff to production."}\n',
        encoding="utf-8",
    )
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        '{"query": "review my pull request \\ud800", "expected": ["code-review"]}\n'
        '{"query": "\\udcff", "expected": []}\n',
        encoding="utf-8",
    )
    proc = skillrt("--json", "eval", "--catalog", str(catalogue), "--queries", str(queries),
                   cwd=tmp_path)  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["counts"]["queries"] == 2


def test_mcp_stdio_route_with_a_lone_surrogate(tmp_path: Path) -> None:
    """Raw JSON-RPC lines: the SDK client could not even send this text."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillrt", "mcp", "--root", str(EXAMPLES),
         "--state", str(tmp_path / "state")],
        cwd=tmp_path, env=env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    replies: list[dict[str, Any]] = []
    done = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            message = json.loads(line)
            if "id" in message:
                replies.append(message)
                if message["id"] == 2:
                    done.set()

    threading.Thread(target=read, daemon=True).start()
    assert proc.stdin is not None
    init = {"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}  # fmt: skip
    for line in [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": '
        '"route_skills", "arguments": {"query": "please review my pull request \\ud800"}}}',
    ]:
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()
    try:
        answered = done.wait(120)  # a guard against a hang, not a performance bound
    finally:
        proc.stdin.close()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(30)
    assert answered, "the server never answered the request"
    result = next(r for r in replies if r["id"] == 2)
    assert "result" in result and not result["result"].get("isError"), result
