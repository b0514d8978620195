"""Copy a state store into another (``skillrt state migrate``), then check the counts.

What is copied is the shared state: enable state, skill stats, route events, feedback,
gray-release configs, executions and their transitions, repair attempts and patches,
workflow runs with their steps, phases and transitions, and domain learnings (rows of
the source's ``learnings`` table, or the bullets of ``<learnings_dir>/<domain>.md``
files). Derived per-machine caches (parsed skills, vectors) are not: each machine
rebuilds its own.

The target's tables must be empty (a second run is refused, never doubled), the copy is
one transaction (all of it or none), and afterwards every table is counted again on a
fresh connection. Runs are copied without an owner: stop the processes that used the
source first.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillrt.errors import StoreError, StoreMisconfigured, StoreNotEmpty
from skillrt.store.base import Store
from skillrt.store.sql.base import SqlStore
from skillrt.store.sql.connection import Connection, missing_table
from skillrt.store.sql.tables import COPIED_TABLES, table_counts

__all__ = ["COPIED_TABLES", "MigrationReport", "TableCount", "copy_state", "table_counts"]

#: Tables whose integer key comes from a sequence on PostgreSQL (moved past copied ids).
_IDENTITY = {"fsm_transitions": "id", "learnings": "id"}
_BATCH = 1000


@dataclass(frozen=True)
class TableCount:
    """One table: rows in the source, rows in the target after the copy."""

    table: str
    source_rows: int
    target_rows: int

    @property
    def ok(self) -> bool:
        return self.source_rows == self.target_rows


@dataclass(frozen=True)
class MigrationReport:
    """What ``state migrate`` did; ``ok`` when every count matches."""

    source: str
    target: str
    tables: tuple[TableCount, ...]
    learning_files: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.tables)

    @property
    def rows(self) -> int:
        return sum(t.target_rows for t in self.tables)

    def to_dict(self) -> dict[str, Any]:
        """The ``state migrate --json`` shape (with ``ok`` and ``rows``)."""
        return {
            "source": self.source,
            "target": self.target,
            "ok": self.ok,
            "rows": self.rows,
            "tables": [
                {
                    "table": t.table,
                    "source_rows": t.source_rows,
                    "target_rows": t.target_rows,
                    "ok": t.ok,
                }  # fmt: skip
                for t in self.tables
            ],
            "learning_files": list(self.learning_files),
        }


def _sql(store: Store) -> SqlStore:
    if not isinstance(store, SqlStore):
        raise StoreMisconfigured(
            f"state migrate copies between SQL stores; {store.location} is a {store.backend} store",
            retryable=False,
        )
    return store


def copy_state(
    source: Store, target: Store, *, learnings_dir: Path | None = None
) -> MigrationReport:
    """Copy ``source`` into the empty ``target`` in one transaction and count again.

    ``learnings_dir``: ``<domain>.md`` files to import when the source keeps its
    learnings in files (an embedded store).
    """
    source, target = _sql(source), _sql(target)
    busy = {t: n for t, n in table_counts(target).items() if n}
    if busy:
        raise StoreNotEmpty(
            f"the target {target.location} already holds state "
            f"({', '.join(f'{t}: {n}' for t, n in busy.items())}); migrate into an empty "
            "store (a new database or state.schema)",
            target=target.location,
            tables=busy,
        )
    expected = table_counts(source)
    files: list[Path] = []
    lessons = _file_lessons(learnings_dir, files) if learnings_dir is not None else []
    with target.transaction(sync=True) as conn:
        for table in COPIED_TABLES:
            _copy_table(source, conn, table)
        if lessons:
            _import_file_lessons(conn, lessons, expected)
        if target.dialect.move_identity:
            for table, column in _IDENTITY.items():
                conn.execute(target.dialect.move_identity.format(table=table, column=column))
    fresh = _sql(target.reopen())
    try:
        after = table_counts(fresh)
    finally:
        fresh.close()
    return MigrationReport(
        source=source.location,
        target=target.location,
        tables=tuple(TableCount(t, expected[t], after[t]) for t in COPIED_TABLES),
        learning_files=tuple(str(p) for p in files),
    )


def _columns(conn: Connection, table: str) -> list[str]:
    try:
        cur = conn.execute(f"SELECT * FROM {table} WHERE 1 = 0")
    except StoreError as exc:
        if missing_table(exc):
            return []  # an older source: nothing of that kind to copy
        raise
    desc: Any = getattr(cur, "description", None)
    return [d[0] for d in desc] if desc else []


def _copy_table(source: SqlStore, conn: Connection, table: str) -> None:
    src = source.connection()
    wanted = _columns(conn, table)
    have = set(_columns(src, table))
    columns = [c for c in wanted if c in have]  # an older source lacks newer columns
    if not columns:
        return
    select = f"SELECT {', '.join(columns)} FROM {table}"
    insert = f"INSERT INTO {table}({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    clear = {"owner", "lease_until"} if table == "workflow_runs" else set()
    batch: list[tuple[Any, ...]] = []
    for row in src.execute(select):
        values = tuple(None if c in clear else row[i] for i, c in enumerate(columns))
        batch.append(values)
        if len(batch) >= _BATCH:
            conn.executemany(insert, batch)
            batch = []
    if batch:
        conn.executemany(insert, batch)


def _file_lessons(folder: Path, files: list[Path]) -> list[tuple[str, str, str]]:
    """``(domain, key, line)`` of every bullet of ``<folder>/<domain>.md``."""
    from skillrt.orchestration.learnings import existing_lines

    out: list[tuple[str, str, str]] = []
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.md")):
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"cannot read learnings file {path}: {exc}", path=str(path)) from exc
        files.append(path)
        out += [(path.stem, key, line) for key, line in existing_lines(text) if key]
    return out


def _import_file_lessons(
    conn: Connection, lessons: list[tuple[str, str, str]], expected: dict[str, int]
) -> None:
    import time

    now = time.time()
    seen: set[tuple[str, str]] = set()
    for domain, key, line in lessons:
        if (domain, key) in seen:
            continue  # the file repeated a lesson: one row
        seen.add((domain, key))
        conn.execute(
            "INSERT INTO learnings(domain, key, line, added_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(domain, key) DO NOTHING",
            (domain, key, line, now),
        )
        expected["learnings"] += 1
