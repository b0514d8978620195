"""How a real coding-agent CLI is set up against the model recorder, for the real-client
tests and ``bench/bench_clients.py`` alike: its environment and settings (the model API
at the recorder), a folder trusted as a user would have trusted it, the command line of
one prompt, and the daemons its hooks started, found and ended."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: client -> its executable on the bin folder.
EXE = {"claude-code": "claude", "codex": "codex", "gemini": "gemini"}


def client_env(
    client: str, home: Path, model_url: str, cache: Path, bin_dir: Path
) -> dict[str, str]:
    """The environment to run ``client`` in (its settings written under ``home``)."""
    env = {
        "PATH": os.pathsep.join(
            [str(Path(sys.executable).parent), str(bin_dir), os.environ["PATH"]]
        ),  # fmt: skip
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "XDG_CACHE_HOME": str(cache),
        "PYTHONPATH": str(REPO / "src"),
        "SKILLRT_DAEMON_AUTOSTART": "1",  # the product as a user gets it
    }
    if client == "claude-code":
        env.update(ANTHROPIC_BASE_URL=model_url, ANTHROPIC_API_KEY="sk-test")
        env.update(CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1")
    elif client == "codex":
        (home / ".codex").mkdir(parents=True, exist_ok=True)
        (home / ".codex" / "config.toml").write_text(
            'model = "gpt-5"\nmodel_provider = "recorder"\n\n[model_providers.recorder]\n'
            f'name = "recorder"\nbase_url = "{model_url}/v1"\nenv_key = "OPENAI_API_KEY"\n'
            'wire_api = "responses"\n'
        )
        env.update(OPENAI_API_KEY="sk-test")
    else:
        (home / ".gemini").mkdir(parents=True, exist_ok=True)
        (home / ".gemini" / "settings.json").write_text(
            json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}})
        )
        env.update(GEMINI_API_KEY="test-key", GOOGLE_GEMINI_BASE_URL=model_url)
    return env


def trust(client: str, home: Path, project: Path) -> None:
    """What a user did once for this folder in the client (trusted it)."""
    if client == "codex":
        with (home / ".codex" / "config.toml").open("a") as fh:
            fh.write(f'\n[projects."{project}"]\ntrust_level = "trusted"\n')
    elif client == "gemini":
        path = home / ".gemini" / "trustedFolders.json"
        data = json.loads(path.read_text()) if path.exists() else {}
        data[str(project)] = "TRUST_FOLDER"
        path.write_text(json.dumps(data))


def prompt_argv(client: str, bin_dir: Path, text: str, *, resume: bool = False) -> list[str]:
    """One prompt, non-interactively (``resume``: the last session goes on)."""
    exe = str(bin_dir / EXE[client])
    if client == "claude-code":
        return [
            exe,
            "-p",
            text,
            "--model",
            "claude-sonnet-4-5",
            *(["--continue"] if resume else []),
        ]
    if client == "codex":
        return [exe, "exec", "resume", "--last", text] if resume else [exe, "exec", text]
    return [exe, "-p", text, "-m", "gemini-2.5-flash", *(["--resume", "latest"] if resume else [])]


def _serving(marker: bytes) -> list[int]:
    """Pids of `skillrt serve` processes whose command line holds ``marker``."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if b"serve" in argv and b"skillrt" in argv and marker in argv:
            out.append(int(entry))
    return out


def stop_daemons(cache: Path, timeout: float = 30.0) -> None:
    """End every daemon a hook started with its state under ``cache`` (bounded wait)."""
    marker = str(cache).encode()
    for pid in _serving(marker):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _serving(marker):
        time.sleep(0.1)
