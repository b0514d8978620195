"""A toy "model" to try composite skills without one: it reads a workflow phase prompt
and answers with a memory file that passes verification. Standard library only.

    python3 examples/runners/toy_model.py              < prompt   # prints the answer (a text model)
    python3 examples/runners/toy_model.py --write      < prompt   # writes the memory file itself
    python3 examples/runners/toy_model.py --serve 8765            # an OpenAI-compatible endpoint

See docs/orchestration.md (Runners: three kinds).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PHASE = re.compile(r"\| phase (\d+)/(\d+): (\S+) \| agent: (\S+) \|")
MEMORY = re.compile(r"^Memory file: (.+)$", re.M)


def answer(prompt: str) -> str:
    """The phase's memory file, as a model following the output contract would write it."""
    found = PHASE.search(prompt)
    if found is None:
        return "I received no workflow phase.\n"
    index, total, phase, agent = found.groups()
    return (
        f"The {agent} agent did the {phase} phase ({index}/{total}) of this toy run.\n\n"
        f"## Result\n- {phase}: nothing real was done; this is the toy model.\n\n"
        f"## Learnings\n- A toy model answers every {phase} phase the same way.\n\n"
        "Status: COMPLETED\n"
    )


class _Chat(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        prompt = str(body["messages"][-1]["content"])
        text = answer(prompt)
        data = json.dumps(
            {
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": len(prompt.split()),
                          "completion_tokens": len(text.split())},
            }
        ).encode("utf-8")  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="write the memory file itself")
    ap.add_argument("--serve", type=int, metavar="PORT", help="serve /v1/chat/completions")
    args = ap.parse_args()
    if args.serve is not None:
        server = ThreadingHTTPServer(("127.0.0.1", args.serve), _Chat)
        sys.stderr.write(f"toy model at http://127.0.0.1:{server.server_address[1]}/v1\n")
        server.serve_forever()
    prompt = sys.stdin.read()
    text = answer(prompt)
    path = MEMORY.search(prompt)
    if args.write and path is not None:
        target = Path(path.group(1))
        tmp = target.with_name(f".{target.name}.toy")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
        sys.stdout.write(f"wrote {target}\n")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
