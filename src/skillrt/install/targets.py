"""What ``skillrt install <client>`` adds to each client's config files.

=============  =============================================  ================================
client         file (``--project`` / ``--user``)              what is added
=============  =============================================  ================================
claude-code    ``.claude/settings.json`` / ``~/.claude/...``  a ``UserPromptSubmit`` hook
codex          ``.codex/hooks.json`` / ``~/.codex/...``       a ``UserPromptSubmit`` hook
               ``.codex/config.toml`` / ``~/.codex/...``      ``[mcp_servers.skillrt]`` (--mcp)
gemini         ``.gemini/settings.json`` / ``~/.gemini/...``  a ``BeforeModel`` hook (an
                                                              older ``BeforeAgent`` one
                                                              comes off), and
                                                              ``mcpServers.skillrt`` (--mcp)
cursor         ``.cursor/mcp.json`` / ``~/.cursor/...``       ``mcpServers.skillrt`` (Cursor's
                                                              prompt hook cannot add context)
=============  =============================================  ================================

Every edit keeps the rest of the file. skillrt's own entries are recognised by their
command (``... skillrt ... hook <client>``), the ``skillrt`` server key, or the marked
TOML block, so installing twice changes nothing and uninstalling removes exactly them
(and a list or table left empty by that).
"""

from __future__ import annotations

import copy
import json
import shlex
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillrt.clients import CLIENTS as CLIENT_SPECS
from skillrt.clients import Client
from skillrt.errors import InstallError
from skillrt.install.files import (
    FileEdit,
    edit_json,
    load_json,
    parse_json,
    read_text,
    restore_original,
)

CLIENTS = tuple(CLIENT_SPECS)
#: How a hook starts skillrt by default: ``python -c`` with this line skips both the
#: console script's wrapper (it imports ``re``) and ``-m``'s runpy: ~10 ms per prompt.
HOOK_BOOT = "import sys;from skillrt.cli import main;sys.exit(main())"
SERVER_KEY = "skillrt"
TOML_BEGIN = "# >>> skillrt (added by `skillrt install codex`; --uninstall removes it)"
TOML_END = "# <<< skillrt"


@dataclass(frozen=True)
class Target:
    """Where to install: the client, its config folder, the commands to write."""

    client: str
    #: ``<project>/.claude`` or ``~/.claude`` (likewise .codex, .gemini, .cursor).
    folder: Path
    #: The ``skillrt`` command, as argv (e.g. ``["/venv/bin/skillrt"]``).
    program: Sequence[str]
    #: Flags for both the hook and the MCP server (``--root DIR``, ``--state DIR``, ...).
    flags: Sequence[str] = ()
    #: Flags for the hook only (``--socket PATH``).
    hook_flags: Sequence[str] = ()
    #: Seconds a client waits for the hook.
    timeout_s: int = 10
    #: How the hook starts skillrt when it differs from ``program`` (e.g.
    #: ``[python, "-c", HOOK_BOOT]``).
    hook_program: Sequence[str] | None = None
    #: Register the MCP server too (always for a client without a usable prompt hook;
    #: an uninstall removes it anyway).
    mcp: bool = False

    @property
    def spec(self) -> Client:
        """What skillrt knows of the client (:mod:`skillrt.clients`)."""
        try:
            return CLIENT_SPECS[self.client]
        except KeyError:
            raise InstallError(
                f"unknown client {self.client!r}; one of {', '.join(CLIENTS)}"
            ) from None

    def hook_command(self) -> str:
        program = self.hook_program or self.program
        return shlex.join([*program, "hook", self.client, *self.flags, *self.hook_flags])

    def server(self) -> dict[str, Any]:
        # Beside skillrt's prompt hook, the server does not ask the model to route again.
        hooked = ["--with-hook"] if self.spec.handlers else []
        args = [*self.program[1:], "mcp", *self.flags, *hooked]
        return {"command": self.program[0], "args": args}


def plan(target: Target, *, uninstall: bool = False, backups: Path) -> list[FileEdit]:
    """The file edits that install (or uninstall) ``target``; nothing is written.

    An uninstall that leaves a file's data as it was before the install gives back the
    file's exact bytes (from the backup the install kept in ``backups``)."""
    edits = _plan(target, uninstall)
    if not uninstall:
        return edits
    return [
        restore_original(e, _parse_toml if e.path.suffix == ".toml" else parse_json, backups)
        for e in edits
    ]


def _plan(target: Target, uninstall: bool) -> list[FileEdit]:
    """The client's hooks file (its hooks, and its MCP server when that file registers
    servers too), then its MCP file when that is another one."""
    spec = target.spec
    mcp = target.mcp or spec.mcp_always or uninstall
    edits = []
    if spec.hooks_file:
        serve = mcp and spec.mcp_file == spec.hooks_file
        edits.append(_json_edit(target.folder / spec.hooks_file, target, uninstall, serve))
    if mcp and spec.mcp_file and spec.mcp_file != spec.hooks_file:
        path = target.folder / spec.mcp_file
        if path.suffix == ".toml":
            edits.append(_toml_edit(path, target, uninstall))
        else:
            edits.append(_json_edit(path, target, uninstall, True))
    return edits


def _parse_toml(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(str(exc)) from exc


def _json_edit(path: Path, target: Target, uninstall: bool, server: bool) -> FileEdit:
    """The client's hooks in ``path`` when it is its hooks file, and skillrt's MCP
    server with ``server``."""
    spec = target.spec
    before = read_text(path)
    comments = spec.settings_comments  # e.g. Gemini CLI strips comments from its settings
    try:
        data = load_json(path, before, comments=comments)
        original = copy.deepcopy(data)
        if server:
            _set_server(data, target, uninstall)
        if path.name == spec.hooks_file:
            command = target.hook_command()
            for handler in spec.handlers:
                group = handler.entry(command, target.timeout_s)
                _set_hook(data, handler.event, group, target.client, uninstall)
            for event in spec.retired_events:  # an older install's hook comes off
                _set_hook(data, event, None, target.client, uninstall=True)
        return FileEdit(path, before, edit_json(before, original, data, comments=comments))
    except RecursionError:  # parsing, copying or editing a document nested that deep
        raise InstallError(
            f"{path} is nested too deeply to be read or edited; fix it or move it away, "
            "then run again",
            path=str(path),
        ) from None


# -- hooks ----------------------------------------------------------------------------
def is_our_hook(handler: Any, client: str) -> bool:
    """A hook handler that runs ``skillrt hook <client>`` (however skillrt is started:
    its console script, ``python -m skillrt`` or ``python -c`` :data:`HOOK_BOOT`)."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    try:
        argv = shlex.split(handler["command"])
    except ValueError:
        return False
    return any(
        argv[i : i + 2] == ["hook", client] and any("skillrt" in t for t in argv[:i])
        for i in range(1, len(argv) - 1)
    )


def _set_hook(
    data: dict[str, Any], event: str, group: dict[str, Any] | None, client: str, uninstall: bool
) -> None:
    """Drop skillrt's handlers of ``event`` (and groups left empty), then add ``group``."""
    hooks = data.get("hooks")
    if hooks is None:
        if uninstall:
            return
        hooks = data["hooks"] = {}
    if not isinstance(hooks, dict):
        raise InstallError("'hooks' is not an object; not changing it", key="hooks")
    groups = hooks.get(event)
    if groups is not None and not isinstance(groups, list):
        raise InstallError(f"'hooks.{event}' is not a list; not changing it", key=event)
    ours = [
        g
        for g in groups or []
        if isinstance(g, dict)
        and isinstance(g.get("hooks"), list)
        and any(is_our_hook(h, client) for h in g["hooks"])
    ]
    if not uninstall and ours == [group]:
        return  # installed as asked: leave it where it is
    kept = []
    for g in groups or []:
        if isinstance(g, dict) and isinstance(g.get("hooks"), list):
            handlers = [h for h in g["hooks"] if not is_our_hook(h, client)]
            if not handlers and g["hooks"]:
                continue  # the group held only skillrt's handler
            if len(handlers) != len(g["hooks"]):
                g = {**g, "hooks": handlers}
        kept.append(g)
    if not uninstall:
        kept.append(group)
    if kept:
        hooks[event] = kept
    else:
        hooks.pop(event, None)
    if not hooks:
        data.pop("hooks")


# -- MCP servers ----------------------------------------------------------------------
def _set_server(data: dict[str, Any], target: Target, uninstall: bool) -> None:
    servers = data.get("mcpServers")
    if servers is None:
        if uninstall:
            return
        servers = data["mcpServers"] = {}
    if not isinstance(servers, dict):
        raise InstallError("'mcpServers' is not an object; not changing it", key="mcpServers")
    if uninstall:
        servers.pop(SERVER_KEY, None)
        if not servers:
            data.pop("mcpServers")
    else:
        servers[SERVER_KEY] = target.server()


def _toml_edit(path: Path, target: Target, uninstall: bool) -> FileEdit:
    """Codex's ``config.toml``: skillrt's server as a marked block of text."""
    before = read_text(path)
    text = before or ""
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InstallError(f"{path} is not valid TOML ({exc})", path=str(path)) from exc
    lines = text.splitlines(keepends=True)
    if TOML_BEGIN + "\n" in lines:
        start = lines.index(TOML_BEGIN + "\n")
        end = next((i for i in range(start, len(lines)) if lines[i].rstrip("\n") == TOML_END), None)
        if end is None:
            raise InstallError(f"{path}: skillrt's block has no end marker", path=str(path))
        del lines[start : end + 1]
        if start > 0 and start == len(lines) and not lines[start - 1].strip():
            del lines[start - 1]  # the blank line install put before the block
    rest = "".join(lines)
    if not uninstall:
        server = tomllib.loads(rest or "").get("mcp_servers", {})
        if isinstance(server, dict) and SERVER_KEY in server:
            raise InstallError(
                f"{path} already defines [mcp_servers.{SERVER_KEY}] outside skillrt's block; "
                "remove it and run again",
                path=str(path),
            )
        spec = target.server()
        block = (
            f"{TOML_BEGIN}\n[mcp_servers.{SERVER_KEY}]\n"
            f"command = {json.dumps(spec['command'])}\n"
            f"args = [{', '.join(json.dumps(a) for a in spec['args'])}]\n{TOML_END}\n"
        )
        if rest and not rest.endswith("\n"):
            rest += "\n"
        rest = f"{rest}\n{block}" if rest.strip() else block
        try:
            tomllib.loads(rest)
        except tomllib.TOMLDecodeError as exc:  # e.g. mcp_servers is an inline table
            raise InstallError(
                f"cannot add [mcp_servers.{SERVER_KEY}] to {path} ({exc})", path=str(path)
            ) from exc
    after = rest if rest.strip() else None
    return FileEdit(path, before, after)
