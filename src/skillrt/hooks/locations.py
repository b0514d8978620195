"""Where the prompt hook works: the project a prompt belongs to, and the folder that
keeps the hook's state, caches, log and daemon socket.

The hook runs in other people's repositories, so it writes nothing there: unless the
project already keeps a state folder of its own (``skillrt.yaml``'s ``state_dir``, or a
``.skillrt/`` someone made by running skillrt there) or ``--state`` names one, the hook
keeps its state in the user's cache folder, one folder per project:
``$XDG_CACHE_HOME/skillrt/projects/<name>-<hash>`` (``~/.cache`` without
``XDG_CACHE_HOME``). Standard library only: this runs once per prompt.
"""

from __future__ import annotations

import os
import zlib  # not hashlib: ~5 ms to import, once per prompt

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from typing import Any

#: What marks a project's top folder, nearest first (Codex CLI finds its project the
#: same way; Claude Code names it in ``CLAUDE_PROJECT_DIR``).
PROJECT_MARKERS = (".git", "skillrt.yaml", ".hg")
#: The project's own state folder, used when it already exists.
PROJECT_STATE = ".skillrt"


def project_dir(cwd: str | None, environ: dict[str, str] | os._Environ[str]) -> str:
    """The project a prompt belongs to: ``CLAUDE_PROJECT_DIR`` (Claude Code), else the
    nearest folder at or above ``cwd`` holding a :data:`PROJECT_MARKERS` entry (a client
    started in a subfolder), else ``cwd`` itself; the process's cwd without one."""
    named = environ.get("CLAUDE_PROJECT_DIR")
    if named and os.path.isdir(named):
        return os.path.abspath(named)
    start = os.path.abspath(cwd) if cwd and os.path.isdir(cwd) else os.getcwd()
    home = environ.get("HOME")
    here = start
    while True:
        if any(os.path.exists(os.path.join(here, m)) for m in PROJECT_MARKERS):
            return here
        parent = os.path.dirname(here)
        if parent == here or here == home:
            return start  # the home folder is nobody's project
        here = parent


def cache_home(environ: dict[str, str] | os._Environ[str]) -> str | None:
    """``$XDG_CACHE_HOME/skillrt`` (absolute only, as the spec says), else
    ``~/.cache/skillrt``; None without a home folder."""
    xdg = environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, "skillrt")
    home = environ.get("HOME")
    return os.path.join(home, ".cache", "skillrt") if home else None


def project_key(project: str) -> str:
    """``<name>-<hash>``: readable, one per project path, short enough for a socket."""
    real = os.path.realpath(project)
    raw = real.encode("utf-8", "surrogateescape")
    digest = f"{zlib.crc32(raw):08x}{zlib.crc32(raw[::-1]):08x}"  # a key, not a secret
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in os.path.basename(real))
    return f"{name[:24] or 'root'}-{digest}"


def default_state_dir(project: str, environ: dict[str, str] | os._Environ[str]) -> str:
    """The hook's state folder when neither a flag nor a config file names one: the
    project's own ``.skillrt/`` when it exists, else the project's folder in the user's
    cache (the project's own when there is no cache folder either)."""
    own = os.path.join(project, PROJECT_STATE)
    if os.path.isdir(own):
        return own
    cache = cache_home(environ)
    if cache is None:
        return own
    return os.path.join(cache, "projects", project_key(project))


def shared_cache_dir(environ: dict[str, str] | os._Environ[str]) -> str | None:
    """The folder of the derived caches every project shares (parsed skills, vectors,
    the embedding model's fast copy): a skill folder indexed once, at ``install`` or in
    any project, is found from every other."""
    cache = cache_home(environ)
    return os.path.join(cache, "shared") if cache else None


def hook_state_dir(
    project: str,
    state: str | None,
    config_file: str | None,
    environ: dict[str, str] | os._Environ[str],
) -> str:
    """The hook's state folder: ``--state`` (a folder, relative to the project), else
    the config file's own ``state_dir`` when it names one, else
    :func:`default_state_dir`. A ``--state`` URL keeps caches and logs in the default."""
    if state and "://" not in state:
        return os.path.abspath(os.path.join(project, state))
    default = default_state_dir(project, environ)
    if config_file is None:
        return default
    from pathlib import Path  # ~7 ms: only when the project has a config file

    from skillrt.config import peek_state_dir

    return os.path.abspath(peek_state_dir(Path(config_file), default=Path(default)))


def hook_settings(config: Any, state_dir: str, environ: dict[str, str] | os._Environ[str]) -> Any:
    """``config`` (a ``RuntimeConfig``) as the hook, ``install`` and the daemon a hook
    starts use it: the hook's state folder, and the derived caches in the user's cache
    folder every project shares (unless the config names a ``cache_dir``), so a skill
    folder indexed once, at ``install`` or in any project, is found from every other."""
    from pathlib import Path

    changes: dict[str, Any] = {"state_dir": Path(state_dir)}
    shared = shared_cache_dir(environ)
    if config.cache_dir is None and shared is not None:
        changes["cache_dir"] = Path(shared)
    return config.replace_section(**changes)
