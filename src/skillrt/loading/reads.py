"""One request's SKILL.md reads: each skill's file is read once, through the path jail.

A ``$mention`` run needs a skill's body three times: the resolver activates it, the
dispatcher puts it in the prompt, and the edge index looks for sub-skills in the whole
body (not the fitted one). :class:`SkillReads` reads the file once with
:func:`~skillrt.loading.loader.read_skill_body` and serves all three from that read, for
as long as the request lasts (the next request reads the file again, so an edit between
requests is seen).
"""

from __future__ import annotations

import threading
from pathlib import Path

from skillrt.config import LoaderLimits
from skillrt.loading.loader import RawBody, fit_skill_body, read_skill_body
from skillrt.loading.report import LoadResult
from skillrt.skills.model import Skill

__all__ = ["SkillReads"]


class SkillReads:
    """The bodies one request has read, by qualified name (thread-safe: a plan's parallel
    group shares them)."""

    def __init__(self, limits: LoaderLimits, *, spill_dir: Path | None = None) -> None:
        self.limits = limits
        self.spill_dir = spill_dir
        self._raw: dict[str, RawBody] = {}
        self._fitted: dict[str, LoadResult] = {}
        self._lock = threading.Lock()

    def raw(self, skill: Skill) -> RawBody:
        """The whole body (frontmatter stripped), read on first use."""
        key = skill.qualified_name
        with self._lock:
            found = self._raw.get(key)
        if found is None:
            found = read_skill_body(skill, self.limits)
            with self._lock:
                found = self._raw.setdefault(key, found)
        return found

    def load(self, skill: Skill) -> LoadResult:
        """The body fitted into the Level-2 limits (what a prompt or an activation gets)."""
        key = skill.qualified_name
        with self._lock:
            found = self._fitted.get(key)
        if found is None:
            found = fit_skill_body(skill, self.raw(skill), self.limits, spill_dir=self.spill_dir)
            with self._lock:
                found = self._fitted.setdefault(key, found)
        return found
