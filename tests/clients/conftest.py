"""The real coding-agent CLIs (Claude Code, Codex CLI, Gemini CLI, from npm at the
versions .ci/clients pins) pointed at a model server on 127.0.0.1 that records what
the model would receive (:mod:`model_server`).

Each test gets a HOME of its own with the client's settings (its model API at the
recorder, the project trusted as a user would have trusted it), a git project with
skills where the client reads them, and the CLIs found in ``.ci/cache/clients`` (or
``SKILLRT_CLIENTS_BIN``). Without them the tests are skipped with the reason, unless
``SKILLRT_CLIENTS_REQUIRED=1`` (CI) makes that a failure. Every daemon a hook starts is
ended after the test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from client_env import client_env, prompt_argv, stop_daemons, trust
from model_server import ModelServer, Recorded, running

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "skills"
BIN = Path(
    os.environ.get("SKILLRT_CLIENTS_BIN")
    or REPO / ".ci" / "cache" / "clients" / "node_modules" / ".bin"
)
#: A line put in one skill's body: seen in a request, that skill's body reached the model.
MARKER = "SKILLRT-E2E-MARKER-7c1d"
#: Routes to systematic-debugging among the example skills (the README's main job).
PROMPT = "The nightly build fails after the refactor: find the root cause before fixing anything"
FOLLOW_UP = "it still fails after that change, same stack trace"
UNRELATED = "what's the capital of France?"
#: client -> (executable, the skill folder it reads in a project, and under HOME).
CLIENTS = {
    "claude-code": ("claude", ".claude/skills", ".claude/skills"),
    "codex": ("codex", ".agents/skills", ".agents/skills"),
    "gemini": ("gemini", ".gemini/skills", ".gemini/skills"),
}


def clients_available() -> str | None:
    """None when every CLI runs, else why not."""
    for exe, _, _ in CLIENTS.values():
        if not (BIN / exe).exists():
            return f"{BIN / exe} is missing: run `bash .ci/clients.sh install` (npm)"
    return None


@pytest.fixture(scope="session")
def client_bin() -> Path:
    why = clients_available()
    if why is not None:
        if os.environ.get("SKILLRT_CLIENTS_REQUIRED") == "1":
            pytest.fail(f"the real-client suite must run here: {why}")
        pytest.skip(why)
    return BIN


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with running() as server:
        yield server


@dataclass
class Agent:
    """One client, its HOME, its project and the recorder it talks to."""

    client: str
    bin: Path
    home: Path
    project: Path
    server: ModelServer
    env: dict[str, str] = field(default_factory=dict)

    @property
    def exe(self) -> str:
        return str(self.bin / CLIENTS[self.client][0])

    def skillrt(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "skillrt", *args],
            cwd=cwd or self.project, env=self.env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip

    def prompt(self, text: str, *, resume: bool = False, cwd: Path | None = None) -> list[Recorded]:
        """Send one prompt through the client (``resume``: the last session goes on);
        the model requests it made."""
        before = len(self.server.model_requests())
        argv = self._argv(text, resume)
        proc = subprocess.run(argv, cwd=cwd or self.project, env=self.env, capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL)  # fmt: skip
        assert proc.returncode == 0, (argv, proc.stdout[-2000:], proc.stderr[-3000:])
        return self.server.model_requests()[before:]

    def _argv(self, text: str, resume: bool) -> list[str]:
        return prompt_argv(self.client, self.bin, text, resume=resume)

    def new_project(self, name: str) -> Path:
        project = self.home.parent / name
        project.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        trust(self.client, self.home, project)
        return project

    def stop_daemons(self) -> None:
        """End every `skillrt serve` this test's hooks started."""
        stop_daemons(Path(self.env["XDG_CACHE_HOME"]))


def skills_with_marker(folder: Path) -> None:
    """The example skills, systematic-debugging's body carrying :data:`MARKER`."""
    shutil.copytree(EXAMPLES, folder)
    body = folder / "systematic-debugging" / "SKILL.md"
    body.write_text(body.read_text() + f"\n{MARKER}\n")


@pytest.fixture(params=list(CLIENTS))
def agent(
    request: pytest.FixtureRequest, client_bin: Path, model: ModelServer, tmp_path: Path
) -> Iterator[Agent]:
    client = str(request.param)
    home = tmp_path / "home"
    home.mkdir()
    env = client_env(client, home, model.url, tmp_path / "cache", client_bin)
    agent = Agent(client, client_bin, home, tmp_path / "project", model, env)
    agent.project = agent.new_project("project")
    try:
        yield agent
    finally:
        agent.stop_daemons()


def marker_count(requests: list[Recorded]) -> list[int]:
    return [r.text.count(MARKER) for r in requests]


def git_status(project: Path) -> list[str]:
    argv = ["git", "status", "--porcelain", "--ignored", "--untracked-files=all"]
    out = subprocess.run(argv, cwd=project, capture_output=True, text=True, check=True).stdout
    return sorted(line for line in out.splitlines() if line.strip())


def commit_all(project: Path) -> None:
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "skills"],
                   cwd=project, check=True)  # fmt: skip


def request_texts(requests: list[Recorded]) -> list[str]:
    return [r.text for r in requests]


def dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)[:2000]
