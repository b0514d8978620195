"""An in-process cache of decoded file content, validated on every load.

A long-lived process (library, MCP server) asks for sections of the same large
reference again and again. The loader still runs the whole jailed walk and opens the
file every time; only then, if the opened descriptor's identity — device, inode, size,
mtime and ctime in nanoseconds — matches an entry, the read, hash and decode are skipped.
Any write to a file changes its ctime (which no user can set), and a replaced file has
another inode, so a hit is the same content. Only files of at least
:data:`MIN_CACHED_BYTES` are kept (small ones are cheaper to read than to track), within
a total budget, least recently used first out.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass

#: Files smaller than this are always read.
MIN_CACHED_BYTES = 64 * 1024
#: Total bytes (of the files cached) kept at most.
MAX_CACHED_BYTES = 64 * 1024 * 1024

FileKey = tuple[int, int, int, int, int]


def file_key(st: os.stat_result) -> FileKey:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(frozen=True)
class CachedText:
    sha256: str
    text: str
    size: int


class ContentCache:
    """A bounded LRU of :class:`CachedText` by :func:`file_key`; thread-safe."""

    def __init__(self, max_bytes: int = MAX_CACHED_BYTES) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[FileKey, CachedText] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: FileKey) -> CachedText | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def put(self, key: FileKey, item: CachedText) -> None:
        if item.size < MIN_CACHED_BYTES or item.size > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old.size
            self._items[key] = item
            self._bytes += item.size
            while self._bytes > self.max_bytes and self._items:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= dropped.size

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


#: The process-wide cache the loader uses.
CONTENT_CACHE = ContentCache()


def clear_caches() -> None:
    """Forget cached content and heading lists (benchmarks' "cold" runs, tests)."""
    from skillrt.loading import sections

    CONTENT_CACHE.clear()
    sections.clear_heading_cache()
