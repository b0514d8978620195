"""The doctor's environment section: roots, store, daemon, client hooks, extras.

Every check is bounded and none writes: a root walk counts at most
:data:`MAX_DIRS` folders, the daemon gets :data:`DAEMON_TIMEOUT_S` seconds to answer, a
client config file that cannot be read is reported, never fatal.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.clients import CLIENTS
from skillrt.doctor.model import Environment, RootStatus

if TYPE_CHECKING:
    from skillrt.config import RootConfig, RuntimeConfig
    from skillrt.skills.registry import SkillRegistry
    from skillrt.store.base import Store

__all__ = ["EXTRAS", "environment", "hook_status", "missing_extras"]

#: Seconds the daemon gets to answer ``status``.
DAEMON_TIMEOUT_S = 2.0
#: Claude Code's managed (administrator) settings on Linux.
CLAUDE_MANAGED_SETTINGS = "/etc/claude-code/managed-settings.json"
#: Seconds Codex's app server gets to list its hooks.
CODEX_TIMEOUT_S = 15.0
#: Folders a check of an unsearched client folder visits at most.
MAX_DIRS = 2_000
#: (module, extra, what it is for).
EXTRAS = (
    ("psycopg", "postgres", "a shared PostgreSQL state store"),
    ("sentence_transformers", "sentence-transformers", "the sentence-transformers backend"),
    ("opentelemetry", "otel", "OpenTelemetry spans"),
    ("agents", "openai-agents", "the OpenAI Agents SDK toolset"),
    ("pydantic_ai", "pydantic-ai", "the Pydantic AI toolset"),
)


def missing_extras() -> tuple[dict[str, str], ...]:
    """The optional extras whose module is not importable, with the pip line for each."""
    out = []
    for module, extra, purpose in EXTRAS:
        if importlib.util.find_spec(module) is None:
            out.append(
                {"extra": extra, "for": purpose, "install": f"pip install 'skillrt[{extra}]'"}
            )
    return tuple(out)


def _count_skill_files(root: Path) -> int:
    """SKILL.md files under ``root`` (bounded walk, no symlinks followed)."""
    count = 0
    for dirs, (_, subdirs, files) in enumerate(os.walk(root), start=1):
        count += sum(1 for f in files if f.lower() == "skill.md")
        subdirs[:] = [d for d in subdirs if d not in (".git", "node_modules")]
        if dirs >= MAX_DIRS:
            break
    return count


def _roots(
    config: RuntimeConfig,
    explicit: Sequence[RootConfig] | None,
    registry: SkillRegistry,
) -> tuple[list[RootStatus], list[str]]:
    from skillrt.skills.discovery import resolve_roots

    project = config.project_dir
    roots = resolve_roots(config.discovery, project, tuple(explicit) if explicit else None)
    per_root = Counter(str(s.root) for s in registry.skills() if s.root is not None)
    out: list[RootStatus] = []
    searched: set[str] = set()
    for root in roots:
        where = str(root.path)
        searched.add(os.path.realpath(where))
        out.append(RootStatus(where, root.scope, True, root.path.is_dir(), per_root.get(where, 0)))
    problems: list[str] = []
    home = config.discovery.home_dir
    for base, scope in ((project, "project"), (home, "user")):
        if base is None:
            continue
        for folder in (".claude", ".codex"):
            path = Path(base) / folder / "skills"
            if os.path.realpath(path) in searched or not path.is_dir():
                continue
            found = _count_skill_files(path)
            if not found:
                continue
            flag = "claude_roots" if folder == ".claude" else "codex_roots"
            note = (
                f"holds {found} skills but is not searched: set discovery.{flag}: true in "
                f"skillrt.yaml, or pass --root {path}"
            )
            out.append(RootStatus(str(path), scope, False, True, found, note))
            problems.append(f"{path}: {note}")
    for status in out:
        if status.searched and not status.exists and status.scope == "flag":
            problems.append(f"{status.path}: the root does not exist")
    return out, problems


def hook_status(
    project: Path,
    home: Path | None,
    *,
    environ: Mapping[str, str] | None = None,
    ask_codex: bool = True,
) -> dict[str, Any]:
    """Per client: whether a config file (project or user) runs ``skillrt hook
    <client>``, and why such a hook would not run: ``problems``, each ``{"code",
    "message", "fix"}`` (HOOKS_DISABLED, HOOK_DISABLED, HOOK_SHADOWED, HOOK_UNTRUSTED,
    HOOK_NOT_LOADED, FOLDER_UNTRUSTED, INSTALLED_TWICE). Codex's own view of its hooks
    (loaded? trusted?) is asked of its app server when ``codex`` is on PATH (bounded)."""
    environ = os.environ if environ is None else environ
    out: dict[str, Any] = {}
    for client, spec in CLIENTS.items():
        if not spec.hooks_file or not spec.event:
            continue
        filename, events = spec.hooks_file, spec.hook_events
        where: list[str] = []
        errors: list[str] = []
        settings: list[tuple[str, dict[str, Any]]] = []
        for scope, base in (("project", project), ("user", home)):
            if base is None:
                continue
            path = Path(spec.config_folder(str(base), environ, user=scope == "user")) / filename
            data = _read_json(path, errors, comments=spec.settings_comments)
            if data is None:
                continue
            settings.append((scope, data))
            hooks = data.get("hooks")
            if _holds_our_hook(hooks, events, client):
                where.append(str(path))
        entry: dict[str, Any] = {"installed": bool(where), "where": where}
        if errors:
            entry["errors"] = errors
        if not where:
            entry["install"] = f"skillrt install {client}"
        else:
            problems = _hook_problems(client, project, home, settings, where, environ, ask_codex)
            if problems:
                entry["problems"] = problems
        out[client] = entry
    return out


def _our_handlers(
    hooks: Any, client: str, events: tuple[str, ...] | None = None
) -> Iterator[dict[str, Any]]:
    """skillrt's handlers (``skillrt hook <client>``) in a settings file's ``hooks``, on
    ``events`` (None: on any event)."""
    from skillrt.install.targets import is_our_hook

    if not isinstance(hooks, dict):
        return
    for event in hooks if events is None else events:
        groups = hooks.get(event)
        for group in groups if isinstance(groups, list) else ():
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else ():
                if is_our_hook(handler, client):
                    yield handler


def _holds_our_hook(hooks: Any, events: tuple[str, ...], client: str) -> bool:
    """Whether a settings file's ``hooks`` run ``skillrt hook <client>`` on one of
    ``events``."""
    return next(_our_handlers(hooks, client, events), None) is not None


def _our_hook_names(settings: list[tuple[str, dict[str, Any]]], client: str) -> list[str]:
    """The ``name`` of each of skillrt's hook handlers in these settings (a name that an
    older install used and a new one dropped is not there to be disabled)."""
    names: list[str] = []
    for _scope, data in settings:
        for handler in _our_handlers(data.get("hooks"), client):
            name = handler.get("name")
            if isinstance(name, str) and name not in names:
                names.append(name)
    return names


def _read_json(path: Path, errors: list[str], *, comments: bool = False) -> dict[str, Any] | None:
    """The JSON object at ``path`` (None when missing, unreadable or not an object);
    with ``comments``, ``//`` and ``/* */`` comments allowed (Gemini CLI's settings)."""
    from skillrt.install.jsonedit import blank_comments

    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(blank_comments(text) if comments else text)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:  # nested past the parser's limit
        errors.append(f"{path}: {exc}")
        return None
    return data if isinstance(data, dict) else None


def _problem(code: str, message: str, fix: str) -> dict[str, str]:
    return {"code": code, "message": message, "fix": fix}


def _hook_problems(
    client: str,
    project: Path,
    home: Path | None,
    settings: list[tuple[str, dict[str, Any]]],
    where: list[str],
    environ: Mapping[str, str],
    ask_codex: bool,
) -> list[dict[str, str]]:
    """Why an installed hook would not run (or would run twice)."""
    problems: list[dict[str, str]] = []
    if len(where) > 1:
        problems.append(_problem(
            "INSTALLED_TWICE",
            f"installed in {' and '.join(where)}: each prompt runs both, and gets each "
            "skill twice",
            f"keep one: skillrt install {client} --uninstall (here) or --user --uninstall",
        ))  # fmt: skip
    if client == "claude-code":
        errors: list[str] = []
        local = _read_json(project / ".claude" / "settings.local.json", errors)
        managed = _read_json(Path(CLAUDE_MANAGED_SETTINGS), errors)
        layers = [*settings, *([("project-local", local)] if local else [])]
        for scope, data in layers:
            if data.get("disableAllHooks") is True:
                problems.append(_problem(
                    "HOOKS_DISABLED",
                    f"the {scope} settings say disableAllHooks: Claude Code runs no hook",
                    "remove disableAllHooks from that settings.json",
                ))  # fmt: skip
        if managed and managed.get("allowManagedHooksOnly") is True:
            problems.append(_problem(
                "HOOK_SHADOWED",
                f"{CLAUDE_MANAGED_SETTINGS} says allowManagedHooksOnly: Claude Code runs only "
                "the hooks your administrator manages, not this one",
                "ask for skillrt's hook in the managed settings",
            ))  # fmt: skip
    elif client == "gemini":
        for scope, data in settings:
            raw = data.get("hooksConfig")
            config: dict[str, Any] = raw if isinstance(raw, dict) else {}
            if config.get("enabled") is False:
                problems.append(_problem(
                    "HOOKS_DISABLED",
                    f"the {scope} settings say hooksConfig.enabled: false: Gemini CLI runs "
                    "no hook",
                    "set hooksConfig.enabled to true (or /hooks enable-all)",
                ))  # fmt: skip
            listed = config.get("disabled")
            disabled: list[Any] = listed if isinstance(listed, list) else []
            for name in _our_hook_names(settings, client):
                if name in disabled:
                    problems.append(_problem(
                        "HOOK_DISABLED",
                        f"the {scope} settings disable the hook named {name!r}",
                        f"/hooks enable {name} in Gemini CLI",
                    ))  # fmt: skip
        in_project = str(project / ".gemini" / "settings.json") in where
        user = next((data for scope, data in settings if scope == "user"), {})
        if in_project and home is not None and not _gemini_trusts(project, home, user, environ):
            problems.append(_problem(
                "FOLDER_UNTRUSTED",
                f"Gemini CLI runs a project's hooks only in a trusted folder, and "
                f"{project} is not one",
                f"run gemini in {project} once and trust the folder",
            ))  # fmt: skip
    elif client == "codex" and ask_codex:
        problems.extend(_codex_problems(project, environ))
    return problems


def _gemini_trusts(
    project: Path, home: Path, user: dict[str, Any], environ: Mapping[str, str]
) -> bool:
    """Whether Gemini CLI trusts ``project`` as it decides it (its ``checkPathTrust``):
    ``GEMINI_CLI_TRUST_WORKSPACE``, folder trust switched off in the user's settings
    (``security.folderTrust.enabled: false``: every folder is trusted), else the longest
    rule of ~/.gemini/trustedFolders.json that holds ``project`` (``TRUST_FOLDER``, a
    ``TRUST_PARENT`` folder's parent, or ``DO_NOT_TRUST``); no rule: not trusted."""
    if environ.get("GEMINI_RESTRICTED_MODE") == "true":
        return False
    if environ.get("GEMINI_CLI_TRUST_WORKSPACE") in ("true", "false"):
        return environ["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    security = user.get("security")
    folder_trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(folder_trust, dict) and folder_trust.get("enabled") is False:
        return True
    try:
        text = (home / ".gemini" / "trustedFolders.json").read_text("utf-8")
        from skillrt.install.jsonedit import blank_comments

        rules = json.loads(blank_comments(text))
    except (OSError, ValueError, RecursionError):
        return False
    if not isinstance(rules, dict):
        return False
    here = project.resolve()
    longest, decision = -1, None
    for path, rule in rules.items():
        folder = Path(str(path))
        folder = (folder.parent if rule == "TRUST_PARENT" else folder).resolve()
        if (here == folder or here.is_relative_to(folder)) and len(str(path)) > longest:
            longest, decision = len(str(path)), rule
    return decision in ("TRUST_FOLDER", "TRUST_PARENT")


def _codex_problems(project: Path, environ: Mapping[str, str]) -> list[dict[str, str]]:
    """Codex's own report of skillrt's hooks (its app server), when Codex is here."""
    import shutil

    from skillrt.install.codex_trust import MANUAL_STEP, TrustProblem, codex_hooks
    from skillrt.install.targets import is_our_hook

    codex = shutil.which("codex", path=environ.get("PATH"))
    if codex is None:
        return []
    try:
        report = codex_hooks(project, codex=codex, environ=environ, timeout=CODEX_TIMEOUT_S)
    except TrustProblem as exc:
        return [_problem("CODEX_UNKNOWN", f"Codex could not be asked about its hooks: {exc}",
                         "run `codex app-server` by hand to see why")]  # fmt: skip
    ours = [h for h in report.hooks if is_our_hook({"command": h.command}, "codex")]
    if not ours:
        why = ("Codex loads no project hooks until the project is trusted"
               if report.project_untrusted else "Codex does not load it")  # fmt: skip
        return [_problem("HOOK_NOT_LOADED", f"the hook is installed but {why}",
                         f"run `codex` in {project} once and trust the project, then "
                         "`skillrt install codex` again")]  # fmt: skip
    problems = []
    for hook in ours:
        if hook.trust not in ("trusted", "managed"):
            problems.append(_problem(
                "HOOK_UNTRUSTED",
                f"Codex reports the hook {hook.key} {hook.trust}: `codex exec` skips it "
                "without a word",
                f"skillrt install codex{' --user' if hook.source == 'user' else ''} (records "
                f"your approval), or {MANUAL_STEP.format(cwd=project)}",
            ))  # fmt: skip
        if not hook.enabled:
            problems.append(_problem("HOOK_DISABLED", f"Codex has the hook {hook.key} disabled",
                                     "enable it with /hooks in Codex"))  # fmt: skip
    return problems


def _store(store: Store) -> dict[str, Any]:
    from skillrt.errors import StoreError

    info: dict[str, Any] = {"backend": type(store).__name__, "location": store.location}
    try:
        info["schema_version"] = store.schema_version()
        info["ok"] = True
    except StoreError as exc:
        info.update(ok=False, error=exc.to_dict())
    return info


def _daemon(config: RuntimeConfig, socket: str | None) -> dict[str, Any]:
    from skillrt.daemon.client import DaemonClient, DaemonError, DaemonUnavailable
    from skillrt.daemon.protocol import format_address, locate

    try:
        address, token = locate(str(config.state_dir), socket)
    except ValueError as exc:
        return {"running": False, "error": str(exc)}
    where = format_address(address)
    try:
        with DaemonClient(
            address, token=token, timeout=DAEMON_TIMEOUT_S, connect_timeout=DAEMON_TIMEOUT_S
        ) as client:
            status = client.request("status")
    except DaemonUnavailable:
        return {"running": False, "address": where, "start": "skillrt serve"}
    except DaemonError as exc:
        return {"running": True, "address": where, "error": exc.data}
    keys = ("pid", "skills", "uptime_s", "requests")
    return {"running": True, "address": where, **{k: status.get(k) for k in keys}}


def environment(
    config: RuntimeConfig,
    *,
    explicit_roots: Sequence[RootConfig] | None,
    registry: SkillRegistry,
    catalogs: Sequence[Path],
    skills: int,
    store: Store,
    backend: str,
    daemon_socket: str | None = None,
) -> Environment:
    """The environment section (see the module docstring); ``daemon_socket``: the
    daemon's address when not the state folder's (``--socket``, ``SKILLRT_SOCKET``)."""
    roots, problems = _roots(config, explicit_roots, registry)
    if registry.broken:
        problems.append(f"{len(registry.broken)} skills could not be loaded (`skillrt list`)")
    home = config.discovery.home_dir
    return Environment(
        roots=tuple(roots),
        catalogs=tuple(str(c) for c in catalogs),
        skills=skills,
        store=_store(store),
        backend=backend,
        daemon=_daemon(config, daemon_socket),
        hooks=hook_status(config.project_dir, Path(home) if home is not None else None),
        missing_extras=missing_extras(),
        problems=tuple(problems),
    )
