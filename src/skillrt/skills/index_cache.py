"""The parsed-skill index cache: an unchanged SKILL.md is never parsed twice.

Keyed by path, with mtime (ns) and size as the freshness check and the content hash
kept for consumers (the embedding cache). Writes are batched into one transaction and
a failing write only costs the cache, never the listing.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from dataclasses import dataclass, field

from skillrt.errors import StoreError
from skillrt.skills.model import BrokenSkill, Skill
from skillrt.skills.reader import PARSER_VERSION
from skillrt.skills.records import dumps, skill_from_record, skill_to_record
from skillrt.store.sqlite import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FileKey:
    path: str
    mtime_ns: int
    size: int


@dataclass
class IndexCache:
    """Reads all cached records once, serves hits from memory, writes misses in one go."""

    store: Store | None
    _rows: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    _pending: list[tuple[FileKey, Skill | BrokenSkill]] = field(default_factory=list)
    hits: int = 0
    misses: int = 0

    def __post_init__(self) -> None:
        if self.store is None:
            return
        try:
            rows = self.store.connection().execute(
                "SELECT path, mtime_ns, size, record FROM index_cache WHERE parser_version = ?",
                (PARSER_VERSION,),
            )
            self._rows = {r[0]: (r[1], r[2], r[3]) for r in rows}
        except (sqlite3.Error, StoreError) as exc:
            log.warning("index cache unavailable, parsing every skill: %s", exc)
            self._rows = {}

    def get(self, key: FileKey) -> Skill | BrokenSkill | None:
        row = self._rows.get(key.path)
        if row is None or row[0] != key.mtime_ns or row[1] != key.size:
            self.misses += 1
            return None
        self.hits += 1
        try:
            return skill_from_record(json.loads(row[2]))
        except (KeyError, TypeError, ValueError):
            self.misses += 1
            return None

    def put(self, key: FileKey, skill: Skill | BrokenSkill) -> None:
        self._pending.append((key, skill))

    def flush(self) -> None:
        if self.store is None or not self._pending:
            self._pending.clear()
            return
        rows = [
            (
                k.path,
                k.mtime_ns,
                k.size,
                s.content_hash if isinstance(s, Skill) else "",
                PARSER_VERSION,
                dumps(skill_to_record(s)),
            )
            for k, s in self._pending
        ]
        self._pending.clear()
        try:
            with self.store.transaction() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO index_cache"
                    "(path, mtime_ns, size, content_hash, parser_version, record)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    rows,
                )
        except (sqlite3.Error, StoreError) as exc:
            log.warning("could not update the index cache: %s", exc)
