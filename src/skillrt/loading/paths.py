"""Path safety for Level-3 reads (seed 003 §4): nothing outside a skill's real folder.

A requested path passes two gates:

1. :func:`check_relative_path` — string rules only: no ``..`` segment, no absolute path,
   no NUL or control characters, no backslash (so no ``C:\\`` or ``\\\\server\\share``),
   no drive prefix or ``:`` (NTFS streams), no ``~``, and none of these hidden behind
   percent-encoding (``%2e%2e``, ``%2f``, double-encoded ``%252e``) or Unicode
   compatibility forms (fullwidth ``．．／``).
2. :func:`open_in_jail` — resolves the path one component at a time from an open
   descriptor of the jail (the skill folder's *real* path), with ``O_NOFOLLOW`` at every
   step. A symlink is expanded by hand, and its target must stay inside the jail at every
   step; a loop ends after :data:`MAX_SYMLINK_HOPS`. The leaf must be a regular file; it is
   opened ``O_NONBLOCK | O_NOFOLLOW`` (a FIFO swapped in cannot block us) and its
   ``(st_dev, st_ino)`` is compared with what was checked, which closes the
   check-then-open race. A directory swapped for a symlink between steps cannot redirect
   the walk either, because each step opens the next component relative to the
   descriptor of the one before.

:func:`safe_join` gives the same guarantee as a path (for callers that do not read).
Known limit: a hard link inside the jail to a file elsewhere is, by the file system's
own rules, a file inside the jail; only someone who can already write there can make one.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import unicodedata
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from skillrt.errors import DisallowedFileType, PathTraversalBlocked, SkillIOError
from skillrt.fileopen import READ_FLAGS, FileReplaced, NotRegularFile, file_kind, regular_stat

#: Symlink expansions allowed in one lookup (Linux's own limit is 40).
MAX_SYMLINK_HOPS = 40
#: Longest relative path accepted, in characters.
MAX_PATH_CHARS = 4096
_MAX_DECODE_ROUNDS = 5

_DRIVE = re.compile(r"^[A-Za-z]:")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FLAGS = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC
_FILE_FLAGS = READ_FLAGS | _O_NOFOLLOW

#: True where the race-free, descriptor-relative walk is available (Linux, macOS, BSD).
FD_WALK = (
    os.open in os.supports_dir_fd
    and os.stat in os.supports_dir_fd
    and os.readlink in os.supports_dir_fd
    and bool(_O_NOFOLLOW and _O_DIRECTORY)
)


def _blocked(path: str, reason: str, message: str, **context: Any) -> PathTraversalBlocked:
    return PathTraversalBlocked(
        f"path {path!r} refused: {message}", path=path, reason=reason, **context
    )


def _lexical_problem(value: str) -> tuple[str, str] | None:
    """The first string rule ``value`` breaks, as (reason, explanation), or None."""
    if "\x00" in value:
        return "nul", "it contains a NUL byte"
    if _CONTROL.search(value):
        return "control_char", "it contains a control character"
    if "\\" in value:
        return "backslash", "backslashes are not path separators here (Windows or UNC form)"
    if value.startswith("/"):
        return "absolute", "absolute paths are not allowed; give a path relative to the skill"
    if _DRIVE.match(value):
        return "drive", "Windows drive paths are not allowed"
    if ":" in value:
        return "colon", "':' is not allowed in a resource path (drive or stream syntax)"
    segments = value.split("/")
    if any(seg.startswith("~") for seg in segments):
        return "tilde", "'~' (home folder) is not allowed"
    if ".." in segments:
        return "dotdot", "'..' segments are not allowed"
    return None


def check_relative_path(relative_path: str) -> tuple[str, ...]:
    """Validate a resource path by its text alone; return its segments (``.`` dropped).

    Raises :class:`PathTraversalBlocked` with a ``reason`` for every refusal.
    """
    if not isinstance(relative_path, str):
        raise _blocked(repr(relative_path), "not_a_string", "a path must be a string")
    value = relative_path
    if len(value) > MAX_PATH_CHARS:
        raise _blocked(value[:80] + "…", "too_long", f"longer than {MAX_PATH_CHARS} characters")
    problem = _lexical_problem(value)
    if problem is not None:
        raise _blocked(value, *problem)
    # Decode percent-escapes until stable: a path that only becomes unsafe once decoded
    # (by us, a proxy, or a tool further down the line) is refused as an encoded attack.
    decoded = value
    for _ in range(_MAX_DECODE_ROUNDS):
        if not _PERCENT.search(decoded):
            break
        decoded = unquote(decoded, errors="surrogateescape")
    else:
        if _PERCENT.search(decoded):
            raise _blocked(value, "encoded", "it is percent-encoded too many times")
    for form, reason in ((decoded, "encoded"), (unicodedata.normalize("NFKC", decoded), "unicode")):
        if form == value:
            continue
        if form.count("/") != value.count("/"):
            raise _blocked(value, reason, f"it hides a path separator ({reason} form)")
        problem = _lexical_problem(form)
        if problem is not None:
            raise _blocked(value, reason, f"its {reason} form is unsafe: {problem[1]}")
    segments = tuple(seg for seg in value.split("/") if seg not in ("", "."))
    if not segments:
        raise _blocked(value, "empty", "it names no file")
    return segments


@dataclass(frozen=True)
class OpenedFile:
    """A regular file opened inside the jail; the caller owns (and must close) ``fd``."""

    fd: int
    stat: os.stat_result
    #: The file's real absolute path.
    real_path: Path
    #: ``real_path`` relative to the jail, with ``/`` separators.
    relative: str


def _is_inside(target: Sequence[str], jail: Sequence[str]) -> bool:
    return len(target) >= len(jail) and tuple(target[: len(jail)]) == tuple(jail)


class _Walk:
    """One jailed lookup. Anchors are directory descriptors, or paths where
    descriptor-relative calls are missing (then only the final inode check guards races).
    """

    def __init__(self, jail: Path, shown: str, *, use_fds: bool) -> None:
        self.jail = jail
        self.jail_parts = jail.parts
        self.shown = shown
        self.use_fds = use_fds
        self.anchors: list[int | str] = []
        self.names: list[str] = []
        #: The components not yet resolved when a lookup failed.
        self.missing: list[str] = []
        #: Path mode only: folders walked, re-checked after the open (narrows races).
        self.checked: list[tuple[str, int, int]] = []

    def recheck(self) -> None:
        """Path mode: every folder walked is still the same folder (not a link)."""
        for path, dev, ino in self.checked:
            try:
                st = os.lstat(path)
            except OSError:
                st = None
            if st is None or not stat.S_ISDIR(st.st_mode) or (st.st_dev, st.st_ino) != (dev, ino):
                raise _blocked(self.shown, "race", "a folder on the path changed while reading")

    # -- primitives -------------------------------------------------------------------
    def _lstat(self, name: str) -> os.stat_result:
        anchor = self.anchors[-1]
        if isinstance(anchor, int):
            return os.stat(name, dir_fd=anchor, follow_symlinks=False)
        return os.lstat(os.path.join(anchor, name))

    def _readlink(self, name: str) -> str:
        anchor = self.anchors[-1]
        if isinstance(anchor, int):
            return os.readlink(name, dir_fd=anchor)
        return os.readlink(os.path.join(anchor, name))

    def _open(self, name: str, flags: int) -> int:
        anchor = self.anchors[-1]
        if isinstance(anchor, int):
            return os.open(name, flags, dir_fd=anchor)
        return os.open(os.path.join(anchor, name), flags)

    def _push_dir(self, name: str, st: os.stat_result) -> None:
        if not self.use_fds:
            anchor = self.anchors[-1]
            assert isinstance(anchor, str)
            self.anchors.append(os.path.join(anchor, name))
            self.names.append(name)
            self.checked.append((os.path.join(anchor, name), st.st_dev, st.st_ino))
            return
        try:
            fd = self._open(name, _DIR_FLAGS)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise _blocked(
                    self.shown, "race", "a folder on the path changed while checking it"
                ) from exc
            raise
        got = os.fstat(fd)
        if (got.st_dev, got.st_ino) != (st.st_dev, st.st_ino):
            os.close(fd)
            raise _blocked(self.shown, "race", "a folder on the path changed while checking it")
        self.anchors.append(fd)
        self.names.append(name)

    def _pop_dir(self) -> None:
        anchor = self.anchors.pop()
        self.names.pop()
        if isinstance(anchor, int):
            os.close(anchor)

    def close(self) -> None:
        for anchor in self.anchors:
            if isinstance(anchor, int):
                try:
                    os.close(anchor)
                except OSError:
                    pass
        self.anchors.clear()
        self.names.clear()

    # -- the walk ---------------------------------------------------------------------
    def start(self) -> None:
        if self.use_fds:
            try:
                self.anchors.append(os.open(self.jail, _DIR_FLAGS))
            except OSError as exc:
                raise _io_error(self.shown, exc, "cannot open the skill folder") from exc
        else:
            self.anchors.append(str(self.jail))

    def resolve(self, segments: Iterable[str]) -> tuple[str, os.stat_result] | None:
        """Walk to the leaf; return (leaf name, lstat) with the parent as the last anchor,
        or None when the leaf is the jail itself."""
        pending: deque[str] = deque(segments)
        hops = 0
        while pending:
            name = pending.popleft()
            if name in ("", "."):
                continue
            if name == "..":  # only ever comes from a symlink target
                if not self.names:
                    raise _blocked(
                        self.shown, "symlink_escape", "a symlink points outside the skill"
                    )
                self._pop_dir()
                continue
            try:
                st = self._lstat(name)
            except OSError as exc:
                self.missing = [name, *pending]
                raise _io_error(self.shown, exc) from exc
            if stat.S_ISLNK(st.st_mode):
                hops += 1
                if hops > MAX_SYMLINK_HOPS:
                    raise _blocked(
                        self.shown,
                        "symlink_loop",
                        f"more than {MAX_SYMLINK_HOPS} symlinks (a loop?)",
                    )
                try:
                    target = self._readlink(name)
                except OSError as exc:
                    raise _io_error(self.shown, exc) from exc
                link = "/".join([*self.names, name])
                if os.path.isabs(target):
                    parts = Path(target).parts
                    if not _is_inside(parts, self.jail_parts):
                        raise _blocked(
                            self.shown,
                            "symlink_escape",
                            f"symlink {link!r} points outside the skill folder",
                            link=link,
                        )
                    while self.names:
                        self._pop_dir()
                    pending.extendleft(reversed(parts[len(self.jail_parts) :]))
                else:
                    pending.extendleft(reversed(target.split("/")))
                continue
            if any(p not in ("", ".") for p in pending):
                if not stat.S_ISDIR(st.st_mode):
                    raise SkillIOError(
                        f"cannot read {self.shown!r}: {'/'.join([*self.names, name])!r} "
                        "is not a folder",
                        path=self.shown,
                        reason="not_a_directory",
                    )
                try:
                    self._push_dir(name, st)
                except OSError as exc:
                    raise _io_error(self.shown, exc) from exc
                continue
            return name, st
        return None


def _io_error(shown: str, exc: OSError, what: str | None = None) -> SkillIOError:
    reason = {
        errno.ENOENT: "not_found",
        errno.EACCES: "permission_denied",
        errno.EPERM: "permission_denied",
        errno.ENOTDIR: "not_a_directory",
        errno.ENAMETOOLONG: "name_too_long",
        errno.ELOOP: "symlink_loop",
    }.get(exc.errno or 0, "os_error")
    text = what or ("no such file" if reason == "not_found" else exc.strerror or str(exc))
    return SkillIOError(f"cannot read {shown!r}: {text}", path=shown, reason=reason)


def check_extension(name: str, allowed: Iterable[str], *, shown: str) -> None:
    """Refuse a file name whose extension is not in ``allowed`` (case-insensitive)."""
    allowed_set = {("." + a.lower().lstrip(".")) if a else "" for a in allowed}
    suffix = os.path.splitext(name)[1].lower()
    if suffix not in allowed_set:
        shown_allowed = " ".join(sorted(a for a in allowed_set if a)) or "(none)"
        raise DisallowedFileType(
            f"{shown!r}: extension {suffix or '(none)'!r} is not allowed "
            f"(allowed: {shown_allowed})",
            path=shown,
            reason="extension",
            extension=suffix,
            allowed=sorted(allowed_set),
        )


def real_jail(folder: Path) -> Path:
    """The skill folder's real path: a folder reached through a symlink is jailed to its target."""
    try:
        real = Path(os.path.realpath(folder, strict=True))
    except OSError as exc:
        raise SkillIOError(
            f"skill folder {str(folder)!r} is not readable: {exc.strerror}",
            path=str(folder),
            reason="skill_folder",
        ) from exc
    return real


def open_in_jail(
    jail: Path,
    segments: Sequence[str],
    *,
    shown: str,
    allowed_extensions: Iterable[str] | None = None,
    use_fds: bool | None = None,
) -> OpenedFile:
    """Open the regular file ``segments`` names under ``jail`` (an absolute real path).

    ``allowed_extensions`` (when given) applies to the requested name and to the real
    file name a symlink resolves to; it is checked after the walk (which only lstat's),
    so a folder or a FIFO is reported as such, and before anything is opened.
    Raises :class:`PathTraversalBlocked`, :class:`DisallowedFileType` or
    :class:`SkillIOError`; never follows a link out.
    """
    walk = _Walk(jail, shown, use_fds=FD_WALK if use_fds is None else use_fds)
    try:
        walk.start()
        try:
            found = walk.resolve(segments)
        except SkillIOError as exc:
            if exc.reason == "not_found" and any(c in shown for c in "*?["):
                exc.message += " (names are literal: glob patterns are not expanded)"
                exc.args = (exc.message,)
            raise
        if found is None:
            raise DisallowedFileType(
                f"{shown!r} is the skill folder, not a file", path=shown, reason="directory"
            )
        name, st = found
        relative = "/".join([*walk.names, name])
        if not stat.S_ISREG(st.st_mode):
            kind = file_kind(st.st_mode)
            raise DisallowedFileType(
                f"{shown!r} is a {kind}, not a regular file", path=shown, reason=kind.lower()
            )
        # The walk only lstat'ed; nothing is opened before both names pass the allowlist:
        # the name asked for, and the real name a link resolved to.
        if allowed_extensions is not None:
            check_extension(segments[-1], allowed_extensions, shown=shown)
            if name != segments[-1]:
                check_extension(name, allowed_extensions, shown=shown)
        try:
            fd = walk._open(name, _FILE_FLAGS)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _blocked(
                    shown, "race", "the file became a symlink while checking it"
                ) from exc
            raise _io_error(shown, exc) from exc
        try:
            try:
                got = regular_stat(fd, shown, expect=st)
            except (NotRegularFile, FileReplaced) as exc:
                raise _blocked(shown, "race", "the file changed while checking it") from exc
            walk.recheck()
        except BaseException:
            os.close(fd)
            raise
        return OpenedFile(fd, got, jail.joinpath(*relative.split("/")), relative)
    finally:
        walk.close()


def safe_join(base: Path | str, relative_path: str) -> Path:
    """``base / relative_path`` resolved, guaranteed inside ``realpath(base)``.

    Like the MCP SDK's ``safe_join``, but symlinks are checked at every step and the
    target need not exist (missing trailing components are joined as written).
    Raises :class:`PathTraversalBlocked` for anything that would leave the folder.
    """
    jail = real_jail(Path(base))
    try:
        segments = check_relative_path(relative_path)
    except PathTraversalBlocked as exc:
        if exc.reason == "empty":
            return jail  # "" or "." is the folder itself
        raise
    walk = _Walk(jail, relative_path, use_fds=FD_WALK)
    try:
        walk.start()
        try:
            found = walk.resolve(segments)
        except SkillIOError as exc:
            if exc.reason != "not_found":
                raise
            # The rest does not exist yet: join it to the deepest real folder reached.
            # No link can hide in a missing part, but a link target may have left a
            # '..' to apply after it, which cannot be resolved safely: refuse that.
            rest = [p for p in walk.missing if p not in ("", ".")]
            if ".." in rest:
                raise _blocked(
                    relative_path,
                    "symlink_escape",
                    "a symlink target climbs out of a missing folder",
                ) from exc
            return jail.joinpath(*walk.names, *rest)
        if found is None:
            return jail
        return jail.joinpath(*walk.names, found[0])
    finally:
        walk.close()


def read_limited(opened: OpenedFile, limit: int, *, shown: str, what: str = "file") -> bytes:
    """Read the whole file, refusing it when over ``limit`` bytes (stat first, then
    at most ``limit + 1`` bytes, so a file that grows while read is refused too)."""
    from skillrt.errors import FileTooLarge

    size = opened.stat.st_size
    if size > limit:
        raise FileTooLarge(
            f"{shown!r} is {size:,} bytes, over the {limit:,}-byte {what} limit",
            path=shown,
            size=size,
            limit=limit,
        )
    chunks: list[bytes] = []
    remaining = limit + 1
    want = min(size + 1, remaining)
    try:
        while remaining > 0:
            chunk = os.read(opened.fd, max(1, min(want, remaining)))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
            want = 1 << 20
    except OSError as exc:
        raise _io_error(shown, exc) from exc
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if len(data) > limit:
        raise FileTooLarge(
            f"{shown!r} grew past the {limit:,}-byte {what} limit while being read",
            path=shown,
            size=len(data),
            limit=limit,
        )
    return data
