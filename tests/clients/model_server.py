"""A stand-in for the model APIs of Claude Code, Codex CLI and Gemini CLI: a real HTTP
server on 127.0.0.1 (standard library) that records every request body a client sends
and answers each with a short streamed reply in that API's own shape.

- Anthropic Messages (``POST /v1/messages``, server-sent events; Claude Code),
- OpenAI Responses (``POST /v1/responses``, server-sent events; Codex CLI),
- Gemini (``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` and
  ``:generateContent``; Gemini CLI).

With ``tool_call`` set, a Gemini chat request (one that offers tools) that does not
carry a tool's result is answered with that function call instead, so a turn runs a
tool and calls the model again. Anything else (token counting, model lists, telemetry)
gets a small valid JSON answer
and is recorded too, so a test can see everything the client sent. Run it alone to
watch a client by hand: ``python tests/clients/model_server.py [PORT]``.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = "Done."


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    body: Any
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The whole body as text (what a marker search reads)."""
        return json.dumps(self.body, ensure_ascii=False) if self.body is not None else ""

    @property
    def api(self) -> str | None:
        """Which model API this request is to (None for anything else)."""
        if self.method != "POST":
            return None
        if self.path.startswith("/v1/messages") and "count_tokens" not in self.path:
            return "anthropic"
        if self.path.startswith("/v1/responses"):
            return "openai"
        if ":streamGenerateContent" in self.path or ":generateContent" in self.path:
            return "gemini"
        return None


class ModelServer(ThreadingHTTPServer):
    """The recorder; ``requests`` lists what came in, in order."""

    daemon_threads = True

    def __init__(self, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.requests: list[Recorded] = []
        self.lock = threading.Lock()
        #: ``(name, args)``: Gemini chat requests without a tool result get this call.
        self.tool_call: tuple[str, dict[str, Any]] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def model_requests(self, api: str | None = None) -> list[Recorded]:
        """The requests to a model API (of ``api`` when given), in order."""
        with self.lock:
            return [r for r in self.requests if r.api and (api is None or r.api == api)]

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up mid-stream is not the server's failure


@contextmanager
def running(port: int = 0) -> Iterator[ModelServer]:
    server = ModelServer(port)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


class _Handler(BaseHTTPRequestHandler):
    server: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _record(self, body: Any) -> Recorded:
        rec = Recorded(
            self.command, self.path, body, {k.lower(): v for k, v in self.headers.items()}
        )
        with self.server.lock:
            self.server.requests.append(rec)
        return rec

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = _read_chunked(self.rfile)
        if self.headers.get("Content-Encoding", "").lower() in ("gzip", "zstd", "br"):
            raw = _decompress(raw, self.headers["Content-Encoding"].lower())
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def do_GET(self) -> None:
        self._record(None)
        if "/models" in self.path:
            self._json({"data": [], "models": [], "object": "list"})
        else:
            self._json({})

    def do_HEAD(self) -> None:
        self._record(None)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        body = self._read_body()
        rec = self._record(body)
        path = self.path
        if rec.api == "anthropic":
            self._anthropic(body)
        elif rec.api == "openai":
            self._openai(body)
        elif rec.api == "gemini":
            self._gemini(body, streaming=":streamGenerateContent" in path)
        elif "count_tokens" in path or ":countTokens" in path:
            self._json({"input_tokens": 10, "totalTokens": 10})
        else:
            self._json({})

    # -- answers -------------------------------------------------------------------------
    def _json(self, data: Any, status: int = 200) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _sse(self, events: list[tuple[str | None, Any]]) -> None:
        chunks = []
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            chunks.append(f"{head}data: {json.dumps(data)}\n\n".encode())
        raw = b"".join(chunks)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)
        self.wfile.flush()

    def _anthropic(self, body: Any) -> None:
        model = body.get("model", "claude") if isinstance(body, dict) else "claude"
        msg_id = f"msg_{uuid.uuid4().hex[:24]}"
        usage = {"input_tokens": 10, "output_tokens": 2}
        if not (isinstance(body, dict) and body.get("stream")):
            self._json({
                "id": msg_id, "type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": REPLY}], "stop_reason": "end_turn",
                "stop_sequence": None, "usage": usage,
            })  # fmt: skip
            return
        self._sse([
            ("message_start", {"type": "message_start", "message": {
                "id": msg_id, "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 1}}}),
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": REPLY}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta",
                               "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                               "usage": {"output_tokens": 2}}),
            ("message_stop", {"type": "message_stop"}),
        ])  # fmt: skip

    def _openai(self, body: Any) -> None:
        model = body.get("model", "gpt") if isinstance(body, dict) else "gpt"
        resp_id = f"resp_{uuid.uuid4().hex[:24]}"
        item_id = f"msg_{uuid.uuid4().hex[:24]}"
        created = int(time.time())
        item = {"id": item_id, "type": "message", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": REPLY, "annotations": []}]}  # fmt: skip
        base = {"id": resp_id, "object": "response", "created_at": created, "model": model,
                "status": "in_progress", "output": []}  # fmt: skip
        done = {**base, "status": "completed", "output": [item],
                "usage": {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12,
                          "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens_details": {"reasoning_tokens": 0}}}  # fmt: skip
        self._sse([
            ("response.created", {"type": "response.created", "response": base}),
            ("response.output_item.added", {"type": "response.output_item.added",
                "output_index": 0, "item": {**item, "status": "in_progress", "content": []}}),
            ("response.content_part.added", {"type": "response.content_part.added",
                "item_id": item_id, "output_index": 0, "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []}}),
            ("response.output_text.delta", {"type": "response.output_text.delta",
                "item_id": item_id, "output_index": 0, "content_index": 0, "delta": REPLY}),
            ("response.output_text.done", {"type": "response.output_text.done",
                "item_id": item_id, "output_index": 0, "content_index": 0, "text": REPLY}),
            ("response.output_item.done", {"type": "response.output_item.done",
                "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": done}),
        ])  # fmt: skip

    def _gemini(self, body: Any, *, streaming: bool) -> None:
        parts: list[dict[str, Any]] = [{"text": REPLY}]
        call = self.server.tool_call
        if call is not None and _offers_tools(body) and not _has_tool_result(body):
            parts = [{"functionCall": {"name": call[0], "args": call[1]}}]
        chunk = {
            "candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2,
                              "totalTokenCount": 12},
            "modelVersion": "gemini-test",
        }  # fmt: skip
        if streaming:
            self._sse([(None, chunk)])
        else:
            self._json(chunk)


def _offers_tools(body: Any) -> bool:
    return isinstance(body, dict) and bool(body.get("tools"))


def _has_tool_result(body: Any) -> bool:
    """Whether the request's last content carries a function's response."""
    contents = body.get("contents") if isinstance(body, dict) else None
    if not isinstance(contents, list) or not contents or not isinstance(contents[-1], dict):
        return False
    return any("functionResponse" in part for part in contents[-1].get("parts") or ())


def _read_chunked(stream: Any) -> bytes:
    out = bytearray()
    while True:
        size = int(stream.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            stream.readline()
            return bytes(out)
        out += stream.read(size)
        stream.readline()


def _decompress(raw: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        import gzip

        return gzip.decompress(raw)
    if encoding == "zstd":
        try:
            import zstandard  # type: ignore[import-not-found]
        except ImportError:
            return raw
        return bytes(zstandard.ZstdDecompressor().decompressobj().decompress(raw))
    return raw


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    with running(port) as srv:
        sys.stderr.write(f"recording on {srv.url}\n")
        try:
            while True:
                time.sleep(1)
                for r in srv.requests[len(getattr(srv, "_shown", [])) :]:
                    sys.stderr.write(f"{r.method} {r.path} {r.text[:200]}\n")
                srv._shown = list(srv.requests)  # type: ignore[attr-defined]
        except KeyboardInterrupt:
            pass
