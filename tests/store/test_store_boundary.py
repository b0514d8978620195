"""All SQL lives in ``store/``: every other module uses the store's domain interfaces.

Outside ``skillrt/store/`` no module writes a SQL statement, asks a store for a
connection, imports a backend (``store.sql``, ``store.sqlite``, ``store.postgres``,
``store.pgpool``) or a database driver, or names a backend's URL scheme: a new backend
or a change of schema touches ``store/`` alone.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import skillrt
from skillrt.store.backends import BACKENDS

SRC = Path(skillrt.__file__).resolve().parent
#: A string that starts like a SQL statement (keywords in capitals, as skillrt writes them).
SQL = re.compile(
    r"^\s*(SELECT\s.*\bFROM\b|SELECT\s+\d|INSERT\s+(OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s"
    r"|DELETE\s+FROM\s|(CREATE|ALTER|DROP)\s+(TABLE|INDEX|SCHEMA)\s|PRAGMA\s|BEGIN\b|COMMIT\b"
    r"|ROLLBACK\b)",
    re.DOTALL,
)
BACKEND_MODULES = (
    "skillrt.store.sql",
    "skillrt.store.sqlite",
    "skillrt.store.postgres",
    "skillrt.store.pgpool",
)
DRIVERS = ("sqlite3", "psycopg", "psycopg_pool")
#: Calls that reach below the domain interfaces.
LOW_LEVEL_CALLS = ("connection", "executemany", "is_postgres_url")


def _is_docstring(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    parent = parents.get(node)
    if not isinstance(parent, ast.Expr):
        return False
    holder = parents.get(parent)
    body = getattr(holder, "body", None)
    return isinstance(body, list) and body and body[0] is parent


def problems(path: Path) -> list[str]:
    """What ``path`` does that only ``store/`` may do, one line each."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    schemes = tuple(f"{s}://" for s in BACKENDS)
    shown = path.relative_to(SRC.parent) if path.is_relative_to(SRC.parent) else path.name
    found: list[str] = []
    for node in ast.walk(tree):
        where = f"{shown}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            for name in names:
                if name.startswith(BACKEND_MODULES) or name.split(".")[0] in DRIVERS:
                    found.append(f"{where} imports {name}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            if called in LOW_LEVEL_CALLS:
                found.append(f"{where} calls {called}()")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _is_docstring(node, parents):
                continue
            text = node.value
            if SQL.match(text):
                found.append(f"{where} holds SQL: {text[:40]!r}")
            if text.lower().startswith(schemes):
                found.append(f"{where} names a backend's URL scheme: {text[:40]!r}")
    return found


def test_no_module_outside_store_holds_sql_or_reaches_a_backend() -> None:
    found = [
        line
        for path in sorted(SRC.rglob("*.py"))
        if "store" not in path.relative_to(SRC).parts[:1]
        for line in problems(path)
    ]
    assert found == []


def test_the_check_sees_what_it_forbids(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from skillrt.store.sqlite import SqliteStore\n"
        "def f(store):\n"
        "    import sqlite3\n"
        "    rows = store.connection().execute(\n"
        "        f'SELECT name FROM skill_state WHERE x = {1}')\n"
        "    store.transaction()\n"
        "    return 'postgresql://h/db'.startswith('postgres://')\n",
        encoding="utf-8",
    )
    text = "\n".join(problems(sample))
    assert "imports skillrt.store.sqlite" in text
    assert "imports sqlite3" in text
    assert "calls connection()" in text
    assert "holds SQL: 'SELECT name FROM skill_state WHERE x = '" in text
    assert "names a backend's URL scheme: 'postgresql://h/db'" in text
    assert "names a backend's URL scheme: 'postgres://'" in text
