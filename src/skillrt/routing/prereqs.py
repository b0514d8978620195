"""Prerequisite checks (seed 001 §5): ``bins`` on PATH, ``env`` variables set.

The library never reads the process environment itself: the caller passes ``env``
(the CLI passes ``os.environ``) and optionally ``path``. With ``env=None`` the ``env``
prerequisites cannot be judged and are not checked; ``bins`` are then looked up on
``path``, or on the caller's PATH as :func:`shutil.which` sees it.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping

from skillrt.skills.model import Prerequisites

__all__ = ["PrerequisiteChecker"]


class PrerequisiteChecker:
    """Cached checks; build a new checker when the environment changes."""

    def __init__(self, *, env: Mapping[str, str] | None = None, path: str | None = None) -> None:
        self.env = env
        if path is None and env is not None and "PATH" in env:
            path = env["PATH"]
        self.path = path
        self._bins: dict[str, bool] = {}

    def has_bin(self, name: str) -> bool:
        found = self._bins.get(name)
        if found is None:
            found = shutil.which(name, path=self.path) is not None
            self._bins[name] = found
        return found

    def missing(self, prereq: Prerequisites) -> tuple[str, ...]:
        """Unmet items as ``bin:<name>`` / ``env:<NAME>``, in declaration order."""
        out = [f"bin:{b}" for b in prereq.bins if not self.has_bin(b)]
        if self.env is not None:
            out += [f"env:{e}" for e in prereq.env if not self.env.get(e)]
        return tuple(out)
