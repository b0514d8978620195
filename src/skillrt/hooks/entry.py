"""``skillrt hook <client>``: one prompt in on stdin, its skill context out on stdout.

A new process per prompt, so this path imports the standard library and the daemon
client only: it asks a running daemon (``skillrt serve``) for the turn context and,
when none answers, builds the runtime in-process and asks it the same question. It
never blocks or breaks a prompt: any failure (bad input, no roots, a broken skill, an
unreadable state folder) prints nothing, is logged to ``<state dir>/hook.log`` (stderr
when that cannot be written) and exits 0.

It answers within a deadline (``hook.deadline_s``, 3 s, well under the client's own
timeout): a daemon that does not answer within ``hook.daemon_timeout_s`` (a third
of the deadline) is skipped; the in-process work waits on a shared state store at most
``hook.store_wait_s`` (0.5 s) all told, its route event going to the outbox when the
store is not there; and when the deadline passes anyway, the hook prints nothing,
logs what it was doing, keeps a route event still queued in the outbox, and exits 0
at once.

Options (after the client name): ``--root DIR`` (repeatable), ``--config FILE``,
``--state DIR``, ``--socket PATH`` (or ``SKILLRT_SOCKET``), ``--no-daemon``,
``--no-client-roots`` (do not search the coding agents' own skill folders,
``.claude/skills``, ``.codex/skills``, ``.gemini/skills``, which are searched by
default; ``--client-roots`` is accepted and changes nothing),
``--budget CHARS``, ``--history-turns N``, ``--timeout SECONDS`` (daemon answer),
``--deadline SECONDS`` (all told).
"""

from __future__ import annotations

import _thread  # not threading: its import costs ~3 ms a prompt
import os
import sys
import time

from skillrt.clients import CLIENTS
from skillrt.hook_budget import (
    DAEMON_IDLE_S,
    DAEMON_SHARE,
    DAEMON_START_DELAY_S,
    DAEMON_START_TIMEOUT_S,
    DEADLINE_S,
    STORE_WAIT_S,
)
from skillrt.hooks.locations import hook_settings, hook_state_dir, project_dir, shared_cache_dir

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt
if TYPE_CHECKING:
    from typing import Any

USAGE = (
    "usage: skillrt hook {claude-code,codex,gemini} [--root DIR]... [--config FILE] "
    "[--state DIR] [--socket PATH] [--no-daemon] [--no-client-roots] [--via-model] "
    "[--budget CHARS] "
    "[--history-turns N] [--timeout SECONDS] [--deadline SECONDS]"
)
LOG_NAME = "hook.log"
#: ``SKILLRT_DAEMON_AUTOSTART=0`` keeps the hook from starting a daemon (as
#: ``hook.daemon_autostart: false`` does in skillrt.yaml).
ENV_AUTOSTART = "SKILLRT_DAEMON_AUTOSTART"
MAX_LOG_BYTES = 1_000_000
_VALUE_FLAGS = ("--root", "--config", "--state", "--socket", "--budget", "--history-turns",
                "--timeout", "--deadline")  # fmt: skip
#: Seconds of the deadline kept for closing (route events to the outbox, the output).
_RESERVE_S = 0.3


class Options:
    """Parsed hook options (argparse costs more than the whole daemon round trip)."""

    def __init__(self) -> None:
        self.client = ""
        self.roots: list[str] = []
        self.config: str | None = None
        self.state: str | None = None
        self.socket: str | None = None
        self.no_daemon = False
        #: Gemini: deliver the text through BeforeModel, into the user's message.
        self.via_model = False
        self.client_roots = True
        self.budget: int | None = None
        self.history_turns = 6
        #: From the flags; None: from the config file, else the defaults above.
        self.timeout: float | None = None
        self.deadline: float | None = None


class UsageProblem(ValueError):
    pass


def parse_args(argv: list[str]) -> Options:
    opts = Options()
    rest = list(argv)
    hooked = [name for name, c in CLIENTS.items() if c.event]
    if not rest or rest[0] not in hooked:
        raise UsageProblem(f"name a client: {', '.join(hooked)}")
    opts.client = rest.pop(0)
    while rest:
        arg = rest.pop(0)
        if arg == "--no-daemon":
            opts.no_daemon = True
            continue
        if arg == "--via-model":
            opts.via_model = True
            continue
        if arg in ("--client-roots", "--no-client-roots"):
            opts.client_roots = arg == "--client-roots"  # the default; kept for old installs
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
                number = float(value) if flag in ("--timeout", "--deadline") else int(value)
            except ValueError:
                raise UsageProblem(f"{flag} needs a number, got {value!r}") from None
            if not 0 < number < float("inf"):  # nan too: it would switch the deadline off
                raise UsageProblem(f"{flag} must be a positive number")
            setattr(opts, flag[2:].replace("-", "_"), number)
    return opts


def main(argv: list[str]) -> int:
    """Run the hook; always exit 0 once the options parse (2 for a usage error)."""
    started = time.monotonic()
    if argv[:1] in (["-h"], ["--help"]):
        sys.stdout.write(USAGE + "\n")
        return 0
    try:
        opts = parse_args(argv)
    except UsageProblem as exc:
        sys.stderr.write(f"{USAGE}\nskillrt hook: error: {exc}\n")
        return 2
    run = _Run(opts, started)
    done = _thread.allocate_lock()
    done.acquire()
    _thread.start_new_thread(run.work_then_release, (done,))
    # Re-read the deadline each time round: the config file may move it.
    while not done.acquire(timeout=max(0.0, min(run.deadline - time.monotonic(), 0.25))):
        if run.deadline - time.monotonic() <= 0:
            if done.acquire(False):  # the work ended just as the deadline passed
                break
            run.expire()  # never returns
    # Here, on the thread that watches the deadline (which is past the answer now), so
    # that an expiry cannot end the process while a start is half done.
    run.start_pending_daemon()
    return 0


class _Run:
    """One prompt's work, on a thread the main thread stops waiting for at the deadline."""

    def __init__(self, opts: Options, started: float) -> None:
        self.opts = opts
        self.started = started
        self.deadline = started + (opts.deadline or DEADLINE_S)
        self.daemon_timeout = opts.timeout or (opts.deadline or DEADLINE_S) * DAEMON_SHARE
        self.store_wait = STORE_WAIT_S
        self.autostart = True
        self.daemon_idle_s = DAEMON_IDLE_S
        self.daemon_start_timeout_s = DAEMON_START_TIMEOUT_S
        self.daemon_start_delay_s = DAEMON_START_DELAY_S
        # Where to log until the input names the project (a config file may move it).
        self.state_dir: str | None = hook_state_dir(
            project_dir(None, os.environ), opts.state, None, os.environ
        )
        self.stage = "reading the hook's input"
        self._emit = _thread.allocate_lock()
        self._expired = False
        #: The in-process runtime's routing, once built (its queued route events are
        #: kept in the outbox if the deadline passes).
        self.routing: Any = None
        #: ``(project, where)`` of a daemon to start once this prompt is answered.
        self._daemon_to_start: tuple[str, dict[str, Any]] | None = None
        self._daemon_lock = _thread.allocate_lock()

    def left(self) -> float:
        """Seconds left before the deadline."""
        return self.deadline - time.monotonic()

    def expire(self) -> None:
        """The deadline passed: nothing is printed (or what was is complete); say what
        was not done, and end the process now (no waiting on threads or exit hooks)."""
        with self._emit:
            self._expired = True
        budget = self.deadline - self.started
        _log(self.state_dir, f"deadline of {budget:g} s passed while {self.stage}; "
             "nothing more was injected for this prompt")  # fmt: skip
        if self.routing is not None:  # its queued events, to the outbox (not lost unseen)
            try:
                self.routing.abandon_events("the hook's deadline passed")
            except Exception as exc:  # the process ends now whatever happens
                _log(self.state_dir, f"route events not kept: {exc}")
        try:
            sys.stdout.flush()
            self.start_pending_daemon()  # the next prompts are warm all the same
        finally:
            os._exit(0)

    def start_pending_daemon(self) -> None:
        """Start the daemon this prompt found missing, once: after the answer (or the
        deadline), so its start does not take the cores the answer is computed on.
        Called on the main thread only (after the work, or from :meth:`expire`)."""
        if not self._daemon_lock.acquire(False):
            return
        pending, self._daemon_to_start = self._daemon_to_start, None
        if pending is not None:
            try:
                self._start_daemon(*pending)
            except Exception as exc:  # the prompt is answered; say why, never break it
                _log(self.state_dir, f"could not start a daemon: {exc}")

    def write(self, out: str) -> None:
        with self._emit:
            if not self._expired:
                sys.stdout.write(out + "\n")
                sys.stdout.flush()

    def work_then_release(self, done: Any) -> None:
        try:
            self.work()
        finally:
            done.release()

    def work(self) -> None:
        opts = self.opts
        try:
            from skillrt.hooks.clients import MODEL_EVENT, HookInputError, parse_input, render

            try:
                hook = parse_input(sys.stdin.buffer.read())
            except HookInputError as exc:
                _log(self.state_dir, str(exc))
                return
            model_call = opts.via_model and hook.event == MODEL_EVENT
            ours = CLIENTS[opts.client].event
            if hook.event is not None and hook.event != ours and not model_call:
                return  # installed on another event by hand: not ours to answer
            project = project_dir(hook.cwd, os.environ)
            self.stage = "reading the config"
            where = _where(opts, project)
            self.state_dir = where["state_dir"]
            if model_call:
                self.stage = "adding the session's skills to the model request"
                self._model_call(hook, project, where)
                return
            self._apply(where)
            if not hook.prompt.strip():
                return
            from skillrt.hooks.transcript import loaded_skills, read_history

            self.stage = "reading the transcript"
            history = read_history(
                hook.transcript_path, prompt=hook.prompt, turns=opts.history_turns
            )
            # Skills whose body the conversation holds already: a reminder, not again.
            record = self._record(hook) if opts.via_model else None
            if record is not None:
                from skillrt.hooks import model_channel

                loaded = sorted(set(model_channel.loaded(record)))
            else:
                loaded = sorted(loaded_skills(hook.transcript_path))
            context = self._context(project, where, hook.prompt, history, loaded)
            if record is not None:
                # An older install's BeforeAgent: the BeforeModel hook applies the block
                # (an empty one too: it marks the prompt routed).
                self._remember(hook, record, context or {})
                from skillrt.hooks.clients import render_message_only

                out = render_message_only(context or {})
            else:
                out = render(opts.client, context) if context is not None else ""
            if out:
                self.write(out)
        except BaseException as exc:  # the hook never breaks a prompt
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                return
            import traceback

            _log(self.state_dir, "".join(traceback.format_exception(exc)).rstrip())

    def _context(
        self,
        project: str,
        where: dict[str, Any],
        prompt: str,
        history: list[dict[str, str]],
        loaded: list[str],
    ) -> dict[str, Any] | None:
        """The prompt's turn context: the daemon's answer, else worked out in-process
        (None when neither gives one); a skill that could not be injected is logged."""
        self.stage = "asking the daemon"
        args = {"prompt": prompt, "history": history, "loaded": loaded, "client": self.opts.client}
        # A wait that the deadline cuts short ends just after it: the deadline is
        # reported against the daemon, not an in-process start with no time.
        context = _ask_daemon(
            self.opts, where, args, timeout=min(self.daemon_timeout, self.left() + 0.1)
        )
        if context is None:
            self._daemon_to_start = (project, where)  # started once this is answered
            self.stage = "working in-process"
            context = self._in_process(project, prompt, history, loaded)
        for err in (context or {}).get("errors") or ():
            _log(self.state_dir, f"skill {err.get('skill')} not injected: "
                 f"[{err.get('code')}] {err.get('message')}")  # fmt: skip
        return context

    # -- Gemini CLI's model channel (--via-model) --------------------------------------
    def _record_path(self, hook: Any) -> str:
        from skillrt.hooks.model_channel import record_path

        return record_path(str(self.state_dir), hook.session_id or "none")

    def _record(self, hook: Any) -> dict[str, Any]:
        from skillrt.hooks.model_channel import read_record

        return read_record(self._record_path(hook))

    def _remember(self, hook: Any, record: dict[str, Any], context: dict[str, Any]) -> None:
        """Keep this turn's text for the session's model calls (BeforeModel)."""
        from skillrt.hooks.model_channel import remember, write_record

        remember(record, hook.prompt, context, empty=True)
        self.stage = "writing the session's record"
        write_record(self._record_path(hook), record)

    def _model_call(self, hook: Any, project: str, where: dict[str, Any]) -> None:
        """BeforeModel: each recorded block into its user message, and a new prompt
        routed, its block recorded and added (see :mod:`skillrt.hooks.model_channel`);
        nothing printed when nothing changes. Without a new prompt this reads no daemon
        and builds no runtime: it runs on every model call."""
        from skillrt.hooks import model_channel as mc

        messages = hook.llm_request["messages"]
        if not mc.main_conversation(messages):
            return  # a subagent's chat: not the conversation the record follows
        path = self._record_path(hook)
        record = mc.read_record(path)
        texts = mc.contents(messages)  # before any block is added
        changed, dirty, claimed = mc.apply(record, messages, texts)
        found = mc.new_prompt(messages, texts, claimed)
        lines: list[str] = []
        if found is not None:
            at, prompt = found
            # Recorded before it is routed: a route that fails or outlives the deadline
            # is not tried again at each model call of the turn.
            entry = mc.remember(record, prompt, {}, empty=True, before=mc.anchor(texts, at))
            self.stage = "writing the session's record"
            mc.write_record(path, record)
            dirty = False
            self._apply(where)
            from skillrt.hooks.clients import shown
            from skillrt.hooks.transcript import recent
            from skillrt.wellformed import well_formed

            turns = self.opts.history_turns
            history = recent(mc.history(messages, texts, at, turns), turns=turns)
            loaded = sorted(set(mc.loaded(record)))
            asked = well_formed(prompt.strip())  # JSON's "\ud800" is a str no encoder takes
            context = self._context(project, where, asked, history, loaded) or {}
            text = str(context.get("text") or "")
            if text and entry is not None:
                entry.update(text=text, skills=list(context.get("skills") or ()))
                messages[at]["content"] += mc.LEAD + text
                changed = dirty = True
            lines = shown(context)
        if dirty:
            self.stage = "writing the session's record"
            mc.write_record(path, record)
        out = mc.render(messages if changed else None, lines)
        if out:
            self.write(out)

    def _apply(self, where: dict[str, Any]) -> None:
        """The config file's ``hook`` settings, where no flag gave them."""
        config_file = where["expect"]["config"]
        if config_file is None:
            return
        from pathlib import Path

        from skillrt.config import peek_hook

        settings = peek_hook(Path(config_file))
        deadline = self.opts.deadline or settings.deadline_s
        self.deadline = self.started + deadline
        if not self.opts.timeout:
            self.daemon_timeout = settings.daemon_timeout_s or deadline * DAEMON_SHARE
        self.store_wait = settings.store_wait_s
        self.autostart = settings.daemon_autostart
        self.daemon_idle_s = settings.daemon_idle_s
        self.daemon_start_timeout_s = settings.daemon_start_timeout_s
        self.daemon_start_delay_s = settings.daemon_start_delay_s

    def _start_daemon(self, project: str, where: dict[str, Any]) -> None:
        """No daemon answered: start one for the next prompts (see
        :mod:`skillrt.hooks.autostart`), unless one runs or starts already, the hook
        was told which daemon to ask, or not to use one."""
        from skillrt.daemon.protocol import ENV_SOCKET
        from skillrt.hooks import autostart

        opts = self.opts
        if opts.no_daemon or not self.autostart or opts.socket or os.environ.get(ENV_SOCKET):
            return
        if os.environ.get(ENV_AUTOSTART, "").strip().lower() in ("0", "false", "no", "off"):
            return
        state_dir = where["state_dir"]
        if autostart.daemon_running(state_dir):
            return
        from skillrt.daemon.protocol import MAX_UNIX_PATH_BYTES, default_socket

        socket = default_socket(state_dir)
        if len(socket.encode()) > MAX_UNIX_PATH_BYTES:  # it would fail at once, every prompt
            _log(state_dir, f"no daemon started: its socket path is too long for a Unix "
                 f"socket ({socket}); set a shorter XDG_CACHE_HOME, or install the hook "
                 "with a shorter --state DIR")  # fmt: skip
            return
        expect = where["expect"]
        argv = autostart.serve_command(
            roots=expect["roots"],
            config=expect["config"],
            state=state_dir,
            client_roots=opts.client_roots,
            idle_s=self.daemon_idle_s,
            start_timeout_s=self.daemon_start_timeout_s,
            start_delay_s=self.daemon_start_delay_s,
            cache_dir=where.get("cache_dir"),
        )
        try:
            pid = autostart.start_daemon(argv, cwd=project, state_dir=state_dir, environ=os.environ)
        except OSError as exc:
            _log(state_dir, f"could not start a daemon: {exc}")
            return
        _log(state_dir, f"started a daemon (pid {pid}) for the next prompts; its log: "
             f"{os.path.join(state_dir, autostart.LOG_NAME)}")  # fmt: skip

    def _in_process(
        self, project: str, prompt: str, history: list[dict[str, str]], loaded: list[str]
    ) -> dict[str, Any] | None:
        """The turn context computed here, waiting on a shared store only for what is
        left of the deadline; what the runtime warns about goes to the hook's log."""
        import logging
        from pathlib import Path

        handler = _log_handler(self.state_dir)
        logging.captureWarnings(True)
        watched = [logging.getLogger(n) for n in ("skillrt", "py.warnings")]
        for logger in watched:
            logger.addHandler(handler)
            logger.propagate = False  # into hook.log, not onto the client's stderr
        try:
            from skillrt.store.base import patience

            with patience(self.store_wait, until=self.deadline - _RESERVE_S):
                config = _config(self.opts, project, str(self.state_dir))
                _load_model_aside(config.routing)
                from skillrt.runtime import SkillRuntime
                from skillrt.serialize import to_jsonable
                from skillrt.settings import flag_roots

                roots = flag_roots(self.opts.roots, Path(project))
                runtime = SkillRuntime(config, roots=roots, env=dict(os.environ))
                self.routing = runtime.routing
                try:
                    ctx = runtime.turn_context(
                        prompt,
                        history=history,
                        surface="hook",
                        budget=self.opts.budget or CLIENTS[self.opts.client].context_budget,
                        loaded=loaded,
                        client=self.opts.client,
                    )
                    data: dict[str, Any] = to_jsonable(ctx)
                finally:
                    self.stage = "closing (route events to the state store or the outbox)"
                    wait = min(self.store_wait, max(0.0, self.left() - _RESERVE_S))
                    runtime.routing.close(timeout_s=wait)
                    runtime.close()
        finally:
            for logger in watched:
                logger.removeHandler(handler)
                logger.propagate = True
        return data


def _where(opts: Options, project: str) -> dict[str, Any]:
    """State folder, identity and socket, without importing the runtime; with a config
    file, only its ``state_dir`` is read (the way every command reads it)."""
    config_file = None
    if opts.config:
        config_file = os.path.realpath(os.path.join(project, opts.config))
        if not os.path.exists(config_file):
            from skillrt.errors import ConfigError

            raise ConfigError(f"config file not found: {config_file}", path=config_file)
    elif os.path.exists(os.path.join(project, "skillrt.yaml")):
        config_file = os.path.realpath(os.path.join(project, "skillrt.yaml"))
    if opts.state and "://" in opts.state:
        from pathlib import Path  # pathlib costs ~7 ms: only off the common path

        from skillrt.settings import locate_state

        locate_state(None, opts.state, cwd=Path(project))  # refuses a scheme it lacks
    state_dir = hook_state_dir(project, opts.state, config_file, os.environ)
    project_dir = os.path.dirname(config_file) if config_file is not None else project
    roots = [os.path.realpath(os.path.join(project, r)) for r in opts.roots] or None
    expect: dict[str, Any] = {"roots": roots, "config": config_file, "project_dir": project_dir}
    if opts.client_roots:  # a daemon that does not search them serves other skills
        from skillrt.clients import present

        # (only those that are there: else any daemon of these skills will do)
        environ = os.environ
        expect["client_roots"] = present(project, environ.get("HOME"), environ)
    cache_dir = shared_cache_dir(os.environ) if config_file is None else None
    return {"state_dir": os.path.abspath(state_dir), "expect": expect, "cache_dir": cache_dir}


def _load_model_aside(routing: Any) -> None:
    """Load the embedding model on a thread of its own while this thread imports the
    runtime, finds the skills and reads the saved index: the model's files, their
    check and its session are ~0.25 s of a cold answer, much of it outside the
    interpreter's lock. The router then takes the same process-wide instance (its
    loader waits for this one); a failure here is met again, and reported, there."""
    import threading

    from skillrt.routing.embeddings import backend_options, get_backend

    name = routing.embedding_backend
    if name in ("none", "lexical", ""):
        return
    options = backend_options(name, routing)

    def load() -> None:
        try:
            get_backend(name, **options)
        except BaseException:  # the route loads it again, and reports what fails
            pass

    threading.Thread(target=load, name="skillrt-model", daemon=True).start()


def _config(opts: Options, project: str, state_dir: str) -> Any:
    from pathlib import Path

    from skillrt.settings import load_config

    config = load_config(
        opts.config,
        opts.state,
        cwd=Path(project),
        home=os.environ.get("HOME"),
        codex_home=os.environ.get("CODEX_HOME"),
        client_roots=opts.client_roots,
    )
    return hook_settings(config, state_dir, os.environ)


def _ask_daemon(
    opts: Options, where: dict[str, Any], args: dict[str, Any], *, timeout: float
) -> dict[str, Any] | None:
    """The daemon's answer within ``timeout`` seconds, or None when no daemon gives one
    (then the hook works in-process)."""
    if opts.no_daemon:
        return None
    from skillrt.daemon.client import DaemonClient, DaemonTimeout, DaemonUnavailable
    from skillrt.daemon.protocol import ENV_SOCKET, locate

    explicit = opts.socket or os.environ.get(ENV_SOCKET) or None
    try:
        address, token = locate(where["state_dir"], explicit)
    except ValueError as exc:
        _log(where["state_dir"], f"bad daemon address: {exc}")
        return None
    args = {**args, "surface": "hook"}
    budget = opts.budget or CLIENTS[opts.client].context_budget
    if budget:
        args["budget"] = budget
    timeout = max(0.05, timeout)
    try:
        with DaemonClient(
            address, token=token, timeout=timeout, connect_timeout=min(1.0, timeout)
        ) as client:
            result = client.request("context", args, expect=where["expect"])
    except DaemonUnavailable as exc:
        if os.path.exists(address) if isinstance(address, str) else True:
            why = f"no answer within {timeout:g} s" if isinstance(exc, DaemonTimeout) else exc
            _log(where["state_dir"], f"daemon skipped ({why}); working in-process")
        return None
    return result if isinstance(result, dict) else None


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


def _log_handler(state_dir: str | None) -> Any:
    """A ``logging`` handler writing warnings to the hook's log (``logging`` is imported
    only on the in-process path)."""
    import logging

    class Handler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                _log(state_dir, f"{record.levelname.lower()}: {record.getMessage()}")
            except Exception:  # logging must never break the hook
                pass

    return Handler(logging.WARNING)
