"""Creating a state folder: one that git and the coding agents' folder listings leave
alone.

A state folder made inside a project (``.skillrt/``, the CLI's default) gets a
``.gitignore`` holding ``*`` as it is created, as pytest and ruff do with their caches:
``git status`` stays clean, and clients that honour ``.gitignore`` (Gemini CLI's folder
listing) do not show its files to the model.
"""

from __future__ import annotations

import os
from pathlib import Path

IGNORE_ALL = "# Created by skillrt: its state and caches, never committed.\n*\n"


def make_state_dir(path: Path | str) -> None:
    """Create ``path`` (and its parents) if missing; a folder created here gets its
    ``.gitignore``. An existing folder is left as it is."""
    folder = Path(path)
    if folder.is_dir():
        return
    folder.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(folder / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        return  # made by someone else meanwhile, or not ours to write: no matter
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(IGNORE_ALL)
