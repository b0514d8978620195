"""The commands the doctor prints, written to run as printed where the user ran it.

A finding's advice ("keep one: `skillrt disable X`") is only useful if it works when
pasted: the command must name the same skills the doctor read, so it carries the
doctor's own inputs (``--root``, ``--catalog``, ``--base``) and the state and config it
used (``--state``, ``--config``), as the user wrote them (relative paths stay relative
to the folder the doctor ran in). Each command gets only the flags it takes.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["CommandLine"]

#: Commands that read ``--catalog`` / ``--base`` besides ``--root``.
_CATALOGUE_COMMANDS = frozenset({"route", "eval", "doctor", "enable", "disable"})
#: Commands that take ``--backend``.
_BACKEND_COMMANDS = frozenset({"route", "eval", "doctor"})


@dataclass(frozen=True)
class CommandLine:
    """The inputs a printed command must repeat (each as the user gave it)."""

    roots: tuple[str, ...] = ()
    catalogs: tuple[str, ...] = ()
    base: str | None = None
    state: str | None = None
    config: str | None = None
    backend: str | None = None

    def flags(self, command: str) -> list[str]:
        out: list[str] = []
        for root in self.roots:
            out += ["--root", root]
        if command in _CATALOGUE_COMMANDS:
            for catalog in self.catalogs:
                out += ["--catalog", catalog]
            if self.base is not None and self.catalogs:
                out += ["--base", self.base]
        if command in _BACKEND_COMMANDS and self.backend:
            out += ["--backend", self.backend]
        if self.state is not None:
            out += ["--state", self.state]
        if self.config is not None:
            out += ["--config", self.config]
        return out

    def __call__(self, command: str, *args: str) -> str:
        """``skillrt COMMAND ARGS... FLAGS``, quoted for a POSIX shell."""
        return shlex.join(["skillrt", command, *args, *self.flags(command)])

    @classmethod
    def of(
        cls,
        *,
        roots: Sequence[str] | None = None,
        catalogs: Sequence[str] | None = None,
        base: str | None = None,
        state: str | None = None,
        config: str | None = None,
        backend: str | None = None,
    ) -> CommandLine:
        return cls(tuple(roots or ()), tuple(catalogs or ()), base, state, config, backend or None)
