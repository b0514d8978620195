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

if TYPE_CHECKING:
    from skillrt.cli.app import CliContext
    from skillrt.install import Applied

from skillrt.cli.client_roots import CLIENT_ROOTS

#: :data:`skillrt.install.targets.CLIENTS`, spelled out so ``--help`` does not import the
#: installer.
CLIENTS = ("claude-code", "codex", "gemini", "cursor")


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
        description="Add skillrt's prompt hook and/or MCP server to a client's config "
        "files, keeping everything else in them. Running it again changes nothing; the "
        "previous file is kept as <file>.skillrt.bak; --uninstall removes exactly what "
        "was added; --dry-run prints the diff and writes nothing.",
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
        help="how the client runs skillrt (default: this Python, absolute, with -m skillrt; "
        "the hook starts it with -c, ~10 ms faster per prompt)",
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
  gemini           Gemini CLI's BeforeAgent hook

options:
  -h, --help       show this help and exit
  --root DIR       a skill root to search (repeatable); when given, only these
                   roots are searched
  --config FILE    config file (default <project>/skillrt.yaml)
  --state DIR      state folder (default <project>/.skillrt/)
  --socket PATH    the daemon to ask (default: the state folder's, or SKILLRT_SOCKET)
  --no-daemon      build the runtime in this process; never ask a daemon
  --client-roots   also search the client's own skill folders: .claude/skills
                   (claude-code) or .codex/skills (codex), in the project and in ~
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


def _programs(command: str | None) -> tuple[list[str], list[str] | None]:
    """How the client starts skillrt for the MCP server and for the hook: ``--command``
    for both, else this Python (absolute, so no virtualenv needs to be active) with
    ``-m skillrt``, and ``-c`` :data:`~skillrt.install.targets.HOOK_BOOT` for the hook."""
    import shlex

    from skillrt.install.targets import HOOK_BOOT

    if command:
        return shlex.split(command), None
    return [sys.executable, "-m", "skillrt"], [sys.executable, "-c", HOOK_BOOT]


def cmd_install(ctx: CliContext) -> int:
    from skillrt.errors import UsageError
    from skillrt.install import Target, apply, plan
    from skillrt.install.targets import FOLDERS

    args = ctx.args
    if args.timeout < 1:
        raise UsageError("--timeout must be at least 1 second", timeout=args.timeout)
    folder_name = FOLDERS[args.client]
    if args.user:
        home = os.environ.get("HOME")
        if not home:
            raise UsageError("--user needs HOME to be set")
        base = Path(home)
        if args.client == "codex" and os.environ.get("CODEX_HOME"):
            folder = Path(os.environ["CODEX_HOME"])
        else:
            folder = base / folder_name
    else:
        folder = Path.cwd() / folder_name
    flags: list[str] = []
    for root in getattr(args, "root", None) or ():
        flags += ["--root", str(Path(root).resolve())]
    if getattr(args, "config", None):
        flags += ["--config", str(Path(args.config).resolve())]
    if getattr(args, "state", None):
        flags += ["--state", str(Path(args.state).resolve())]
    hook_flags = ["--socket", str(Path(args.socket).resolve())] if args.socket else []
    # The client's own skill folders (.claude/skills, .codex/skills) are searched by
    # the hook written for it; explicit --root folders are searched alone.
    client_roots = bool(CLIENT_ROOTS.get(args.client)) and not getattr(args, "root", None)
    if client_roots:
        hook_flags.append("--client-roots")
    program, hook_program = _programs(args.command)
    target = Target(
        client=args.client,
        folder=folder,
        program=program,
        hook_program=hook_program,
        flags=flags,
        hook_flags=hook_flags,
        timeout_s=args.timeout,
    )
    applied = apply(plan(target, uninstall=args.uninstall), dry_run=args.dry_run)
    data: dict[str, Any] = {
        "client": args.client,
        "scope": "user" if args.user else "project",
        "action": "uninstall" if args.uninstall else "install",
        "dry_run": bool(args.dry_run),
        "files": [
            {"path": a.path, "changed": a.changed, "backup": a.backup, "diff": a.diff}
            for a in applied
        ],
    }
    if not args.uninstall:
        data.update(_skills_seen(ctx, args.client, client_roots))
        if not args.dry_run and not args.no_warm and data.get("skill_count"):
            data["warmed"] = _warm(ctx, args.client, client_roots)
    ctx.emit(data, lambda: _render(data, applied))
    for warning in data.get("warnings", ()):
        if not ctx.json:
            sys.stderr.write(f"skillrt: warning [{warning['code']}]: {warning['message']}\n")
    return 0


def _skills_seen(ctx: CliContext, client: str, client_roots: bool) -> dict[str, Any]:
    """How many skills what install wrote will see, from this folder (a user-scope hook
    sees each project's own; this one stands for them): ``skill_count``, the
    ``searched`` roots, and a ``NO_SKILLS`` warning at 0."""
    from skillrt.cli.client_roots import FOLDERS, with_client_roots
    from skillrt.cli.settings import flag_roots
    from skillrt.skills.discovery import resolve_roots
    from skillrt.skills.registry import SkillRegistry

    config = ctx.config()
    if client_roots:
        config = with_client_roots(config, client)
    explicit = flag_roots(getattr(ctx.args, "root", None), Path.cwd())
    discovery = config.discovery
    roots = resolve_roots(discovery, config.project_dir, explicit)
    registry = SkillRegistry.from_roots(roots, discovery)
    searched = [str(r.path) for r in roots if r.path.is_dir()]
    out: dict[str, Any] = {"skill_count": len(registry), "searched": searched}
    if not len(registry):
        what = "hook" if client != "cursor" else "MCP server"
        own = [FOLDERS[n] for n in CLIENT_ROOTS.get(client, ())] or [".agents/skills"]
        out["warnings"] = [
            {
                "code": "NO_SKILLS",
                "message": f"the {what} will see no skills from {Path.cwd()}: put skills in "
                f"{' or '.join(own)} (or pass --root DIR to install)",
            }
        ]
    return out


def _warm(ctx: CliContext, client: str, client_roots: bool) -> dict[str, Any]:
    """Build the routing index the hook will read (the embedding model's fast copy, every
    skill's fields and vectors, the saved index), so the first prompt is answered within
    the hook's deadline instead of spending it on a build it cannot finish."""
    import time

    from skillrt.cli.client_roots import with_client_roots
    from skillrt.cli.output import ProgressBar
    from skillrt.errors import SkillrtError

    config = ctx.config()
    if client_roots:
        config = with_client_roots(config, client)
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


def _render(data: dict[str, Any], applied: list[Applied]) -> str:
    lines = []
    if "skill_count" in data:
        what = "hook" if data["client"] != "cursor" else "MCP server"
        count = data["skill_count"]
        found_in = f" (in {', '.join(data['searched'])})" if data["searched"] else ""
        lines.append(f"the {what} will see {count} skill{'s' if count != 1 else ''}{found_in}")
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
