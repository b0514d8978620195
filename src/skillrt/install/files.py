"""Editing a client's config file safely: plan the new text, show the diff, back up the
old file, write atomically.

An edit is planned as ``(path, before, after)`` texts (``None`` = no file); nothing is
written until :func:`apply` runs, and :func:`apply` writes only files whose text
changes. JSON files keep their key order, their indentation and their final newline;
TOML files are edited as text (a marked block), so comments and layout survive.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillrt.atomic import atomic_write_text
from skillrt.errors import InstallError

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
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"cannot read {path}: {exc}", path=str(path)) from exc


def apply(edits: list[FileEdit], *, dry_run: bool = False) -> list[Applied]:
    """Write every changed file (old text to ``<file>.skillrt.bak`` first); with
    ``dry_run`` only report what would change."""
    out = []
    for edit in edits:
        backup = None
        if edit.changed and not dry_run:
            if edit.before is not None:
                backup = edit.path.with_name(edit.path.name + BACKUP_SUFFIX)
                atomic_write_text(backup, edit.before)
            if edit.after is None:
                edit.path.unlink()
            else:
                atomic_write_text(edit.path, edit.after)
        out.append(Applied(edit.path, edit.changed, backup, edit.diff()))
    return out


# -- JSON ---------------------------------------------------------------------------------
def load_json(path: Path, text: str | None) -> dict[str, Any]:
    """The document (``{}`` for no file); anything but a JSON object is an error."""
    if text is None or not text.strip():
        return {}
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


def dump_json(data: dict[str, Any], like: str | None) -> str | None:
    """``data`` in the layout of the text it replaces (its indentation, escaping and
    final newline); ``None`` (no file) for an empty document."""
    if not data:
        return None
    indent: int | str = 2
    if like:
        match = re.search(r"\n([ \t]+)\S", like)
        if match:
            found = match.group(1)
            indent = len(found) if set(found) == {" "} else found
    # An all-ASCII file keeps its \u escapes; anything else keeps its characters as is.
    text = json.dumps(data, indent=indent, ensure_ascii=like is not None and like.isascii())
    return text + "\n" if like is None or like.endswith("\n") else text
