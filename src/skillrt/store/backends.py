"""Which backend keeps the state: one map from a location's URL scheme to its store.

A location is a SQLite file (a path, or ``:memory:``) or a URL whose scheme names a
server backend (``postgresql://``, or ``postgres://``). Everything that opens a store
or checks a location asks this module (``Store(location)``, :func:`open_location`,
``open_store``, ``--state``, ``state.url``, ``state migrate``), so nothing else names a
scheme, and a new backend is one module in ``store/`` plus one entry in
:data:`BACKENDS` (see docs/architecture.md). A URL no backend serves is refused, never
taken for a folder named ``mysql:``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from skillrt.store.base import StateSettings, Store

    class _StateConfig(StateSettings, Protocol):
        @property
        def url(self) -> str | None: ...

    class _Config(Protocol):
        """The part of the runtime configuration that says where the state lives."""

        @property
        def state(self) -> _StateConfig: ...

        @property
        def state_db(self) -> Path: ...

        @property
        def cache_db(self) -> Path: ...

        @property
        def cache_dir(self) -> Path | None: ...


__all__ = [
    "BACKENDS",
    "Loader",
    "backend_for",
    "check_location",
    "is_store_url",
    "open_location",
    "open_store",
    "unknown_scheme",
    "url_examples",
    "url_scheme",
]

#: Gives a backend's store class, importing its module on first use (a command that
#: never opens a server store never imports its driver's code).
Loader = Callable[[], "type[Store]"]


def _sqlite() -> type[Store]:
    from skillrt.store.sqlite import SqliteStore

    return SqliteStore


def _postgres() -> type[Store]:
    from skillrt.store.postgres import PostgresStore

    return PostgresStore


#: URL scheme (lower case) -> the backend that serves it. The first scheme of each
#: backend is the one messages show.
BACKENDS: dict[str, Loader] = {"postgresql": _postgres, "postgres": _postgres}
#: The backend of a location that is not a URL: a file path or ``:memory:``.
FILE_BACKEND: Loader = _sqlite


def url_scheme(location: object) -> str | None:
    """The scheme of a location written as a URL (``mysql`` for ``mysql://x/y``), or
    None for a path."""
    if not isinstance(location, str):
        return None
    scheme, sep, _ = location.partition("://")
    if sep and scheme and scheme[0].isalpha() and all(c.isalnum() or c in "+.-" for c in scheme):
        return scheme
    return None


def is_store_url(location: object) -> bool:
    """Whether ``location`` is a URL a backend serves (a server store), rather than a
    SQLite file or folder."""
    scheme = url_scheme(location)
    return scheme is not None and scheme.lower() in BACKENDS


def unknown_scheme(location: object) -> str | None:
    """The scheme of a URL no backend serves, else None (a path, or a store URL)."""
    scheme = url_scheme(location)
    return scheme if scheme is not None and scheme.lower() not in BACKENDS else None


def url_examples() -> str:
    """The URLs a server store is given with, for messages: ``postgresql://...``."""
    first: dict[Loader, str] = {}
    for scheme, loader in BACKENDS.items():
        first.setdefault(loader, f"{scheme}://...")
    return " or ".join(first.values())


def check_location(location: Path | str) -> None:
    """Refuse a URL that names no store skillrt has: ``StoreMisconfigured``."""
    scheme = unknown_scheme(location)
    if scheme is not None:
        from skillrt.errors import StoreMisconfigured

        raise StoreMisconfigured(
            f"unknown state store URL scheme {scheme!r}: use {url_examples()} for a "
            "shared store, or a folder for SQLite",
            retryable=False,
        )


def backend_for(location: Path | str) -> type[Store]:
    """The store class for ``location`` (a URL no backend serves is refused:
    ``StoreMisconfigured``)."""
    check_location(location)
    scheme = url_scheme(location)
    return BACKENDS[scheme.lower()]() if scheme is not None else FILE_BACKEND()


def open_location(location: Path | str, **options: Any) -> Store:
    """The store at ``location``: ``backend_for(location)(location, **options)``."""
    return backend_for(location)(location, **options)


def open_store(config: _Config, *, persist: bool = True) -> Store:
    """The store ``config`` names: ``state.url`` (a server, with this machine's caches
    in ``<state_dir>/cache.db``), else ``<state_dir>/state.db``; with ``cache_dir``,
    the caches in ``<cache_dir>/cache.db``; ``persist=False`` gives an in-memory SQLite
    store."""
    if not persist:
        from skillrt.store.base import MEMORY

        return open_location(MEMORY)
    location = config.state.url or config.state_db
    # An embedded store keeps its caches in its own file unless cache_dir says where.
    separate = config.state.url is not None or config.cache_dir is not None
    cache_path = config.cache_db if separate else None
    return backend_for(location).from_settings(location, config.state, cache_path=cache_path)
