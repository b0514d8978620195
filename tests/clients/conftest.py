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
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
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
        if self.client == "claude-code":
            return [
                self.exe,
                "-p",
                text,
                "--model",
                "claude-sonnet-4-5",
                *(["--continue"] if resume else []),
            ]
        if self.client == "codex":
            if resume:
                return [self.exe, "exec", "resume", "--last", text]
            return [self.exe, "exec", text]
        return [
            self.exe,
            "-p",
            text,
            "-m",
            "gemini-2.5-flash",
            *(["--resume", "latest"] if resume else []),
        ]

    def new_project(self, name: str) -> Path:
        project = self.home.parent / name
        project.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        self.trust(project)
        return project

    def trust(self, project: Path) -> None:
        """What a user did once for this folder in the client (trusted it)."""
        if self.client == "codex":
            with (self.home / ".codex" / "config.toml").open("a") as fh:
                fh.write(f'\n[projects."{project}"]\ntrust_level = "trusted"\n')
        elif self.client == "gemini":
            path = self.home / ".gemini" / "trustedFolders.json"
            data = json.loads(path.read_text()) if path.exists() else {}
            data[str(project)] = "TRUST_FOLDER"
            path.write_text(json.dumps(data))

    def stop_daemons(self) -> None:
        """End every `skillrt serve` this test's hooks started (their state is under
        this test's cache folder)."""
        mine = str(self.home.parent).encode()
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if b"serve" in argv and mine in argv and b"skillrt" in argv:
                try:
                    os.kill(int(entry), signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _serving(mine):
            time.sleep(0.1)


def _serving(mine: bytes) -> bool:
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if b"serve" in argv and mine in argv and b"skillrt" in argv:
                return True
    return False


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
    env = {
        "PATH": os.pathsep.join(
            [str(Path(sys.executable).parent), str(client_bin), os.environ["PATH"]]
        ),  # fmt: skip
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "PYTHONPATH": str(REPO / "src"),
        "SKILLRT_DAEMON_AUTOSTART": "1",  # the product as a user gets it
        "NO_COLOR": "1",
    }
    if client == "claude-code":
        env.update(ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-test")
        env.update(CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
    elif client == "codex":
        (home / ".codex").mkdir()
        (home / ".codex" / "config.toml").write_text(
            'model = "gpt-5"\nmodel_provider = "recorder"\n\n[model_providers.recorder]\n'
            f'name = "recorder"\nbase_url = "{model.url}/v1"\nenv_key = "OPENAI_API_KEY"\n'
            'wire_api = "responses"\n'
        )
        env.update(OPENAI_API_KEY="sk-test")
    else:
        (home / ".gemini").mkdir()
        (home / ".gemini" / "settings.json").write_text(
            json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}})
        )
        env.update(GEMINI_API_KEY="test-key", GOOGLE_GEMINI_BASE_URL=model.url)
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
