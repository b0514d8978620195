"""One build of a catalogue's index at a time, per cache folder.

A first ``skillrt route`` over a new catalogue answers from a deferred index (the
descriptions, and the sections of its request's candidates: see
:class:`~skillrt.routing.index.RouterIndex`), then starts ``skillrt index
--background`` to embed the other sections and save the whole index for the next
commands. That build holds ``build.lock`` in the cache's index folder, so the commands
run meanwhile start no second one; its output goes to ``build.log`` there.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillrt.store import Store

__all__ = ["LOCK_NAME", "LOG_NAME", "build_lock", "index_folder", "is_building"]

LOCK_NAME = "build.lock"
LOG_NAME = "build.log"


def index_folder(cache: Store) -> Path | None:
    """Where the indexes over the cache ``cache`` are saved and built (None: a cache
    that is not a local file keeps no index)."""
    from skillrt.routing.snapshot import snapshot_folder

    return snapshot_folder(cache.file) if cache.file is not None else None


def is_building(folder: Path) -> bool:
    """Whether a process holds ``folder``'s build lock."""
    from skillrt.locks import lock_held

    return lock_held(folder / LOCK_NAME)


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
        yield True
    finally:
        os.close(fd)
