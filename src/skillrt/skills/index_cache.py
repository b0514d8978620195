"""The parsed-skill index cache: an unchanged SKILL.md is never parsed twice.

Rows are keyed by the skill file's path; a row is fresh while the file's mtime (ns) and
size match and it was written by this parser version. The content hash is kept for
consumers (the embedding cache). Writes are batched into one transaction, rows of files
that are gone are pruned, and a store that cannot be read or written only costs the
cache (a warning), never the listing.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillrt.errors import StoreError
from skillrt.skills.model import BrokenSkill, Skill
from skillrt.skills.reader import PARSER_VERSION
from skillrt.skills.records import cache_build, cache_dumps
from skillrt.store.sqlite import Store

log = logging.getLogger(__name__)


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
    #: Why the cache could not be used (read or write), for the registry's diagnostics.
    problems: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.store is None:
            return
        try:
            rows = self.store.connection().execute(
                "SELECT path, mtime_ns, size, record FROM index_cache WHERE parser_version = ?",
                (PARSER_VERSION,),
            )
            texts = self._texts
            for path, mtime_ns, size, record in rows:
                self._rows[path] = (mtime_ns, size, len(texts))
                texts.append(record)
        except (sqlite3.Error, StoreError) as exc:
            self._problem(f"index cache unavailable, parsing every skill: {exc}")
            self._rows = {}

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
            item = cache_build(
                self._record(row[2]),
                path=path,
                skill_file=skill_file,
                namespace=namespace,
                source=source,
                root=root,
            )
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            self.misses += 1  # a corrupt row: parse the file again and overwrite it
            return None
        self.hits += 1
        return item

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
                cache_dumps(s),
            )
            for k, s in self._pending
        ]
        self._pending.clear()
        # Rows this walk did not reach may belong to other roots: drop only those whose
        # file is gone. A warm walk reaches every row, so this costs nothing then.
        gone = [(p,) for p in self._rows if p not in self._seen and not os.path.exists(p)]
        if not rows and not gone:
            return
        try:
            with self.store.transaction() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO index_cache"
                    "(path, mtime_ns, size, content_hash, parser_version, record)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    rows,
                )
                if gone:
                    conn.executemany("DELETE FROM index_cache WHERE path = ?", gone)
        except (sqlite3.Error, StoreError) as exc:
            self._problem(f"could not update the index cache: {exc}")


def _loads_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
