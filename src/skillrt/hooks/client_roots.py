"""The coding agents' own skill folders (``.claude/skills``, ``.codex/skills``,
``.gemini/skills``, in the project and in the home folder), as the prompt hook and a
daemon's identity name them.

They are searched by default (``discovery.client_roots``; ``--no-client-roots`` turns
them off), so the skills a client reads are the ones its hook routes to. The full table
of searched folders is :data:`skillrt.skills.discovery.CONVENTIONAL_FOLDERS`; this
module holds only what the hook needs per prompt (the standard library only).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from skillrt.config import DiscoveryConfig

#: A client folder's short name -> its folder, under the project and the home folder.
FOLDERS = {"claude": ".claude/skills", "codex": ".codex/skills", "gemini": ".gemini/skills"}


def present(project: str, home: str | None, codex_home: str | None = None) -> list[str]:
    """The client folders that exist in the project or the home folder (a few ``stat``
    calls): a daemon asked for a prompt must search at least these."""
    out = []
    for name, folder in FOLDERS.items():
        bases = [project, home]
        candidates = [os.path.join(b, folder) for b in bases if b]
        if name == "codex" and codex_home:
            candidates.append(os.path.join(codex_home, "skills"))
        if any(os.path.isdir(c) for c in candidates):
            out.append(name)
    return out


def enabled(discovery: DiscoveryConfig) -> list[str]:
    """The client folders a discovery config searches (part of a daemon's identity)."""
    from skillrt.skills.discovery import folder_on

    return [name for name in FOLDERS if folder_on(discovery, f"{name}_roots")]
