"""Domain learnings (seed 002 step 0 and O5): read before a phase, grown after a run.

Each domain has one Markdown file, ``<learnings_dir>/<domain>.md``. Every phase agent
gets it in its prompt. When a run completes, the bullets of each phase's
``## Learnings`` section are appended to it, attributed as
``- <lesson> _(task <task_id>, phase <phase>)_``; a lesson already present (same text
after normalising case, spacing and attribution) is not added again, so re-running
step 6 after a crash adds nothing twice. The file is rewritten atomically under an
advisory lock, so two runs finishing at once both land.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from skillrt.atomic import atomic_write_text
from skillrt.errors import MemoryPathEscape, StoreError
from skillrt.fileopen import NotRegularFile, read_regular, text_of

__all__ = [
    "FileLearnings",
    "Learning",
    "LearningsBook",
    "LearningsMerge",
    "LearningsText",
    "extract_learnings",
    "learnings_path",
    "merge_learnings",
    "read_learnings",
]

DEFAULT_MAX_LEARNINGS_CHARS = 12_000
SECTION_TITLE = "learnings"
_DOMAIN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(.*)$")
_ATTRIBUTION = re.compile(r"\s*_\(task [0-9a-f]{12}, phase [^)]*\)_\s*$")
_EMPTY_ITEMS = frozenset({"none", "n/a", "na", "nothing", "-", "nothing new", "no learnings"})


@dataclass(frozen=True)
class Learning:
    """One lesson from a phase's memory file."""

    text: str
    task_id: str
    phase_id: str

    def line(self) -> str:
        return f"- {self.text} _(task {self.task_id}, phase {self.phase_id})_"


@dataclass(frozen=True)
class LearningsText:
    """The learnings injected into a phase prompt (``path`` None: kept in the store)."""

    domain: str
    path: Path | None
    text: str
    truncated: bool = False


@dataclass(frozen=True)
class LearningsMerge:
    """What step 6 did to a domain's learnings (``path`` None: kept in the store)."""

    domain: str
    path: Path | None
    added: tuple[str, ...] = ()
    duplicates: tuple[str, ...] = field(default_factory=tuple)


class LearningsBook(Protocol):
    """Where a domain's learnings are kept: files, or a shared store."""

    def read(self, domain: str, *, max_chars: int = ...) -> LearningsText: ...

    def merge(self, domain: str, learnings: Sequence[Learning]) -> LearningsMerge: ...


@dataclass(frozen=True)
class FileLearnings:
    """``<folder>/<domain>.md`` files (an embedded store's learnings)."""

    folder: Path

    def read(self, domain: str, *, max_chars: int = DEFAULT_MAX_LEARNINGS_CHARS) -> LearningsText:
        return read_learnings(self.folder, domain, max_chars=max_chars)

    def merge(self, domain: str, learnings: Sequence[Learning]) -> LearningsMerge:
        return merge_learnings(self.folder, domain, learnings)


def heading(domain: str) -> str:
    """The first line of a domain's learnings."""
    return f"# {domain.capitalize()} domain learnings"


def tail(text: str, max_chars: int) -> tuple[str, bool]:
    """The newest (last) whole lines of ``text`` within ``max_chars``; truncated?"""
    if len(text) <= max_chars:
        return text.strip(), False
    end = text[-max_chars:]
    cut = end.find("\n")
    return (end[cut + 1 :] if cut >= 0 else end).strip(), True


def learnings_path(learnings_dir: Path, domain: str) -> Path:
    """``<learnings_dir>/<domain>.md``; a domain that is not a plain name is refused."""
    if not _DOMAIN.match(domain):
        raise MemoryPathEscape(
            f"domain {domain!r} is not a plain name; cannot build its learnings path",
            domain=domain,
        )
    return Path(learnings_dir) / f"{domain}.md"


def read_learnings(
    learnings_dir: Path, domain: str, *, max_chars: int = DEFAULT_MAX_LEARNINGS_CHARS
) -> LearningsText:
    """The domain's learnings; over ``max_chars`` keep the newest (last) lines."""
    path = learnings_path(learnings_dir, domain)
    try:
        text = text_of(read_regular(path), errors="replace")
    except (FileNotFoundError, NotRegularFile, NotADirectoryError):
        return LearningsText(domain=domain, path=path, text="")
    kept, truncated = tail(text, max_chars)
    return LearningsText(domain=domain, path=path, text=kept, truncated=truncated)


def extract_learnings(memory_text: str) -> list[str]:
    """The items of the ``## Learnings`` section (any heading level, case-insensitive).

    Bullet and numbered items are one lesson each (continuation lines joined); plain
    paragraphs are one lesson each. The section ends at the next heading of the same
    or a higher level, or at a ``Status:`` line.
    """
    lines = memory_text.splitlines()
    start = level = None
    for i, line in enumerate(lines):
        m = _HEADING.match(line)
        if m and m.group(2).strip().lower().rstrip(":") == SECTION_TITLE:
            start, level = i + 1, len(m.group(1))
            break
    if start is None or level is None:
        return []
    items: list[str] = []
    current: list[str] = []
    in_fence = False

    def flush() -> None:
        if current:
            text = " ".join(" ".join(current).split())
            if text and text.lower().strip(".") not in _EMPTY_ITEMS:
                items.append(text)
            current.clear()

    for line in lines[start:]:
        stripped = line.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = _HEADING.match(line)
        if m:
            if len(m.group(1)) <= level:
                break
            flush()  # a sub-heading groups lessons; it is not one itself
            continue
        if stripped.startswith("Status:"):
            break
        bullet = _BULLET.match(line)
        if bullet:
            flush()
            current.append(bullet.group(1))
        elif not stripped:
            flush()
        else:
            current.append(stripped)
    flush()
    return items


def normalise(text: str) -> str:
    """A lesson's identity: lower case, single spaces, no attribution or end stop."""
    return _normalise(text)


def existing_lines(text: str) -> list[tuple[str, str]]:
    """``(key, line)`` of every bullet of a learnings file, in order."""
    out = []
    for line in text.splitlines():
        m = _BULLET.match(line)
        if m:
            out.append((_normalise(m.group(1)), line.rstrip()))
    return out


def file_lessons(folder: Path) -> tuple[list[Path], list[tuple[str, str, str]]]:
    """The ``<folder>/<domain>.md`` files and ``(domain, key, line)`` of each of their
    bullets, for ``state migrate`` to import into a shared store (an unreadable file:
    ``StoreError``)."""
    files: list[Path] = []
    out: list[tuple[str, str, str]] = []
    if not folder.is_dir():
        return files, out
    for path in sorted(folder.glob("*.md")):
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise StoreError(f"cannot read learnings file {path}: {exc}", path=str(path)) from exc
        files.append(path)
        out += [(path.stem, key, line) for key, line in existing_lines(text) if key]
    return files, out


def _normalise(text: str) -> str:
    text = _ATTRIBUTION.sub("", text)
    return " ".join(text.lower().split()).rstrip(" .;")


def _existing(text: str) -> set[str]:
    found = set()
    for line in text.splitlines():
        m = _BULLET.match(line)
        if m:
            found.add(_normalise(m.group(1)))
    return found


def merge_learnings(
    learnings_dir: Path, domain: str, learnings: Sequence[Learning]
) -> LearningsMerge:
    """Append new lessons to the domain's file (atomic, locked, deduplicated)."""
    path = learnings_path(learnings_dir, domain)
    if not learnings:
        return LearningsMerge(domain=domain, path=path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        try:
            current = text_of(read_regular(path))
        except (FileNotFoundError, NotRegularFile):  # a FIFO or folder there is replaced
            current = f"{heading(domain)}\n\n"
        known = _existing(current)
        added: list[str] = []
        duplicates: list[str] = []
        for item in learnings:
            key = _normalise(item.text)
            if not key or key in known:
                duplicates.append(item.text)
                continue
            known.add(key)
            added.append(item.line())
        if added:
            body = current if current.endswith("\n") else current + "\n"
            atomic_write_text(path, body + "\n".join(added) + "\n")
    return LearningsMerge(
        domain=domain, path=path, added=tuple(added), duplicates=tuple(duplicates)
    )


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An advisory lock beside the file (POSIX ``flock``; elsewhere no lock)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    lock_path = path.parent / f".{path.name}.lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
