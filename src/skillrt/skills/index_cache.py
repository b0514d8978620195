"""The parsed-skill index cache: an unchanged SKILL.md is never parsed twice.

Rows are keyed by the skill file's path; a row is fresh while the file's mtime (ns) and
size match and it was written by this parser version. A row written while the file was
only seconds old is also checked against the content hash (sha256 of the Level-1
bytes) before use, so an edit within one mtime tick is never missed. Writes are
batched into one transaction, rows of files that are gone are pruned, and a store
that cannot be read or written only costs the cache (a warning), never the listing.

The cache belongs to this machine (paths and mtimes mean nothing elsewhere): it lives in
the store's local SQLite file (:attr:`Store.local`), also when the shared state is on
PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillrt.config import DEFAULT_MAX_FRONTMATTER_BYTES
from skillrt.errors import StoreError
from skillrt.fileopen import open_regular
from skillrt.skills.model import BrokenSkill, Skill
from skillrt.skills.reader import PARSER_VERSION, read_frontmatter_bytes
from skillrt.skills.records import cache_build, cache_dumps
from skillrt.store.base import Store

log = logging.getLogger(__name__)

#: A file modified this recently may be modified again within the same mtime tick (file
#: times are only as fine as the kernel's clock tick), so mtime and size cannot prove it
#: unchanged: its row is marked "racy" and checked against the content hash when read
#: (as git does for its index). Once older, the row is rewritten without the mark.
RACY_WINDOW_NS = 2_000_000_000


def _is_racy(key: FileKey) -> bool:
    return key.mtime_ns >= time.time_ns() - RACY_WINDOW_NS


@dataclass(frozen=True)
class FileKey:
    path: str
    mtime_ns: int
    size: int


@dataclass
class IndexCache:
    """Reads all cached rows once, serves hits from memory, writes misses in one go."""

    store: Store | None
    #: path -> (mtime_ns, size, index into _texts)
    _rows: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    _texts: list[str] = field(default_factory=list)
    _records: list[Any] | None = None
    _pending: list[tuple[FileKey, Skill | BrokenSkill]] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)
    hits: int = 0
    misses: int = 0
    max_frontmatter_bytes: int = DEFAULT_MAX_FRONTMATTER_BYTES
    #: Why the cache could not be used (read or write), for the registry's diagnostics.
    problems: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.store is None:
            return
        try:
            rows = self.store.skill_index_cache.rows(PARSER_VERSION)
        except StoreError as exc:
            self._problem(f"index cache unavailable, parsing every skill: {exc}")
            return
        texts = self._texts
        for path, mtime_ns, size, record in rows:
            self._rows[path] = (mtime_ns, size, len(texts))
            texts.append(record)

    def _problem(self, message: str) -> None:
        log.warning("%s", message)
        self.problems.append(message)

    def get(
        self,
        key: FileKey,
        *,
        path: Path,
        skill_file: Path,
        namespace: str | None,
        source: str,
        root: Path | None,
    ) -> Skill | BrokenSkill | None:
        """The cached skill for ``key`` placed at the given location, or None (a miss)."""
        self._seen.add(key.path)
        row = self._rows.get(key.path)
        if row is None or row[0] != key.mtime_ns or row[1] != key.size:
            self.misses += 1
            return None
        try:
            record = self._record(row[2])
            if record.get("racy") and not self._same_content(key, record["content_hash"]):
                self.misses += 1
                return None
            item = cache_build(
                record,
                path=path,
                skill_file=skill_file,
                namespace=namespace,
                source=source,
                root=root,
            )
        except (KeyError, TypeError, ValueError, IndexError):
            self.misses += 1  # a corrupt row: parse the file again and overwrite it
            return None
        if record.get("racy") and not _is_racy(key):
            self._pending.append((key, item))  # settled now: store it without the flag
        self.hits += 1
        return item

    def _same_content(self, key: FileKey, content_hash: str) -> bool:
        """Re-read the Level-1 bytes of a file cached while its mtime was still fresh."""
        try:
            fh, _ = open_regular(key.path)  # never blocks on a FIFO swapped in
            with fh:
                raw = read_frontmatter_bytes(fh, self.max_frontmatter_bytes)
        except OSError:
            return False
        return hashlib.sha256(raw).hexdigest() == content_hash

    def _record(self, index: int) -> Any:
        """The decoded record at ``index``. All rows are decoded in one ``json.loads``
        of a JSON array, which is about twice as fast as one call per row."""
        if self._records is None:
            try:
                self._records = json.loads("[" + ",".join(self._texts) + "]")
            except ValueError:
                self._records = [_loads_or_none(t) for t in self._texts]
            if len(self._records) != len(self._texts):  # a row smuggled in a comma
                self._records = [_loads_or_none(t) for t in self._texts]
        record = self._records[index]
        if not isinstance(record, dict):
            raise ValueError("corrupt index cache row")
        return record

    def put(self, key: FileKey, skill: Skill | BrokenSkill) -> None:
        self._seen.add(key.path)
        if isinstance(skill, BrokenSkill) and _is_racy(key):
            return  # no content hash to verify it by: cache it once its mtime has settled
        self._pending.append((key, skill))

    def flush(self) -> None:
        """Write new rows and prune rows of files that no longer exist, in one transaction."""
        if self.store is None:
            self._pending.clear()
            return
        rows = [
            (
                k.path,
                k.mtime_ns,
                k.size,
                s.content_hash if isinstance(s, Skill) else "",
                PARSER_VERSION,
                cache_dumps(s, racy=_is_racy(k)),
            )
            for k, s in self._pending
        ]
        self._pending.clear()
        # Rows this walk did not reach may belong to other roots: drop only those whose
        # file is gone. A warm walk reaches every row, so this costs nothing then.
        gone = [p for p in self._rows if p not in self._seen and not os.path.exists(p)]
        if not rows and not gone:
            return
        try:
            self.store.skill_index_cache.update(rows, gone)
        except StoreError as exc:
            self._problem(f"could not update the index cache: {exc}")


def _loads_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
