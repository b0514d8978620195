"""Shared fixtures: a skill-tree builder and an offline guard."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
EXAMPLES = REPO / "examples" / "skills"


def _is_loopback(address: Any) -> bool:
    if isinstance(address, tuple) and address:
        host = address[0]
        if host in ("localhost", ""):
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False
    return True  # unix sockets


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Tests never reach the network: only loopback connections are allowed."""
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> Any:
        if not _is_loopback(address):
            raise RuntimeError(f"network access in tests is not allowed: {address!r}")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    yield


@pytest.fixture(autouse=True)
def _user_cache(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Each test's own user cache folder: the prompt hook (and the daemon it starts)
    keep their state there (``$XDG_CACHE_HOME/skillrt``), never in the real one."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
    # A hook that finds no daemon starts one (it lives 15 min): only the tests of that
    # behaviour let it, and stop what they start.
    monkeypatch.setenv("SKILLRT_DAEMON_AUTOSTART", "0")


SkillFactory = Callable[..., Path]


@pytest.fixture
def make_skill(tmp_path: Path) -> SkillFactory:
    """Write a skill folder: ``make_skill("name", description=..., body=..., **frontmatter)``.

    ``root`` (default ``tmp_path / "skills"``) and ``files`` ({relative path: text}) are
    optional; ``raw`` writes the SKILL.md text verbatim instead.
    """

    def factory(
        name: str,
        *,
        description: str | None = None,
        body: str = "# Body\n",
        root: Path | None = None,
        files: dict[str, str | bytes] | None = None,
        raw: str | bytes | None = None,
        folder: str | None = None,
        **frontmatter: Any,
    ) -> Path:
        base = root if root is not None else tmp_path / "skills"
        skill_dir = base / (folder or name)
        skill_dir.mkdir(parents=True, exist_ok=True)
        if raw is not None:
            data = raw if isinstance(raw, bytes) else raw.encode("utf-8")
            (skill_dir / "SKILL.md").write_bytes(data)
        else:
            fm: dict[str, Any] = {
                "name": name,
                "description": description or f"Use when testing {name}.",
            }
            fm.update({k.replace("__", "-"): v for k, v in frontmatter.items()})
            text = "---\n" + yaml.safe_dump(fm, sort_keys=False, allow_unicode=True) + "---\n"
            (skill_dir / "SKILL.md").write_text(text + body, encoding="utf-8")
        for rel, content in (files or {}).items():
            target = skill_dir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        return skill_dir

    return factory


@pytest.fixture
def skills_root(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    root.mkdir(exist_ok=True)
    return root


# -- state stores: SQLite always, PostgreSQL when a server is given ---------------------
POSTGRES_ENV = "SKILLRT_TEST_POSTGRES_URL"


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The test server's URL; the test skips (or, in CI, fails) without one."""
    import os

    url = os.environ.get(POSTGRES_ENV)
    if not url:
        reason = (
            f"no PostgreSQL server given: set {POSTGRES_ENV}=postgresql://... "
            '(`eval "$(bash .ci/postgres.sh start)"` starts a throwaway one)'
        )
        if os.environ.get("SKILLRT_POSTGRES_REQUIRED"):
            pytest.fail(reason)
        pytest.skip(reason)
    return url


@pytest.fixture
def pg_schema(postgres_url: str) -> Iterator[str]:
    """A fresh schema name for one test; dropped (with everything in it) afterwards."""
    import uuid

    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


class StoreSpec:
    """How to open handles on one test database (each handle has its own connections)."""

    def __init__(self, kind: str, location: str, schema: str | None, tmp: Path) -> None:
        self.kind = kind
        self.location = location
        self.schema = schema
        self.tmp = tmp

    def open(self, **options: Any) -> Any:
        if self.kind == "sqlite":
            from skillrt.store.sqlite import SqliteStore

            return SqliteStore(self.location, **options)
        from skillrt.store.postgres import PostgresStore

        options.setdefault("cache_path", self.tmp / "cache.db")
        return PostgresStore(self.location, schema=self.schema, **options)

    def config_yaml(self) -> str:
        """``skillrt.yaml`` lines pointing at this store."""
        if self.kind == "sqlite":
            return f"state_dir: {Path(self.location).parent}\n"
        return f"state:\n  url: '{self.location}'\n  schema: {self.schema}\n"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_spec(request: pytest.FixtureRequest, tmp_path: Path) -> StoreSpec:
    """Each test runs on a SQLite file and on a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        return StoreSpec("sqlite", str(tmp_path / "state" / "state.db"), None, tmp_path)
    url = request.getfixturevalue("postgres_url")
    schema = request.getfixturevalue("pg_schema")
    return StoreSpec("postgresql", url, schema, tmp_path)


@pytest.fixture
def state_store(store_spec: StoreSpec) -> Iterator[Any]:
    store = store_spec.open()
    yield store
    store.close()
