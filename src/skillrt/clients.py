"""The coding agents skillrt works with, one :class:`Client` entry each in
:data:`CLIENTS`: its folders, its hook (event, settings file, what install writes), its
transcript, its skill tool and the budgets it keeps.

Install, discovery, the turn's assembly, the doctor and the prompt hook all read these
entries, so a new client is one entry here (and, if it has a skill folder of its own,
its ``<roots>_roots`` switch in ``DiscoveryConfig``). One module, the standard library
only, plain classes with slots: the prompt hook reads it at every prompt, and a module
per client would add five imports to each (measured: 15 modules to 20, ~1.7 ms).
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    #: A transcript line (parsed JSON) -> its ``(role, content)``, or None when the line
    #: is not one of this client's messages.
    MessageReader = Callable[[dict[str, Any]], "tuple[str, Any] | None"]

__all__ = ["CLIENTS", "WITH_ROOTS", "Client", "HookHandler", "present"]


class HookHandler:
    """One hook entry ``skillrt install`` writes into the client's settings file."""

    __slots__ = ("event", "extra_args", "matcher", "max_timeout_s", "milliseconds", "name")

    def __init__(
        self,
        event: str,
        *,
        matcher: bool = True,
        name: str | None = None,
        milliseconds: bool = False,
        max_timeout_s: int | None = None,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        #: The client's hook event (``UserPromptSubmit``, ``BeforeAgent``, ...).
        self.event = event
        #: The group carries ``"matcher": ""`` (Claude Code, Gemini CLI; not Codex).
        self.matcher = matcher
        #: The handler's ``name`` field, where the client shows one.
        self.name = name
        #: The client counts ``timeout`` in milliseconds (Gemini CLI), not seconds.
        self.milliseconds = milliseconds
        #: A cap on the installed timeout (a model-call hook must stay short).
        self.max_timeout_s = max_timeout_s
        #: Arguments after ``skillrt hook <client> ...`` (e.g. ``--via-model``).
        self.extra_args = extra_args

    def entry(self, command: str, timeout_s: int) -> dict[str, Any]:
        """The group to add under ``hooks.<event>``."""
        if self.max_timeout_s is not None:
            timeout_s = min(timeout_s, self.max_timeout_s)
        handler: dict[str, Any] = {"name": self.name} if self.name else {}
        handler["type"] = "command"
        handler["command"] = " ".join([command, *self.extra_args])
        handler["timeout"] = timeout_s * 1000 if self.milliseconds else timeout_s
        return {"matcher": "", "hooks": [handler]} if self.matcher else {"hooks": [handler]}


class Client:
    """A coding agent: its folders, its hook (event, settings file, what install
    writes), its transcript, its skill tool and the budgets it keeps."""

    __slots__ = (
        "context_budget",
        "description_cap",
        "event",
        "folder",
        "handlers",
        "home_env",
        "hooks_file",
        "listing_fallback_chars",
        "listing_share",
        "load_tool",
        "load_tool_folders",
        "mcp_always",
        "mcp_file",
        "name",
        "read_message",
        "retired_events",
        "roots",
        "settings_comments",
        "skills_hint",
    )

    def __init__(
        self,
        name: str,
        *,
        folder: str,
        roots: str | None = None,
        home_env: str | None = None,
        event: str | None = None,
        hooks_file: str | None = None,
        handlers: tuple[HookHandler, ...] = (),
        retired_events: tuple[str, ...] = (),
        settings_comments: bool = False,
        mcp_file: str | None = None,
        mcp_always: bool = False,
        skills_hint: str = ".agents/skills",
        load_tool: str | None = None,
        load_tool_folders: tuple[str, ...] = (),
        context_budget: int | None = None,
        listing_share: float | None = None,
        listing_fallback_chars: int | None = None,
        description_cap: int | None = None,
        read_message: MessageReader | None = None,
    ) -> None:
        #: ``skillrt hook <name>``, ``skillrt install <name>``.
        self.name = name
        #: Its config folder, in the project and in the home folder (``.claude``).
        self.folder = folder
        #: The short name of its own skill folder, ``<folder>/skills`` (``claude``): the
        #: discovery switch ``<roots>_roots`` searches it; None: it has none.
        self.roots = roots
        #: An environment variable naming its home folder instead of ``~/<folder>``.
        self.home_env = home_env
        #: The hook event whose answer carries the skill (None: no prompt hook).
        self.event = event
        #: The settings file in its folder that holds the hooks.
        self.hooks_file = hooks_file
        #: The hook entries install writes there.
        self.handlers = handlers
        #: Events an older install put skillrt's hook on: install and uninstall take it
        #: off them, and ``doctor`` still finds it there.
        self.retired_events = retired_events
        #: Its settings file may hold ``//`` and ``/* */`` comments.
        self.settings_comments = settings_comments
        #: The file in its folder that registers MCP servers (``.toml``: a TOML table).
        self.mcp_file = mcp_file
        #: The MCP server is installed always (the client has no usable prompt hook).
        self.mcp_always = mcp_always
        #: Where a NO_SKILLS warning tells the user to put skills.
        self.skills_hint = skills_hint
        #: What its model calls to load a skill of ``load_tool_folders`` (``{name}``).
        self.load_tool = load_tool
        self.load_tool_folders = load_tool_folders
        #: The characters a turn's context may take, where the client keeps less than
        #: the hook's default.
        self.context_budget = context_budget
        #: The share of the context window its skill listing takes (4 chars a token),
        #: the listing's size when the window is not known, each description's cap.
        self.listing_share = listing_share
        self.listing_fallback_chars = listing_fallback_chars
        self.description_cap = description_cap
        #: Reads one line of its transcript (JSONL) as ``(role, content)``.
        self.read_message = read_message

    @property
    def hook_events(self) -> tuple[str, ...]:
        """The events skillrt's hook may stand on: what install writes, then what an
        older install wrote."""
        events = [h.event for h in self.handlers] + list(self.retired_events)
        return tuple(dict.fromkeys(events))

    def config_folder(self, base: str, environ: Mapping[str, str], *, user: bool) -> str:
        """Its config folder under ``base`` (the project, or the home folder with
        ``user``: there ``home_env`` wins when set)."""
        if user and self.home_env and environ.get(self.home_env):
            return environ[self.home_env]
        return f"{base.rstrip('/')}/{self.folder}"

    def __repr__(self) -> str:
        return f"Client({self.name!r})"


# -- Claude Code -----------------------------------------------------------------------
# Claude Code: a ``UserPromptSubmit`` hook in ``.claude/settings.json``; skills in
# ``.claude/skills``, loaded by its Skill tool; a JSONL transcript of
# ``{"type": "user"|"assistant", "message": {"role", "content"}}`` lines.
def _read_claude_code(entry: dict[str, Any]) -> tuple[str, Any] | None:
    message = entry.get("message")
    if entry.get("type") in ("user", "assistant") and isinstance(message, dict):
        return str(message.get("role") or entry["type"]), message.get("content")
    return None


CLAUDE_CODE = Client(
    "claude-code",
    folder=".claude",
    roots="claude",
    event="UserPromptSubmit",
    hooks_file="settings.json",
    handlers=(HookHandler("UserPromptSubmit"),),
    skills_hint=".claude/skills",
    load_tool="the Skill tool with {name}",
    load_tool_folders=(".claude/skills",),
    # Its listing: about 1% of the context window, each description cut at 1,536.
    listing_share=0.01,
    description_cap=1_536,
    read_message=_read_claude_code,
)


# -- Codex CLI -------------------------------------------------------------------------
# Codex CLI: a ``UserPromptSubmit`` hook in ``.codex/hooks.json`` (run only once the
# user trusts it: ``skillrt install`` records that through Codex's app server); skills in
# ``.codex/skills`` (``$CODEX_HOME`` for the user's); its MCP servers in ``config.toml``;
# a JSONL transcript of ``{"type": "response_item", "payload": {"type": "message",
# "role", "content"}}`` lines.
def _read_codex(entry: dict[str, Any]) -> tuple[str, Any] | None:
    payload = entry.get("payload")
    if (
        entry.get("type") == "response_item"
        and isinstance(payload, dict)
        and payload.get("type") == "message"
    ):
        return str(payload.get("role")), payload.get("content")
    return None


CODEX = Client(
    "codex",
    folder=".codex",
    roots="codex",
    home_env="CODEX_HOME",
    event="UserPromptSubmit",
    hooks_file="hooks.json",
    handlers=(HookHandler("UserPromptSubmit", matcher=False),),
    mcp_file="config.toml",
    skills_hint=".agents/skills or .codex/skills",
    # Codex replaces hook context past 2,500 tokens by a file the model must open (its
    # additionalContextLimit); code-heavy text runs about 3 characters a token.
    context_budget=7_000,
    # Its listing: about 2% of the context window, 8,000 characters when not known.
    listing_share=0.02,
    listing_fallback_chars=8_000,
    read_message=_read_codex,
)


# -- Gemini CLI ------------------------------------------------------------------------
# Gemini CLI: one ``BeforeModel`` hook (``--via-model``) that routes each new prompt and
# puts the skill into the user's own message on every model call (Gemini tells its
# model that ``BeforeAgent`` context is data, not instructions; older installs also had
# a ``BeforeAgent`` hook), in ``.gemini/settings.json`` (which may hold comments;
# timeouts in milliseconds); skills in ``.gemini/skills`` and ``.agents/skills``, loaded
# by its ``activate_skill`` tool; a JSONL transcript of ``{"id", "type":
# "user"|"gemini", "content"}`` lines.
def _read_gemini(entry: dict[str, Any]) -> tuple[str, Any] | None:
    if entry.get("type") in ("user", "gemini") and "content" in entry and "id" in entry:
        return str(entry["type"]), entry["content"]
    return None


GEMINI = Client(
    "gemini",
    folder=".gemini",
    roots="gemini",
    event="BeforeAgent",
    hooks_file="settings.json",
    handlers=(
        HookHandler(
            "BeforeModel",
            name="skillrt",
            milliseconds=True,
            max_timeout_s=5,
            extra_args=("--via-model",),
        ),
    ),
    retired_events=("BeforeAgent",),
    settings_comments=True,
    mcp_file="settings.json",
    skills_hint=".gemini/skills or .agents/skills",
    load_tool="activate_skill {name}",
    load_tool_folders=(".gemini/skills", ".agents/skills"),
    read_message=_read_gemini,
)


# -- Cursor ----------------------------------------------------------------------------
# Cursor: its prompt hook cannot add context, so skillrt is its MCP server
# (``.cursor/mcp.json``), installed always.
CURSOR = Client("cursor", folder=".cursor", mcp_file="mcp.json", mcp_always=True)


# -- the registry ----------------------------------------------------------------------
#: The registry: a new client is an entry above and a line here.
CLIENTS: dict[str, Client] = {c.name: c for c in (CLAUDE_CODE, CODEX, GEMINI, CURSOR)}
#: Clients with skill folders of their own, by their folders' short name.
WITH_ROOTS: dict[str, Client] = {c.roots: c for c in CLIENTS.values() if c.roots}


def present(project: str, home: str | None, environ: Mapping[str, str]) -> list[str]:
    """The short names of the client skill folders that exist in the project or the
    home folder (a few ``stat`` calls): a daemon asked for a prompt must search them."""
    out = []
    for short, client in WITH_ROOTS.items():
        candidates = [os.path.join(b, f"{client.folder}/skills") for b in (project, home) if b]
        if client.home_env and environ.get(client.home_env):
            candidates.append(os.path.join(environ[client.home_env], "skills"))
        if any(os.path.isdir(c) for c in candidates):
            out.append(short)
    return out
