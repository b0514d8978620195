"""Open a file someone else controls for reading, without ever blocking on it.

A plain ``open()`` of a path blocks for good when a FIFO has been swapped in for the
file (a reader waits for a writer), and a ``stat`` before the open cannot rule that out
(the swap can happen in between). :func:`open_regular` opens ``O_NONBLOCK`` (opening a
FIFO then returns at once), checks the type of what was actually opened (``fstat``),
and refuses anything that is not a regular file. The loader's jailed opens
(:mod:`skillrt.loading.paths`) open with the same :data:`READ_FLAGS` under a skill
folder and check what they opened with the same :func:`regular_stat`; :func:`open_regular`
is the one for files read by path: skill files during discovery, plugin manifests,
transcripts; :func:`read_regular` reads such a file whole (memory files an agent wrote,
a workflow's config, role guides, the files a repair prompt quotes).
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False  # the prompt hook imports this module: keep it to the standard library
if TYPE_CHECKING:
    from typing import BinaryIO

__all__ = [
    "READ_FLAGS",
    "FileReplaced",
    "NotRegularFile",
    "file_kind",
    "open_regular",
    "read_regular",
    "regular_stat",
    "text_of",
]

#: A read-only open that never blocks on a FIFO nor takes a terminal as ours.
READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class NotRegularFile(OSError):
    """What was opened is a FIFO, a device, a socket or a folder, not a regular file.

    An :class:`OSError` (``errno`` ``EINVAL``, ``strerror`` saying what it is), so every
    caller that already handles an unreadable file handles this one too.
    """


class FileReplaced(OSError):
    """What was opened is not the file the caller stat'ed before (``errno`` ``ESTALE``)."""


def file_kind(mode: int) -> str:
    """A person's word for a non-regular file type."""
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "special file"


def open_regular(
    path: str | os.PathLike[str],
    *,
    follow_symlinks: bool = True,
    expect: os.stat_result | None = None,
) -> tuple[BinaryIO, os.stat_result]:
    """``path`` opened for binary reading, with its ``fstat``; never blocks on a FIFO.

    ``follow_symlinks=False`` refuses a symlink in the last component (``ELOOP``).
    ``expect``, a stat the caller took earlier, must name the same file (device and
    inode): a file swapped after that stat is refused rather than read in its place.
    Raises :class:`OSError` (:class:`NotRegularFile` for a FIFO, device, socket or
    folder; :class:`FileReplaced`, ``ESTALE``, for a swapped file).
    """
    flags = READ_FLAGS if follow_symlinks else READ_FLAGS | _O_NOFOLLOW
    fd = os.open(path, flags)
    try:
        st = regular_stat(fd, str(path), expect)
        # Regular files ignore O_NONBLOCK, but clear it so reads are plain reads anyway.
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        fh = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return fh, st


def read_regular(
    path: str | os.PathLike[str], *, limit: int | None = None, follow_symlinks: bool = True
) -> bytes:
    """The bytes of regular file ``path`` (at most ``limit`` of them), read without ever
    blocking on a FIFO; raises :class:`OSError` as :func:`open_regular` does."""
    fh, _ = open_regular(path, follow_symlinks=follow_symlinks)
    with fh:
        return fh.read() if limit is None else fh.read(limit)


def text_of(data: bytes, *, encoding: str = "utf-8-sig", errors: str = "strict") -> str:
    r"""``data`` decoded as a text-mode read gives it: ``\r\n`` and ``\r`` as ``\n``."""
    return data.decode(encoding, errors=errors).replace("\r\n", "\n").replace("\r", "\n")


def regular_stat(fd: int, path: str, expect: os.stat_result | None = None) -> os.stat_result:
    """The ``fstat`` of what ``fd`` opened, checked: a regular file (else
    :class:`NotRegularFile`) and, given ``expect``, the same file (device and inode;
    else :class:`FileReplaced`). ``path`` names it in the error."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        kind = file_kind(st.st_mode)
        raise NotRegularFile(errno.EINVAL, f"is a {kind}, not a regular file", path)
    if expect is not None and (st.st_dev, st.st_ino) != (expect.st_dev, expect.st_ino):
        raise FileReplaced(errno.ESTALE, "the file was replaced while being read", path)
    return st
