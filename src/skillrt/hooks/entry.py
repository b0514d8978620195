"""``skillrt hook <client>``: one prompt in on stdin, its skill context out on stdout.

A new process per prompt, so this path imports the standard library and the daemon
client only: it asks a running daemon (``skillrt serve``) for the turn context and,
when none answers, builds the runtime in-process and asks it the same question. It
never blocks or breaks a prompt: any failure (bad input, no roots, a broken skill, an
unreadable state folder) prints nothing, is logged to ``<state dir>/hook.log`` (stderr
when that cannot be written) and exits 0.

Options (after the client name): ``--root DIR`` (repeatable), ``--config FILE``,
``--state DIR``, ``--socket PATH`` (or ``SKILLRT_SOCKET``), ``--no-daemon``,
``--client-roots`` (also search the client's own skill folders: ``.claude/skills`` for
claude-code, ``.codex/skills`` for codex; ``skillrt install`` writes it),
``--budget CHARS``, ``--history-turns N``, ``--timeout SECONDS`` (daemon answer).
"""

from __future__ import annotations

import os
import sys
import time

from skillrt.hooks.clients import EVENTS

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from typing import Any

USAGE = (
    "usage: skillrt hook {claude-code,codex,gemini} [--root DIR]... [--config FILE] "
    "[--state DIR] [--socket PATH] [--no-daemon] [--client-roots] [--budget CHARS] "
    "[--history-turns N] [--timeout SECONDS]"
)
LOG_NAME = "hook.log"
MAX_LOG_BYTES = 1_000_000
_VALUE_FLAGS = ("--root", "--config", "--state", "--socket", "--budget", "--history-turns",
                "--timeout")  # fmt: skip


class Options:
    """Parsed hook options (argparse costs more than the whole daemon round trip)."""

    def __init__(self) -> None:
        self.client = ""
        self.roots: list[str] = []
        self.config: str | None = None
        self.state: str | None = None
        self.socket: str | None = None
        self.no_daemon = False
        self.client_roots = False
        self.budget: int | None = None
        self.history_turns = 6
        self.timeout = 10.0


class UsageProblem(ValueError):
    pass


def parse_args(argv: list[str]) -> Options:
    opts = Options()
    rest = list(argv)
    if not rest or rest[0] not in EVENTS:
        raise UsageProblem(f"name a client: {', '.join(EVENTS)}")
    opts.client = rest.pop(0)
    while rest:
        arg = rest.pop(0)
        if arg == "--no-daemon":
            opts.no_daemon = True
            continue
        if arg == "--client-roots":
            opts.client_roots = True
            continue
        flag, eq, value = arg.partition("=")
        if flag not in _VALUE_FLAGS:
            raise UsageProblem(f"unknown option {arg!r}")
        if not eq:
            if not rest:
                raise UsageProblem(f"{flag} needs a value")
            value = rest.pop(0)
        if flag == "--root":
            opts.roots.append(value)
        elif flag in ("--config", "--state", "--socket"):
            setattr(opts, flag[2:], value)
        else:
            try:
                number = float(value) if flag == "--timeout" else int(value)
            except ValueError:
                raise UsageProblem(f"{flag} needs a number, got {value!r}") from None
            if number <= 0:
                raise UsageProblem(f"{flag} must be positive")
            setattr(opts, flag[2:].replace("-", "_"), number)
    return opts


def main(argv: list[str]) -> int:
    """Run the hook; always exit 0 once the options parse (2 for a usage error)."""
    if argv[:1] in (["-h"], ["--help"]):
        sys.stdout.write(USAGE + "\n")
        return 0
    try:
        opts = parse_args(argv)
    except UsageProblem as exc:
        sys.stderr.write(f"{USAGE}\nskillrt hook: error: {exc}\n")
        return 2
    # Where to log until the input names the project (a config file may move it).
    state_dir: str | None = os.path.join(_project_dir(None), opts.state or ".skillrt")
    try:
        from skillrt.hooks.clients import HookInputError, parse_input, render

        try:
            hook = parse_input(sys.stdin.buffer.read())
        except HookInputError as exc:
            _log(state_dir, str(exc))
            return 0
        if hook.event is not None and hook.event != EVENTS[opts.client]:
            return 0  # installed on another event by hand: not ours to answer
        project = _project_dir(hook.cwd)
        where = _where(opts, project)
        state_dir = where["state_dir"]
        if not hook.prompt.strip():
            return 0
        from skillrt.hooks.transcript import read_history

        history = read_history(hook.transcript_path, prompt=hook.prompt, turns=opts.history_turns)
        context = _ask_daemon(opts, where, hook.prompt, history)
        if context is None:
            context = _in_process(opts, project, hook.prompt, history)
        for err in context.get("errors") or ():
            _log(state_dir, f"skill {err.get('skill')} not injected: [{err.get('code')}] "
                 f"{err.get('message')}")  # fmt: skip
        out = render(opts.client, context)
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    except BaseException as exc:  # the hook never breaks a prompt
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            return 0
        import traceback

        _log(state_dir, "".join(traceback.format_exception(exc)).rstrip())
    return 0


def _project_dir(payload_cwd: str | None) -> str:
    """Claude Code names the project in ``CLAUDE_PROJECT_DIR``; else the session's cwd."""
    for candidate in (os.environ.get("CLAUDE_PROJECT_DIR"), payload_cwd):
        if candidate and os.path.isdir(candidate):
            return os.path.abspath(candidate)
    return os.getcwd()


def _where(opts: Options, project: str) -> dict[str, Any]:
    """State folder, identity and socket, without importing the runtime; with a config
    file, only its ``state_dir`` is read (the way every command reads it)."""
    config_file = None
    if opts.config:
        config_file = os.path.realpath(os.path.join(project, opts.config))
    elif os.path.exists(os.path.join(project, "skillrt.yaml")):
        config_file = os.path.realpath(os.path.join(project, "skillrt.yaml"))
    if config_file is None:
        state_dir = os.path.join(project, opts.state or ".skillrt")
        project_dir = project
    else:
        from pathlib import Path

        from skillrt.cli.settings import locate_state

        found = locate_state(opts.config, opts.state, cwd=Path(project))
        state_dir, project_dir = str(found[0]), str(found[1])
    roots = [os.path.realpath(os.path.join(project, r)) for r in opts.roots] or None
    expect: dict[str, Any] = {"roots": roots, "config": config_file, "project_dir": project_dir}
    if opts.client_roots:  # a daemon that does not search them serves other skills
        from skillrt.cli.client_roots import present

        # (only when one is there: else any daemon of these skills will do)
        expect["client_roots"] = present(opts.client, project, os.environ.get("HOME"))
    return {"state_dir": os.path.abspath(state_dir), "expect": expect}


def _config(opts: Options, project: str) -> Any:
    from pathlib import Path

    from skillrt.cli.client_roots import with_client_roots
    from skillrt.cli.settings import load_config

    config = load_config(opts.config, opts.state, cwd=Path(project), home=os.environ.get("HOME"))
    return with_client_roots(config, opts.client) if opts.client_roots else config


def _ask_daemon(
    opts: Options, where: dict[str, Any], prompt: str, history: list[dict[str, str]]
) -> dict[str, Any] | None:
    """The daemon's answer, or None when no daemon can give one."""
    if opts.no_daemon:
        return None
    from skillrt.daemon.client import DaemonClient, DaemonUnavailable
    from skillrt.daemon.protocol import ENV_SOCKET, locate

    explicit = opts.socket or os.environ.get(ENV_SOCKET) or None
    try:
        address, token = locate(where["state_dir"], explicit)
    except ValueError as exc:
        _log(where["state_dir"], f"bad daemon address: {exc}")
        return None
    args: dict[str, Any] = {"prompt": prompt, "history": history, "surface": "hook"}
    if opts.budget:
        args["budget"] = opts.budget
    try:
        with DaemonClient(address, token=token, timeout=opts.timeout) as client:
            result = client.request("context", args, expect=where["expect"])
    except DaemonUnavailable as exc:
        if os.path.exists(address) if isinstance(address, str) else True:
            _log(where["state_dir"], f"daemon unavailable, working in-process: {exc}")
        return None
    return result if isinstance(result, dict) else None


def _in_process(
    opts: Options, project: str, prompt: str, history: list[dict[str, str]]
) -> dict[str, Any]:
    from pathlib import Path

    from skillrt.cli.settings import flag_roots
    from skillrt.runtime import SkillRuntime
    from skillrt.serialize import to_jsonable

    config = _config(opts, project)
    roots = flag_roots(opts.roots, Path(project))
    with SkillRuntime(config, roots=roots, env=dict(os.environ)) as runtime:
        ctx = runtime.turn_context(prompt, history=history, surface="hook", budget=opts.budget)
        data: dict[str, Any] = to_jsonable(ctx)
    return data


def _log(state_dir: str | None, message: str) -> None:
    """Append to ``<state dir>/hook.log`` (kept under ~1 MB); stderr if that fails."""
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid={os.getpid()} {message}\n"
    if state_dir:
        path = os.path.join(state_dir, LOG_NAME)
        try:
            os.makedirs(state_dir, exist_ok=True)
            if os.path.exists(path) and os.path.getsize(path) > MAX_LOG_BYTES:
                os.replace(path, path + ".1")
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(line)
            return
        except OSError:
            pass
    try:
        sys.stderr.write(f"skillrt hook: {line}")
    except OSError:
        pass
