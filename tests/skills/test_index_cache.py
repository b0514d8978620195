"""The index cache: unchanged skills are never parsed twice; changes are always seen."""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillrt.config import DiscoveryConfig, RootConfig
from skillrt.skills import registry as registry_module
from skillrt.skills.model import Skill
from skillrt.skills.registry import SkillRegistry
from skillrt.store import Store, open_location

Make = Callable[..., Path]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


def discover(root: Path | RootConfig, store: Store | None) -> SkillRegistry:
    explicit = (root if isinstance(root, RootConfig) else RootConfig(root),)
    cfg = DiscoveryConfig(conventional_roots=False)
    return SkillRegistry.discover(cfg, project_dir=Path("/"), store=store, explicit_roots=explicit)


def age(root: Path, seconds: int = 3600) -> None:
    """Backdate every SKILL.md: a real catalogue is not seconds old (see the racy tests)."""
    past = time.time_ns() - seconds * 1_000_000_000
    for path in root.rglob("SKILL.md"):
        os.utime(path, ns=(past, past))


@pytest.fixture
def tree(skills_root: Path, make_skill: Make) -> Path:
    for i in range(5):
        make_skill(f"skill-{i}", root=skills_root)
    make_skill("broken", root=skills_root, raw="no frontmatter\n")
    age(skills_root)
    return skills_root


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = open_location(tmp_path / "state" / "state.db")
    yield s  # type: ignore[misc]
    s.close()


def forbid_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("a skill was parsed on a warm run")

    monkeypatch.setattr(registry_module, "read_skill", refuse)


def test_unchanged_tree_parses_nothing(
    tree: Path, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    cold = discover(tree, store)
    assert (cold.cache_hits, cold.cache_misses) == (0, 6)
    forbid_parsing(monkeypatch)
    other = open_location(store.path)  # a new process would open a new handle
    warm = discover(tree, other)
    other.close()
    assert (warm.cache_hits, warm.cache_misses) == (6, 0)
    assert warm.skills() == cold.skills()
    assert warm.broken == cold.broken


def test_edit_within_one_mtime_tick_is_seen(
    skills_root: Path, store: Store, make_skill: Make
) -> None:
    """Same size, same mtime, other content: only the content hash can tell."""
    folder = make_skill("racy", description="first version AAAA", root=skills_root)
    target = folder / "SKILL.md"
    first = discover(skills_root, store)
    assert first.get("racy").description == "first version AAAA"
    st = target.stat()
    make_skill("racy", description="other version BBBB", root=skills_root)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same tick
    assert target.stat().st_size == st.st_size
    again = discover(skills_root, store)
    assert again.get("racy").description == "other version BBBB"
    assert again.cache_misses == 1


def test_recent_file_is_verified_then_settles(
    skills_root: Path, store: Store, make_skill: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_skill("fresh", root=skills_root)
    make_skill("fresh-broken", root=skills_root, raw="no frontmatter\n")
    cold = discover(skills_root, store)
    assert cold.cache_misses == 2
    verified = discover(skills_root, store)  # verified by hash, not parsed
    assert verified.cache_hits == 1  # the broken one is only cached once settled
    age(skills_root)
    discover(skills_root, store)  # old now: rows rewritten without the racy mark
    records = [r[0] for r in store.connection().execute("SELECT record FROM index_cache")]
    assert len(records) == 2 and not any('"racy"' in r for r in records)
    forbid_parsing(monkeypatch)
    settled = discover(skills_root, store)
    assert (settled.cache_hits, settled.cache_misses) == (2, 0)


def test_cached_skills_equal_freshly_parsed_ones(tmp_path: Path, store: Store) -> None:
    fresh = discover(EXAMPLES, None)
    discover(EXAMPLES, store)
    cached = discover(EXAMPLES, store)
    assert cached.cache_misses == 0 and cached.cache_hits >= 10
    assert cached.skills() == fresh.skills()
    for a, b in zip(cached.skills(), fresh.skills(), strict=True):
        assert a.routing == b.routing and a.metadata == b.metadata and a.extra == b.extra
        a.metadata["scratch"] = "x"  # each cached skill has its own mutable fields
        assert "scratch" not in b.metadata
    assert not any("scratch" in s.metadata for s in discover(EXAMPLES, store).skills())


def test_touched_file_is_parsed_again(tree: Path, store: Store) -> None:
    discover(tree, store)
    target = tree / "skill-2" / "SKILL.md"
    st = target.stat()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    again = discover(tree, store)
    assert (again.cache_hits, again.cache_misses) == (5, 1)
    assert discover(tree, store).cache_misses == 0


def test_edited_file_shows_the_new_content(tree: Path, store: Store, make_skill: Make) -> None:
    discover(tree, store)
    make_skill("skill-1", description="A brand new and longer description.", root=tree)
    again = discover(tree, store)
    assert again.get("skill-1").description == "A brand new and longer description."
    assert again.cache_misses == 1


def test_deleted_skill_disappears_and_its_row_is_pruned(tree: Path, store: Store) -> None:
    discover(tree, store)
    (tree / "skill-3" / "SKILL.md").unlink()
    (tree / "skill-3").rmdir()
    again = discover(tree, store)
    assert "skill-3" not in again
    assert len(again) == 4
    rows = store.connection().execute("SELECT path FROM index_cache").fetchall()
    assert all("skill-3" not in r[0] for r in rows)
    assert len(rows) == 5


def test_rows_of_other_roots_are_kept(tmp_path: Path, store: Store, make_skill: Make) -> None:
    make_skill("a", root=tmp_path / "one")
    make_skill("b", root=tmp_path / "two")
    discover(tmp_path / "one", store)
    discover(tmp_path / "two", store)
    assert discover(tmp_path / "one", store).cache_hits == 1
    assert store.connection().execute("SELECT count(*) FROM index_cache").fetchone()[0] == 2


def test_new_skill_is_found(tree: Path, store: Store, make_skill: Make) -> None:
    discover(tree, store)
    make_skill("newcomer", root=tree)
    again = discover(tree, store)
    assert "newcomer" in again and again.cache_misses == 1
    assert discover(tree, store).cache_misses == 0  # a recent file: verified, not parsed


def test_cached_skill_takes_the_namespace_of_the_root_it_is_found_from(
    tree: Path, store: Store
) -> None:
    discover(tree, store)
    again = discover(RootConfig(tree, namespace="team", scope="user"), store)
    assert again.cache_misses == 0
    skill = again.get("team:skill-0")
    assert (skill.namespace, skill.source, skill.root) == ("team", "user", tree)


def test_corrupt_row_is_parsed_again_and_fixed(tree: Path, store: Store) -> None:
    discover(tree, store)
    with store.transaction() as conn:
        conn.execute("UPDATE index_cache SET record = '{not json' WHERE path LIKE '%skill-0%'")
    again = discover(tree, store)
    assert again.get("skill-0").name == "skill-0"
    assert again.cache_misses == 1
    assert discover(tree, store).cache_misses == 0


def test_rows_of_another_parser_version_are_ignored(tree: Path, store: Store) -> None:
    discover(tree, store)
    with store.transaction() as conn:
        conn.execute("UPDATE index_cache SET parser_version = parser_version - 1")
    assert discover(tree, store).cache_misses == 6


def test_locked_store_still_lists(
    tree: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "locked.db"
    setup = open_location(path)
    setup.connection()  # create and migrate
    setup.close()
    locked = open_location(path, busy_timeout_ms=50)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with caplog.at_level(logging.WARNING):
            reg = discover(tree, locked)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        locked.close()
    assert len(reg) == 5 and len(reg.broken) == 1
    codes = [d.code for d in reg.diagnostics]
    assert codes == ["INDEX_CACHE_UNAVAILABLE"]  # reads work (WAL); the write waits, fails
    assert all(d.severity == "warning" for d in reg.diagnostics)
    assert "index cache" in caplog.text


def test_read_only_store_still_lists(tree: Path, tmp_path: Path) -> None:
    reg = discover(tree, open_location(tmp_path / "missing.db", read_only=True))
    assert len(reg) == 5
    codes = {d.code for d in reg.diagnostics}
    assert codes == {"INDEX_CACHE_UNAVAILABLE", "STATE_UNAVAILABLE"}
    assert all(s.valid for s in reg.skills())


def test_store_path_that_cannot_be_created_still_lists(tree: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    reg = discover(tree, open_location(blocker / "state.db"))
    assert len(reg) == 5
    assert "INDEX_CACHE_UNAVAILABLE" in {d.code for d in reg.diagnostics}


def test_no_store_means_no_cache(tree: Path) -> None:
    reg = discover(tree, None)
    assert (reg.cache_hits, reg.cache_misses) == (0, 6)
    assert reg.diagnostics == ()


def test_content_hash_is_kept_in_the_row(tree: Path, store: Store) -> None:
    reg = discover(tree, store)
    skill: Skill = reg.get("skill-0")
    row = (
        store.connection()
        .execute("SELECT content_hash FROM index_cache WHERE path = ?", (str(skill.skill_file),))
        .fetchone()
    )
    assert row[0] == skill.content_hash and len(skill.content_hash) == 64
