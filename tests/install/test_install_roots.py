"""The coding agents' own skill folders are searched by default (issue 27; issue 22, a
new user's hour).

``.claude/skills``, ``.codex/skills`` and ``.gemini/skills`` (project and home) are
searched by the hook, the daemon, ``list`` and ``doctor`` unless ``--no-client-roots``;
``install`` says how many skills the hook will see, warning at 0; ``list`` points at
conventional folders holding skills it does not search.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
Make = Callable[..., Path]


def env(home: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("SKILLRT_", "CODEX_"))}
    out["SKILLRT_DAEMON_AUTOSTART"] = os.environ.get("SKILLRT_DAEMON_AUTOSTART", "1")
    out.pop("CLAUDE_PROJECT_DIR", None)
    out.update(HOME=str(home), PYTHONPATH=str(REPO / "src"))
    return out


def skillrt(cwd: Path, home: Path, *args: str, stdin: str | None = None) -> Any:
    return subprocess.run(
        [sys.executable, "-m", "skillrt", *args],
        cwd=cwd,
        env=env(home),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


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


def claude_skills(project: Path, make_skill: Make) -> None:
    make_skill(
        "sql-review",
        description="Review SQL queries for injection, slow plans and wrong joins.",
        root=project / ".claude" / "skills",
        triggers=["review this sql query"],
    )
    make_skill(
        "release-notes",
        description="Write release notes for a version from the changelog.",
        root=project / ".claude" / "skills",
    )


def hook_command(settings: Path, event: str = "UserPromptSubmit") -> list[str]:
    data = json.loads(settings.read_text())
    return shlex.split(data["hooks"][event][0]["hooks"][0]["command"])


def run_hook(command: list[str], project: Path, home: Path, prompt: str, *extra: str) -> Any:
    if "--deadline" not in extra:  # the hook's own 3 s would make a loaded machine flaky
        extra = (*extra, "--deadline", "100")
    payload = json.dumps(
        {
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
            "cwd": str(project),
            "session_id": "s",
            "transcript_path": "",
        }  # fmt: skip
    )
    return subprocess.run(
        [*command, *extra],
        input=payload,
        capture_output=True,
        text=True,
        cwd=project,
        env=env(home),
        timeout=120,
    )


def test_install_claude_code_finds_claude_skills_for_the_hook(
    project: Path, home: Path, make_skill: Make
) -> None:
    claude_skills(project, make_skill)
    proc = skillrt(project, home, "install", "claude-code", "--json",
                   "--command", f"{sys.executable} -m skillrt")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["skill_count"] == 2 and "warnings" not in report
    # The routing index the hook reads is built now: the first prompt is not spent on it.
    assert report["warmed"]["ok"] and report["warmed"]["skills"] == 2
    assert list((home / ".cache" / "skillrt" / "models").glob("*.onnx"))
    cache = Path(os.environ["XDG_CACHE_HOME"]) / "skillrt"
    assert list(cache.rglob("*.npz"))  # the saved router index, in the user's cache
    assert sorted(p.name for p in project.iterdir()) == [".claude"]  # nothing else here
    listed = json.loads(skillrt(project, home, "list", "--json").stdout)["skills"]
    assert sorted(s["name"] for s in listed) == ["release-notes", "sql-review"]
    # the CLI's own state folder is one git ignores
    assert (project / ".skillrt" / ".gitignore").read_text().splitlines()[-1] == "*"
    again = skillrt(project, home, "install", "claude-code", "--json", "--no-warm",
                    "--command", f"{sys.executable} -m skillrt")  # fmt: skip
    assert again.returncode == 0 and "warmed" not in json.loads(again.stdout)
    command = hook_command(project / ".claude" / "settings.json")
    assert "--client-roots" not in command and "--no-client-roots" not in command
    out = run_hook(command, project, home, "please review this sql query", "--no-daemon")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["systemMessage"] == "Using skill: sql-review"


def test_install_says_how_many_skills_and_warns_at_zero(project: Path, home: Path) -> None:
    proc = skillrt(project, home, "install", "claude-code")
    assert proc.returncode == 0
    assert "the hook will see 0 skills" in proc.stdout
    assert "warning [NO_SKILLS]" in proc.stderr
    report = json.loads(skillrt(project, home, "install", "claude-code", "--json").stdout)
    assert report["skill_count"] == 0
    assert [w["code"] for w in report["warnings"]] == ["NO_SKILLS"]
    assert ".claude/skills" in report["warnings"][0]["message"]


def test_install_counts_user_scope_claude_skills(
    project: Path, home: Path, make_skill: Make
) -> None:
    make_skill("mine", root=home / ".claude" / "skills")
    report = json.loads(skillrt(project, home, "install", "claude-code", "--user", "--json").stdout)
    assert report["skill_count"] == 1


def test_every_client_folder_is_searched_and_no_client_roots_turns_them_off(
    project: Path, home: Path, make_skill: Make
) -> None:
    make_skill("codex-thing", root=project / ".codex" / "skills")
    make_skill("claude-thing", root=project / ".claude" / "skills")
    make_skill("gemini-thing", root=home / ".gemini" / "skills")
    proc = skillrt(project, home, "install", "codex", "--no-trust", "--no-warm", "--json")
    assert json.loads(proc.stdout)["skill_count"] == 3
    proc = skillrt(project, home, "install", "codex", "--no-trust", "--no-warm", "--json",
                   "--no-client-roots")  # fmt: skip
    assert json.loads(proc.stdout)["skill_count"] == 0
    assert "--no-client-roots" in hook_command(project / ".codex" / "hooks.json")


def test_uninstall_says_nothing_about_skills(project: Path, home: Path) -> None:
    skillrt(project, home, "install", "claude-code")
    proc = skillrt(project, home, "install", "claude-code", "--uninstall", "--json")
    report = json.loads(proc.stdout)
    assert "skill_count" not in report and "warnings" not in report


def test_list_points_at_folders_with_skills_it_does_not_search(
    project: Path, home: Path, make_skill: Make
) -> None:
    claude_skills(project, make_skill)
    make_skill("codex-thing", root=home / ".codex" / "skills")
    proc = skillrt(project, home, "list", "--no-client-roots")
    assert "0 skills" in proc.stdout
    assert "2 skills in .claude/skills are not searched" in proc.stdout
    assert "discovery.claude_roots" in proc.stdout
    data = json.loads(skillrt(project, home, "list", "--json", "--no-client-roots").stdout)
    unsearched = [d for d in data["diagnostics"] if d["code"] == "UNSEARCHED_SKILLS"]
    assert {d["path"] for d in unsearched} == {
        str(project / ".claude" / "skills"),
        str(home / ".codex" / "skills"),
    }
    config = "discovery:\n  client_roots: false\n  claude_roots: true\n"
    (project / "skillrt.yaml").write_text(config)
    data = json.loads(skillrt(project, home, "list", "--json").stdout)
    assert len(data["skills"]) == 2
    assert [d["path"] for d in data["diagnostics"] if d["code"] == "UNSEARCHED_SKILLS"] == [
        str(home / ".codex" / "skills")
    ]


def test_a_daemon_without_the_client_roots_is_not_asked(
    project: Path, home: Path, make_skill: Make
) -> None:
    """The hook's skills differ from such a daemon's: it answers in-process instead."""
    claude_skills(project, make_skill)
    skillrt(project, home, "install", "claude-code", "--command", f"{sys.executable} -m skillrt")
    command = hook_command(project / ".claude" / "settings.json")
    daemon = subprocess.Popen(
        [sys.executable, "-m", "skillrt", "serve", "--poll", "0", "--no-client-roots"],
        cwd=project, env=env(home), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert daemon.stderr is not None
        event = json.loads(daemon.stderr.readline() or "{}")
        assert event.get("event") == "listening", event
        threading.Thread(target=daemon.stderr.read, daemon=True).start()
        out = run_hook(command, project, home, "please review this sql query")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["systemMessage"] == "Using skill: sql-review"
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(30)


def test_without_client_folders_any_daemon_of_these_skills_answers(
    project: Path, home: Path, make_skill: Make
) -> None:
    """Client folders cost a daemon match only when one exists."""
    make_skill("sql-review", description="Review SQL queries for injection.",
               root=project / "skills", triggers=["review this sql query"])  # fmt: skip
    skillrt(project, home, "install", "claude-code", "--command", f"{sys.executable} -m skillrt")
    command = hook_command(project / ".claude" / "settings.json")
    daemon = subprocess.Popen(
        [sys.executable, "-m", "skillrt", "serve", "--poll", "0", "--no-client-roots"],
        cwd=project, env=env(home), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert daemon.stderr is not None
        event = json.loads(daemon.stderr.readline() or "{}")
        assert event.get("event") == "listening", event
        threading.Thread(target=daemon.stderr.read, daemon=True).start()
        out = run_hook(command, project, home, "please review this sql query")
        assert json.loads(out.stdout)["systemMessage"] == "Using skill: sql-review"
        log = project / ".skillrt" / "hook.log"
        assert not log.exists() or "in-process" not in log.read_text()
        (project / ".claude" / "skills").mkdir()  # now the daemon lacks a client folder
        out = run_hook(command, project, home, "please review this sql query")
        assert json.loads(out.stdout)["systemMessage"] == "Using skill: sql-review"
        assert "in-process" in log.read_text()
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(30)


def test_the_index_built_at_install_serves_a_repo_never_seen(
    tmp_path: Path, home: Path, make_skill: Make
) -> None:
    """A user-level install builds the routing index once, in the user's cache folder
    every project shares: the first prompt in another repository reads it, embeds
    nothing, and writes nothing there (issue 27: cold prompts were lost)."""
    import sqlite3

    make_skill("sql-review", description="Review SQL queries for injection and slow plans.",
               root=home / ".agents" / "skills", triggers=["review this sql query"])  # fmt: skip
    make_skill("release-notes", description="Write release notes from the changelog.",
               root=home / ".agents" / "skills")  # fmt: skip
    installed = skillrt(home, home, "install", "claude-code", "--user", "--json",
                        "--command", f"{sys.executable} -m skillrt")  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    assert json.loads(installed.stdout)["warmed"]["ok"]
    shared = Path(os.environ["XDG_CACHE_HOME"]) / "skillrt" / "shared" / "cache.db"

    def cached() -> int:
        with sqlite3.connect(shared) as conn:
            tables = [
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
            ]
            return sum(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables)

    before = cached()
    assert before > 0
    repo = tmp_path / "never-seen"
    (repo / ".git").mkdir(parents=True)
    command = hook_command(home / ".claude" / "settings.json")
    out = run_hook(command, repo, home, "please review this sql query", "--no-daemon")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["systemMessage"] == "Using skill: sql-review"
    assert cached() == before  # nothing was embedded or parsed again
    assert sorted(p.name for p in repo.iterdir()) == [".git"]
