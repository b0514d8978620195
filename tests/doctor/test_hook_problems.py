"""`doctor` says why an installed hook would not run, or runs twice (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path

from skillrt.doctor.environment import hook_status

OURS = {"type": "command", "command": "skillrt hook claude-code"}


def settings(path: Path, data: dict) -> None:  # type: ignore[type-arg]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def codes(status: dict, client: str) -> list[str]:  # type: ignore[type-arg]
    return [p["code"] for p in status[client].get("problems", ())]


def test_a_hook_installed_twice_and_hooks_turned_off(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    hook = {"hooks": {"UserPromptSubmit": [{"hooks": [OURS]}]}}
    settings(project / ".claude" / "settings.json", hook)
    settings(home / ".claude" / "settings.json", {**hook, "disableAllHooks": True})
    status = hook_status(project, home, environ={}, ask_codex=False)
    assert status["claude-code"]["installed"]
    assert codes(status, "claude-code") == ["INSTALLED_TWICE", "HOOKS_DISABLED"]
    assert all(p["fix"] for p in status["claude-code"]["problems"])


def test_gemini_hooks_off_named_off_and_an_untrusted_folder(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    ours = {"name": "skillrt", "type": "command", "command": "skillrt hook gemini --via-model"}
    settings(project / ".gemini" / "settings.json", {
        "hooks": {"BeforeModel": [{"hooks": [ours]}]},
        "hooksConfig": {"enabled": False, "disabled": ["skillrt"]},
    })  # fmt: skip
    status = hook_status(project, home, environ={}, ask_codex=False)
    assert codes(status, "gemini") == ["HOOKS_DISABLED", "HOOK_DISABLED", "FOLDER_UNTRUSTED"]
    # A name only an older install used ("skillrt-model") disables nothing that is there.
    settings(project / ".gemini" / "settings.json", {
        "hooks": {"BeforeModel": [{"hooks": [ours]}]},
        "hooksConfig": {"disabled": ["skillrt-model"]},
    })  # fmt: skip
    status = hook_status(project, home, environ={}, ask_codex=False)
    assert codes(status, "gemini") == ["FOLDER_UNTRUSTED"]
    settings(project / ".gemini" / "settings.json", {"hooks": {"BeforeAgent": [{"hooks": [ours]}]}})
    settings(home / ".gemini" / "trustedFolders.json", {str(project): "TRUST_FOLDER"})
    assert codes(hook_status(project, home, environ={}, ask_codex=False), "gemini") == []


def test_a_healthy_install_has_no_problems(tmp_path: Path) -> None:
    project = tmp_path / "p"
    settings(
        project / ".claude" / "settings.json", {"hooks": {"UserPromptSubmit": [{"hooks": [OURS]}]}}
    )
    status = hook_status(project, None, environ={}, ask_codex=False)
    assert status["claude-code"]["installed"] and "problems" not in status["claude-code"]


def test_a_local_setting_or_the_administrator_shadows_the_hook(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from skillrt.doctor import environment

    project = tmp_path / "p"
    settings(
        project / ".claude" / "settings.json", {"hooks": {"UserPromptSubmit": [{"hooks": [OURS]}]}}
    )
    settings(project / ".claude" / "settings.local.json", {"disableAllHooks": True})
    managed = tmp_path / "managed-settings.json"
    settings(managed, {"allowManagedHooksOnly": True})
    monkeypatch.setattr(environment, "CLAUDE_MANAGED_SETTINGS", str(managed))
    status = hook_status(project, None, environ={}, ask_codex=False)
    assert codes(status, "claude-code") == ["HOOKS_DISABLED", "HOOK_SHADOWED"]


def test_settings_of_the_wrong_shape_are_read_around(tmp_path: Path) -> None:
    # A project file whose hooks are not an object, or nested past the parser's limit,
    # does not stop doctor: the user-level install is still found.
    project, home = tmp_path / "p", tmp_path / "h"
    settings(
        home / ".claude" / "settings.json", {"hooks": {"UserPromptSubmit": [{"hooks": [OURS]}]}}
    )
    path = project / ".claude" / "settings.json"
    for text in (
        '{"hooks": []}',
        '{"hooks": "on"}',
        '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ):
        settings(path, {})
        path.write_text(text)
        status = hook_status(project, home, environ={}, ask_codex=False)
        assert status["claude-code"]["where"] == [str(home / ".claude" / "settings.json")]


def test_gemini_folder_trust_as_gemini_decides_it(tmp_path: Path) -> None:
    # Gemini CLI: the longest matching rule wins (DO_NOT_TRUST included); folder trust
    # switched off in the user's settings, or GEMINI_CLI_TRUST_WORKSPACE, trusts all.
    project, home = tmp_path / "p", tmp_path / "h"
    ours = {"name": "skillrt", "type": "command", "command": "skillrt hook gemini --via-model"}
    settings(project / ".gemini" / "settings.json", {"hooks": {"BeforeAgent": [{"hooks": [ours]}]}})
    trusted = home / ".gemini" / "trustedFolders.json"

    def untrusted(environ: dict[str, str] | None = None) -> bool:
        status = hook_status(project, home, environ=environ or {}, ask_codex=False)
        return "FOLDER_UNTRUSTED" in codes(status, "gemini")

    settings(trusted, {str(tmp_path): "TRUST_FOLDER", str(project): "DO_NOT_TRUST"})
    assert untrusted()
    assert not untrusted({"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    settings(trusted, {str(project): "DO_NOT_TRUST", str(project / "sub"): "TRUST_PARENT"})
    assert not untrusted()  # the longer rule: the parent of p/sub is p
    trusted.unlink()
    assert untrusted()
    settings(home / ".gemini" / "settings.json", {"security": {"folderTrust": {"enabled": False}}})
    assert not untrusted()
    assert untrusted({"GEMINI_CLI_TRUST_WORKSPACE": "false"})
