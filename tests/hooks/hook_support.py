"""Helpers for the hook and daemon tests: a small catalogue, the exact JSON Claude Code
sends, a realistic transcript, and `skillrt` run as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
LONG_BODY = (
    "# Big Skill\n\n## Overview\n\nOverview text.\n\n"
    + "".join(
        f"## Section {i}\n\n" + ("Lots of detail about this section. " * 30) + "\n\n"
        for i in range(40)
    )
    + "## Steps\n\n1. Do the thing.\n2. Check it.\n"
)


def build_skills(root: Path, make_skill: Callable[..., Path]) -> Path:
    make_skill(
        "code-review",
        description="Review a pull request for correctness, security and style.",
        body="# Code Review\n\n## Steps\n\n1. Read the diff.\n2. Check security.\n",
        root=root,
        triggers=["review my pr", "code review"],
    )
    make_skill(
        "sql-review",
        description="Review SQL queries for injection, slow plans and wrong joins.",
        body="# SQL Review\n\nCheck parameters and EXPLAIN plans.\n",
        root=root,
        triggers=["sql query", "sql injection"],
    )
    make_skill(
        "deploy",
        description="Deploy the service to production with the release checklist.",
        body="# Deploy\n\nRun the release checklist.\n",
        root=root,
        triggers=["deploy to production"],
        disable__model__invocation=True,
    )
    make_skill(
        "retired",
        description="Write release notes for a version from the changelog.",
        body="# Release notes\n",
        root=root,
        triggers=["release notes"],
    )
    make_skill(
        "big-skill",
        description="Plan a database migration with zero downtime.",
        body=LONG_BODY,
        root=root,
        triggers=["database migration"],
    )
    return root


def hook_state(project: Path) -> Path:
    """The state folder the hook uses for ``project`` (the user's cache folder's, unless
    the project has a ``.skillrt/`` of its own)."""
    from skillrt.hooks.locations import default_state_dir

    return Path(default_state_dir(str(project), os.environ))


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("SKILLRT_")}
    out["SKILLRT_DAEMON_AUTOSTART"] = os.environ.get("SKILLRT_DAEMON_AUTOSTART", "1")
    out.pop("CLAUDE_PROJECT_DIR", None)
    out["PYTHONPATH"] = str(REPO / "src")
    out.update(extra)
    return out


def skillrt(
    *args: str, cwd: Path, stdin: str | None = None, timeout: float = 120, **env_extra: str
) -> subprocess.CompletedProcess[str]:
    if args[:1] == ("hook",) and not any(a.startswith("--deadline") for a in args):
        # What a hook answers must not depend on how loaded the test machine is: the
        # deadline's own tests give theirs.
        args = (*args, "--deadline", str(timeout))
    return subprocess.run(
        [sys.executable, "-m", "skillrt", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env(**env_extra),
        timeout=timeout,
    )


def claude_payload(prompt: str, cwd: Path, transcript: Path | None = None) -> str:
    """Exactly the fields Claude Code sends a UserPromptSubmit hook."""
    return json.dumps(
        {
            "session_id": "0d2c9a7e-4b1f-4f0e-9a51-6c2f7f1d2e11",
            "transcript_path": str(transcript) if transcript else str(cwd / "missing.jsonl"),
            "cwd": str(cwd),
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
    )


def write_transcript(path: Path, turns: list[tuple[str, str]]) -> Path:
    """A Claude Code-like JSONL transcript: user lines with string content, assistant
    lines with text and tool_use blocks, plus meta and summary lines to skip."""
    lines: list[dict[str, Any]] = [{"type": "summary", "summary": "Earlier work"}]
    parent = None
    for i, (role, text) in enumerate(turns):
        uid = f"u{i}"
        if role == "user":
            message: dict[str, Any] = {"role": "user", "content": text}
        else:
            message = {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": text},
                    {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"cmd": "ls"}},
                ],
            }
        lines.append(
            {
                "parentUuid": parent,
                "type": role,
                "message": message,
                "uuid": uid,
                "timestamp": "2026-11-24T06:00:00Z",
                "sessionId": "s",
                "cwd": "/p",
            }
        )
        parent = uid
    lines.append(
        {"type": "user", "isMeta": True, "message": {"role": "user", "content": "<meta/>"}}
    )
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def hook_output(proc: subprocess.CompletedProcess[str]) -> dict[str, Any] | None:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else None


def wait_for(predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)
