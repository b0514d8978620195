"""Files swapped under discovery never block it (issue 22): a FIFO put in place of a
SKILL.md or a plugin manifest after the walk looked at it is refused, not waited on."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from skillrt.config import DiscoveryConfig, RootConfig
from skillrt.fileopen import NotRegularFile, open_regular
from skillrt.skills.model import BrokenSkill
from skillrt.skills.reader import read_skill
from skillrt.skills.registry import SkillRegistry
from skillrt.store import Store, open_location

Make = Callable[..., Path]


def unblock(fifo: Path) -> None:
    """Give a blocked reader its writer, so no thread lingers after a failure."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return
    os.close(fd)
    time.sleep(0.1)


def finishes(fn: Callable[[], Any], fifo: Path) -> Any:
    """``fn()``'s result; fails the test (after unblocking it) if it hangs on ``fifo``."""
    out: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=30)  # a guard against a hang, not a performance bound
    if worker.is_alive():
        unblock(fifo)
        pytest.fail(f"reading {fifo} blocked on a FIFO")
    if errors:
        raise errors[0]
    return out[0]


def swap_for_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


@pytest.fixture
def racing_lstat(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """Swap a path for a FIFO right after the walk's ``lstat`` of it (once per path
    put in the yielded list): the check-then-open race, made to happen every time."""
    targets: list[Path] = []
    real_lstat = os.lstat

    def lstat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        result = real_lstat(path, *args, **kwargs)
        for target in list(targets):
            if os.fspath(path) == str(target):
                targets.remove(target)
                swap_for_fifo(target)
        return result

    monkeypatch.setattr(os, "lstat", lstat)
    yield targets


def discover(root: Path, store: Store | None = None) -> SkillRegistry:
    cfg = DiscoveryConfig(conventional_roots=False)
    return SkillRegistry.discover(
        cfg, project_dir=Path("/nonexistent"), store=store, explicit_roots=(RootConfig(root),)
    )


def test_read_skill_refuses_a_fifo_swapped_in_after_the_stat(
    tmp_path: Path, make_skill: Make
) -> None:
    folder = make_skill("swapped")
    skill_md = folder / "SKILL.md"
    checked = os.stat(skill_md)  # what the walk saw: a regular file
    swap_for_fifo(skill_md)
    item = finishes(lambda: read_skill(folder, skill_file=skill_md, stat_result=checked), skill_md)
    assert isinstance(item, BrokenSkill)
    assert [d.code for d in item.diagnostics] == ["SKILL_FILE_NOT_REGULAR"]


def test_read_skill_refuses_a_file_replaced_after_the_stat(
    tmp_path: Path, make_skill: Make
) -> None:
    folder = make_skill("replaced")
    skill_md = folder / "SKILL.md"
    checked = os.stat(skill_md)
    (folder / "other.md").write_text("---\nname: other\ndescription: d\n---\n", encoding="utf-8")
    os.replace(folder / "other.md", skill_md)  # another inode now: not the file checked
    item = read_skill(folder, skill_file=skill_md, stat_result=checked)
    assert isinstance(item, BrokenSkill)
    assert [d.code for d in item.diagnostics] == ["SKILL_FILE_CHANGED"]


def test_discovery_with_a_fifo_swapped_in_lists_the_rest(
    skills_root: Path, make_skill: Make, racing_lstat: list[Path]
) -> None:
    make_skill("good", root=skills_root)
    victim = make_skill("victim", root=skills_root) / "SKILL.md"
    racing_lstat.append(victim)
    reg = finishes(lambda: discover(skills_root), victim)
    assert [s.name for s in reg.skills()] == ["good"]
    assert [d.code for b in reg.broken for d in b.diagnostics] == ["SKILL_FILE_NOT_REGULAR"]


def test_cached_discovery_with_a_fifo_swapped_in_never_blocks(
    tmp_path: Path, skills_root: Path, make_skill: Make, racing_lstat: list[Path]
) -> None:
    """A fresh (racy) cache row is checked against the file's bytes: that read too."""
    make_skill("good", root=skills_root)
    victim = make_skill("victim", root=skills_root) / "SKILL.md"
    store = open_location(tmp_path / "state" / "state.db")
    try:
        assert len(discover(skills_root, store)) == 2  # rows written, still racy
        racing_lstat.append(victim)
        reg = finishes(lambda: discover(skills_root, store), victim)
        assert [s.name for s in reg.skills()] == ["good"]
        os.unlink(victim)
        (victim.parent / "SKILL.md").write_text(
            "---\nname: victim\ndescription: back again\n---\n", encoding="utf-8"
        )
        # the refusal was not cached: the skill is listed again once it is a file
        assert sorted(s.name for s in discover(skills_root, store).skills()) == ["good", "victim"]
    finally:
        store.close()


def test_a_fifo_plugin_manifest_is_reported_not_waited_on(
    skills_root: Path, make_skill: Make
) -> None:
    plugin = skills_root / "plugin"
    make_skill("inside", root=plugin / "skills")
    (plugin / ".claude-plugin").mkdir()
    manifest = plugin / ".claude-plugin" / "plugin.json"
    os.mkfifo(manifest)
    reg = finishes(lambda: discover(skills_root), manifest)
    assert [s.qualified_name for s in reg.skills()] == ["inside"]
    assert [d.code for d in reg.diagnostics] == ["PLUGIN_MANIFEST_INVALID"]


def test_open_regular_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFile, match="FIFO"):
        finishes(lambda: open_regular(fifo), fifo)
    with pytest.raises(NotRegularFile, match="directory"):
        open_regular(tmp_path)
    (tmp_path / "file").write_bytes(b"x")
    (tmp_path / "link").symlink_to(tmp_path / "file")
    with pytest.raises(OSError):
        open_regular(tmp_path / "link", follow_symlinks=False)
    fh, st = open_regular(tmp_path / "link")
    with fh:
        assert fh.read() == b"x" and st.st_size == 1


def test_mcp_digest_of_a_file_swapped_for_a_fifo_is_skipped(tmp_path: Path) -> None:
    from skillrt.mcp.files import DigestCache

    path = tmp_path / "notes.md"
    path.write_text("# notes\n", encoding="utf-8")
    checked = os.stat(path, follow_symlinks=False)
    swap_for_fifo(path)
    assert finishes(lambda: DigestCache().digest(path, checked), path) is None


def test_mcp_frontmatter_of_a_skill_swapped_for_a_fifo_is_its_name(make_skill: Make) -> None:
    from skillrt.mcp.publish import _read_frontmatter

    folder = make_skill("published", description="Use when publishing.")
    item = read_skill(folder)
    assert not isinstance(item, BrokenSkill)
    swap_for_fifo(folder / "SKILL.md")
    data = finishes(lambda: _read_frontmatter(item), folder / "SKILL.md")
    assert data == {"name": "published", "description": "Use when publishing."}
