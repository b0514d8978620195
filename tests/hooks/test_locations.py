"""Where the hook works: the project a prompt belongs to, and a state folder outside
the repository (issue 27)."""

from __future__ import annotations

from pathlib import Path

from skillrt.hooks.locations import (
    cache_home,
    default_state_dir,
    hook_state_dir,
    project_dir,
    project_key,
)
from skillrt.statedir import make_state_dir


def test_the_project_is_the_git_root_above_a_subfolder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    (repo / ".git").mkdir()
    env = {"HOME": str(tmp_path)}
    assert project_dir(str(sub), env) == str(repo)
    assert project_dir(str(repo), env) == str(repo)
    # Claude Code names its project
    assert project_dir(str(sub), {**env, "CLAUDE_PROJECT_DIR": str(sub)}) == str(sub)
    # no marker up to the home folder: the folder itself
    lone = tmp_path / "lone" / "x"
    lone.mkdir(parents=True)
    assert project_dir(str(lone), env) == str(lone)


def test_the_state_lives_in_the_user_cache_unless_the_project_has_its_own(
    tmp_path: Path,
) -> None:
    project = tmp_path / "my project"
    project.mkdir()
    env = {"HOME": str(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    state = Path(default_state_dir(str(project), env))
    assert state.parent == tmp_path / "xdg" / "skillrt" / "projects"
    assert state.name.startswith("my_project-") and not state.is_relative_to(project)
    assert cache_home({"HOME": "/h"}) == "/h/.cache/skillrt"
    assert cache_home({"HOME": "/h", "XDG_CACHE_HOME": "relative"}) == "/h/.cache/skillrt"
    (project / ".skillrt").mkdir()
    assert default_state_dir(str(project), env) == str(project / ".skillrt")
    assert hook_state_dir(str(project), "st", None, env) == str(project / "st")


def test_a_config_file_names_the_state_or_leaves_the_default(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    config = project / "skillrt.yaml"
    config.write_text("routing:\n  threshold: 0.6\n")
    assert hook_state_dir(str(project), None, str(config), env) == default_state_dir(
        str(project), env
    )
    config.write_text("state_dir: .mystate\n")
    assert hook_state_dir(str(project), None, str(config), env) == str(project / ".mystate")


def test_keys_are_distinct_and_short(tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "app", tmp_path / "b" / "app"
    assert project_key(str(a)) != project_key(str(b))
    assert len(project_key(str(tmp_path / ("x" * 300)))) <= 24 + 1 + 16


def test_a_new_state_folder_is_one_git_ignores(tmp_path: Path) -> None:
    folder = tmp_path / "proj" / ".skillrt"
    make_state_dir(folder)
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    existing = tmp_path / "mine"
    existing.mkdir()
    make_state_dir(existing)
    assert not (existing / ".gitignore").exists()  # a folder it did not create: untouched
