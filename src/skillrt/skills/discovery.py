"""Find skill folders under roots (S3) and give them namespaces (S5).

The walk is bounded (depth, directories per root), skips VCS and dependency folders,
does look inside other dot-folders (catalogues keep skills in ``.curated/``), and
never follows a symlink out of its root or around a loop.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from skillrt.clients import WITH_ROOTS
from skillrt.config import DiscoveryConfig, RootConfig, is_valid_namespace
from skillrt.fileopen import open_regular
from skillrt.skills.model import BrokenSkill, Diagnostic, Skill
from skillrt.skills.reader import SKILL_FILENAMES

PLUGIN_MANIFEST = (".claude-plugin", "plugin.json")
#: Precedence of root scopes when two roots define the same qualified name (S5).
SCOPE_RANK = {"flag": 0, "project": 0, "user": 1, "system": 2}


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
    #: The skill file's stat (symlinks followed), when the walk already took it.
    stat: os.stat_result | None = None
    #: The skill folders this one is nested in, outermost first (empty at top level):
    #: such a SKILL.md is a skill of its own only with a valid name of its own.
    enclosing: tuple[Path, ...] = ()


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
        return _ordered([Root(r.path, r.namespace, r.scope or "flag") for r in explicit])
    roots = [Root(r.path, r.namespace, r.scope) for r in config.roots]
    for scope, folder, _switch in searched_folders(config, project_dir):
        roots.append(Root(folder, None, scope, True))
    return _ordered(roots)


#: The conventional folders (S3) and each coding agent's own skill folders (from
#: :data:`skillrt.clients.CLIENTS`: Claude Code ``.claude/skills``, Codex CLI
#: ``.codex/skills`` with ``~/.codex`` as ``$CODEX_HOME``, Gemini CLI ``.gemini/skills``;
#: Codex and Gemini also read ``.agents/skills``), with the switch that searches each:
#: ``(scope, folder under the project or the home folder, discovery switch)``.
CONVENTIONAL_FOLDERS = (
    ("project", (".agents", "skills"), "conventional_roots"),
    ("project", ("skills",), "conventional_roots"),
    *(("project", (c.folder, "skills"), f"{short}_roots") for short, c in WITH_ROOTS.items()),
    ("user", (".agents", "skills"), "conventional_roots"),
    *(("user", (c.folder, "skills"), f"{short}_roots") for short, c in WITH_ROOTS.items()),
)
#: The switches of the coding agents' own folders; ``discovery.client_roots`` turns all
#: of them on (the default; ``--no-client-roots`` turns them off).
CLIENT_SWITCHES = tuple(f"{short}_roots" for short in WITH_ROOTS)
#: A client's user folder named by an environment variable (``$CODEX_HOME``), by folder.
_HOME_ENVS = {c.folder: c.home_env for c in WITH_ROOTS.values() if c.home_env}


def folder_on(config: DiscoveryConfig, switch: str) -> bool:
    """Whether ``switch``'s folders are searched under ``config``."""
    if switch in CLIENT_SWITCHES and config.client_roots:
        return True
    return bool(getattr(config, switch))


def client_folders(config: DiscoveryConfig) -> list[str]:
    """The short names of the client skill folders ``config`` searches (part of a
    daemon's identity)."""
    return [short for short in WITH_ROOTS if folder_on(config, f"{short}_roots")]


def searched_folders(config: DiscoveryConfig, project_dir: Path) -> list[tuple[str, Path, str]]:
    """``(scope, folder, switch)`` of each conventional or client folder ``config``
    searches (whether it exists or not), project folders first."""
    out = []
    for scope, parts, switch in CONVENTIONAL_FOLDERS:
        if not folder_on(config, switch):
            continue
        folder = _folder(config, project_dir, scope, parts)
        if folder is not None:
            out.append((scope, folder, switch))
    return out


def _folder(
    config: DiscoveryConfig, project_dir: Path, scope: str, parts: tuple[str, ...]
) -> Path | None:
    if scope == "project":
        return project_dir.joinpath(*parts)
    if parts[0] in _HOME_ENVS and config.codex_home is not None:
        return config.codex_home / "skills"
    return config.home_dir.joinpath(*parts) if config.home_dir is not None else None


#: Entries of a folder looked at when counting the skills it holds.
_COUNT_LIMIT = 2000


def unsearched_folders(
    config: DiscoveryConfig, project_dir: Path, searched: Sequence[Root]
) -> list[Diagnostic]:
    """An ``UNSEARCHED_SKILLS`` warning for each conventional folder that holds skills
    but is not searched (``.claude/skills`` while ``discovery.claude_roots`` is off):
    a new user's skills must not go missing without a word."""
    searched_real = [_real(r.path) for r in searched]
    out: list[Diagnostic] = []
    seen: set[Path] = set()
    for scope, parts, switch in CONVENTIONAL_FOLDERS:
        folder = _folder(config, project_dir, scope, parts)
        if folder is None:
            continue
        real = _real(folder)
        if real in seen or any(real == r or real.is_relative_to(r) for r in searched_real):
            continue
        seen.add(real)
        count = _count_skills(folder)
        if not count:
            continue
        shown = _shown(folder, project_dir, config.home_dir)
        out.append(
            Diagnostic(
                "UNSEARCHED_SKILLS",
                "warning",
                f"{count} skill{'s' if count != 1 else ''} in {shown} "
                f"{'are' if count != 1 else 'is'} not searched: set discovery.{switch}: true "
                f"in skillrt.yaml, or pass --root {shown}",
                str(folder),
            )
        )
    return out


def _count_skills(folder: Path) -> int:
    """Sub-folders of ``folder`` holding a SKILL.md (a bounded look, no parsing)."""
    count = 0
    try:
        with os.scandir(folder) as it:
            for i, entry in enumerate(it):
                if i >= _COUNT_LIMIT:
                    break
                if entry.is_dir() and any(
                    os.path.isfile(os.path.join(entry.path, n)) for n in SKILL_FILENAMES
                ):
                    count += 1
    except OSError:
        return 0
    return count


def _shown(folder: Path, project_dir: Path, home: Path | None) -> str:
    """``folder`` as a person types it: relative to the project, or under ``~``."""
    if folder.is_relative_to(project_dir):
        return folder.relative_to(project_dir).as_posix()
    if home is not None and folder.is_relative_to(home):
        return "~/" + folder.relative_to(home).as_posix()
    return str(folder)


def _ordered(roots: list[Root]) -> list[Root]:
    """Sort by scope (S5: project beats user beats system; stable within a scope) and
    drop a root listed twice (the first listing wins)."""
    roots = sorted(roots, key=lambda r: SCOPE_RANK.get(r.scope, 1))
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


def plugin_namespace(directory: Path, report: WalkReport | None = None) -> str | None:
    """The ``name`` of a Claude-style plugin manifest in ``directory``, if there is one.

    A manifest that cannot be read or names no valid namespace is reported (when a
    ``report`` is given) and ignored.
    """
    manifest = directory.joinpath(*PLUGIN_MANIFEST)

    def problem(message: str) -> None:
        if report is not None:
            report.diagnostics.append(
                Diagnostic("PLUGIN_MANIFEST_INVALID", "warning", message, str(manifest))
            )

    try:
        fh, st = open_regular(manifest)  # a FIFO in its place must not block the walk
        with fh:
            if st.st_size > 1_000_000:
                problem(f"{manifest} is over 1 MB; ignored")
                return None
            data = json.loads(fh.read(1_000_001).decode("utf-8-sig"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        problem(f"cannot read plugin manifest {manifest}: {exc}")
        return None
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not is_valid_namespace(name.strip()):
        problem(
            f"plugin manifest {manifest} has no usable 'name' (got {name!r}); "
            "its skills get no namespace"
        )
        return None
    return name.strip()


def walk_root(root: Root, config: DiscoveryConfig, report: WalkReport) -> Iterator[FoundSkill]:
    """Yield every skill folder under ``root``, breadth first, within the limits.

    Paths are handled as strings and a folder is first probed with one ``lstat`` of its
    ``SKILL.md``: a skill folder is recognised without listing it, and the stat is handed
    on (the index cache keys on it), so a warm walk costs one syscall per skill, plus one
    ``stat`` of the folder: a skill folder with sub-folders is searched too, for
    SKILL.md files nested in it (yielded with :attr:`FoundSkill.enclosing` set; the
    registry decides which of them are skills of their own). Folders inside skills have
    a budget of their own (``max_dirs_per_root`` again), so resource folders never cut
    the walk of the catalogue itself.
    """
    base = root.path
    try:
        real_base = os.path.realpath(base)
        if not os.path.isdir(real_base):
            if not root.conventional:
                report.diagnostics.append(
                    Diagnostic(
                        "ROOT_NOT_FOUND", "warning", f"skill root does not exist: {base}", str(base)
                    )
                )
            return
    except OSError:
        return
    skip = frozenset(config.skip_dirs)
    explicit_ns = _namespace_map(config)
    sep = os.sep
    base_prefix = real_base.rstrip(sep) + sep
    upper, lower = SKILL_FILENAMES
    max_dirs, max_depth = config.max_dirs_per_root, config.max_depth
    lstat, scandir, realpath, isdir = os.lstat, os.scandir, os.path.realpath, os.path.isdir
    base_path = Path(base)
    make_paths = _path_maker(base_path)
    visited: set[str] = set()
    # (logical path, real path, depth, inherited namespace, enclosing skill folders);
    # paths as strings for speed
    queue: deque[tuple[str, str, int, str | None, tuple[Path, ...]]] = deque(
        [(str(base).rstrip(sep) or sep, real_base, 0, root.namespace, ())]
    )
    dirs = inside = 0
    inside_cut = False

    def push_children(
        entries: list[os.DirEntry[str]],
        logical_slash: str,
        child_depth: int,
        namespace: str | None,
        enclosing: tuple[Path, ...],
    ) -> None:
        entries.sort(key=_entry_name)
        for entry in entries:
            name = entry.name
            if name in skip:
                continue
            try:
                if entry.is_symlink():
                    target = realpath(entry.path)
                    if not isdir(target):
                        continue
                    if target != real_base and not target.startswith(base_prefix):
                        child = logical_slash + name
                        report.diagnostics.append(
                            Diagnostic(
                                "SYMLINK_ESCAPE",
                                "warning",
                                f"{child} links outside its root; not followed",
                                child,
                            )
                        )
                        continue
                    child_real = target
                elif entry.is_dir(follow_symlinks=False):
                    child_real = entry.path
                else:
                    continue
            except OSError:
                continue
            queue.append((logical_slash + name, child_real, child_depth, namespace, enclosing))

    def list_dir(logical: str, real: str) -> list[os.DirEntry[str]] | None:
        try:
            with scandir(real) as it:
                return list(it)
        except OSError as exc:
            report.diagnostics.append(
                Diagnostic(
                    "DIR_UNREADABLE", "warning", f"cannot list {logical}: {exc.strerror}", logical
                )
            )
            return None

    while queue:
        logical, real, depth, namespace, enclosing = queue.popleft()
        if real in visited:
            continue  # reached again through a symlink: a loop or an alias
        visited.add(real)
        if enclosing:
            inside += 1
            if inside > max_dirs:
                if not inside_cut:
                    inside_cut = True
                    report.diagnostics.append(
                        Diagnostic(
                            "ROOT_DIR_LIMIT",
                            "warning",
                            f"stopped looking inside skill folders for nested skills after "
                            f"{max_dirs} folders under {base}; raise "
                            "discovery.max_dirs_per_root to search them all",
                            str(base),
                        )
                    )
                continue
        else:
            dirs += 1
            if dirs > max_dirs:
                report.diagnostics.append(
                    Diagnostic(
                        "ROOT_DIR_LIMIT",
                        "warning",
                        f"stopped after {max_dirs} directories under {base}; "
                        "point a root closer to the skills or raise discovery.max_dirs_per_root",
                        str(base),
                    )
                )
                break
        if explicit_ns and real in explicit_ns:
            namespace = explicit_ns[real]
        real_slash = real if real.endswith(sep) else real + sep
        logical_slash = logical if logical.endswith(sep) else logical + sep
        entries: list[os.DirEntry[str]] | None = None
        try:
            st: os.stat_result | None = lstat(real_slash + upper)
        except OSError:
            st = None
        filename = upper
        if st is None:
            entries = list_dir(logical, real)
            if entries is None:
                continue
            if any(e.name == lower for e in entries):
                try:
                    st = lstat(real_slash + lower)
                except OSError:
                    st = None
                filename = lower
        if st is not None:
            if stat.S_ISLNK(st.st_mode):
                linked = _linked_skill_file(
                    logical_slash, real_slash, filename, base_prefix, report
                )
                if linked is None:
                    continue
                st = linked or None
            folder, skill_file = make_paths(base_path, logical, filename)
            yield FoundSkill(folder, skill_file, root, namespace, st, enclosing)
            if depth >= max_depth or inside_cut:
                continue
            # Nested SKILL.md files: only a folder with sub-folders can hold one (a
            # folder's link count is 2 + its sub-folders where the file system keeps it).
            if entries is None:
                try:
                    if os.stat(real).st_nlink == 2:
                        continue
                except OSError:
                    continue
                entries = list_dir(logical, real)
                if entries is None:
                    continue
            push_children(entries, logical_slash, depth + 1, namespace, (*enclosing, folder))
            continue
        assert entries is not None
        has_manifest = any(e.name == PLUGIN_MANIFEST[0] for e in entries)
        if has_manifest and not enclosing and not (depth == 0 and root.namespace):
            manifest_ns = plugin_namespace(Path(real), report)
            if manifest_ns and not (explicit_ns and real in explicit_ns):
                namespace = manifest_ns
        if depth >= max_depth:
            continue
        push_children(entries, logical_slash, depth + 1, namespace, enclosing)
    report.dirs_visited += dirs


def stands_alone(
    item: Skill | BrokenSkill, enclosing: Sequence[Path], listed: Mapping[Path, str]
) -> bool:
    """Whether a SKILL.md nested in skill folders (``enclosing``, outermost first) is a
    skill of its own: it reads as a skill, its name is valid, and it is not the name of
    the nearest enclosing folder that is a listed skill (``listed``: folder -> name).
    Otherwise it is one of that skill's files (S3; awesome-copilot's
    ``qdrant-scaling/scaling-qps/SKILL.md`` is the skill ``qdrant-scaling-qps``)."""
    if not isinstance(item, Skill):
        return False
    if any(d.severity == "error" and d.field == "name" for d in item.diagnostics):
        return False
    parent = next((listed[f] for f in reversed(enclosing) if f in listed), None)
    return item.name != parent


PathMaker = Callable[[Path, str, str], tuple[Path, Path]]


def _path_maker(base_path: Path) -> PathMaker:
    """Build (folder, skill file) Paths for a found skill, fast.

    Python 3.11's ``Path()`` re-parses and interns every component, which is half the
    cost of a warm walk; the folder is a known child of the root, so its parts are
    joined directly. Python 3.12+ parses paths lazily, so plain joins are cheap there.
    """
    base_str = str(base_path)
    make = getattr(type(base_path), "_from_parsed_parts", None)
    base_parts = getattr(base_path, "_parts", None)
    if sys.version_info >= (3, 12) or make is None or not isinstance(base_parts, list):

        def plain(base: Path, logical: str, filename: str) -> tuple[Path, Path]:
            folder = Path(logical)
            return folder, folder / filename

        return plain
    drv, root_ = base_path.drive, base_path.root
    sep = os.sep

    def fast(base: Path, logical: str, filename: str) -> tuple[Path, Path]:
        rel = logical[len(base_str) :].strip(sep)
        parts = base_parts + rel.split(sep) if rel else list(base_parts)
        folder = make(drv, root_, parts)
        return folder, make(drv, root_, [*parts, filename])

    return fast


def _entry_name(entry: os.DirEntry[str]) -> str:
    return entry.name


def _linked_skill_file(
    logical_slash: str, real_slash: str, filename: str, base_prefix: str, report: WalkReport
) -> os.stat_result | Literal[False] | None:
    """A SKILL.md that is a symlink: its target's stat if the target stays inside the
    root (``False`` when the link dangles: the reader reports it), else ``None`` after
    reporting the escape."""
    target = os.path.realpath(real_slash + filename)
    if not target.startswith(base_prefix):
        skill_file = logical_slash + filename
        report.diagnostics.append(
            Diagnostic(
                "SYMLINK_ESCAPE",
                "error",
                f"{skill_file} links outside its root ({target}); not followed",
                skill_file,
            )
        )
        return None
    try:
        return os.stat(target)
    except OSError:
        return False


def _namespace_map(config: DiscoveryConfig) -> dict[str, str]:
    """``discovery.namespaces`` keyed by real path, so the walk can look folders up."""
    return {os.path.realpath(path): ns for path, ns in config.namespaces}
