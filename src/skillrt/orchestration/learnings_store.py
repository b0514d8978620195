"""Domain learnings in a shared store: every host reads and grows one set.

The store (:attr:`Store.learnings <skillrt.store.base.Store.learnings>`) holds the very
lines a learnings file would (``- <lesson> _(task ..., phase ...)_``), in the order
they were learned, under the file's heading when read, so a phase prompt reads the
same whichever backend keeps them. A lesson is keyed by its normalised text, so two
runs finishing at once on two hosts both land and none is kept twice.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from skillrt.orchestration.learnings import (
    DEFAULT_MAX_LEARNINGS_CHARS,
    Learning,
    LearningsMerge,
    LearningsText,
    heading,
    learnings_path,
    normalise,
    tail,
)
from skillrt.store.base import Store

__all__ = ["StoreLearnings", "import_lines"]


class StoreLearnings:
    """The ``learnings`` table of ``store``."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def read(self, domain: str, *, max_chars: int = DEFAULT_MAX_LEARNINGS_CHARS) -> LearningsText:
        learnings_path(Path("."), domain)  # the same check of the name as for a file
        rows = self.store.learnings.lines(domain)
        if not rows:
            return LearningsText(domain=domain, path=None, text="")
        text = heading(domain) + "\n\n" + "\n".join(rows) + "\n"
        kept, truncated = tail(text, max_chars)
        return LearningsText(domain=domain, path=None, text=kept, truncated=truncated)

    def merge(self, domain: str, learnings: Sequence[Learning]) -> LearningsMerge:
        added, duplicates = import_lines(
            self.store, domain, [(normalise(x.text), x.line(), x.text) for x in learnings]
        )
        return LearningsMerge(domain=domain, path=None, added=added, duplicates=duplicates)


def import_lines(
    store: Store, domain: str, items: Sequence[tuple[str, str, str]]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Add ``(key, line, text)`` lessons in one transaction; ``(added lines, duplicate
    texts)``."""
    return store.learnings.add(domain, items, at=time.time())
