"""A real phase agent for tests: reads the phase prompt on stdin, writes the memory file.

Used as ``--runner-cmd "<python> agent_runner.py --log LOG ..."``. It appends one line
per invocation (``<phase_id>``) to ``--log`` before doing anything else, so tests can
count how often each phase ran. Behaviour switches (each takes a phase id):

--hang-in P      write half a memory file (no completion line), touch ``--marker``,
                 then sleep until killed (or ``--hang-s`` seconds, or until the file
                 ``--release`` names exists, then finish the phase); with
                 ``--once FILE`` only the first time
--fail-in P      exit 3 without writing (a non-retryable runner failure)
--blocked-in P   write a memory file that ends ``Status: BLOCKED``
--skip-in P      exit 0 without writing anything
--unmarked-in P  leave out the final ``Status: COMPLETED`` line
--unmarked-once FILE  ... only the first time (FILE remembers it)

``--text`` makes it a text-only model: it never writes a file and prints the memory
file's content as its answer (half of it, then hangs, with ``--hang-in``). ``--sleep S``
waits before answering; ``--trace FILE`` appends ``<phase> <pid> <start time>``.
``--exclusive DIR`` keeps ``DIR/<phase>.pid`` and appends a line
to ``DIR/overlaps`` when an earlier agent of the same phase is still alive at its start.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

HEADER = re.compile(
    r"^\[Workflow: (?P<skill>\S+) \| phase (?P<i>\d+)/(?P<n>\d+): (?P<phase>\S+) \| "
    r"agent: (?P<agent>\S+) \| role: (?P<role>\S+) \| task_id: (?P<task>[0-9a-f]{12})\]$",
    re.M,
)
MEMORY = re.compile(r"^Memory file: (?P<path>.+)$", re.M)
CONTEXT = re.compile(r"^### (?P<name>\S+)$", re.M)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--hang-in")
    ap.add_argument("--once")
    ap.add_argument("--marker")
    ap.add_argument("--fail-in")
    ap.add_argument("--blocked-in")
    ap.add_argument("--skip-in")
    ap.add_argument("--unmarked-in")
    ap.add_argument("--unmarked-once")
    ap.add_argument("--hang-s", type=float)
    ap.add_argument("--release")
    ap.add_argument("--text", action="store_true")
    ap.add_argument("--sleep", type=float, default=0.0)
    ap.add_argument("--exclusive")
    ap.add_argument("--trace")
    args = ap.parse_args()

    prompt = sys.stdin.read()
    head = HEADER.search(prompt)
    mem = MEMORY.search(prompt)
    if head is None or mem is None:
        print("agent_runner: prompt without a phase header or memory file line", file=sys.stderr)
        return 2
    phase, agent, task = head["phase"], head["agent"], head["task"]
    with open(args.log, "a", encoding="utf-8") as fh:
        fh.write(f"{phase}\n")
        fh.flush()
        os.fsync(fh.fileno())
    if args.trace:
        with open(args.trace, "a", encoding="utf-8") as fh:
            fh.write(f"{phase} {os.getpid()} {time.time()!r}\n")
    if args.exclusive:
        exclusive(Path(args.exclusive), phase)
    if args.sleep:
        time.sleep(args.sleep)
    path = Path(mem["path"])
    seen = sorted(m["name"].replace(task, "TASK") for m in CONTEXT.finditer(prompt))
    has_learnings = "(no learnings recorded" not in prompt

    if args.fail_in == phase:
        print(f"agent {agent} failed on purpose", file=sys.stderr)
        return 3
    if args.skip_in == phase:
        return 0
    if args.hang_in == phase and not (args.once and Path(args.once).exists()):
        if args.once:
            Path(args.once).write_text("hung\n", encoding="utf-8")
        half = f"{agent} started working on {phase}\n## Notes\n- half done\n"
        if args.text:
            sys.stdout.write(half)
            sys.stdout.flush()
        else:
            with open(path, "w", encoding="utf-8") as fh:  # deliberately not atomic
                fh.write(half)
        if args.marker:  # whole or absent: the test reads the pid once the file exists
            Path(args.marker + ".tmp").write_text(f"{os.getpid()}\n", encoding="utf-8")
            os.replace(args.marker + ".tmp", args.marker)
        if args.release:
            while not Path(args.release).exists():
                time.sleep(0.02)
        elif args.hang_s is None:
            while True:
                time.sleep(3600)
        else:
            time.sleep(args.hang_s)

    lines = [
        f"{agent} concluded the {phase} phase ({head['i']}/{head['n']}).",
        "",
        "## Context received",
        *(f"- {name}" for name in seen),
        f"- learnings injected: {'yes' if has_learnings else 'no'}",
        "",
        "## Learnings",
        f"- The {phase} phase of {head['skill']} always reads its context first.",
        "- Shared lesson that every phase repeats.",
        f"- Lesson only task {task} learned in {phase}.",
        "",
    ]
    unmarked = args.unmarked_in == phase
    if unmarked and args.unmarked_once:
        once = Path(args.unmarked_once)
        unmarked = not once.exists()
        once.write_text("unmarked\n", encoding="utf-8")
    lines.append("Status: BLOCKED waiting for an answer" if args.blocked_in == phase else "")
    lines.append("Status: COMPLETED" if args.blocked_in != phase and not unmarked else "")
    text = "\n".join(lines).rstrip("\n") + "\n"
    if args.text:
        sys.stdout.write(text)
        return 0
    tmp = path.with_name(f".{path.name}.agent.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    print(f"wrote {path}")
    return 0


def exclusive(folder: Path, phase: str) -> None:
    """Note an overlap when an earlier agent of ``phase`` still runs; then claim it."""
    folder.mkdir(parents=True, exist_ok=True)
    pidfile = folder / f"{phase}.pid"
    try:
        earlier = int(pidfile.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        earlier = 0
    if earlier and alive(earlier):
        with open(folder / "overlaps", "a", encoding="utf-8") as fh:
            fh.write(f"{phase} {earlier} {os.getpid()}\n")
    pidfile.write_text(str(os.getpid()), encoding="utf-8")


def alive(pid: int) -> bool:
    """Running, not a zombie (an orphan's new parent may never reap it)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


if __name__ == "__main__":
    sys.exit(main())
