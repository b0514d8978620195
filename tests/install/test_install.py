"""`skillrt install <client>` on real files in a temporary HOME and project."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillrt.install import Target, plan
from skillrt.install.targets import is_our_hook

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def install(
    cwd: Path, home: Path, *args: str, command: str | None = "skillrt"
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CODEX_HOME",)}
    env.update(HOME=str(home), PYTHONPATH=str(REPO / "src"))
    extra = ["--command", command] if command else []
    return subprocess.run(
        [sys.executable, "-m", "skillrt", "install", *args, *extra],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


EXISTING: dict[str, Any] = {
    "permissions": {"allow": ["Bash(git diff:*)"]},
    "hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo mine"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint"}]}],
    },
    "model": "opus",
}


def test_claude_code_project_install_is_idempotent_and_exactly_undone(
    project: Path, home: Path, tmp_path: Path
) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps(EXISTING, indent=2) + "\n"
    settings.write_text(original)
    skills = tmp_path / "skills"
    skills.mkdir()

    first = install(project, home, "claude-code", "--project", "--root", str(skills), "--json")
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    assert report["files"][0]["changed"] and report["files"][0]["backup"]
    backup = Path(report["files"][0]["backup"])
    assert backup.read_text() == original
    assert not backup.is_relative_to(project)  # kept in skillrt's folder, not the repo
    # a root outside the project is named absolutely, and said not to be portable
    assert "NOT_PORTABLE" in [w["code"] for w in report["warnings"]]
    data = json.loads(settings.read_text())
    assert data["permissions"] == EXISTING["permissions"] and data["model"] == "opus"
    assert data["hooks"]["PreToolUse"] == EXISTING["hooks"]["PreToolUse"]
    groups = data["hooks"]["UserPromptSubmit"]
    assert groups[0] == EXISTING["hooks"]["UserPromptSubmit"][0]
    ours = groups[1]["hooks"][0]
    assert ours["type"] == "command" and ours["timeout"] == 10
    assert ours["command"] == f"skillrt hook claude-code --root {skills.resolve()}"
    installed = settings.read_text()

    again = install(project, home, "claude-code", "--root", str(skills), "--json")
    assert json.loads(again.stdout)["files"][0]["changed"] is False
    assert settings.read_text() == installed

    gone = install(project, home, "claude-code", "--uninstall", "--root", str(skills))
    assert gone.returncode == 0, gone.stderr
    assert settings.read_text() == original
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


def test_project_settings_work_on_every_machine(project: Path, home: Path) -> None:
    """The shared settings name `skillrt` on PATH and roots relative to the project: no
    absolute interpreter path, nothing of this machine's layout."""
    (project / "team-skills").mkdir()
    proc = install(project, home, "claude-code", "--root", "team-skills", "--json",
                   command=None)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = (project / ".claude" / "settings.json").read_text()
    handler = json.loads(text)["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    assert handler["command"] == "skillrt hook claude-code --root team-skills"
    assert str(project) not in text and sys.executable not in text
    # the user's own settings may name this machine's Python: they are not shared
    assert install(project, home, "claude-code", "--user", command=None).returncode == 0
    user = json.loads((home / ".claude" / "settings.json").read_text())
    assert sys.executable in user["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]


def test_inline_objects_and_the_rest_of_the_file_keep_their_bytes(
    project: Path, home: Path
) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = (
        '{\n  "env": {"A": "1", "B": "2"},\n'
        '  "permissions": { "allow": ["Bash(ls)"] },\n'
        '  "hooks": {\n    "Stop": [{"hooks": [{"type": "command", "command": "x"}]}]\n  }\n}\n'
    )
    settings.write_text(original)
    assert install(project, home, "claude-code").returncode == 0
    installed = settings.read_text()
    assert installed.startswith(
        '{\n  "env": {"A": "1", "B": "2"},\n  "permissions": { "allow": ["Bash(ls)"] },\n'
        '  "hooks": {\n    "Stop": [{"hooks": [{"type": "command", "command": "x"}]}],\n'
        '    "UserPromptSubmit": ['
    )
    assert install(project, home, "claude-code", "--uninstall").returncode == 0
    assert settings.read_text() == original


def test_an_old_backup_beside_the_file_is_removed(project: Path, home: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"model": "opus"}\n')
    (settings.parent / "settings.json.skillrt.bak").write_text('{"model": "opus"}\n')
    assert install(project, home, "claude-code").returncode == 0
    assert install(project, home, "claude-code", "--uninstall").returncode == 0
    assert settings.read_text() == '{"model": "opus"}\n'
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


def test_user_scope_creates_and_removes_the_file(project: Path, home: Path) -> None:
    settings = home / ".claude" / "settings.json"
    assert install(project, home, "claude-code", "--user").returncode == 0
    data = json.loads(settings.read_text())
    assert data == {
        "hooks": {
            "UserPromptSubmit": [
                {
                    "matcher": "",
                    "hooks": [
                        {
                            "type": "command",
                            "command": "skillrt hook claude-code",
                            "timeout": 10,
                        }
                    ],
                }
            ]
        }
    }
    assert not (project / ".claude").exists()
    assert install(project, home, "claude-code", "--user", "--uninstall").returncode == 0
    assert not settings.exists()


def test_dry_run_prints_the_diff_and_writes_nothing(project: Path, home: Path) -> None:
    proc = install(project, home, "claude-code", "--dry-run")
    assert proc.returncode == 0
    assert "+++ " in proc.stdout and '"UserPromptSubmit"' in proc.stdout
    assert not (project / ".claude").exists()


def test_reinstall_with_other_flags_replaces_the_hook(project: Path, home: Path) -> None:
    install(project, home, "claude-code", "--timeout", "5")
    install(project, home, "claude-code", "--timeout", "7", "--state", "st")
    groups = json.loads((project / ".claude" / "settings.json").read_text())["hooks"][
        "UserPromptSubmit"
    ]
    assert len(groups) == 1 and groups[0]["hooks"][0]["timeout"] == 7
    assert "--state" in groups[0]["hooks"][0]["command"]


DEEP = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"  # past any parser's recursion limit
DEEPISH = '{"a": ' + "[" * 700 + "]" * 700 + "}"  # Python's json reads it


@pytest.mark.parametrize(
    "content", ["{not json", "[1, 2]", '{"hooks": []}', "\ufeff{}", DEEP, DEEPISH]
)
def test_unsafe_files_are_refused_untouched(project: Path, home: Path, content: str) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(content)
    proc = install(project, home, "claude-code", "--json")
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["error"]["code"] == "E_INSTALL"
    assert settings.read_text() == content
    assert not list(settings.parent.glob("*.bak"))


def test_codex_toml_block_and_hooks(project: Path, home: Path, tmp_path: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = '# my settings\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "other"\n'
    config.write_text(original)
    skills = tmp_path / "skills dir"  # a space: quoting matters
    skills.mkdir()
    args = ("codex", "--user", "--mcp", "--no-trust", "--root", str(skills))
    assert install(project, home, *args).returncode == 0
    parsed = tomllib.loads(config.read_text())
    assert parsed["model"] == "o3" and parsed["mcp_servers"]["other"] == {"command": "other"}
    assert parsed["mcp_servers"]["skillrt"] == {
        "command": "skillrt",
        "args": ["mcp", "--root", str(skills.resolve()), "--with-hook"],
    }
    assert config.read_text().startswith(original)
    hooks = json.loads((home / ".codex" / "hooks.json").read_text())
    handler = hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    assert is_our_hook(handler, "codex") and "'" in handler["command"]  # quoted path
    text = config.read_text()
    assert install(project, home, *args).returncode == 0
    assert config.read_text() == text
    assert install(project, home, "codex", "--user", "--uninstall").returncode == 0
    assert config.read_text() == original
    assert not (home / ".codex" / "hooks.json").exists()


def test_codex_refuses_a_server_it_did_not_write(project: Path, home: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('[mcp_servers.skillrt]\ncommand = "mine"\n')
    proc = install(project, home, "codex", "--user", "--mcp", "--no-trust", "--json")
    assert proc.returncode == 1 and json.loads(proc.stdout)["error"]["code"] == "E_INSTALL"
    assert config.read_text() == '[mcp_servers.skillrt]\ncommand = "mine"\n'


def test_codex_without_mcp_leaves_config_toml_alone(project: Path, home: Path) -> None:
    proc = install(project, home, "codex", "--user", "--no-trust", "--json")
    assert proc.returncode == 0, proc.stderr
    assert not (home / ".codex" / "config.toml").exists()
    assert json.loads(proc.stdout)["trust"]["skipped"] is True
    assert (home / ".codex" / "hooks.json").exists()


def test_codex_install_without_codex_says_the_one_step_and_fails(project: Path, home: Path) -> None:
    proc = install(project, home, "codex", "--user", "--codex", str(home / "no-codex"), "--json")
    assert proc.returncode == 1
    trust = json.loads(proc.stdout)["trust"]
    assert trust["ok"] is False and trust["reason"] == "codex_not_started"
    assert "/hooks" in trust["step"]
    assert (home / ".codex" / "hooks.json").exists()  # installed; only the trust is missing


def test_gemini_hook_only_unless_mcp_is_asked(project: Path, home: Path) -> None:
    assert install(project, home, "gemini").returncode == 0
    data = json.loads((project / ".gemini" / "settings.json").read_text())
    assert "mcpServers" not in data and list(data["hooks"]) == ["BeforeModel"]


def test_gemini_server_and_one_before_model_hook(project: Path, home: Path) -> None:
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"theme": "Dracula", "mcpServers": {"x": {"command": "x"}}}))
    assert install(project, home, "gemini", "--mcp").returncode == 0
    data = json.loads(settings.read_text())
    assert data["theme"] == "Dracula" and data["mcpServers"]["x"] == {"command": "x"}
    assert data["mcpServers"]["skillrt"] == {"command": "skillrt", "args": ["mcp", "--with-hook"]}
    # One hook process a prompt: BeforeModel routes and carries the skill.
    assert list(data["hooks"]) == ["BeforeModel"]
    handler = data["hooks"]["BeforeModel"][0]["hooks"][0]
    assert handler == {
        "name": "skillrt",
        "type": "command",
        "command": "skillrt hook gemini --via-model",
        "timeout": 5_000,  # the hook's own deadline is 3 s
    }
    assert install(project, home, "gemini", "--uninstall").returncode == 0
    assert json.loads(settings.read_text()) == {
        "theme": "Dracula",
        "mcpServers": {"x": {"command": "x"}},
    }


def test_gemini_install_takes_an_older_installs_before_agent_hook_off(
    project: Path, home: Path
) -> None:
    """An install from before one hook did the work had BeforeAgent too: installing
    again leaves one hook (the user's own BeforeAgent hook stays), and doctor finds the
    old install as installed."""
    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    old = {"name": "skillrt", "type": "command", "command": "skillrt hook gemini --via-model",
           "timeout": 10_000}  # fmt: skip
    mine = {"type": "command", "command": "./my-hook.sh"}
    settings.write_text(json.dumps({"hooks": {
        "BeforeAgent": [{"matcher": "", "hooks": [old, mine]}],
        "BeforeModel": [{"matcher": "", "hooks": [dict(old, name="skillrt-model")]}],
    }}))  # fmt: skip
    from skillrt.doctor.environment import hook_status

    assert hook_status(project, home, ask_codex=False)["gemini"]["installed"]
    assert install(project, home, "gemini").returncode == 0
    hooks = json.loads(settings.read_text())["hooks"]
    assert hooks["BeforeAgent"] == [{"matcher": "", "hooks": [mine]}]
    assert [h["name"] for g in hooks["BeforeModel"] for h in g["hooks"]] == ["skillrt"]
    assert hook_status(project, home, ask_codex=False)["gemini"]["installed"]


GEMINI_WITH_COMMENTS = """{
  // Gemini CLI reads its settings with comments stripped (strip-json-comments)
  "theme": "Dracula", /* a block comment */
  "url": "http://example.com/a//b", // not a comment inside a string
  "hooksConfig": {"enabled": true}
}
"""


def test_gemini_settings_with_comments_are_edited_in_place(project: Path, home: Path) -> None:
    from skillrt.doctor.environment import hook_status

    settings = project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(GEMINI_WITH_COMMENTS)
    proc = install(project, home, "gemini", "--no-warm")
    assert proc.returncode == 0, proc.stderr
    text = settings.read_text()
    assert "// Gemini CLI reads" in text and "/* a block comment */" in text
    assert "http://example.com/a//b" in text and "skillrt hook gemini --via-model" in text
    assert hook_status(project, home, environ={}, ask_codex=False)["gemini"]["installed"]
    assert install(project, home, "gemini", "--uninstall").returncode == 0
    assert settings.read_text() == GEMINI_WITH_COMMENTS


def test_cursor_mcp_only(project: Path, home: Path) -> None:
    assert install(project, home, "cursor", "--user").returncode == 0
    data = json.loads((home / ".cursor" / "mcp.json").read_text())
    assert data == {"mcpServers": {"skillrt": {"command": "skillrt", "args": ["mcp"]}}}
    assert install(project, home, "cursor", "--user", "--uninstall").returncode == 0
    assert not (home / ".cursor" / "mcp.json").exists()


def test_installed_hook_command_runs(project: Path, home: Path, tmp_path: Path) -> None:
    """The command written into settings.json is one that works as Claude Code runs it."""
    import shlex

    skills = tmp_path / "skills" / "code-review"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text(
        "---\nname: code-review\ndescription: Review a pull request.\n---\n# Review\n"
    )
    plan_ = plan(
        Target(
            "claude-code",
            project / ".claude",
            [sys.executable, "-m", "skillrt"],
            ["--root", str(skills.parent)],
        ),
        backups=tmp_path / "backups",
    )
    command = json.loads(plan_[0].after or "{}")["hooks"]["UserPromptSubmit"][0]["hooks"][0][
        "command"
    ]
    payload = json.dumps(
        {
            "hook_event_name": "UserPromptSubmit",
            "prompt": "$code-review go",
            "cwd": str(project),
            "session_id": "s",
            "transcript_path": "",
        }
    )
    proc = subprocess.run(
        shlex.split(command) + ["--no-daemon"],
        input=payload,
        capture_output=True,
        text=True,
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(REPO / "src"), "HOME": str(home)},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["systemMessage"] == "Using skill: code-review"


_json_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_json = st.recursive(
    _json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
_handler = st.fixed_dictionaries(
    {"type": st.just("command"), "command": st.sampled_from(["echo a", "lint --fix", "x y"])}
)
_settings = st.fixed_dictionaries(
    {},
    optional={
        "model": st.text(max_size=5),
        "env": st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2),
        "other": _json,
        "hooks": st.dictionaries(
            st.sampled_from(["UserPromptSubmit", "PreToolUse", "Stop"]),
            st.lists(
                st.fixed_dictionaries(
                    {"hooks": st.lists(_handler, min_size=1, max_size=2)},
                    optional={"matcher": st.text(max_size=4)},
                ),
                min_size=1,
                max_size=3,
            ),
            min_size=1,
            max_size=3,
        ),
    },
)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_settings, st.sampled_from(["claude-code", "gemini", "cursor"]))
def test_install_then_uninstall_gives_back_any_settings(
    tmp_path: Path, data: dict[str, Any], client: str
) -> None:
    import tempfile

    from skillrt.install import apply

    with tempfile.TemporaryDirectory(dir=tmp_path) as d:
        folder = Path(d) / ".x"
        folder.mkdir()
        name = {"claude-code": "settings.json", "gemini": "settings.json", "cursor": "mcp.json"}
        path = folder / name[client]
        original = json.dumps(data, indent=2) + "\n" if data else ""
        if original:
            path.write_text(original)
        target = Target(client, folder, ["skillrt"], ["--root", "/skills"], mcp=True)
        backups = Path(d) / "backups"
        apply(plan(target, backups=backups), backups=backups)
        once = path.read_text()
        apply(plan(target, backups=backups), backups=backups)
        assert path.read_text() == once  # idempotent
        apply(plan(target, uninstall=True, backups=backups), backups=backups)
        assert (path.read_text() if path.exists() else "") == original


def test_default_hook_command_starts_fast_and_runs(
    project: Path, home: Path, tmp_path: Path
) -> None:
    """Without --command, in the user's own settings: this Python with ``-c`` (no
    console-script wrapper, no runpy); it is recognised as skillrt's on re-install and
    uninstall."""
    import shlex

    skill = tmp_path / "skills" / "code-review"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: code-review\ndescription: Review a pull request.\n---\n# Review\n"
    )
    root = str(skill.parent)
    user = ("claude-code", "--user", "--root", root)
    assert install(project, home, *user, command=None).returncode == 0
    settings = home / ".claude" / "settings.json"
    handler = json.loads(settings.read_text())["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    argv = shlex.split(handler["command"])
    assert argv[:2] == [sys.executable, "-c"] and argv[3:5] == ["hook", "claude-code"]
    payload = json.dumps(
        {
            "hook_event_name": "UserPromptSubmit",
            "prompt": "$code-review go",
            "cwd": str(project),
            "session_id": "s",
            "transcript_path": "",
        }
    )
    proc = subprocess.run(
        [*argv, "--no-daemon"],
        input=payload,
        capture_output=True,
        text=True,
        cwd=project,
        env={**os.environ, "HOME": str(home)},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["systemMessage"] == "Using skill: code-review"
    text = settings.read_text()
    assert install(project, home, *user, command=None).returncode == 0
    assert settings.read_text() == text
    assert (
        install(project, home, "claude-code", "--user", "--uninstall", command=None).returncode == 0
    )
    assert not settings.exists()


# -- the file's own mode and layout (issue 22) ----------------------------------------

#: json.dumps layouts a settings file may have: indented (2, 4, tab), compact with or
#: without spaces after the separators.
_LAYOUTS = st.sampled_from(
    [
        {"indent": 2},
        {"indent": 4},
        {"indent": "\t"},
        {"indent": 2, "separators": (",", ":")},
        {"indent": None},
        {"indent": None, "separators": (",", ":")},
        {"indent": None, "separators": (", ", ":")},
    ]
)
_MODES = st.sampled_from([0o644, 0o600, 0o640, 0o664, 0o444 | 0o200])


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    _settings,
    _LAYOUTS,
    st.booleans(),
    st.booleans(),
    _MODES,
    st.sampled_from(["claude-code", "gemini", "cursor", "codex"]),
)
def test_install_keeps_mode_and_layout_and_uninstall_gives_back_the_bytes(
    tmp_path: Path,
    data: dict[str, Any],
    layout: dict[str, Any],
    ascii_only: bool,
    final_newline: bool,
    mode: int,
    client: str,
) -> None:
    import stat
    import tempfile

    from skillrt.install import apply

    with tempfile.TemporaryDirectory(dir=tmp_path) as d:
        folder = Path(d) / ".x"
        folder.mkdir()
        name = {"claude-code": "settings.json", "gemini": "settings.json", "cursor": "mcp.json",
                "codex": "hooks.json"}  # fmt: skip
        path = folder / name[client]
        original = json.dumps(data, ensure_ascii=ascii_only, **layout)
        original += "\n" if final_newline else ""
        path.write_bytes(original.encode("utf-8"))
        path.chmod(mode)
        target = Target(client, folder, ["skillrt"], ["--root", "/skills"], mcp=True)
        backups = Path(d) / "backups"

        apply(plan(target, backups=backups), backups=backups)
        installed = path.read_text(encoding="utf-8")
        assert stat.S_IMODE(path.stat().st_mode) == mode
        assert (
            json.loads(installed).items()
            >= {k: v for k, v in data.items() if k not in ("hooks", "mcpServers")}.items()
        )
        if data:  # "{}" has no layout of its own
            one_line = layout["indent"] is None
            assert ("\n" in installed.rstrip("\n")) is not one_line, installed
        assert installed.endswith("\n") is final_newline
        assert installed.isascii() or not ascii_only

        apply(plan(target, uninstall=True, backups=backups), backups=backups)
        assert path.read_bytes() == original.encode("utf-8")
        assert stat.S_IMODE(path.stat().st_mode) == mode


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.sampled_from(
            ['model = "o3"', "# a comment", "", "[tui]", "notify = true", '[mcp_servers.x]',
             'command = "x"', "   ", "approval = 'never'"]
        ),
        max_size=8,
    ),
    st.booleans(),
    _MODES,
)  # fmt: skip
def test_codex_config_toml_round_trip_is_byte_exact(
    tmp_path: Path, lines: list[str], final_newline: bool, mode: int
) -> None:
    import stat
    import tempfile

    from skillrt.install import apply

    text = "\n".join(lines) + ("\n" if final_newline and lines else "")
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return  # not a config file Codex would read either
    with tempfile.TemporaryDirectory(dir=tmp_path) as d:
        folder = Path(d) / ".codex"
        folder.mkdir()
        config = folder / "config.toml"
        config.write_bytes(text.encode())
        config.chmod(mode)
        target = Target("codex", folder, ["skillrt"], mcp=True)
        backups = Path(d) / "backups"
        apply(plan(target, backups=backups), backups=backups)
        assert "mcp_servers" in tomllib.loads(config.read_text())
        assert stat.S_IMODE(config.stat().st_mode) == mode
        apply(plan(target, uninstall=True, backups=backups), backups=backups)
        assert config.read_bytes() == text.encode()
        assert stat.S_IMODE(config.stat().st_mode) == mode


def test_cli_install_keeps_a_compact_644_settings_file(project: Path, home: Path) -> None:
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = '{"model":"opus","permissions":{"allow":["Bash(ls)"]}}'
    settings.write_text(original)
    settings.chmod(0o644)
    assert install(project, home, "claude-code").returncode == 0
    installed = settings.read_text()
    assert "\n" not in installed and '"model":"opus"' in installed
    assert settings.stat().st_mode & 0o777 == 0o644
    assert install(project, home, "claude-code", "--uninstall").returncode == 0
    assert settings.read_text() == original and settings.stat().st_mode & 0o777 == 0o644


def test_a_new_settings_file_gets_the_usual_mode(project: Path, home: Path) -> None:
    old = os.umask(0o022)
    try:
        assert install(project, home, "claude-code").returncode == 0
    finally:
        os.umask(old)
    assert (project / ".claude" / "settings.json").stat().st_mode & 0o777 == 0o644
