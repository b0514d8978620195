"""Every hostile case of the fixture tree, through the public load_resource.

Each is refused with its stable code, and no byte from outside the skill's real folder
ever comes back (the SECRET marker is checked in texts and in error messages). The whole
table runs twice: with the descriptor-relative walk and with the path fallback.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import skillrt.loading.paths as paths_mod
from skillrt.config import LoaderLimits
from skillrt.errors import LoadError, SkillrtError
from skillrt.loading import load_resource, load_skill_body
from skillrt.loading.paths import open_in_jail, real_jail

from .conftest import SECRET, Hostile


@pytest.fixture(params=["fd-walk", "path-walk"])
def walk_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param == "path-walk":
        monkeypatch.setattr(paths_mod, "FD_WALK", False)
    elif not paths_mod.FD_WALK:
        pytest.skip("no descriptor-relative calls on this platform")
    yield request.param


REFUSALS = [
    # (relative path, code, reason)
    ("references/link_out.md", "PathTraversalBlocked", "symlink_escape"),
    ("references/abs_out.md", "PathTraversalBlocked", "symlink_escape"),
    ("references/dir_out/SECRET.md", "PathTraversalBlocked", "symlink_escape"),
    ("deep/a/b/c/SECRET.md", "PathTraversalBlocked", "symlink_escape"),
    ("deep/a/b/c/dir/SECRET.md", "PathTraversalBlocked", "symlink_escape"),
    ("deep/a/b/hop.md", "PathTraversalBlocked", "symlink_escape"),
    ("sibling_link.md", "PathTraversalBlocked", "symlink_escape"),
    ("loop_a", "PathTraversalBlocked", "symlink_loop"),
    ("references/../../../outside/SECRET.md", "PathTraversalBlocked", "dotdot"),
    ("../sibling/SECRET.md", "PathTraversalBlocked", "dotdot"),
    ("%2e%2e/sibling/SECRET.md", "PathTraversalBlocked", "encoded"),
    ("%252e%252e/sibling/SECRET.md", "PathTraversalBlocked", "encoded"),
    ("..%2fsibling%2fSECRET.md", "PathTraversalBlocked", "encoded"),
    ("..\\sibling\\SECRET.md", "PathTraversalBlocked", "backslash"),
    ("\\\\server\\share\\SECRET.md", "PathTraversalBlocked", "backslash"),
    ("C:\\outside\\SECRET.md", "PathTraversalBlocked", "backslash"),
    ("C:SECRET.md", "PathTraversalBlocked", "drive"),
    ("references/guide.md\x00.md", "PathTraversalBlocked", "nul"),
    ("~/SECRET.md", "PathTraversalBlocked", "tilde"),
    ("references/fifo.md", "DisallowedFileType", "fifo"),
    ("references/socket.md", "DisallowedFileType", "socket"),
    ("references", "DisallowedFileType", "directory"),
    ("references/dir_out", "PathTraversalBlocked", "symlink_escape"),
    ("references/binary.md", "DisallowedFileType", "binary"),
    ("references/latin1.md", "IOError", "encoding"),
    ("references/huge.md", "FileTooLarge", None),
    ("references/script.sh", "DisallowedFileType", "extension"),
    ("scripts/run.sh", "DisallowedFileType", "extension"),
    ("references/*.md", "IOError", "not_found"),  # no glob: a literal name that is absent
    ("references/gu?de.md", "IOError", "not_found"),
    ("references/missing.md", "IOError", "not_found"),
    ("references/guide.md/x.md", "IOError", "not_a_directory"),
]


@pytest.mark.parametrize(("path", "code", "reason"), REFUSALS)
def test_hostile_paths_refused(
    hostile: Hostile, walk_mode: str, path: str, code: str, reason: str | None
) -> None:
    with pytest.raises(LoadError) as info:
        load_resource(hostile.skill, path)
    err = info.value
    assert err.code == code, err.to_dict()
    if reason is not None:
        assert err.context.get("reason") == reason, err.to_dict()
    assert err.context["skill"] == "hostile"
    assert SECRET not in json.dumps(err.to_dict())


def test_absolute_path_refused(hostile: Hostile) -> None:
    with pytest.raises(LoadError) as info:
        load_resource(hostile.skill, str(hostile.outside / "SECRET.md"))
    assert info.value.code == "PathTraversalBlocked"
    assert info.value.context["reason"] == "absolute"


def test_symlink_loops_end_without_hanging(hostile: Hostile, walk_mode: str) -> None:
    limits = LoaderLimits(allowed_extensions=(".md", ""))
    for path in ("loop_a", "self", "self/x.md"):
        with pytest.raises(LoadError) as info:
            load_resource(hostile.skill, path, limits=limits)
        assert info.value.code == "PathTraversalBlocked"
        assert info.value.context["reason"] == "symlink_loop"


def test_device_refused(hostile: Hostile, walk_mode: str) -> None:
    if not hostile.device:
        pytest.skip("mknod needs privileges")
    with pytest.raises(LoadError) as info:
        load_resource(hostile.skill, "references/device.md")
    assert info.value.code == "DisallowedFileType"
    assert info.value.context["reason"] == "device"


@pytest.mark.parametrize(
    "path",
    [
        "references/guide.md",
        "references/inside_link.md",
        "references/abs_inside.md",
        "references/up_and_back.md",
        "./references//guide.md",
    ],
)
def test_links_that_stay_inside_are_fine(hostile: Hostile, walk_mode: str, path: str) -> None:
    result = load_resource(hostile.skill, path, "## Security")
    assert result.text == "## Security\n\nBe careful.\n"
    assert result.report.path == str(hostile.jail / "references" / "guide.md")
    assert result.report.relative_path == path


def test_skill_reached_through_a_symlink_is_jailed_to_its_real_folder(hostile: Hostile) -> None:
    assert hostile.skill.path == hostile.link
    assert real_jail(hostile.skill.path) == hostile.jail
    # ../sibling is inside the logical parent of the link's target, not inside the jail.
    with pytest.raises(LoadError):
        load_resource(hostile.skill, "sibling_link.md")
    body = load_skill_body(hostile.skill)
    assert body.report.path == str(hostile.jail / "SKILL.md")


def test_extension_allowlist_is_case_insensitive_and_configurable(hostile: Hostile) -> None:
    assert load_resource(hostile.skill, "references/NOTES.MD").text == "# Notes\n"
    limits = LoaderLimits(allowed_extensions=("SH",))
    assert load_resource(hostile.skill, "scripts/run.sh", limits=limits).text == "echo run\n"
    with pytest.raises(LoadError) as info:
        load_resource(hostile.skill, "references/guide.md", limits=limits)
    assert info.value.code == "DisallowedFileType"


def test_link_to_an_allowed_name_with_a_disallowed_target_is_refused(hostile: Hostile) -> None:
    os.symlink("script.sh", hostile.jail / "references" / "disguised.md")
    with pytest.raises(LoadError) as info:
        load_resource(hostile.skill, "references/disguised.md")
    assert info.value.code == "DisallowedFileType"


def test_glob_characters_are_literal(hostile: Hostile) -> None:
    result = load_resource(hostile.skill, "references/star*.md")
    assert result.text == "# Literal star\n"
    with pytest.raises(LoadError) as info:
        load_resource(hostile.skill, "references/*.md")
    assert "not expanded" in info.value.message


def test_size_limit_is_checked_before_reading(
    hostile: Hostile, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[int] = []
    real_read = os.read

    def counting_read(fd: int, n: int) -> bytes:
        reads.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", counting_read)
    with pytest.raises(LoadError) as info:
        load_resource(hostile.skill, "references/huge.md")
    assert info.value.code == "FileTooLarge"
    assert info.value.context["limit"] == 2_000_000
    assert info.value.context["size"] == 2_000_001
    assert reads == []  # refused from fstat, not by reading 2 MB


def test_a_file_that_grows_while_read_is_refused(hostile: Hostile) -> None:
    path = hostile.jail / "references" / "growing.md"
    path.write_text("x" * 100, encoding="utf-8")
    jail = real_jail(hostile.skill.path)
    opened = open_in_jail(jail, ("references", "growing.md"), shown="growing.md")
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("y" * 200)  # grows after the size check, before the read
        from skillrt.loading.paths import read_limited

        with pytest.raises(LoadError) as info:
            read_limited(opened, 150, shown="growing.md")
        assert info.value.code == "FileTooLarge"
    finally:
        os.close(opened.fd)


def test_swapped_leaf_is_detected(hostile: Hostile, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file swapped for a link to the secret between the check and the open."""
    target = hostile.jail / "references" / "swap.md"
    target.write_text("# harmless\n", encoding="utf-8")
    real_open = os.open
    swapped = False

    def racing_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        nonlocal swapped
        if path == "swap.md" and not flags & os.O_DIRECTORY and not swapped:
            swapped = True
            target.unlink()
            os.symlink(hostile.outside / "SECRET.md", target)
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", racing_open)
    with pytest.raises(LoadError) as info:
        load_resource(hostile.skill, "references/swap.md")
    assert swapped
    assert info.value.code == "PathTraversalBlocked"
    assert info.value.context["reason"] == "race"


def test_swapped_leaf_for_another_file_is_detected(
    hostile: Hostile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replaced by a hard-linked copy of something else: the inode differs."""
    target = hostile.jail / "references" / "swap2.md"
    target.write_text("# harmless\n", encoding="utf-8")
    other = hostile.jail / "references" / "other.md"
    other.write_text("# other\n", encoding="utf-8")
    real_open = os.open
    swapped = False

    def racing_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        nonlocal swapped
        if path == "swap2.md" and not swapped:
            swapped = True
            os.replace(other, target)
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", racing_open)
    with pytest.raises(LoadError) as info:
        load_resource(hostile.skill, "references/swap2.md")
    assert info.value.context["reason"] == "race"


def test_swapped_directory_cannot_redirect_the_walk(
    hostile: Hostile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder replaced by a link out between its check and the next step."""
    if not paths_mod.FD_WALK:
        pytest.skip("needs descriptor-relative calls")
    sub = hostile.jail / "references" / "sub"
    sub.mkdir()
    (sub / "SECRET.md").write_text("# inside copy\n", encoding="utf-8")
    real_stat = os.stat
    swapped = False

    def racing_stat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        nonlocal swapped
        result = real_stat(path, *args, **kwargs)  # type: ignore[arg-type]
        if path == "sub" and not swapped:
            swapped = True
            os.rename(sub, hostile.jail / "references" / "sub_moved")
            os.symlink(hostile.outside, sub)
        return result

    monkeypatch.setattr(os, "stat", racing_stat)
    with pytest.raises(LoadError) as info:
        load_resource(hostile.skill, "references/sub/SECRET.md")
    assert swapped
    assert info.value.code == "PathTraversalBlocked"
    assert info.value.context["reason"] == "race"


def test_path_walk_rechecks_folders_after_the_open(
    hostile: Hostile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fallback walk: a folder swapped for a link during the walk is caught afterwards."""
    monkeypatch.setattr(paths_mod, "FD_WALK", False)
    sub = hostile.jail / "references" / "sub"
    sub.mkdir()
    (sub / "SECRET.md").write_text("# inside copy\n", encoding="utf-8")
    (hostile.outside / "SECRET.md").chmod(0o644)
    real_lstat = os.lstat
    swapped = False

    def racing_lstat(path: object, *args: object, **kwargs: object) -> os.stat_result:
        nonlocal swapped
        result = real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]
        if str(path) == str(sub) and not swapped:
            swapped = True
            os.rename(sub, hostile.jail / "references" / "sub_moved")
            os.symlink(hostile.outside, sub)
        return result

    monkeypatch.setattr(os, "lstat", racing_lstat)
    with pytest.raises(LoadError) as info:
        load_resource(hostile.skill, "references/sub/SECRET.md")
    assert swapped
    assert info.value.context["reason"] == "race"


def test_fifo_swapped_in_never_blocks(hostile: Hostile, monkeypatch: pytest.MonkeyPatch) -> None:
    """If a FIFO replaces the file after the check, the non-blocking open returns."""
    target = hostile.jail / "references" / "pipe.md"
    target.write_text("# text\n", encoding="utf-8")
    real_open = os.open

    def racing_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if path == "pipe.md" and target.is_file():
            target.unlink()
            os.mkfifo(target)
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", racing_open)
    outcome: list[object] = []

    def run() -> None:
        try:
            load_resource(hostile.skill, "references/pipe.md")
        except SkillrtError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=30)
    if worker.is_alive():  # unblock the reader before failing, so no thread lingers
        fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        time.sleep(0.1)
        pytest.fail("opening a swapped-in FIFO blocked")
    assert outcome and getattr(outcome[0], "code", None) == "PathTraversalBlocked"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_unreadable_file_is_an_io_error(hostile: Hostile) -> None:
    path = hostile.jail / "references" / "locked.md"
    path.write_text("# locked\n", encoding="utf-8")
    path.chmod(0)
    with pytest.raises(LoadError) as info:
        load_resource(hostile.skill, "references/locked.md")
    assert info.value.code == "IOError"
    assert info.value.context["reason"] == "permission_denied"


def test_secret_never_in_any_output(hostile: Hostile, walk_mode: str) -> None:
    """Sweep every entry of the tree (and a few crafted paths): nothing outside leaks."""
    candidates = [
        str(p.relative_to(hostile.jail)) for p in hostile.jail.rglob("*") if "huge" not in p.name
    ]
    candidates += [r[0] for r in REFUSALS]
    limits = LoaderLimits(allowed_extensions=(".md", ".txt", ".sh", ""))
    for rel in candidates:
        for hint in (None, "SECRET", "## Security"):
            try:
                result = load_resource(hostile.skill, rel, hint, limits)
            except SkillrtError as exc:
                assert SECRET not in json.dumps(exc.to_dict()), rel
                continue
            assert SECRET not in result.text, rel
            assert Path(result.report.path).is_relative_to(hostile.jail), rel
