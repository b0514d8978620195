"""X1: the OpenAI-compatible runner against a local HTTP server started by the test."""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from skillrt.config import ExecutionConfig
from skillrt.errors import ConfigError, RunnerError, RunnerTimeout
from skillrt.execution.runners import OpenAIRunner, build_runner


class FakeAPI(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.mode = "ok"
        self.requests: list[dict[str, Any]] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out leaves a broken pipe behind: expected here

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class Handler(BaseHTTPRequestHandler):
    server: FakeAPI

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length))
        self.server.requests.append(
            {"path": self.path, "body": body, "auth": self.headers.get("Authorization")}
        )
        mode = self.server.mode
        if mode == "slow":
            time.sleep(2)
        if mode in ("ok", "slow", "long"):
            text = "x" * 5000 if mode == "long" else f"echo: {body['messages'][-1]['content']}"
            self._send(
                200,
                {
                    "id": "c1",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
                },
            )
        elif mode == "429":
            self._send(429, {"error": {"message": "slow down"}}, {"Retry-After": "3"})
        elif mode == "500":
            self._send(500, {"error": {"message": "upstream broke"}})
        elif mode == "400":
            self._send(400, {"error": {"message": "bad request: context too long"}})
        elif mode == "401":
            self._send(401, {"error": {"message": "invalid api key"}})
        elif mode == "malformed":
            self._raw(200, b"<html>gateway</html>")
        elif mode == "nochoices":
            self._send(200, {"choices": []})

    def _send(self, code: int, data: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._raw(code, json.dumps(data).encode(), headers)

    def _raw(self, code: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    server = FakeAPI()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_200_returns_content_and_usage(api: FakeAPI) -> None:
    runner = OpenAIRunner(api.base_url, "m-1", api_key="sk-test", timeout_s=5)
    result = runner.run("hello")
    assert result.output == "echo: hello"
    assert (result.tokens_in, result.tokens_out) == (11, 7)
    assert result.meta["finish_reason"] == "stop"
    req = api.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["body"]["model"] == "m-1"
    assert req["body"]["messages"] == [{"role": "user", "content": "hello"}]
    assert req["auth"] == "Bearer sk-test"


def test_no_key_sends_no_authorization(api: FakeAPI) -> None:
    OpenAIRunner(api.base_url + "/", "m", timeout_s=5).run("x")
    assert api.requests[0]["auth"] is None
    assert api.requests[0]["path"] == "/v1/chat/completions"


def test_output_cap(api: FakeAPI) -> None:
    api.mode = "long"
    result = OpenAIRunner(api.base_url, "m", timeout_s=5, max_output_bytes=100).run("x")
    assert result.truncated and len(result.output) == 100


@pytest.mark.parametrize(
    ("mode", "retryable", "status", "scope"),
    [
        ("429", True, 429, "transient"),
        ("500", True, 500, "transient"),
        ("400", False, 400, "skill"),
        ("401", False, 401, "runner"),
    ],
)
def test_http_errors_are_classified(
    api: FakeAPI, mode: str, retryable: bool, status: int, scope: str
) -> None:
    api.mode = mode
    with pytest.raises(RunnerError) as info:
        OpenAIRunner(api.base_url, "m", timeout_s=5).run("x")
    err = info.value
    assert err.retryable is retryable
    assert err.context["status"] == status
    assert err.context["scope"] == scope
    assert f"HTTP {status}" in err.message


def test_429_keeps_retry_after_and_the_servers_message(api: FakeAPI) -> None:
    api.mode = "429"
    with pytest.raises(RunnerError) as info:
        OpenAIRunner(api.base_url, "m", timeout_s=5).run("x")
    assert info.value.context["retry_after"] == "3"
    assert "slow down" in info.value.message


@pytest.mark.parametrize("mode", ["malformed", "nochoices"])
def test_malformed_body_is_retryable(api: FakeAPI, mode: str) -> None:
    api.mode = mode
    with pytest.raises(RunnerError) as info:
        OpenAIRunner(api.base_url, "m", timeout_s=5).run("x")
    assert info.value.retryable is True
    assert "malformed" in info.value.message


def test_slow_response_times_out_retryably(api: FakeAPI) -> None:
    api.mode = "slow"
    with pytest.raises(RunnerTimeout) as info:
        OpenAIRunner(api.base_url, "m", timeout_s=0.3).run("x")
    assert info.value.retryable is True


def test_connection_refused_is_retryable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(RunnerError) as info:
        OpenAIRunner(f"http://127.0.0.1:{port}/v1", "m", timeout_s=2).run("x")
    assert info.value.retryable is True


def test_bad_config() -> None:
    with pytest.raises(ConfigError):
        OpenAIRunner("ftp://x", "m")
    with pytest.raises(ConfigError):
        OpenAIRunner("http://127.0.0.1:1/v1", "")
    cfg = ExecutionConfig(runner="openai", base_url="http://127.0.0.1:9/v1", model="m")
    runner = build_runner(cfg, environ={"OPENAI_API_KEY": "sk-secret-123"})
    assert isinstance(runner, OpenAIRunner) and runner.api_key == "sk-secret-123"
    assert "sk-secret" not in json.dumps(runner.spec())  # the key is never saved
    assert runner.spec()["env"] == ["OPENAI_API_KEY"]
    keyless = build_runner(cfg, environ={})
    assert isinstance(keyless, OpenAIRunner) and keyless.api_key is None
    assert "env" not in keyless.spec()


def test_connection_reset_mid_request_is_retryable() -> None:
    """A server that accepts, reads and hangs up without answering."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]

    def serve() -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()  # RST

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with pytest.raises(RunnerError) as info:
            OpenAIRunner(f"http://127.0.0.1:{port}/v1", "m", timeout_s=5).run("x")
        assert info.value.retryable is True
        assert info.value.context["scope"] == "transient"
    finally:
        thread.join(timeout=5)
        server.close()
