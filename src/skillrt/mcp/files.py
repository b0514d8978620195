"""The files of a skill that the MCP server publishes, with size and sha256.

Only what the loader would serve is listed: regular files (never symlinks) inside the
skill folder whose extension is in the loader's allowlist and whose size is within its
limit, plus ``SKILL.md``. Folders of nested skills are left to those skills. Digests are
cached by ``(mtime_ns, size)`` so a re-list after a change re-hashes only what changed.
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_mod
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from skillrt.config import LoaderLimits
from skillrt.fileopen import open_regular
from skillrt.mcp.uris import SKILL_FILE

_MIME = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".json": "application/json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".csv": "text/csv",
    ".html": "text/html",
    ".xml": "application/xml",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
}
#: Folders never published (tool state, VCS, caches).
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".venv"})


def mime_type(path: str) -> str:
    return _MIME.get(os.path.splitext(path)[1].lower(), "text/plain")


@dataclass(frozen=True)
class SkillFile:
    """One published file: its path relative to the skill folder, size and digest."""

    path: str
    size: int
    sha256: str
    mime_type: str

    @property
    def digest(self) -> str:
        """SEP-2640 form: ``sha256:<hex>``."""
        return f"sha256:{self.sha256}"


class DigestCache:
    """sha256 of files keyed by (path, mtime_ns, size); thread-safe."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[int, int, str]] = {}
        self._lock = threading.Lock()

    def digest(self, path: Path, st: os.stat_result) -> str | None:
        key = str(path)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and hit[0] == st.st_mtime_ns and hit[1] == st.st_size:
            return hit[2]
        h = hashlib.sha256()
        try:
            # The file stat'ed, opened without blocking: not a FIFO or a link swapped in.
            fh, _ = open_regular(path, follow_symlinks=False, expect=st)
            with fh:
                for chunk in iter(lambda: fh.read(1 << 16), b""):
                    h.update(chunk)
        except OSError:
            return None
        value = h.hexdigest()
        with self._lock:
            self._cache[key] = (st.st_mtime_ns, st.st_size, value)
        return value

    def forget_missing(self, live: Iterable[str]) -> None:
        keep = set(live)
        with self._lock:
            for key in [k for k in self._cache if k not in keep]:
                del self._cache[key]


def list_skill_files(
    skill_dir: Path,
    limits: LoaderLimits,
    cache: DigestCache,
    *,
    max_files: int = 512,
    max_depth: int = 6,
) -> list[SkillFile]:
    """The publishable files of one skill, ``SKILL.md`` first, then by path."""
    allowed = {ext.lower() for ext in limits.allowed_extensions}
    out: list[SkillFile] = []
    skill_md = skill_dir / SKILL_FILE
    try:
        st = os.stat(skill_md, follow_symlinks=False)
    except OSError:
        return out
    digest = cache.digest(skill_md, st) if _regular(st) else None
    if digest is None:
        return out
    out.append(SkillFile(SKILL_FILE, st.st_size, digest, "text/markdown"))
    others: list[SkillFile] = []
    stack: list[tuple[Path, str, int]] = [(skill_dir, "", 0)]
    while stack and len(others) < max_files - 1:
        folder, prefix, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            rel = f"{prefix}{entry.name}"
            if entry.is_symlink():
                continue  # the loader may follow in-jail links; listing never does
            if entry.is_dir(follow_symlinks=False):
                if entry.name in SKIP_DIRS or depth + 1 > max_depth:
                    continue
                if os.path.exists(os.path.join(entry.path, SKILL_FILE)):
                    continue  # a nested skill publishes its own files
                stack.append((Path(entry.path), rel + "/", depth + 1))
                continue
            if rel == SKILL_FILE or os.path.splitext(entry.name)[1].lower() not in allowed:
                continue
            try:
                est = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not _regular(est) or est.st_size > limits.max_resource_file_bytes:
                continue
            d = cache.digest(Path(entry.path), est)
            if d is not None:
                others.append(SkillFile(rel, est.st_size, d, mime_type(rel)))
                if len(others) >= max_files - 1:
                    break
    others.sort(key=lambda f: f.path)
    return out + others


def _regular(st: os.stat_result) -> bool:
    return stat_mod.S_ISREG(st.st_mode)


def read_skill_file(skill_dir: Path, relative_path: str, limits: LoaderLimits) -> tuple[str, str]:
    """(text, sha256) of one whole file, through the loader's path jail and limits.

    The same gates as Level-3 loads (no traversal, no symlink escape, extension
    allowlist, byte limit, text only) but without excerpting: a resource read returns
    the file as it is, so its digest matches the published one.
    """
    from skillrt.loading.loader import decode_text
    from skillrt.loading.paths import check_relative_path, open_in_jail, read_limited, real_jail

    segments = check_relative_path(relative_path)
    is_skill_md = segments == (SKILL_FILE,)
    limit = limits.max_skill_file_bytes if is_skill_md else limits.max_resource_file_bytes
    jail = real_jail(skill_dir)
    opened = open_in_jail(
        jail, segments, shown=relative_path, allowed_extensions=limits.allowed_extensions
    )
    try:
        data = read_limited(opened, limit, shown=relative_path)
    finally:
        os.close(opened.fd)
    decode_text(data, relative_path)  # refuses binary and non-UTF-8 content
    # The bytes as they are (no BOM/CRLF normalising), so the published digest holds.
    return data.decode("utf-8"), hashlib.sha256(data).hexdigest()
