"""``hook`` (a coding agent's prompt hook) and ``install`` (wiring skillrt into one).

``skillrt hook ...`` never reaches this parser in normal use: :func:`skillrt.cli.main`
hands it to :mod:`skillrt.hooks.entry` first (it runs once per prompt). It is
registered here so ``skillrt --help`` lists it and ``skillrt hook --help`` works.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.clients import CLIENTS as CLIENT_SPECS

if TYPE_CHECKING:
    from skillrt.cli.context import CliContext
    from skillrt.install import Applied

#: The clients install knows (:data:`skillrt.clients.CLIENTS`; the standard library
#: only, so ``--help`` does not import the installer).
CLIENTS = tuple(CLIENT_SPECS)


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "hook",
        add_help=False,
        help="a prompt hook: the hook's JSON on stdin, the skill context on stdout",
        description="Run as a coding agent's prompt hook (claude-code, codex, gemini): "
        "prints the routed skill (or the $name one) as additional context, or nothing.",
    )
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(handler=cmd_hook)

    p = sub.add_parser(
        "install",
        parents=[common],
        help="add skillrt to a coding agent: claude-code, codex, gemini, cursor",
        description="Add skillrt's prompt hook (and, with --mcp, its MCP server) to a "
        "client's config files, keeping everything else in them byte for byte. Running it "
        "again changes nothing; the previous file is kept in skillrt's cache folder; "
        "--uninstall removes exactly what was added; --dry-run prints the diff and writes "
        "nothing. For Codex, install also records your approval of the hook with Codex "
        "itself (its app server), and exits 1 when it cannot.",
    )
    p.add_argument("client", choices=CLIENTS)
    scope = p.add_mutually_exclusive_group()
    scope.add_argument(
        "--project", action="store_true", help="this project's config (default): ./.claude/ ..."
    )
    scope.add_argument("--user", action="store_true", help="your user config: ~/.claude/ ...")
    p.add_argument("--uninstall", action="store_true", help="remove what install added")
    p.add_argument("--dry-run", action="store_true", help="print the diff, write nothing")
    p.add_argument(
        "--socket", metavar="PATH", help="the daemon socket the hook asks (default per state)"
    )
    p.add_argument(
        "--command",
        metavar="CMD",
        help="how the client runs skillrt (default: `skillrt` from PATH in a project's "
        "shared settings; this Python, absolute, in your user settings)",
    )
    p.add_argument(
        "--timeout", type=int, default=10, metavar="SECONDS", help="hook timeout (default 10)"
    )
    p.add_argument(
        "--no-warm",
        action="store_true",
        help="do not build the routing index now (the hook's first prompts build it, "
        "within the hook's deadline, and answer nothing until it is built)",
    )
    p.add_argument(
        "--mcp",
        action="store_true",
        help="also register skillrt's MCP server with the client (cursor: always); an "
        "uninstall removes it either way",
    )
    p.add_argument(
        "--no-trust",
        action="store_true",
        help="codex: do not record your approval of the hook with Codex (it will not run "
        "until you approve it with /hooks)",
    )
    p.add_argument(
        "--codex", metavar="PATH", help="codex: the Codex CLI to ask (default: codex on PATH)"
    )
    p.set_defaults(handler=cmd_install)


HOOK_HELP = """
Run as a coding agent's prompt hook: the client's hook JSON on stdin (its prompt,
transcript_path and cwd), the skill context on stdout in the client's own JSON (the
$name skill, else the routed one), or nothing. Exit 0 whatever happens: a failure is
logged to <state dir>/hook.log and the prompt goes on without context. `skillrt install
CLIENT` writes the hook into the client's settings.

clients:
  claude-code      Claude Code's UserPromptSubmit hook
  codex            Codex CLI's UserPromptSubmit hook
  gemini           Gemini CLI's BeforeModel hook (--via-model; else BeforeAgent)

options:
  -h, --help       show this help and exit
  --root DIR       a skill root to search (repeatable); when given, only these
                   roots are searched
  --config FILE    config file (default <project>/skillrt.yaml)
  --state DIR      state folder (default: the project's .skillrt/ when it exists,
                   else ~/.cache/skillrt/projects/<project>: nothing is written in
                   the project)
  --socket PATH    the daemon to ask (default: the state folder's, or SKILLRT_SOCKET)
  --no-daemon      build the runtime in this process; never ask or start a daemon
  --no-client-roots  do not search the coding agents' own skill folders
                   (.claude/skills, .codex/skills, .gemini/skills; searched by default)
  --budget CHARS   the context's character budget (default 9,500)
  --history-turns N  transcript messages the router reads (default 6)
  --timeout SECONDS  how long to wait for the daemon's answer
"""


def hook_help() -> str:
    from skillrt.hooks.entry import USAGE

    return USAGE + "\n" + HOOK_HELP


def print_hook_help() -> int:
    sys.stdout.write(hook_help())
    return 0


def cmd_hook(ctx: CliContext) -> int:
    from skillrt.hooks.entry import main

    rest = list(ctx.args.rest)
    if "-h" in rest or "--help" in rest:  # also after the client: hook codex --help
        ctx.emit({"help": hook_help()}, hook_help)
        return 0
    if ctx.json:
        from skillrt.errors import UsageError

        # The hook's output is the client's JSON (or nothing), never skillrt's --json.
        raise UsageError("hook takes no --json: it prints the client's own hook JSON")
    return main(rest)


def _programs(command: str | None, portable: bool) -> tuple[list[str], list[str] | None]:
    """How the client starts skillrt for the MCP server and for the hook: ``--command``
    for both; else, in a project's shared settings, ``skillrt`` from PATH (the same on
    every teammate's machine); in the user's own settings, this Python by its absolute
    path (no virtualenv needs to be active) with ``-m skillrt``, and ``-c``
    :data:`~skillrt.install.targets.HOOK_BOOT` for the hook (~10 ms faster a prompt)."""
    import shlex

    from skillrt.install.targets import HOOK_BOOT

    if command:
        return shlex.split(command), None
    if portable:
        return ["skillrt"], None
    return [sys.executable, "-m", "skillrt"], [sys.executable, "-c", HOOK_BOOT]


def _path_flag(
    flag: str, value: str, project: Path, portable: bool, warnings: list[dict[str, str]]
) -> list[str]:
    """``--root DIR`` (or --config, --state) as the hook reads it: in a project's shared
    settings relative to the project (the hook resolves it against the project on each
    machine), else absolute."""
    path = Path(value).resolve()
    if portable:
        if path == project or path.is_relative_to(project):
            return [flag, path.relative_to(project).as_posix() or "."]
        warnings.append({
            "code": "NOT_PORTABLE",
            "message": f"{flag} {path} is outside the project: the shared settings name it "
            "by its absolute path, which other machines may not have",
        })  # fmt: skip
    return [flag, str(path)]


def cmd_install(ctx: CliContext) -> int:
    import shutil

    from skillrt.errors import UsageError
    from skillrt.hooks.locations import cache_home, project_dir
    from skillrt.install import Target, apply, plan

    args = ctx.args
    if args.timeout < 1:
        raise UsageError("--timeout must be at least 1 second", timeout=args.timeout)
    client = args.client
    environ = os.environ
    project = Path(project_dir(str(Path.cwd()), environ))
    portable = not args.user
    spec = CLIENT_SPECS[client]
    if args.user:
        home = environ.get("HOME")
        if not home:
            raise UsageError("--user needs HOME to be set")
        folder = Path(spec.config_folder(home, environ, user=True))
    else:
        folder = Path(spec.config_folder(str(project), environ, user=False))
    warnings: list[dict[str, str]] = []
    flags: list[str] = []
    for root in getattr(args, "root", None) or ():
        flags += _path_flag("--root", root, project, portable, warnings)
    if getattr(args, "config", None):
        flags += _path_flag("--config", args.config, project, portable, warnings)
    if getattr(args, "state", None):
        state = args.state
        flags += ["--state", state] if "://" in state else _path_flag(
            "--state", state, project, portable, warnings
        )  # fmt: skip
    if getattr(args, "no_client_roots", False):
        flags.append("--no-client-roots")
    hook_flags = []
    if args.socket:
        hook_flags = _path_flag("--socket", args.socket, project, portable, warnings)
    program, hook_program = _programs(args.command, portable)
    if portable and not args.command and not args.uninstall and shutil.which("skillrt") is None:
        warnings.append({
            "code": "NOT_ON_PATH",
            "message": "the project's hook runs `skillrt` from PATH and this shell finds "
            "none: install skillrt where the client finds it (e.g. `pipx install skillrt`), "
            "or pass --command",
        })  # fmt: skip
    target = Target(
        client=client,
        folder=folder,
        program=program,
        hook_program=hook_program,
        flags=flags,
        hook_flags=hook_flags,
        timeout_s=args.timeout,
        mcp=bool(args.mcp) or spec.mcp_always,
    )
    cache = cache_home(environ)
    backups = Path(cache) / "backups" if cache else project / ".skillrt" / "backups"
    codex = _codex_program(args) if client == "codex" else None
    forgotten: list[str] = []
    if args.uninstall and codex and not args.dry_run:
        forgotten = _our_codex_hooks(codex, project, environ)
    applied = apply(plan(target, uninstall=args.uninstall, backups=backups),
                    backups=backups, dry_run=args.dry_run)  # fmt: skip
    data: dict[str, Any] = {
        "client": client,
        "scope": "user" if args.user else "project",
        "action": "uninstall" if args.uninstall else "install",
        "dry_run": bool(args.dry_run),
        "files": [
            {"path": a.path, "changed": a.changed, "backup": a.backup, "diff": a.diff}
            for a in applied
        ],
    }
    code = 0
    if args.uninstall:
        if forgotten and codex:
            _codex_untrust(codex, project, environ, forgotten, warnings)
    else:
        config = _hook_config(ctx, project)
        data.update(_skills_seen(ctx, config, client, warnings))
        if not args.dry_run and client == "codex":
            data["trust"] = _codex_trust(codex, project, environ, args.no_trust)
            code = 0 if data["trust"]["ok"] else 1
        if not args.dry_run and not args.no_warm and data.get("skill_count"):
            data["warmed"] = _warm(ctx, config)
    if warnings:
        data["warnings"] = warnings
    ctx.emit(data, lambda: _render(data, applied))
    for warning in warnings:
        if not ctx.json:
            sys.stderr.write(f"skillrt: warning [{warning['code']}]: {warning['message']}\n")
    trust = data.get("trust")
    if trust and not trust["ok"] and not ctx.json:
        sys.stderr.write(f"skillrt: the hook is installed but Codex will not run it yet "
                         f"[{trust['reason']}]: {trust['message']}\n")  # fmt: skip
    return code


def _hook_config(ctx: CliContext, project: Path) -> Any:
    """The configuration the installed hook will run with in ``project``: its state in
    the user's cache folder unless configured (never a new folder in the project)."""
    from skillrt.hooks.locations import hook_settings, hook_state_dir
    from skillrt.settings import config_file, load_config

    args = ctx.args
    environ = os.environ
    config = load_config(
        getattr(args, "config", None),
        getattr(args, "state", None),
        cwd=project,
        home=environ.get("HOME"),
        codex_home=environ.get("CODEX_HOME"),
        client_roots=not getattr(args, "no_client_roots", False),
    )
    found = config_file(getattr(args, "config", None), project)
    state = hook_state_dir(
        str(project), getattr(args, "state", None), str(found) if found else None, environ
    )
    return hook_settings(config, state, environ)


def _skills_seen(
    ctx: CliContext, config: Any, client: str, warnings: list[dict[str, str]]
) -> dict[str, Any]:
    """How many skills what install wrote will see, from this folder (a user-scope hook
    sees each project's own; this one stands for them): ``skill_count``, the
    ``searched`` roots, and a ``NO_SKILLS`` warning at 0."""
    from skillrt.settings import flag_roots
    from skillrt.skills.discovery import resolve_roots
    from skillrt.skills.registry import SkillRegistry

    explicit = flag_roots(getattr(ctx.args, "root", None), Path.cwd())
    discovery = config.discovery
    roots = resolve_roots(discovery, config.project_dir, explicit)
    registry = SkillRegistry.from_roots(roots, discovery)
    searched = [str(r.path) for r in roots if r.path.is_dir()]
    out: dict[str, Any] = {"skill_count": len(registry), "searched": searched}
    if not len(registry):
        what = "hook" if CLIENT_SPECS[client].handlers else "MCP server"
        own = CLIENT_SPECS[client].skills_hint
        warnings.append({
            "code": "NO_SKILLS",
            "message": f"the {what} will see no skills from {config.project_dir}: put skills "
            f"in {own} (or pass --root DIR to install)",
        })  # fmt: skip
    return out


def _warm(ctx: CliContext, config: Any) -> dict[str, Any]:
    """Build the routing index the hook will read (the embedding model's fast copy, every
    skill's fields and vectors, the saved index), so the first prompt is answered within
    the hook's deadline instead of spending it on a build it cannot finish."""
    import time

    from skillrt.cli.output import ProgressBar
    from skillrt.errors import SkillrtError

    started = time.perf_counter()
    try:
        runtime = ctx.open_runtime(config=config)
        progress = ProgressBar()
        runtime.build_progress = progress.build
        router = runtime.router
    except SkillrtError as exc:
        return {"ok": False, "code": exc.code, "message": exc.message}
    seconds = round(time.perf_counter() - started, 2)
    return {"ok": True, "skills": len(router.index), "seconds": seconds}


# -- Codex hook trust -----------------------------------------------------------------
def _codex_program(args: Any) -> str | None:
    import shutil

    return args.codex or shutil.which("codex")


def _is_ours(command: str) -> bool:
    from skillrt.install.targets import is_our_hook

    return is_our_hook({"command": command}, "codex")


def _codex_trust(codex: str | None, project: Path, environ: Any, skip: bool) -> dict[str, Any]:
    """Have Codex trust the hook install wrote (see :mod:`skillrt.install.codex_trust`):
    ``{"ok", "trusted", "reason"?, "message"?, "step"?}``."""
    from skillrt.install.codex_trust import MANUAL_STEP, TrustProblem, trust_hooks

    step = MANUAL_STEP.format(cwd=project)
    if skip:  # the user approves it in Codex: not a failure of install
        message = f"--no-trust: Codex will not run the hook until you {step[4:]}"
        return {"ok": True, "trusted": [], "skipped": True, "step": step, "message": message}
    if codex is None:
        return {"ok": False, "reason": "codex_not_found", "step": step,
                "message": "Codex CLI is not on PATH (or pass --codex PATH); once it is, run "
                f"this install again, or {step}"}  # fmt: skip
    try:
        report = trust_hooks(project, _is_ours, codex=codex, environ=environ)
    except TrustProblem as exc:
        return {"ok": False, "reason": exc.reason, "step": step, "message": f"{exc}; {step}"}
    ours = [h for h in report.hooks if _is_ours(h.command)]
    if not ours:
        if report.project_untrusted:
            return {"ok": False, "reason": "project_untrusted",
                    "step": f"run `codex` in {project} once and trust the project",
                    "message": f"Codex loads no hooks from {project} until you trust the "
                    f"project: run `codex` in {project} once and trust it, then run this "
                    "install again"}  # fmt: skip
        return {"ok": False, "reason": "not_loaded", "step": step,
                "message": "Codex does not load the hook install wrote (is its hooks "
                f"feature off?); {step}"}  # fmt: skip
    untrusted = [h.key for h in ours if h.trust not in ("trusted", "managed")]
    if untrusted:
        still = ", ".join(untrusted)
        return {"ok": False, "reason": "still_untrusted", "step": step,
                "message": f"Codex still reports {still} untrusted; {step}"}  # fmt: skip
    return {"ok": True, "trusted": [h.key for h in ours], "newly_trusted": report.trusted_now}


def _our_codex_hooks(codex: str, project: Path, environ: Any) -> list[str]:
    """Keys of skillrt's hooks Codex knows now (their recorded trust goes at uninstall)."""
    from skillrt.install.codex_trust import TrustProblem, codex_hooks

    try:
        report = codex_hooks(project, codex=codex, environ=environ)
    except TrustProblem:
        return []
    return [h.key for h in report.hooks if _is_ours(h.command)]


def _codex_untrust(
    codex: str, project: Path, environ: Any, keys: list[str], warnings: list[dict[str, str]]
) -> None:
    from skillrt.install.codex_trust import TrustProblem, untrust

    try:
        untrust(project, keys, codex=codex, environ=environ)
    except TrustProblem as exc:
        what = ", ".join(keys)
        message = f"Codex still records its trust of {what}: {exc}"
        warnings.append({"code": "TRUST_NOT_REMOVED", "message": message})


def _render(data: dict[str, Any], applied: list[Applied]) -> str:
    lines = []
    if "skill_count" in data:
        what = "hook" if data["client"] != "cursor" else "MCP server"
        count = data["skill_count"]
        found_in = f" (in {', '.join(data['searched'])})" if data["searched"] else ""
        lines.append(f"the {what} will see {count} skill{'s' if count != 1 else ''}{found_in}")
    trust = data.get("trust")
    if trust and trust.get("skipped"):
        lines.append(trust["message"])
    elif trust and trust["ok"]:
        lines.append(f"Codex trusts the hook ({', '.join(trust['trusted'])})")
    warmed = data.get("warmed")
    if warmed and warmed["ok"]:
        lines.append(f"routing index ready: {warmed['skills']} skills in {warmed['seconds']} s")
    elif warmed:
        lines.append(f"routing index not built [{warmed['code']}]: {warmed['message']}")
    for a in applied:
        if not a.changed:
            lines.append(f"unchanged {a.path}")
        elif data["dry_run"]:
            lines.append(a.diff.rstrip("\n"))
        else:
            backup = f" (previous file: {a.backup})" if a.backup else ""
            lines.append(f"{'removed from' if data['action'] == 'uninstall' else 'updated'} "
                         f"{a.path}{backup}")  # fmt: skip
    return "\n".join(lines)
