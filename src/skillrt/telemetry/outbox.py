"""Route events that could not reach the state store, kept on this machine until they can.

A process that ends (or a queue that grows too long) while its store is unreachable
writes the events it still holds to ``<state dir>/outbox/`` (next to ``cache.db`` for
PostgreSQL, ``state.db`` for SQLite): one file per spill, written atomically. The next
writer on this machine that reaches the store claims each file (a rename, so two
processes never write one file), writes its events (idempotently: an event already
stored adds nothing) and deletes it. A file claimed by a process that died is claimed
again.

What cannot be kept (the outbox is full or cannot be written, the store refuses the
event for good: read-only, broken) is *lost*, and counted: one line per loss in
``outbox/lost.log``. ``skillrt stats`` reports both (:meth:`Outbox.summary`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.store.base import Store
    from skillrt.telemetry.events import RouteEvent

__all__ = ["MAX_OUTBOX_EVENTS", "Outbox", "outbox_for"]

log = logging.getLogger("skillrt.telemetry")

OUTBOX_DIR = "outbox"
LOST_LOG = "lost.log"
#: Most events kept in one machine's outbox; past it, events are counted as lost.
MAX_OUTBOX_EVENTS = 100_000
_PREFIX = "events-"
_SUFFIX = ".jsonl"
_CLAIMED = ".claimed-"

Item = tuple["RouteEvent", Sequence[str]]


def outbox_for(store: Store) -> Outbox | None:
    """The outbox of ``store``'s state folder; None for a store without one (in memory,
    or a PostgreSQL handle opened without a local cache file)."""
    # The state's own folder (a server store's: its local cache file's), never a cache
    # folder other projects share: its events belong to this store.
    file = store.file if store.file is not None else store.local.file
    return None if file is None else Outbox(file.parent / OUTBOX_DIR)


def _encode(event: RouteEvent, candidates: Sequence[str]) -> str:
    data = asdict(event)
    data["selected_skills"] = list(event.selected_skills)
    return json.dumps({"event": data, "candidates": list(candidates)}, ensure_ascii=False)


def _decode(line: str) -> Item:
    from skillrt.telemetry.events import RouteEvent

    data = json.loads(line)
    fields = dict(data["event"])
    fields["selected_skills"] = tuple(fields["selected_skills"])
    return RouteEvent(**fields), [str(c) for c in data["candidates"]]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Outbox:
    """The outbox folder of one state folder (see the module docstring)."""

    def __init__(self, folder: Path, *, max_events: int = MAX_OUTBOX_EVENTS) -> None:
        self.folder = folder
        self.max_events = max_events

    # -- keeping --------------------------------------------------------------------
    def spill(self, items: Sequence[Item], *, reason: str) -> int:
        """Keep ``items`` for a later writer; what does not fit (or cannot be written)
        is counted as lost. Returns how many were kept. Never raises."""
        if not items:
            return 0
        from skillrt.atomic import atomic_write_bytes

        room = max(0, self.max_events - self.pending())
        kept = list(items[-room:]) if room else []  # the newest are kept
        if kept:
            name = f"{_PREFIX}{time.time_ns()}-{os.getpid()}{_SUFFIX}"
            text = "".join(_encode(e, c) + "\n" for e, c in kept)
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                atomic_write_bytes(self.folder / name, text.encode("utf-8"), mode=0o600)
            except OSError as exc:
                log.warning("telemetry: cannot keep route events in %s: %s", self.folder, exc)
                kept = []
        lost = len(items) - len(kept)
        if lost:
            self.count_lost(lost, f"{reason}; outbox full or unwritable")
        return len(kept)

    def count_lost(self, count: int, reason: str) -> None:
        """Record that ``count`` events were lost, and why (one appended line)."""
        if count <= 0:
            return
        line = f"{time.time():.3f} {count} {' '.join(reason.split())}\n"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.folder / LOST_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line.encode("utf-8"))  # one write: lines never interleave
            finally:
                os.close(fd)
        except OSError as exc:
            log.warning("telemetry: %d route event(s) lost (%s); cannot count them: %s",
                        count, reason, exc)  # fmt: skip

    # -- draining -------------------------------------------------------------------
    def files(self) -> list[Path]:
        """Files waiting to be written (a dead process's claimed files included)."""
        try:
            names = sorted(os.listdir(self.folder))
        except OSError:
            return []
        out = []
        for name in names:
            if not name.startswith(_PREFIX):
                continue
            if name.endswith(_SUFFIX):
                out.append(self.folder / name)
            elif _CLAIMED in name:
                pid = name.rsplit(_CLAIMED, 1)[1]
                if pid.isdigit() and not _alive(int(pid)):
                    out.append(self.folder / name)
        return out

    def drain(self, write: Callable[[Sequence[Item]], Any], *, batch_size: int = 256) -> int:
        """Write every waiting file through ``write`` (a batch writer that raises on
        failure) and delete it; returns the events written. A failure puts the file
        back and is raised."""
        written = 0
        for path in self.files():
            claimed = self._claim(path)
            if claimed is None:
                continue  # another process took it
            try:
                items = list(self._read(claimed))
                for start in range(0, len(items), batch_size):
                    write(items[start : start + batch_size])
            except BaseException:
                with contextlib.suppress(OSError):
                    os.replace(claimed, self._unclaimed(claimed))
                raise
            written += len(items)
            with contextlib.suppress(OSError):
                os.unlink(claimed)
        return written

    def _claim(self, path: Path) -> Path | None:
        target = self.folder / (self._unclaimed(path).name + f"{_CLAIMED}{os.getpid()}")
        try:
            os.rename(path, target)
        except OSError:
            return None
        return target

    @staticmethod
    def _unclaimed(path: Path) -> Path:
        name = path.name.split(_CLAIMED, 1)[0]
        return path.with_name(name if name.endswith(_SUFFIX) else name + _SUFFIX)

    def _read(self, path: Path) -> Iterator[Item]:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return
        bad = 0
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                yield _decode(line)
            except (ValueError, KeyError, TypeError):
                bad += 1
        if bad:
            self.count_lost(bad, f"unreadable lines in {path.name}")

    # -- reporting ------------------------------------------------------------------
    def pending(self) -> int:
        """Events waiting in the outbox."""
        total = 0
        for path in self.files():
            try:
                with open(path, "rb") as fh:
                    total += sum(1 for line in fh if line.strip())
            except OSError:
                continue
        return total

    def lost(self) -> int:
        """Events counted as lost on this machine."""
        try:
            text = (self.folder / LOST_LOG).read_text(encoding="utf-8")
        except OSError:
            return 0
        total = 0
        for line in text.splitlines():
            parts = line.split(" ", 2)
            if len(parts) >= 2 and parts[1].isdigit():
                total += int(parts[1])
        return total

    def summary(self) -> dict[str, Any]:
        """``{"pending", "lost", "outbox"}``: what ``skillrt stats`` reports."""
        return {"pending": self.pending(), "lost": self.lost(), "outbox": str(self.folder)}
