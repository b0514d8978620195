"""Advisory file locks (``flock``) that are only ever tried, never waited on."""

from __future__ import annotations

import os

__all__ = ["lock_held"]


def lock_held(path: str | os.PathLike[str]) -> bool:
    """Whether a process holds an exclusive ``flock`` on ``path`` (False when there is
    no such file: nobody ever locked it)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops our shared lock, if we took it
    return False
