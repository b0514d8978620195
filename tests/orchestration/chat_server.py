"""A model behind an OpenAI-compatible endpoint, for workflow tests: a real HTTP server
on loopback (standard library) that answers ``POST /v1/chat/completions``.

It reads the phase prompt like any model would, and answers with the phase's memory
file as the reply (it cannot write files). Switches: ``unmarked`` (phases whose reply
leaves out ``Status: COMPLETED``), ``failing`` (phases answered with HTTP 500),
``fenced`` (the reply wrapped in a Markdown code fence, as models often do).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HEADER = re.compile(
    r"^\[Workflow: (?P<skill>\S+) \| phase (?P<i>\d+)/(?P<n>\d+): (?P<phase>\S+) \| "
    r"agent: (?P<agent>\S+) \| role: (?P<role>\S+) \| task_id: (?P<task>[0-9a-f]{12})\]$",
    re.M,
)


class ChatServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.unmarked: set[str] = set()
        self.failing: set[str] = set()
        self.fenced = False
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def phases(self) -> list[str]:
        with self.lock:
            return [r["phase"] for r in self.requests]

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client killed mid-request leaves a broken pipe: expected in crash tests


def memory_reply(prompt: str, *, marked: bool = True) -> str:
    head = HEADER.search(prompt)
    assert head is not None, prompt[:300]
    phase, agent = head["phase"], head["agent"]
    lines = [
        f"{agent} concluded the {phase} phase ({head['i']}/{head['n']}) from the endpoint.",
        "",
        "## Result",
        f"- what {phase} found",
        "",
        "## Learnings",
        f"- The {phase} phase answered through a chat endpoint.",
        "",
    ]
    if marked:
        lines.append("Status: COMPLETED")
    return "\n".join(lines) + "\n"


class _Handler(BaseHTTPRequestHandler):
    server: ChatServer

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length))
        prompt = body["messages"][-1]["content"]
        head = HEADER.search(prompt)
        phase = head["phase"] if head else "?"
        with self.server.lock:
            self.server.requests.append(
                {
                    "path": self.path,
                    "model": body.get("model"),
                    "auth": self.headers.get("Authorization"),
                    "phase": phase,
                    "prompt": prompt,
                }
            )
        if self.path != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        if phase in self.server.failing:
            self._send(500, {"error": {"message": "the model is overloaded"}})
            return
        text = memory_reply(prompt, marked=phase not in self.server.unmarked)
        if self.server.fenced:
            text = f"```markdown\n{text}```\n"
        self._send(
            200,
            {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": len(prompt.split()),
                    "completion_tokens": len(text.split()),
                    "total_tokens": len(prompt.split()) + len(text.split()),
                },
            },
        )

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def chat_server() -> Iterator[ChatServer]:
    server = ChatServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
