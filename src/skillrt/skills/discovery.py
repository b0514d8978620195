"""Find skill folders under roots (S3) and give them namespaces (S5).

The walk is bounded (depth, directories per root), skips VCS and dependency folders,
does look inside other dot-folders (catalogues keep skills in ``.curated/``), and
never follows a symlink out of its root or around a loop.
"""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from skillrt.config import DiscoveryConfig, RootConfig
from skillrt.skills.model import Diagnostic
from skillrt.skills.reader import SKILL_FILENAMES

PLUGIN_MANIFEST = (".claude-plugin", "plugin.json")


@dataclass(frozen=True)
class Root:
    """A resolved root to search."""

    path: Path
    namespace: str | None
    scope: str
    #: True for roots that only exist by convention: a missing one is not an error.
    conventional: bool = False


@dataclass(frozen=True)
class FoundSkill:
    """A folder holding a SKILL.md, found under ``root``."""

    path: Path
    skill_file: Path
    root: Root
    namespace: str | None


@dataclass
class WalkReport:
    """What a walk found besides skills: limits hit, links refused."""

    diagnostics: list[Diagnostic]
    dirs_visited: int = 0


def resolve_roots(
    config: DiscoveryConfig, project_dir: Path, explicit: tuple[RootConfig, ...] | None = None
) -> list[Root]:
    """The roots to search, in precedence order: project scope before user scope.

    ``explicit`` roots (the CLI's ``--root``) replace every other root.
    """
    if explicit:
        return [Root(r.path, r.namespace, r.scope or "flag") for r in explicit]
    roots = [Root(r.path, r.namespace, r.scope) for r in config.roots]
    if config.conventional_roots:
        roots.append(Root(project_dir / ".agents" / "skills", None, "project", True))
        roots.append(Root(project_dir / "skills", None, "project", True))
    if config.claude_roots:
        roots.append(Root(project_dir / ".claude" / "skills", None, "project", True))
    if config.codex_roots:
        roots.append(Root(project_dir / ".codex" / "skills", None, "project", True))
    home = config.home_dir
    if home is not None:
        if config.conventional_roots:
            roots.append(Root(home / ".agents" / "skills", None, "user", True))
        if config.claude_roots:
            roots.append(Root(home / ".claude" / "skills", None, "user", True))
        if config.codex_roots:
            roots.append(Root(home / ".codex" / "skills", None, "user", True))
    seen: set[Path] = set()
    unique: list[Root] = []
    for root in roots:
        key = _real(root.path)
        if key in seen:
            continue
        seen.add(key)
        unique.append(root)
    return unique


def _real(path: Path) -> Path:
    try:
        return Path(os.path.realpath(path))
    except OSError:
        return path


def plugin_namespace(directory: Path) -> str | None:
    """The ``name`` of a Claude-style plugin manifest in ``directory``, if there is one."""
    manifest = directory.joinpath(*PLUGIN_MANIFEST)
    try:
        if manifest.stat().st_size > 1_000_000:
            return None
        data = json.loads(manifest.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    name = data.get("name") if isinstance(data, dict) else None
    return name.strip() if isinstance(name, str) and name.strip() else None


def walk_root(root: Root, config: DiscoveryConfig, report: WalkReport) -> Iterator[FoundSkill]:
    """Yield every skill folder under ``root``, breadth first, within the limits."""
    base = root.path
    try:
        real_base = Path(os.path.realpath(base))
        if not real_base.is_dir():
            if not root.conventional:
                report.diagnostics.append(
                    Diagnostic(
                        "ROOT_NOT_FOUND", "warning", f"skill root does not exist: {base}", str(base)
                    )
                )
            return
    except OSError:
        return
    skip = set(config.skip_dirs)
    visited: set[tuple[int, int]] = set()
    # (logical path, real path, depth, namespace)
    queue: deque[tuple[Path, Path, int, str | None]] = deque([(base, real_base, 0, root.namespace)])
    dirs = 0
    while queue:
        logical, real, depth, namespace = queue.popleft()
        try:
            st = os.stat(real)
        except OSError:
            continue
        key = (st.st_dev, st.st_ino)
        if key in visited:
            continue
        visited.add(key)
        dirs += 1
        if dirs > config.max_dirs_per_root:
            report.diagnostics.append(
                Diagnostic(
                    "ROOT_DIR_LIMIT",
                    "warning",
                    f"stopped after {config.max_dirs_per_root} directories under {base}; "
                    "point a root closer to the skills or raise discovery.max_dirs_per_root",
                    str(base),
                )
            )
            break
        try:
            entries = list(os.scandir(real))
        except OSError as exc:
            report.diagnostics.append(
                Diagnostic(
                    "DIR_UNREADABLE",
                    "warning",
                    f"cannot list {logical}: {exc.strerror}",
                    str(logical),
                )
            )
            continue
        names = {e.name: e for e in entries}
        skill_name = next((n for n in SKILL_FILENAMES if n in names), None)
        if skill_name is not None:
            entry = names[skill_name]
            if entry.is_symlink() and not _inside(Path(os.path.realpath(entry.path)), real_base):
                report.diagnostics.append(
                    Diagnostic(
                        "SYMLINK_ESCAPE",
                        "error",
                        f"{logical / skill_name} links outside its root; not followed",
                        str(logical / skill_name),
                    )
                )
                continue
            yield FoundSkill(logical, logical / skill_name, root, namespace)
            # A skill's own folders (references/, scripts/) are not searched for skills.
            continue
        child_ns = namespace
        if ".claude-plugin" in names:
            child_ns = plugin_namespace(real) or namespace
        if depth >= config.max_depth:
            continue
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.name in skip:
                continue
            try:
                if not entry.is_dir(follow_symlinks=True):
                    continue
            except OSError:
                continue
            child_real = real / entry.name
            if entry.is_symlink():
                target = Path(os.path.realpath(entry.path))
                if not _inside(target, real_base):
                    report.diagnostics.append(
                        Diagnostic(
                            "SYMLINK_ESCAPE",
                            "warning",
                            f"{logical / entry.name} links outside its root; not followed",
                            str(logical / entry.name),
                        )
                    )
                    continue
                child_real = target
            queue.append((logical / entry.name, child_real, depth + 1, child_ns))
    report.dirs_visited += dirs


def _inside(path: Path, base: Path) -> bool:
    return path == base or base in path.parents
