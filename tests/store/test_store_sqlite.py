"""The SQLite state store: versioned schema, WAL, atomic transactions, threads."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from skillrt.errors import StoreError
from skillrt.store import MEMORY, Store, open_location, skill_state
from skillrt.store.schema import MIGRATIONS, latest_version


def tables(store: Store) -> set[str]:
    rows = store.connection().execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {r[0] for r in rows}


def test_fresh_store_is_migrated_to_the_latest_version(tmp_path: Path) -> None:
    store = open_location(tmp_path / "deep" / "state.db")
    assert store.schema_version() == latest_version()
    assert {"skill_state", "index_cache"} <= tables(store)
    assert (tmp_path / "deep" / "state.db").is_file()


def test_migrations_are_ordered_and_numbered_from_one() -> None:
    versions = list(MIGRATIONS)
    assert versions == sorted(versions) and versions[0] == 1
    assert all(isinstance(summary, str) and stmts for summary, stmts in MIGRATIONS.values())


def test_wal_and_busy_timeout(tmp_path: Path) -> None:
    store = open_location(tmp_path / "s.db", busy_timeout_ms=1234)
    conn = store.connection()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 1234


def test_old_database_applies_only_newer_migrations(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for statement in MIGRATIONS[1][1]:
        conn.execute(statement)
    conn.execute("INSERT INTO skill_state VALUES ('kept', 0, 1.0)")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    store = open_location(path)
    assert store.schema_version() == latest_version()
    assert skill_state.disabled_names(store) == frozenset({"kept"})


def test_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {latest_version() + 1}")
    conn.close()
    with pytest.raises(StoreError) as exc:
        open_location(path).connection()
    assert exc.value.code == "E_STORE_SCHEMA_TOO_NEW"
    assert "upgrade skillrt" in exc.value.message


def test_transaction_commits_all_or_nothing(tmp_path: Path) -> None:
    store = open_location(tmp_path / "s.db")
    with store.transaction() as conn:
        conn.execute("INSERT INTO skill_state VALUES ('a', 0, 1.0)")
    with pytest.raises(RuntimeError), store.transaction() as conn:
        conn.execute("INSERT INTO skill_state VALUES ('b', 0, 1.0)")
        raise RuntimeError("boom")
    assert skill_state.disabled_names(store) == frozenset({"a"})


def test_memory_store_shares_one_connection() -> None:
    store = open_location(MEMORY)
    skill_state.set_enabled(store, "x", False)
    seen: list[frozenset[str]] = []
    t = threading.Thread(target=lambda: seen.append(skill_state.disabled_names(store)))
    t.start()
    t.join()
    assert seen == [frozenset({"x"})]


def test_threads_have_their_own_connections_and_writes_do_not_collide(tmp_path: Path) -> None:
    store = open_location(tmp_path / "s.db")
    store.connection()
    errors: list[BaseException] = []
    conns: set[int] = set()
    held: list[object] = []  # a finished thread's connection must not free its id for reuse

    def work(i: int) -> None:
        try:
            conn = store.connection()
            held.append(conn)
            conns.add(id(conn))
            for j in range(20):
                skill_state.set_enabled(store, f"s{i}-{j}", j % 2 == 0)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(conns) == 4
    assert len(skill_state.disabled_names(open_location(store.path))) == 40


def test_read_only_store_never_creates_a_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.db"
    with pytest.raises(StoreError):
        open_location(path, read_only=True).connection()
    assert not path.exists()


def test_read_only_store_reads(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    skill_state.set_enabled(open_location(path), "off", False)
    ro = open_location(path, read_only=True)
    assert skill_state.disabled_names(ro) == frozenset({"off"})
    with pytest.raises((StoreError, sqlite3.Error)):
        skill_state.set_enabled(ro, "other", False)


def test_unopenable_path_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError) as exc:
        open_location(blocker / "s.db").connection()
    assert exc.value.to_dict()["code"] == "E_STORE"


def test_enable_state_round_trip(tmp_path: Path) -> None:
    store = open_location(tmp_path / "s.db")
    skill_state.set_enabled(store, "ns:a", False)
    skill_state.set_enabled(store, "b", False)
    skill_state.set_enabled(store, "b", True)
    assert skill_state.disabled_names(store) == frozenset({"ns:a"})


def test_close_and_reopen(tmp_path: Path) -> None:
    store = open_location(tmp_path / "s.db")
    skill_state.set_enabled(store, "a", False)
    store.close()
    assert skill_state.disabled_names(store) == frozenset({"a"})  # reopens lazily
    store.close()
