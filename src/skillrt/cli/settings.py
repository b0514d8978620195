"""The configuration a command runs with, from its flags and where it runs.

Shared by every command (through :class:`~skillrt.cli.app.CliContext`), the prompt hook's
in-process fallback and ``serve``, so all of them read the same ``skillrt.yaml``, state
folder and roots for the same flags.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skillrt.config import RootConfig, RuntimeConfig


def config_file(explicit: str | None, cwd: Path) -> Path | None:
    """The config file in effect: ``--config``, else ``<cwd>/skillrt.yaml`` when present."""
    from skillrt.config import CONFIG_FILENAME

    if explicit:
        return (cwd / explicit).resolve()
    default = cwd / CONFIG_FILENAME
    return default.resolve() if default.exists() else None


def load_config(
    explicit: str | None,
    state: str | None,
    *,
    cwd: Path,
    home: str | None,
    codex_home: str | None = None,
    client_roots: bool = True,
) -> RuntimeConfig:
    """``--config`` (required to exist) or ``<cwd>/skillrt.yaml``; with no file, the
    project is ``cwd`` and the state ``<cwd>/.skillrt``; ``--state`` overrides it (a
    folder, or a server store's URL for the shared state, caches staying local);
    ``home`` is the user-scope home and ``codex_home`` Codex CLI's (``$CODEX_HOME``)
    unless the config names them; ``client_roots=False`` (``--no-client-roots``) stops
    searching the coding agents' own skill folders."""
    from skillrt.config import CONFIG_FILENAME, RuntimeConfig

    path = (cwd / explicit) if explicit else cwd / CONFIG_FILENAME
    config = RuntimeConfig.from_file(path, required=bool(explicit))
    if not path.exists():
        config = config.replace_section(project_dir=cwd, state_dir=cwd / ".skillrt")
    if state:
        from skillrt.config import StateConfig, check_state
        from skillrt.store.backends import is_store_url

        _check_state_flag(state)
        if is_store_url(state):  # the shared state; caches stay in state_dir
            section = dataclasses.replace(config.state, url=state)
            check_state(section)
            config = config.replace_section(state=section)
        else:
            config = config.replace_section(state_dir=(cwd / state).resolve(), state=StateConfig())
    discovery = config.discovery
    if discovery.home_dir is None:  # else the config file named it
        discovery = dataclasses.replace(discovery, home_dir=Path(home) if home else None)
    if discovery.codex_home is None and codex_home and Path(codex_home).is_absolute():
        discovery = dataclasses.replace(discovery, codex_home=Path(codex_home))
    if not client_roots:
        discovery = dataclasses.replace(
            discovery, client_roots=False, claude_roots=False, codex_roots=False,
            gemini_roots=False,
        )  # fmt: skip
    return config.replace_section(discovery=discovery)


def locate_state(explicit: str | None, state: str | None, *, cwd: Path) -> tuple[Path, Path]:
    """``(state_dir, project_dir)`` as :func:`load_config` gives them for these flags,
    reading only ``state_dir`` from the config file (the prompt hook's hot path; see
    :func:`skillrt.config.peek_state_dir`)."""
    from skillrt.config import CONFIG_FILENAME, peek_state_dir
    from skillrt.errors import ConfigError

    path = (cwd / explicit) if explicit else cwd / CONFIG_FILENAME
    if not path.exists():
        if explicit:
            raise ConfigError(f"config file not found: {path}", path=str(path))
        state_dir, project_dir = cwd / ".skillrt", cwd
    else:
        state_dir, project_dir = peek_state_dir(path), path.parent.resolve()
    if state:
        from skillrt.store.backends import is_store_url

        _check_state_flag(state)
        if not is_store_url(state):  # a URL keeps the caches in state_dir
            state_dir = (cwd / state).resolve()
    return state_dir, project_dir


def _check_state_flag(state: str) -> None:
    """``--state`` is a folder or a server store's URL; another URL is a mistake (it
    would otherwise become a folder named ``mysql:``)."""
    from skillrt.store.backends import unknown_scheme, url_examples

    scheme = unknown_scheme(state)
    if scheme is not None:
        from skillrt.errors import UsageError

        raise UsageError(
            f"--state {state!r}: unknown URL scheme {scheme!r} (give a folder for SQLite, "
            f"or a {url_examples()} URL for a shared store)",
            argument="--state",
        )


def flag_roots(roots: Sequence[str] | None, cwd: Path) -> tuple[RootConfig, ...] | None:
    """``--root`` values as explicit roots (None when none were given)."""
    from skillrt.config import RootConfig

    if not roots:
        return None
    return tuple(RootConfig((cwd / r).resolve(), scope="flag") for r in roots)
