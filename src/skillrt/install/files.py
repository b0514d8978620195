"""Editing a client's config file safely: plan the new text, show the diff, back up the
old file, write atomically.

An edit is planned as ``(path, before, after)`` texts (``None`` = no file); nothing is
written until :func:`apply` runs, and :func:`apply` writes only files whose text
changes, with the file's own mode (a new file gets the usual ``0o666 & ~umask``). The
text a file had before is kept in skillrt's own backup folder (never beside the file,
in the user's repository): ``<backups>/<name>-<hash of its path>.bak``. JSON
files keep their key order and their layout (indentation, or one compact line, the
separators' spacing, escaping, final newline); TOML files are edited as text (a marked
block), so comments and layout survive. An uninstall that leaves the data the file had
before the install gives back its exact bytes (:func:`restore_original`).
"""

from __future__ import annotations

import difflib
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillrt.atomic import atomic_write_bytes
from skillrt.errors import InstallError

#: The suffix of a backup kept beside the file by skillrt 0.1 installs (still read, and
#: removed by an uninstall).
BACKUP_SUFFIX = ".skillrt.bak"


@dataclass(frozen=True)
class FileEdit:
    path: Path
    before: str | None
    after: str | None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff of the planned change ("" when none)."""
        if not self.changed:
            return ""
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=str(self.path) if self.before is not None else "/dev/null",
            tofile=str(self.path) if self.after is not None else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass(frozen=True)
class Applied:
    path: Path
    changed: bool
    backup: Path | None
    diff: str


def read_text(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")  # as is: CRLF stays CRLF
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"cannot read {path}: {exc}", path=str(path)) from exc


def backup_path(path: Path, backups: Path) -> Path:
    """Where the text ``path`` had before skillrt changed it is kept."""
    import zlib

    real = os.path.realpath(path).encode("utf-8", "surrogateescape")
    return backups / f"{path.name}-{zlib.crc32(real):08x}{zlib.crc32(real[::-1]):08x}.bak"


def legacy_backup(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def apply(edits: list[FileEdit], *, backups: Path, dry_run: bool = False) -> list[Applied]:
    """Write every changed file (its old text to :func:`backup_path` first), keeping the
    file's mode; with ``dry_run`` only report what would change. A backup an older
    install left beside a file is removed once the file is written."""
    out = []
    for edit in edits:
        backup = None
        if edit.changed and not dry_run:
            mode = _mode(edit.path)
            if edit.before is not None:
                backup = backup_path(edit.path, backups)
                backups.mkdir(parents=True, exist_ok=True, mode=0o700)
                atomic_write_bytes(backup, edit.before.encode("utf-8"), mode=0o600)
            if edit.after is None:
                edit.path.unlink()
            else:
                atomic_write_bytes(edit.path, edit.after.encode("utf-8"), mode=mode)
            legacy = legacy_backup(edit.path)
            if legacy.is_file():
                legacy.unlink()
        out.append(Applied(edit.path, edit.changed, backup, edit.diff()))
    return out


def restore_original(edit: FileEdit, parse: Callable[[str], Any], backups: Path) -> FileEdit:
    """``edit`` (an uninstall), or the file's text from before the install when that
    holds the same data as ``edit.after``: the backup :func:`apply` kept, byte for byte.
    ``parse`` reads a text into comparable data (``""`` is no data)."""
    if not edit.changed:
        return edit
    original = None
    for candidate in (backup_path(edit.path, backups), legacy_backup(edit.path)):
        if candidate.parent.is_dir():
            original = read_text(candidate)
        if original is not None:
            break
    if original is None:
        return edit
    try:
        same = parse(original) == parse(edit.after or "")
    except (ValueError, InstallError):
        return edit
    return FileEdit(edit.path, edit.before, original) if same else edit


def _mode(path: Path) -> int:
    """``path``'s permission bits, or what a new file gets here (``0o666 & ~umask``)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    try:  # Linux shows it without changing it
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


# -- JSON ---------------------------------------------------------------------------------
def load_json(path: Path, text: str | None, *, comments: bool = False) -> dict[str, Any]:
    """The document (``{}`` for no file); anything but a JSON object is an error. With
    ``comments``, ``//`` and ``/* */`` comments are allowed (Gemini CLI's settings)."""
    if text is None or not text.strip():
        return {}
    if comments:
        from skillrt.install.jsonedit import blank_comments

        text = blank_comments(text)
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InstallError(
            f"{path} is not valid JSON ({exc}); fix it or move it away, then run again",
            path=str(path),
        ) from exc
    if not isinstance(data, dict):
        raise InstallError(f"{path} does not hold a JSON object", path=str(path))
    return data


def parse_json(text: str) -> Any:
    """A JSON text's data for comparisons (``{}`` for an empty text; comments, as
    Gemini CLI's settings may hold, left out)."""
    from skillrt.install.jsonedit import blank_comments

    return json.loads(blank_comments(text)) if text.strip() else {}


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def edit_json(
    like: str | None, before: dict[str, Any], data: dict[str, Any], *, comments: bool = False
) -> str | None:
    """The text ``like`` (whose data is ``before``) changed to hold ``data``: only the
    members that changed are touched (:mod:`skillrt.install.jsonedit`), so the rest of
    the file keeps its bytes, inline objects included; ``None`` (no file) for an empty
    document, :func:`dump_json` for a new one."""
    if not data:
        return None
    if like is None or not like.strip():
        return dump_json(data, like)
    from skillrt.install.jsonedit import edit_text

    return edit_text(like, before, data, comments=comments)


def dump_json(data: dict[str, Any], like: str | None) -> str | None:
    """``data`` in the layout of the text it replaces: indented as it is (spaces or
    tabs), or on one compact line when it is one line, with its separators' spacing,
    its escaping and its final newline; ``None`` (no file) for an empty document."""
    if not data:
        return None
    indent: int | str | None = 2
    separators = (",", ": ")
    skeleton = _STRING.sub('""', like.strip()) if like else ""  # no string contents
    if ":" in skeleton:  # "{}" has no layout to keep
        colon = re.search(r'"":(\s?)', skeleton)
        key_sep = ": " if colon is None or colon.group(1) else ":"
        if "\n" in skeleton:
            match = re.search(r"\n([ \t]+)\S", skeleton)
            if match:
                found = match.group(1)
                indent = len(found) if set(found) == {" "} else found
            separators = (",", key_sep)
        else:
            indent = None
            comma = re.search(r",(\s?)", skeleton)
            spaced = bool(comma.group(1)) if comma else key_sep.endswith(" ")
            separators = (", " if spaced else ",", key_sep)
    # An all-ASCII file keeps its \u escapes; anything else keeps its characters as is.
    text = json.dumps(
        data,
        indent=indent,
        separators=separators,
        ensure_ascii=like is not None and like.isascii(),
    )
    return text + "\n" if like is None or like.endswith("\n") else text
