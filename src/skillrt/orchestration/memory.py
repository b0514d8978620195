"""Memory files: the only channel between phases, confined to one folder.

Names are fixed by seed 002: ``{task_id}-workflow-context.md`` (step 4) and
``{task_id}-{agent}-memory.md`` (one per phase). Every path is resolved and checked
against the folder's real path, so neither an agent name with ``../``, an absolute
path, nor a symlink pointing elsewhere can reach a file outside
(:class:`MemoryPathEscape`).

**Completion marker.** A memory file is *completed* when its last non-blank line,
with surrounding whitespace removed, is exactly ``Status: COMPLETED`` (case-sensitive,
no Markdown emphasis). A file that has a line starting with ``Status: BLOCKED`` is
*blocked*; anything else is *not completed*. Because the marker must be the last
line, a half-written file never looks complete.

**A reply as the file.** A runner that returns text answers with the file's content;
:func:`reply_content` is what is written: the reply as it is, except that one code
fence around the whole reply (a model's habit) is taken off. Nothing is added: a reply
without the marker stays not completed.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from skillrt.atomic import atomic_write_text
from skillrt.errors import MemoryPathEscape, MemoryVerificationFailed
from skillrt.fileopen import NotRegularFile, read_regular, text_of

__all__ = [
    "BLOCKED_PREFIX",
    "COMPLETION_LINE",
    "ContextFile",
    "MemoryFolder",
    "VerifiedMemory",
    "context_file_name",
    "reply_content",
    "summary_file_name",
]

COMPLETION_LINE = "Status: COMPLETED"
BLOCKED_PREFIX = "Status: BLOCKED"
DEFAULT_MAX_MEMORY_FILE_BYTES = 1_000_000
DEFAULT_MAX_CONTEXT_FILE_CHARS = 40_000


_FENCE = re.compile(r"^(`{3,}|~{3,})[\w+-]*$")


def reply_content(reply: str) -> str:
    """The memory file a text reply stands for: the reply, without one code fence
    wrapping all of it; ends with a newline (empty when the reply is blank)."""
    text = reply.strip()
    if not text:
        return ""
    lines = text.splitlines()
    opening = _FENCE.match(lines[0].strip())
    if opening and len(lines) >= 2:
        fence = opening.group(1)
        last = lines[-1].strip()
        if last and set(last) == {fence[0]} and len(last) >= len(fence):
            text = "\n".join(lines[1:-1]).strip("\n")
    return text + "\n" if text.strip() else ""


def context_file_name(task_id: str) -> str:
    """The workflow context file of step 4."""
    return f"{task_id}-workflow-context.md"


def summary_file_name(task_id: str) -> str:
    """The aggregate written by step 6."""
    return f"{task_id}-workflow-summary.md"


@dataclass(frozen=True)
class VerifiedMemory:
    """A memory file that passed verification."""

    path: Path
    sha256: str
    bytes: int
    text: str


@dataclass(frozen=True)
class ContextFile:
    """A memory file a phase receives, possibly cut to the per-file budget."""

    name: str
    path: Path
    text: str
    truncated: bool


class MemoryFolder:
    """The memory folder of a run; every path goes through :meth:`path_for`."""

    def __init__(
        self,
        root: Path | str,
        *,
        max_file_bytes: int = DEFAULT_MAX_MEMORY_FILE_BYTES,
        max_context_file_chars: int = DEFAULT_MAX_CONTEXT_FILE_CHARS,
    ) -> None:
        self.root = Path(root).absolute()
        self.max_file_bytes = max_file_bytes
        self.max_context_file_chars = max_context_file_chars

    def ensure(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)

    def _real_root(self) -> str:
        return os.path.realpath(self.root)

    def path_for(self, name: str) -> Path:
        """The path of memory file ``name``; raise if it would leave the folder."""
        if (
            not name
            or "\x00" in name
            or "/" in name
            or "\\" in name
            or name in (".", "..")
            or os.path.isabs(name)
        ):
            raise MemoryPathEscape(
                f"memory file name {name!r} is not a plain file name inside {self.root}",
                name=name,
                memory_dir=str(self.root),
            )
        path = self.root / name
        self._check_inside(path, name)
        return path

    def _check_inside(self, path: Path, name: str) -> None:
        root = self._real_root()
        real = os.path.realpath(path)
        if os.path.commonpath([root, real]) != root or real == root:
            raise MemoryPathEscape(
                f"memory file {name!r} resolves to {real}, outside the memory folder {root}",
                name=name,
                memory_dir=str(self.root),
                resolved=real,
            )

    def write(self, name: str, text: str) -> Path:
        """Atomically write memory file ``name`` (a symlink in its place is refused)."""
        path = self.path_for(name)
        if path.is_symlink():
            raise MemoryPathEscape(
                f"refusing to replace symlink {path} with a memory file",
                name=name,
                memory_dir=str(self.root),
            )
        atomic_write_text(path, text)
        return path

    def read_text(self, name: str) -> str:
        path = self.path_for(name)  # an agent may have put a FIFO there: never block
        return text_of(read_regular(path))

    def verify(self, name: str, *, phase_id: str | None = None) -> VerifiedMemory:
        """Check memory file ``name`` is present, readable, non-empty and completed.

        Raises :class:`MemoryVerificationFailed` with ``reason`` (``missing``,
        ``not_a_file``, ``empty``, ``too_large``, ``unreadable``, ``blocked``,
        ``not_completed``) or :class:`MemoryPathEscape`.
        """
        path = self.path_for(name)

        def fail(reason: str, message: str, **extra: object) -> MemoryVerificationFailed:
            return MemoryVerificationFailed(
                f"phase {phase_id or '?'}: memory file {path} {message}",
                reason=reason,
                phase_id=phase_id,
                memory_file=str(path),
                **extra,
            )

        try:
            st = os.stat(path)  # follows a symlink, already checked to stay inside
        except FileNotFoundError:
            raise fail("missing", "does not exist; the phase's agent has not written it") from None
        except OSError as exc:
            raise fail("unreadable", f"cannot be read: {exc}") from exc
        if not stat.S_ISREG(st.st_mode):
            raise fail("not_a_file", "is not a regular file")
        if st.st_size == 0:
            raise fail("empty", "is empty")
        if st.st_size > self.max_file_bytes:
            raise fail(
                "too_large",
                f"is {st.st_size} bytes, over the {self.max_file_bytes}-byte limit",
                bytes=st.st_size,
            )
        try:
            # Read at most one byte past the limit: the file may grow after the stat,
            # or be swapped for a FIFO (which must not block the run).
            data = read_regular(path, limit=self.max_file_bytes + 1)
            if len(data) > self.max_file_bytes:
                raise fail(
                    "too_large",
                    f"grew past the {self.max_file_bytes}-byte limit while being read",
                    bytes=len(data),
                )
            text = data.decode("utf-8-sig")
        except NotRegularFile:
            raise fail("not_a_file", "is not a regular file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise fail("unreadable", f"cannot be read as UTF-8 text: {exc}") from exc
        lines = [ln.strip() for ln in text.splitlines()]
        content = [ln for ln in lines if ln]
        if not content:
            raise fail("empty", "holds only whitespace")
        if content[-1] == COMPLETION_LINE:
            return VerifiedMemory(
                path=path, sha256=hashlib.sha256(data).hexdigest(), bytes=len(data), text=text
            )
        blocked = next((ln for ln in content if ln.startswith(BLOCKED_PREFIX)), None)
        if blocked is not None:
            at = lines.index(blocked)
            detail = " ".join(ln for ln in lines[at:] if ln)[:500]
            raise fail("blocked", f"reports the phase blocked: {detail}", blocked=detail)
        raise fail(
            "not_completed",
            f"does not end with the line '{COMPLETION_LINE}' (last line: {content[-1][:120]!r})",
            last_line=content[-1][:200],
        )

    def match(
        self, patterns: Sequence[str], task_id: str, *, exclude: Iterable[str] = ()
    ) -> list[ContextFile]:
        """The files matching ``patterns`` (``{task_id}`` substituted), in pattern order.

        Only plain names directly inside the folder match; dot files (atomic-write temp
        files) never do. A matching symlink that leads outside raises.
        """
        excluded = set(exclude)
        try:
            names = sorted(e.name for e in os.scandir(self.root) if not e.name.startswith("."))
        except FileNotFoundError:
            return []
        out: list[ContextFile] = []
        seen: set[str] = set()
        for raw in patterns:
            pattern = raw.replace("{task_id}", task_id)
            if "/" in pattern or "\\" in pattern or ".." in pattern.split("/"):
                raise MemoryPathEscape(
                    f"context pattern {raw!r} reaches outside the memory folder", pattern=raw
                )
            for name in names:
                if name in seen or name in excluded or not fnmatch.fnmatchcase(name, pattern):
                    continue
                path = self.path_for(name)
                if not path.is_file():
                    continue
                try:
                    found = self._context_file(name, path)
                except (FileNotFoundError, NotRegularFile):
                    continue  # removed or swapped for a FIFO since the listing
                seen.add(name)
                out.append(found)
        return out

    def _context_file(self, name: str, path: Path) -> ContextFile:
        limit = self.max_context_file_chars
        # At most 4 bytes a character; a FIFO or device an agent left is refused.
        raw = read_regular(path, limit=4 * (limit + 1))
        text = text_of(raw, errors="replace")[: limit + 1]
        truncated = len(text) > limit
        if truncated:
            text = text[:limit]
        return ContextFile(name=name, path=path, text=text, truncated=truncated)
