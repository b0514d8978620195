"""A cheap fingerprint of the skill roots, for hot reload by polling.

The fingerprint covers every folder's and file's ``(mtime_ns, size)`` under each root
(within the discovery limits, without following symlinked folders) plus the persisted
enable/disable state, so adding, editing, renaming or removing a skill, one of its
files, a plugin manifest, or ``skillrt disable NAME`` from another process all change
it. It only stats; nothing is read or parsed. Polling needs no extra dependency and
behaves the same on every OS and file system (network mounts included).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillrt.config import DiscoveryConfig
from skillrt.errors import StoreError
from skillrt.store.base import Store


def roots_fingerprint(
    roots: Sequence[Path],
    discovery: DiscoveryConfig,
    store: Store | None = None,
) -> str | None:
    """A hex digest that changes whenever the skills under ``roots`` may have changed;
    None while ``store``'s enable state cannot be read (a reload then would show every
    skill as enabled: better to keep serving what was loaded)."""
    h = hashlib.blake2b(digest_size=16)
    skip = set(discovery.skip_dirs)
    for root in roots:
        h.update(b"\x00root\x00" + os.fsencode(str(root)))
        try:
            st = os.stat(root)
        except OSError:
            h.update(b"missing")
            continue
        h.update(f"{st.st_mtime_ns}".encode())
        _walk(root, h, skip, discovery.max_depth + 2, discovery.max_dirs_per_root * 4)
    if store is not None:
        token = _state_token(store)
        if token is None:
            return None
        h.update(b"\x00state\x00" + token.encode())
    return h.hexdigest()


def _walk(root: Path, h: Any, skip: set[str], max_depth: int, max_dirs: int) -> None:
    stack: list[tuple[str, int]] = [(str(root), 0)]
    dirs = 0
    while stack and dirs < max_dirs:
        folder, depth = stack.pop()
        dirs += 1
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            h.update(os.fsencode(entry.path))
            h.update(f":{st.st_mode}:{st.st_mtime_ns}:{st.st_size};".encode())
            if entry.is_symlink():
                # A symlinked skill folder: fingerprint its SKILL.md so edits show.
                try:
                    target = os.stat(os.path.join(entry.path, "SKILL.md"))
                    h.update(f"->{target.st_mtime_ns}:{target.st_size};".encode())
                except OSError:
                    pass
                continue
            if entry.is_dir(follow_symlinks=False) and entry.name not in skip and depth < max_depth:
                stack.append((entry.path, depth + 1))


def _state_token(store: Store) -> str | None:
    """Enable state, as one short string (changes when any skill is enabled/disabled);
    None when it cannot be read."""
    try:
        return store.enable_state.token()
    except StoreError:
        return None
