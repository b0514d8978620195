"""The Store interface, on both backends: schema, transactions, concurrency, errors.

Every test here runs against a SQLite file and against a fresh schema on a real
PostgreSQL server (skipped, with the reason, when no server is given).
"""

from __future__ import annotations

import dataclasses
import sqlite3
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import StoreSpec

from skillrt.errors import StoreConflict, StoreDriverMissing, StoreError, StoreSchemaTooNew
from skillrt.store import Store, open_location, skill_state
from skillrt.store.counters import record_execution, skill_stats
from skillrt.store.schema import MIGRATIONS, latest_version, statements
from skillrt.telemetry.events import RouteEvent, list_route_events, write_route_events

TABLES = (
    "skill_state",
    "skill_stats",
    "route_events",
    "route_feedback",
    "routing_configs",
    "executions",
    "fsm_transitions",
    "repair_attempts",
    "patches",
    "workflow_runs",
    "workflow_steps",
    "workflow_phases",
    "workflow_transitions",
)


def event(route_id: str, selected: tuple[str, ...] = ("a",), ts: float = 1.0) -> RouteEvent:
    return RouteEvent(
        route_id=route_id,
        ts=ts,
        surface="test",
        config_id="default",
        query_hash="h",
        query_chars=1,
        query_text=None,
        query_type="single",
        candidate_count=2,
        selected_skills=selected,
        score_breakdown={},
        routing_reason="",
        latency_ms=1.0,
    )


def count(store: Store, table: str) -> int:
    return int(store.connection().execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_store_names_its_backend(store_spec: StoreSpec) -> None:
    store = open_location(
        store_spec.location, **({"schema": store_spec.schema} if store_spec.schema else {})
    )
    try:
        assert (
            type(store).__name__
            == {"sqlite": "SqliteStore", "postgresql": "PostgresStore"}[store_spec.kind]
        )
        assert isinstance(store, Store)
        assert store.dialect.name == store_spec.kind
    finally:
        store.close()


def test_fresh_store_is_migrated_to_the_latest_version(state_store: Store) -> None:
    assert state_store.schema_version() == latest_version()
    for table in TABLES:
        assert count(state_store, table) == 0


def test_every_migration_has_a_statement_for_both_dialects() -> None:
    for version in MIGRATIONS:
        sqlite_stmts, pg_stmts = statements(version, "sqlite"), statements(version, "postgresql")
        assert len(sqlite_stmts) == len(pg_stmts) > 0
    pg = " ".join(s for v in MIGRATIONS for s in statements(v, "postgresql"))
    assert " REAL" not in pg and "BLOB" not in pg and "AUTOINCREMENT" not in pg


def test_transaction_commits_all_or_nothing(state_store: Store) -> None:
    with state_store.transaction() as conn:
        conn.execute("INSERT INTO skill_state VALUES ('a', 0, 1.0)")
    with pytest.raises(RuntimeError), state_store.transaction() as conn:
        conn.execute("INSERT INTO skill_state VALUES ('b', 0, 1.0)")
        raise RuntimeError("boom")
    assert skill_state.disabled_names(state_store) == frozenset({"a"})


def test_a_failed_statement_rolls_the_whole_transaction_back(state_store: Store) -> None:
    with pytest.raises(StoreConflict), state_store.transaction() as conn:
        conn.execute("INSERT INTO skill_state VALUES ('x', 0, 1.0)")
        conn.execute("INSERT INTO skill_state VALUES ('x', 0, 2.0)")  # the same key
    assert count(state_store, "skill_state") == 0
    skill_state.set_enabled(state_store, "after", False)  # the handle still works
    assert skill_state.disabled_names(state_store) == frozenset({"after"})


def test_rows_read_by_name_and_by_index(state_store: Store) -> None:
    skill_state.set_enabled(state_store, "ns:a", False)
    row = state_store.connection().execute("SELECT name, enabled FROM skill_state").fetchone()
    assert row["name"] == row[0] == "ns:a"
    assert row["enabled"] == row[1] == 0
    assert dict(row) == {"name": "ns:a", "enabled": 0}
    (name, enabled) = row
    assert (name, enabled) == ("ns:a", 0)


def test_enable_state_is_seen_by_another_handle_at_once(store_spec: StoreSpec) -> None:
    a, b = store_spec.open(), store_spec.open()
    try:
        skill_state.set_enabled(a, "ns:x", False)
        assert skill_state.disabled_names(b) == frozenset({"ns:x"})
        skill_state.set_enabled(b, "ns:x", True)
        assert skill_state.disabled_names(a) == frozenset()
    finally:
        a.close()
        b.close()


def test_concurrent_writers_never_lose_a_count(store_spec: StoreSpec) -> None:
    """Eight threads, each with its own handle, bump the same counters."""
    handles = [store_spec.open() for _ in range(8)]
    errors: list[BaseException] = []

    def work(store: Store, i: int) -> None:
        try:
            for j in range(25):
                record_execution(store, "shared", success=j % 2 == 0, latency_ms=1.0)
                write_route_events(store, [(event(f"r{i}-{j}", ("shared",)), ["shared", "other"])])
                skill_state.set_enabled(store, "flip", j % 2 == 0)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(h, i)) for i, h in enumerate(handles)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        stats = skill_stats(handles[0])
        assert stats["shared"].executions == 200
        assert stats["shared"].successes == 8 * 13
        assert stats["shared"].routes == stats["shared"].selections == 200
        assert stats["other"].routes == 200 and stats["other"].selections == 0
        assert count(handles[0], "route_events") == 200
    finally:
        for h in handles:
            h.close()


def test_route_events_are_written_once(state_store: Store) -> None:
    batch = [(event(f"r{i}"), ["a", "b"]) for i in range(120)]  # more than one INSERT
    assert write_route_events(state_store, batch) == 120
    assert write_route_events(state_store, batch[:60] + [(event("new"), ["a"])]) == 1
    stats = skill_stats(state_store)
    assert stats["a"].routes == 121 and stats["a"].selections == 121
    assert stats["b"].routes == 120
    assert count(state_store, "route_events") == 121


def test_newer_schema_is_refused_and_never_written(store_spec: StoreSpec) -> None:
    store = store_spec.open()
    skill_state.set_enabled(store, "kept", False)
    newer = latest_version() + 1
    if store_spec.kind == "sqlite":
        store.connection().execute(f"PRAGMA user_version = {newer}")
    else:
        with store.transaction() as conn:
            conn.execute(
                "INSERT INTO skillrt_schema(version, summary, applied_at) VALUES (?, 'x', 0)",
                (newer,),
            )
    store.close()
    other = store_spec.open()
    with pytest.raises(StoreSchemaTooNew) as exc:
        skill_state.set_enabled(other, "new", False)
    assert exc.value.code == "E_STORE_SCHEMA_TOO_NEW"
    assert exc.value.context["schema_version"] == newer
    assert exc.value.context["supported_version"] == latest_version()
    assert "upgrade skillrt" in exc.value.message
    other.close()
    # Nothing was written: the table still holds only what the old code wrote.
    if store_spec.kind == "sqlite":
        raw = sqlite3.connect(store_spec.location)
        rows = raw.execute("SELECT name FROM skill_state").fetchall()
        raw.close()
    else:
        import psycopg

        with psycopg.connect(store_spec.location) as raw:
            rows = raw.execute(f'SELECT name FROM "{store_spec.schema}".skill_state').fetchall()
    assert [r[0] for r in rows] == ["kept"]


def test_older_schema_applies_only_newer_migrations(store_spec: StoreSpec) -> None:
    """A store left at version 6 (before leases) gains migration 7 and keeps its rows."""
    if store_spec.kind == "sqlite":
        Path(store_spec.location).parent.mkdir(parents=True)
        raw = sqlite3.connect(store_spec.location)
        for version in range(1, 7):
            for stmt in statements(version, "sqlite"):
                raw.execute(stmt)
        raw.execute("INSERT INTO skill_state VALUES ('kept', 0, 1.0)")
        raw.execute("PRAGMA user_version = 6")
        raw.commit()
        raw.close()
    else:
        import psycopg

        with psycopg.connect(store_spec.location, autocommit=True) as raw:
            raw.execute(f'CREATE SCHEMA "{store_spec.schema}"')
            raw.execute(f'SET search_path TO "{store_spec.schema}"')
            raw.execute(
                "CREATE TABLE skillrt_schema (version BIGINT PRIMARY KEY, summary TEXT NOT NULL,"
                " applied_at DOUBLE PRECISION NOT NULL)"
            )
            for version in range(1, 7):
                for stmt in statements(version, "postgresql"):
                    raw.execute(stmt)  # type: ignore[arg-type]
                raw.execute("INSERT INTO skillrt_schema VALUES (%s, 'old', 0)", (version,))
            raw.execute("INSERT INTO skill_state VALUES ('kept', 0, 1.0)")
    store = store_spec.open()
    try:
        assert store.schema_version() == latest_version()
        assert skill_state.disabled_names(store) == frozenset({"kept"})
        lease = store.connection().execute("SELECT lease_until FROM workflow_runs").fetchall()
        assert lease == []
    finally:
        store.close()


def test_read_only_store_refuses_writes(store_spec: StoreSpec) -> None:
    skill_state.set_enabled(store_spec.open(), "off", False)
    ro = store_spec.open(read_only=True)
    try:
        assert skill_state.disabled_names(ro) == frozenset({"off"})
        with pytest.raises(StoreError):
            skill_state.set_enabled(ro, "other", False)
    finally:
        ro.close()


def test_close_and_reopen(state_store: Store) -> None:
    skill_state.set_enabled(state_store, "a", False)
    state_store.close()
    assert skill_state.disabled_names(state_store) == frozenset({"a"})  # reopens lazily


def test_local_cache_is_a_sqlite_file_of_this_machine(store_spec: StoreSpec) -> None:
    store = store_spec.open()
    try:
        local = store.local
        assert local.dialect.name == "sqlite"
        if store_spec.kind == "sqlite":
            assert local is store
        else:
            assert Path(local.location) == store_spec.tmp / "cache.db"
            local.connection().execute("SELECT COUNT(*) FROM index_cache").fetchone()
            assert (store_spec.tmp / "cache.db").is_file()
    finally:
        store.close()


def test_missing_driver_is_a_structured_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from skillrt.store.postgres import PostgresStore

    monkeypatch.setitem(sys.modules, "psycopg", None)
    store = PostgresStore("postgresql://nobody@127.0.0.1:1/none", cache_path=tmp_path / "c.db")
    with pytest.raises(StoreDriverMissing) as exc:
        skill_state.disabled_names(store)
    data: dict[str, Any] = exc.value.to_dict()
    assert data["code"] == "E_STORE_DRIVER_MISSING"
    assert "pip install 'skillrt[postgres]'" in data["message"]


def test_password_never_shows_in_the_location() -> None:
    from skillrt.store.postgres import PostgresStore

    store = PostgresStore("postgresql://me:s3cret@db.example:5432/skills")
    assert "s3cret" not in store.location
    assert store.location.startswith("postgresql://me:***@db.example:5432/skills")


TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=60,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=TEXT, text=st.text(max_size=80))
def test_any_text_round_trips(state_store: Store, name: str, text: str) -> None:
    """Names and query text with quotes, %, ?, unicode (and NUL in query text) are
    values, never SQL, and come back as they went in on both backends."""
    skill_state.set_enabled(state_store, name, False)
    assert name in skill_state.disabled_names(state_store)
    skill_state.set_enabled(state_store, name, True)
    assert name not in skill_state.disabled_names(state_store)
    ev = event(f"q-{uuid.uuid4().hex}")
    ev = dataclasses.replace(ev, query_text=text.replace("\x00", "\ufffd"), selected_skills=(name,))
    assert write_route_events(state_store, [(ev, [name, "%s", "?"])]) == 1
    (back,) = [e for e in list_route_events(state_store, limit=1000) if e.route_id == ev.route_id]
    assert back.query_text == ev.query_text and back.selected_skills == (name,)
