"""A coding agent is one module in ``skillrt/clients/`` plus one registry line (issue
28): a client added to the registry is installed, answered, searched and listed
without a change anywhere else; each client's transcript reader reads its own lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrt import clients
from skillrt.clients import CLIENTS, Client, HookHandler
from skillrt.config import DiscoveryConfig


@pytest.fixture
def dummy(monkeypatch: pytest.MonkeyPatch) -> Client:
    spec = Client(
        "dummy",
        folder=".dummy",
        event="PromptIn",
        hooks_file="hooks.json",
        handlers=(HookHandler("PromptIn", name="skillrt", milliseconds=True),),
        mcp_file="servers.json",
        listing_share=0.05,
    )
    monkeypatch.setitem(CLIENTS, "dummy", spec)
    return spec


def test_a_registered_client_is_installed_and_uninstalled_by_its_description(
    dummy: Client, tmp_path: Path
) -> None:
    from skillrt.install import Target, apply, plan

    folder = tmp_path / ".dummy"
    target = Target("dummy", folder, program=["skillrt"], timeout_s=3, mcp=True)
    backups = tmp_path / "backups"
    apply(plan(target, backups=backups), backups=backups, dry_run=False)
    hooks = json.loads((folder / "hooks.json").read_text())
    assert hooks == {"hooks": {"PromptIn": [{"matcher": "", "hooks": [
        {"name": "skillrt", "type": "command", "command": "skillrt hook dummy", "timeout": 3000}
    ]}]}}  # fmt: skip
    servers = json.loads((folder / "servers.json").read_text())
    assert servers["mcpServers"]["skillrt"]["args"] == ["mcp", "--with-hook"]
    apply(plan(target, uninstall=True, backups=backups), backups=backups, dry_run=False)
    assert not (folder / "hooks.json").exists() and not (folder / "servers.json").exists()


def test_a_registered_client_is_answered_in_its_own_event_and_listed(dummy: Client) -> None:
    from skillrt.doctor.listing import listing_report
    from skillrt.hooks.clients import render

    out = json.loads(render("dummy", {"text": "[Skill: x]", "lines": ["Using skill: x"]}))
    assert out["hookSpecificOutput"]["hookEventName"] == "PromptIn"
    report = listing_report([], [], context_window=100_000)
    listed = {c.client: c.budget_chars for c in report.clients}
    assert listed["dummy"] == 20_000  # 5% of 100,000 tokens at 4 characters a token


def test_every_client_folder_has_its_discovery_switch_and_is_searched_by_default() -> None:
    from skillrt.skills.discovery import CLIENT_SWITCHES, client_folders

    fields = set(DiscoveryConfig.__dataclass_fields__)
    for short, spec in clients.WITH_ROOTS.items():
        assert f"{short}_roots" in fields, f"DiscoveryConfig needs {short}_roots for {spec}"
    assert set(CLIENT_SWITCHES) == {f"{s}_roots" for s in clients.WITH_ROOTS}
    assert client_folders(DiscoveryConfig()) == list(clients.WITH_ROOTS)
    assert client_folders(DiscoveryConfig(client_roots=False)) == []


def test_present_names_the_client_folders_that_exist(tmp_path: Path) -> None:
    project, home, codex_home = tmp_path / "p", tmp_path / "h", tmp_path / "c"
    (project / ".claude" / "skills").mkdir(parents=True)
    (codex_home / "skills").mkdir(parents=True)
    home.mkdir()
    assert clients.present(str(project), str(home), {}) == ["claude"]
    assert clients.present(str(project), str(home), {"CODEX_HOME": str(codex_home)}) == [
        "claude",
        "codex",
    ]


#: One transcript line of each client, as it writes a user message "hi".
LINES = {
    "claude-code": {"type": "user", "message": {"role": "user", "content": "hi"}},
    "codex": {"type": "response_item", "payload": {"type": "message", "role": "user",
              "content": [{"type": "input_text", "text": "hi"}]}},
    "gemini": {"id": "1", "type": "user", "content": [{"text": "hi"}]},
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(LINES))
def test_each_client_reads_its_own_transcript_lines_and_no_other(name: str) -> None:
    from skillrt.hooks.transcript import _message

    spec = CLIENTS[name]
    assert spec.read_message is not None
    role, _content = spec.read_message(LINES[name]) or ("", "")
    assert role == "user"
    for other, line in LINES.items():
        if other != name:
            assert spec.read_message(line) is None, other
    assert _message(LINES[name]) == {"role": "user", "content": "hi"}
