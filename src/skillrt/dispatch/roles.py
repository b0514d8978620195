"""Role guides: one ``<role>.md`` per role, loaded in delegated mode (seed 000 §1).

The package ships ``explorer``, ``oracle``, ``librarian``, ``fixer`` and ``designer``;
``dispatch.roles_dir`` adds roles and overrides shipped ones with a file of the same
name. An unknown role is a structured error listing the known ones.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from skillrt.errors import ConfigError, UnknownRole
from skillrt.fileopen import read_regular

DEFAULT_ROLES = ("explorer", "oracle", "librarian", "fixer", "designer")
ROLE_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
#: A role guide is guidance, not a manual: anything larger is refused.
MAX_ROLE_GUIDE_BYTES = 64_000


@dataclass(frozen=True)
class RoleGuide:
    """One role's guide text and where it came from (``package`` or ``roles_dir``)."""

    name: str
    text: str
    path: str
    source: str


class RoleGuides:
    """The role guides available to the dispatcher (cached after the first read)."""

    def __init__(self, roles_dir: Path | None = None) -> None:
        self.roles_dir = roles_dir
        self._cache: dict[str, RoleGuide] = {}
        self._lock = threading.Lock()

    def _user_files(self) -> dict[str, Path]:
        if self.roles_dir is None:
            return {}
        if not self.roles_dir.is_dir():
            raise ConfigError(
                f"dispatch.roles_dir is not a folder: {self.roles_dir}",
                path=str(self.roles_dir),
            )
        return {
            p.stem: p
            for p in sorted(self.roles_dir.glob("*.md"))
            if ROLE_NAME.match(p.stem) and p.is_file()
        }

    def names(self) -> tuple[str, ...]:
        """Every known role: the shipped ones, then those only in ``roles_dir``."""
        extra = [n for n in self._user_files() if n not in DEFAULT_ROLES]
        return (*DEFAULT_ROLES, *sorted(extra))

    def get(self, role: str) -> RoleGuide:
        """The guide of ``role``; :class:`UnknownRole` when there is none."""
        with self._lock:
            cached = self._cache.get(role)
        if cached is not None:
            return cached
        if not isinstance(role, str) or not ROLE_NAME.match(role):
            raise UnknownRole(
                f"invalid role name {role!r}: use lowercase letters, digits, '-' and '_'",
                role=role,
                available=list(self.names()),
            )
        user = self._user_files().get(role)
        if user is not None:
            guide = RoleGuide(role, _read(user), str(user), "roles_dir")
        elif role in DEFAULT_ROLES:
            res = resources.files("skillrt.dispatch").joinpath("roles", f"{role}.md")
            guide = RoleGuide(role, res.read_text(encoding="utf-8"), str(res), "package")
        else:
            raise UnknownRole(
                f"unknown role '{role}'; known roles: {', '.join(self.names())}",
                role=role,
                available=list(self.names()),
            )
        with self._lock:
            self._cache[role] = guide
        return guide


def _read(path: Path) -> str:
    try:
        data = read_regular(path, limit=MAX_ROLE_GUIDE_BYTES + 1)  # a FIFO never blocks
    except OSError as exc:
        why = exc.strerror or exc
        raise ConfigError(f"cannot read role guide {path}: {why}", path=str(path)) from None
    if len(data) > MAX_ROLE_GUIDE_BYTES:
        raise ConfigError(
            f"role guide {path} is {len(data):,} bytes, over {MAX_ROLE_GUIDE_BYTES:,}",
            path=str(path),
        )
    return data.decode("utf-8", errors="replace")
