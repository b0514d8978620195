"""A third backend, as docs/architecture.md says to add one: one module, one map entry.

``dummy:///abs/path/state.db`` keeps the state in that SQLite file (it speaks the SQL
of :mod:`skillrt.store.sql`), except the enable state, which it keeps in this
process's memory through its own :class:`EnableState`: what the callers see is the
domain interface, never a table.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit

from skillrt.store.base import StateSettings
from skillrt.store.skill_state import EnableState
from skillrt.store.sqlite import SqliteStore

SCHEME = "dummy"
#: location -> name -> enabled; shared by every handle of this process.
ENABLED: dict[str, dict[str, bool]] = {}


class MemoryEnableState(EnableState):
    def __init__(self, location: str) -> None:
        self.names = ENABLED.setdefault(location, {})

    def disabled(self) -> frozenset[str]:
        return frozenset(n for n, on in self.names.items() if not on)

    def set(self, name: str, enabled: bool, *, at: float) -> None:
        self.names[name] = enabled

    def token(self) -> str:
        return ",".join(f"{n}={int(on)}" for n, on in sorted(self.names.items()))


class DummyStore(SqliteStore):
    backend: ClassVar[str] = SCHEME

    def __init__(self, url: str | Path, **options: object) -> None:
        self.url = str(url)
        super().__init__(Path(urlsplit(self.url).path), **options)  # type: ignore[arg-type]

    @classmethod
    def from_settings(
        cls, location: Path | str, settings: StateSettings, *, cache_path: Path | None
    ) -> DummyStore:
        return cls(location)

    @property
    def location(self) -> str:
        return self.url

    @property
    def enable_state(self) -> EnableState:  # type: ignore[override]
        return MemoryEnableState(self.url)

    def reopen(
        self, *, busy_timeout_ms: int | None = None, read_only: bool | None = None
    ) -> DummyStore:
        return DummyStore(self.url)
