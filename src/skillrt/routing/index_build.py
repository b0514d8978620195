"""One build of a catalogue's index at a time, per cache folder.

A first ``skillrt route`` over a new catalogue answers from a deferred index (the
descriptions, and the sections of its request's candidates: see
:class:`~skillrt.routing.index.RouterIndex`), then starts ``skillrt index
--background`` to embed the other sections and save the whole index for the next
commands. That build holds ``build.lock`` in the cache's index folder, so the commands
run meanwhile start no second one; its output goes to ``build.log`` there. A
``skillrt index`` typed meanwhile waits for it, a bounded time, by polling the lock
(:func:`wait_for_build`), and reports the index it saved (:func:`saved_index`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skillrt.config import RoutingConfig
    from skillrt.routing.embeddings.base import EmbeddingBackend
    from skillrt.skills.model import Skill
    from skillrt.store import Store

__all__ = [
    "LOCK_NAME",
    "LOG_NAME",
    "POLL_S",
    "build_holder",
    "build_lock",
    "index_folder",
    "is_building",
    "saved_index",
    "snapshot_location",
    "wait_for_build",
]

LOCK_NAME = "build.lock"
LOG_NAME = "build.log"
#: How often :func:`wait_for_build` looks at the lock.
POLL_S = 0.1


def index_folder(cache: Store) -> Path | None:
    """Where the indexes over the cache ``cache`` are saved and built (None: a cache
    that is not a local file keeps no index)."""
    from skillrt.routing.snapshot import snapshot_folder

    return snapshot_folder(cache.file) if cache.file is not None else None


def is_building(folder: Path) -> bool:
    """Whether a process holds ``folder``'s build lock."""
    from skillrt.locks import lock_held

    return lock_held(folder / LOCK_NAME)


def wait_for_build(folder: Path, timeout: float) -> float | None:
    """Wait until no process holds ``folder``'s build lock, looking every
    :data:`POLL_S` seconds (the lock is only ever tried, never waited on): the seconds
    waited, or None when it is still held after ``timeout`` seconds."""
    import time

    started = time.monotonic()
    deadline = started + timeout
    while is_building(folder):
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        time.sleep(min(POLL_S, left))
    return time.monotonic() - started


def saved_index(skills: Sequence[Skill], config: RoutingConfig, cache: Store) -> Path | None:
    """The file the whole index of ``skills`` (with ``config``'s backend, over the cache
    ``cache``) is saved in, if it is there now: what ``Router.from_skills`` would load
    instead of building it, found as it finds it. None: not saved, or never saved (a
    lexical backend, ``read_bodies: false``, a cache that is not a local file)."""
    from skillrt.routing.embeddings import resolve_backend
    from skillrt.routing.fields import fields_key

    if not config.read_bodies:
        return None
    backend = resolve_backend(config.embedding_backend, config)
    at = snapshot_location(cache, [fields_key(skill) for skill in skills], backend)
    return at[0] if at is not None and at[0].exists() else None


def snapshot_location(
    store: Store | None, keys: Sequence[str] | None, backend: EmbeddingBackend | None
) -> tuple[Path, str] | None:
    """Where the index of these skills is saved, and its key (None: no snapshot, for a
    store that is not a local file, lexical-only routing or Level-1 routing): what
    ``Router.from_skills`` loads instead of building the index, and saves it in."""
    path = store.file if store is not None else None
    if keys is None or not keys or backend is None or path is None:
        return None
    from skillrt.routing.fields import EMBED_RECIPE
    from skillrt.routing.index import FIELD_WEIGHTS
    from skillrt.routing.lexical import K1, VERSION, B
    from skillrt.routing.semantic import MAX_CLAUSES, MAX_DOC_CHARS, MAX_EXAMPLES
    from skillrt.routing.snapshot import snapshot_key, snapshot_path

    recipe = (
        FIELD_WEIGHTS, K1, B, VERSION, MAX_DOC_CHARS, MAX_EXAMPLES, MAX_CLAUSES, EMBED_RECIPE
    )  # fmt: skip
    key = snapshot_key(keys, backend, recipe)
    return snapshot_path(path, key), key


@contextmanager
def build_lock(folder: Path) -> Iterator[bool]:
    """Hold ``folder``'s build lock for the block: True, or False at once when another
    process holds it (never waits)."""
    import fcntl

    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        # Who holds it, for the messages of the commands that find it held.
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield True
    finally:
        os.close(fd)


def build_holder(folder: Path) -> int | None:
    """The pid of the process holding ``folder``'s build lock (None: nobody holds it, or
    it could not be read)."""
    if not is_building(folder):
        return None
    try:
        text = (folder / LOCK_NAME).read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None
    # A pid has at most a few digits; a long run of them is not one (and int() of
    # thousands of digits raises).
    return int(text) if text.isdigit() and len(text) <= 10 else None
