"""Atomic file writes: readers see the old file or the new one, never a mix."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

__all__ = ["atomic_write_bytes", "atomic_write_text"]


def atomic_write_bytes(
    path: Path, data: bytes, *, mode: int | None = None, shared: bool = False
) -> None:
    """Write ``data`` to ``path`` atomically, creating the folder if needed.

    Temp file in the same folder (named with a leading dot so no glob of visible files
    matches it), fsync, optional chmod, ``os.replace``, then fsync the folder so the
    rename survives a crash. The file is private (0600) unless ``mode`` is given, or
    ``shared``: then it gets the permissions any new file gets under the process's umask
    (a report meant to be read by others, as ``open(path, "w")`` would make it).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temp_file(path, 0o666 if shared else 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str, *, shared: bool = False) -> None:
    """:func:`atomic_write_bytes` of UTF-8 text with ``\\n`` line ends as given."""
    atomic_write_bytes(path, text.encode("utf-8"), shared=shared)


def _temp_file(path: Path, mode: int) -> tuple[int, str]:
    """A new temp file next to ``path``, created with ``mode`` (the umask applies)."""
    for _ in range(100):
        tmp = os.path.join(path.parent, f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _CLOEXEC, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temp file name next to {path}")


def _fsync_dir(folder: Path) -> None:
    if os.name != "posix":
        return
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
