"""A coding agent's own skill folders: ``.claude/skills`` (Claude Code) and
``.codex/skills`` (Codex CLI), in the project and in the home folder.

They are opt-in for skillrt (``discovery.claude_roots``, ``discovery.codex_roots``,
SPEC S3); a client's hook turns on its own with ``--client-roots``, which ``skillrt
install`` writes, so the skills a client reads are found for that client. The prompt
hook imports this module: the standard library only, the config lazily.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from skillrt.config import DiscoveryConfig, RuntimeConfig

#: client -> the discovery switches of its own skill folders.
CLIENT_ROOTS: dict[str, tuple[str, ...]] = {
    "claude-code": ("claude",),
    "codex": ("codex",),
    "gemini": (),
    "cursor": (),
}
#: switch -> the folder it searches (under the project and under ``~``).
FOLDERS = {"claude": ".claude/skills", "codex": ".codex/skills"}


def present(client: str, project: str, home: str | None) -> list[str]:
    """``client``'s switches whose folder exists in the project or the home folder (two
    ``stat`` calls: a hook asks a daemon that lacks an absent folder all the same)."""
    import os

    out = []
    for name in CLIENT_ROOTS.get(client, ()):
        folders = [os.path.join(base, FOLDERS[name]) for base in (project, home) if base]
        if any(os.path.isdir(f) for f in folders):
            out.append(name)
    return out


def enabled(discovery: DiscoveryConfig) -> list[str]:
    """The client-root switches a discovery config has on (a daemon's identity)."""
    return [name for name in FOLDERS if getattr(discovery, f"{name}_roots")]


def with_client_roots(config: RuntimeConfig, client: str) -> RuntimeConfig:
    """``config`` with ``client``'s own skill folders searched too."""
    import dataclasses

    names = CLIENT_ROOTS.get(client, ())
    if not names:
        return config
    discovery = dataclasses.replace(
        config.discovery,
        claude_roots=config.discovery.claude_roots or "claude" in names,
        codex_roots=config.discovery.codex_roots or "codex" in names,
    )
    return config.replace_section(discovery=discovery)
