"""Gemini CLI's wait on skillrt's hooks per prompt, as Gemini itself logs it (``--debug``:
"Hook execution for <event>: ... total duration"), with the one ``BeforeModel`` hook
that ``skillrt install gemini`` writes against the older pair (a ``BeforeAgent`` entry
beside it, the same command), the two settings taken in turn over the same set-up.

Needs the set-up ``bench_clients.py`` leaves for Gemini CLI's first-prompt part (a
user-level install over the big catalogue):

    python bench/bench_clients.py --clients gemini --skip-overhead --work DIR
    python bench/gemini_hooks_ab.py --work DIR [--prompts 12]

Run it on a quiet machine (it prints the load average before and after).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "clients"))

from client_env import client_env, prompt_argv, stop_daemons  # noqa: E402
from model_server import running  # noqa: E402

BIN = Path(os.environ.get("SKILLRT_CLIENTS_BIN") or REPO / ".ci/cache/clients/node_modules/.bin")
PROMPT = "review this SQL query for injection"
FOUND = re.compile(r"Hook execution for (\w+): .*total duration: (\d+)ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--prompts", type=int, default=12, help="per setting")
    args = parser.parse_args(argv)
    root, cache = args.work / "gemini-first", args.work / "cache" / "gemini" / "first"
    settings = root / "home" / ".gemini" / "settings.json"
    one = json.loads(settings.read_text())
    two = copy.deepcopy(one)
    agent = copy.deepcopy(one["hooks"]["BeforeModel"])
    agent[0]["hooks"][0]["name"] = "skillrt-agent"
    two["hooks"] = {"BeforeAgent": agent, **two["hooks"]}
    waits: dict[str, list[int]] = {"one hook": [], "two hooks": []}
    print(f"load before {os.getloadavg()[0]:.2f}")
    try:
        with running() as server:
            env = client_env("gemini", root / "home", server.url, cache, BIN)
            argv_ = [*prompt_argv("gemini", BIN, PROMPT), "--debug"]
            for i in range(2 * args.prompts + 1):  # the first: starts the daemon
                which = "one hook" if i % 2 else "two hooks"
                settings.write_text(json.dumps(one if which == "one hook" else two))
                proc = subprocess.run(argv_, env=env, capture_output=True, text=True,
                                      stdin=subprocess.DEVNULL, cwd=root / "project",
                                      timeout=300)  # fmt: skip
                if i:
                    hits = FOUND.findall(proc.stdout + proc.stderr)
                    waits[which].append(sum(int(ms) for _event, ms in hits))
            injected = sum("[Skill: " in r.text for r in server.model_requests()[1:])
    finally:
        settings.write_text(json.dumps(one))
        stop_daemons(cache)
    for which, values in waits.items():
        print(f"{which}: a prompt waits on hooks {statistics.median(values):.1f} ms (median "
              f"of {len(values)}; {min(values)}-{max(values)} ms)")  # fmt: skip
    print(f"requests with a skill: {injected} of {2 * args.prompts}")
    print(f"load after {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
