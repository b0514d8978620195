"""Level 1 never reads a body: listing stops reading each SKILL.md at its closing fence."""

from __future__ import annotations

import gc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillrt.config import DiscoveryConfig, RootConfig
from skillrt.fileopen import open_regular
from skillrt.runtime import SkillRuntime
from skillrt.skills.registry import SkillRegistry

Make = Callable[..., Path]
BODY = "# Body\n\n" + ("A line of instructions that nobody should read at Level 1.\n" * 20_000)


class CountingFile:
    """Wraps a binary file and counts the bytes handed out."""

    def __init__(self, fh: Any, counter: dict[str, int], key: str) -> None:
        self._fh, self._counter, self._key = fh, counter, key

    def read(self, n: int = -1) -> bytes:
        data: bytes = self._fh.read(n)
        self._counter[self._key] = self._counter.get(self._key, 0) + len(data)
        return data

    def __enter__(self) -> CountingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)


@pytest.fixture
def big_skills(skills_root: Path, make_skill: Make) -> list[Path]:
    assert len(BODY) > 1_000_000
    return [make_skill(f"big-{i}", body=BODY, root=skills_root) for i in range(3)]


def discover(root: Path) -> SkillRegistry:
    cfg = DiscoveryConfig(conventional_roots=False)
    return SkillRegistry.discover(cfg, project_dir=root, explicit_roots=(RootConfig(root),))


def test_reader_stops_at_the_closing_fence(
    skills_root: Path, big_skills: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    counter: dict[str, int] = {}

    def counting_open(file: Any, **kwargs: Any) -> Any:
        fh, st = open_regular(file, **kwargs)
        return CountingFile(fh, counter, str(file)), st

    monkeypatch.setattr("skillrt.skills.reader.open_regular", counting_open)
    reg = discover(skills_root)
    assert len(reg) == 3
    assert len(counter) == 3
    for folder in big_skills:
        text = (folder / "SKILL.md").read_bytes()
        frontmatter_end = text.index(b"\n---\n") + len(b"\n---\n")
        read = counter[str(folder / "SKILL.md")]
        # one 4 KiB chunk at most, never the megabyte of body
        assert frontmatter_end <= read <= 4096, read


def _rchar() -> int:
    for line in Path("/proc/thread-self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/thread-self/io")


@pytest.mark.skipif(
    not Path("/proc/thread-self/io").exists(), reason="needs Linux /proc/thread-self/io"
)
def test_listing_reads_kilobytes_not_megabytes(
    tmp_path: Path, skills_root: Path, big_skills: list[Path], make_skill: Make
) -> None:
    """Count every byte the process reads (any API, any module) while listing."""
    warm = tmp_path / "warm"
    make_skill("warm-up", root=warm)
    with SkillRuntime(roots=[warm], persist=False) as rt:
        rt.list()  # imports done, so they do not count below
    on_disk = sum((f / "SKILL.md").stat().st_size for f in big_skills)
    # Finalisers of earlier tests' objects (a SQLite connection closing checkpoints its
    # WAL) must not run inside the measured window.
    gc.collect()
    gc.disable()
    try:
        before = _rchar()
        with SkillRuntime(roots=[skills_root], persist=False) as rt:
            entries = rt.list()
            catalog = rt.catalog()
        read = _rchar() - before
    finally:
        gc.enable()
    assert len(entries) == 3 and "big-0" in catalog.text
    assert on_disk > 3_000_000
    assert read < 64 * 1024, f"read {read} bytes listing skills of {on_disk} bytes"
