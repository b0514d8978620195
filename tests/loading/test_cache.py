"""The in-process content cache never serves stale or out-of-jail content."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from skillrt.config import LoaderLimits
from skillrt.errors import LoadError
from skillrt.loading import load_resource
from skillrt.loading.cache import MIN_CACHED_BYTES, CachedText, ContentCache, clear_caches
from skillrt.skills.model import Skill
from skillrt.skills.reader import read_skill

BIG = "# Big\n\n## A\n\n" + "alpha " * (MIN_CACHED_BYTES // 5) + "\n\n## B\n\nbeta\n"


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    clear_caches()
    yield
    clear_caches()


@pytest.fixture
def big_skill(make_skill: Callable[..., Path]) -> Skill:
    skill = read_skill(make_skill("cached", files={"references/big.md": BIG}))
    assert isinstance(skill, Skill)
    return skill


def test_second_load_is_served_from_the_cache(big_skill: Skill) -> None:
    first = load_resource(big_skill, "references/big.md", "## B")
    second = load_resource(big_skill, "references/big.md", "## B")
    assert first.report.cached is False and second.report.cached is True
    assert second.text == first.text == "## B\n\nbeta\n"
    assert second.report.sha256 == first.report.sha256
    assert second.report.bytes_read == first.report.bytes_read == len(BIG.encode())


def test_small_files_are_always_read(make_skill: Callable[..., Path]) -> None:
    skill = read_skill(make_skill("small", files={"references/s.md": "# S\n"}))
    assert isinstance(skill, Skill)
    load_resource(skill, "references/s.md")
    assert load_resource(skill, "references/s.md").report.cached is False


def test_same_size_rewrite_is_seen(big_skill: Skill) -> None:
    load_resource(big_skill, "references/big.md")
    path = big_skill.path / "references" / "big.md"
    changed = BIG.replace("beta", "gamm")  # same size, same inode
    st = path.stat()
    with open(path, "r+", encoding="utf-8") as fh:
        fh.write(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # even with mtime put back
    r = load_resource(big_skill, "references/big.md", "## B")
    assert r.text == "## B\n\ngamm\n" and r.report.cached is False


def test_replaced_file_is_seen(big_skill: Skill) -> None:
    load_resource(big_skill, "references/big.md")
    path = big_skill.path / "references" / "big.md"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(BIG.replace("beta", "delta"), encoding="utf-8")
    os.replace(tmp, path)
    assert "delta" in load_resource(big_skill, "references/big.md", "## B").text


def test_cache_never_bypasses_the_jail(big_skill: Skill, tmp_path: Path) -> None:
    load_resource(big_skill, "references/big.md")
    path = big_skill.path / "references" / "big.md"
    outside = tmp_path / "outside.md"
    os.replace(path, outside)  # the very same inode, now outside the skill
    os.symlink(outside, path)
    with pytest.raises(LoadError) as info:
        load_resource(big_skill, "references/big.md")
    assert info.value.code == "PathTraversalBlocked"


def test_limits_still_apply_to_cached_content(big_skill: Skill) -> None:
    load_resource(big_skill, "references/big.md")
    with pytest.raises(LoadError) as info:
        load_resource(
            big_skill, "references/big.md", limits=LoaderLimits(max_resource_file_bytes=100)
        )
    assert info.value.code == "FileTooLarge"


def test_lru_is_bounded() -> None:
    cache = ContentCache(max_bytes=3 * MIN_CACHED_BYTES)
    for i in range(5):
        cache.put((0, i, 0, 0, 0), CachedText("s", "t", MIN_CACHED_BYTES))
    assert cache.get((0, 0, 0, 0, 0)) is None and cache.get((0, 1, 0, 0, 0)) is None
    assert cache.get((0, 4, 0, 0, 0)) is not None
    cache.put((0, 9, 0, 0, 0), CachedText("s", "t", 10 * MIN_CACHED_BYTES))  # over budget
    assert cache.get((0, 9, 0, 0, 0)) is None
