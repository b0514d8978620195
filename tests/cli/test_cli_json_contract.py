"""``--json`` prints exactly one JSON document, whatever the arguments (CLI contract, E1).

A usage error is ``{"error": {"code": "E_USAGE", ...}}`` on stdout with exit 2; ``--version``
and ``--help`` answer in JSON too. Every command (and every action of a command group)
has a help, ``skillrt hook <client> --help`` included.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillrt.cli import main
from skillrt.cli.app import build_parser

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("SKILLRT_DEBUG", raising=False)
    return tmp_path


def one_document(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(list(args))
    out = capsys.readouterr().out
    return code, json.loads(out)  # fails unless stdout is exactly one JSON document


BAD_USAGES = [
    ["--json"],  # no command
    ["--json", "workflow"],  # a command group without its action
    ["workflow", "--json"],
    ["--json", "repair"],
    ["--json", "nosuch"],
    ["--json", "list", "--bogus"],
    ["--json", "route"],  # a missing argument
    ["--json", "route", "x", "--top-k", "many"],
    ["--json", "workflow", "start"],
    ["--json", "workflow", "nosuch"],
    ["--json", "install", "nosuch-client"],
    ["--json", "hook"],
    ["--json", "hook", "claude-code", "--bogus"],
    ["--json", "state", "migrate"],
    ["--json", "eval"],
]


@pytest.mark.parametrize("args", BAD_USAGES, ids=" ".join)
def test_usage_errors_are_one_json_error_document(
    capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    code, doc = one_document(capsys, *args)
    assert code == 2
    assert doc["error"]["code"] == "E_USAGE" and doc["error"]["message"]


@pytest.mark.parametrize("args", [["--json", "--version"], ["--version", "--json"]])
def test_version_in_json(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    import skillrt

    code, doc = one_document(capsys, *args)
    assert code == 0 and doc == {"name": "skillrt", "version": skillrt.__version__}


@pytest.mark.parametrize(
    "args",
    [["--json", "--help"], ["--json", "workflow", "--help"], ["--json", "hook", "codex", "-h"]],
)
def test_help_in_json(capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    code, doc = one_document(capsys, *args)
    assert code == 0 and doc["help"].startswith("usage: skillrt")


def test_usage_errors_in_human_form_stay_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["workflow"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "usage: skillrt workflow" in err


def _commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> list[list[str]]:
    """Every command and action path of the parser: ["list"], ["workflow", "start"], ..."""
    out: list[list[str]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                path = (*prefix, name)
                out.append(list(path))
                out.extend(_commands(sub, path))
    return out


COMMANDS = _commands(build_parser())


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_command_has_help(capsys: pytest.CaptureFixture[str], path: list[str]) -> None:
    assert main([*path, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: skillrt " + " ".join(path[:1])), out


@pytest.mark.parametrize("client", ["claude-code", "codex", "gemini"])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_hook_client_help(client: str, flag: str, tmp_path: Path) -> None:
    """As a coding agent runs it: ``skillrt hook`` skips the argument parser."""
    proc = subprocess.run(
        [sys.executable, "-m", "skillrt", "hook", client, flag],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(REPO / "src"), "PATH": "/usr/bin:/bin"},
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: skillrt hook")
    assert "--root DIR" in proc.stdout and "--no-daemon" in proc.stdout
