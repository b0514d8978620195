"""``workflow start|status|resume|list|advance``: composite skills (seed 002).

Each step's output and the next directive are printed as the run goes, always after
the step's state was committed. There is deliberately no option to skip or force a
step or a phase: ``advance`` only moves on when the memory file verifies.

Test hook (read here only, never by the library): ``SKILLRT_TEST_PAUSE_AT`` names
checkpoints (comma-separated: ``step:N``, ``phase:ID``, ``phase:ID:running``,
``phase:ID:written``, ``step:6:commit``, ``complete``). On reaching one the process
writes ``{"point", "run_id", "pid"}`` to ``SKILLRT_TEST_PAUSE_FILE`` (when set) and
sleeps until killed, so a crash test can SIGKILL it at an exact point.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.cli.context import CliContext
    from skillrt.orchestration.events import Checkpoint, WorkflowEvent
    from skillrt.orchestration.service import Workflows
    from skillrt.orchestration.status import WorkflowStatus

PAUSE_ENV = "SKILLRT_TEST_PAUSE_AT"
PAUSE_FILE_ENV = "SKILLRT_TEST_PAUSE_FILE"


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    wf = sub.add_parser(
        "workflow",
        parents=[common],
        help="run composite skills (config.yaml phases) with durable state",
        description="Run a composite skill's six-step protocol (seed 002).",
    )
    wsub = wf.add_subparsers(dest="workflow_command", metavar="ACTION")
    wf.set_defaults(handler=_help(wf))

    p = wsub.add_parser("start", parents=[common], help="start a run of a composite skill")
    p.add_argument("skill", metavar="SKILL", help="composite skill name (or its folder)")
    p.add_argument("query", metavar="QUERY", help="the user's request")
    _mode_options(p)
    p.add_argument("--domain", metavar="NAME", help="skip classification: use this domain")
    p.add_argument("--memory-dir", metavar="DIR", help="memory folder (default from config)")
    p.add_argument("--learnings-dir", metavar="DIR", help="learnings folder (default from config)")
    p.set_defaults(handler=cmd_start)

    p = wsub.add_parser("status", parents=[common], help="a run's state, steps and phases")
    p.add_argument("run_id", metavar="RUN_ID")
    p.add_argument("--transitions", action="store_true", help="include every FSM transition")
    p.set_defaults(handler=cmd_status)

    p = wsub.add_parser("resume", parents=[common], help="continue a stopped run")
    p.add_argument("run_id", metavar="RUN_ID")
    _mode_options(p)
    p.set_defaults(handler=cmd_resume)

    p = wsub.add_parser("list", parents=[common], help="list workflow runs")
    p.add_argument("--limit", type=int, metavar="N", help="at most N runs (newest first)")
    p.set_defaults(handler=cmd_list)

    p = wsub.add_parser(
        "advance",
        parents=[common],
        help="verify a phase's memory file and advance (manual mode)",
        description="Verify PHASE's memory file (exists, non-empty, last line "
        "'Status: COMPLETED') and move the run on. Verification cannot be skipped.",
    )
    p.add_argument("run_id", metavar="RUN_ID")
    p.add_argument("phase", metavar="PHASE")
    p.set_defaults(handler=cmd_advance)


def _mode_options(p: argparse.ArgumentParser) -> None:
    from skillrt.cli.runner_flags import add_runner_flags

    group = p.add_argument_group(
        "runner",
        "how each phase's agent runs: a command (--runner-cmd; its answer is written to the "
        "memory file, or it writes the file itself with --writes-files), an OpenAI-"
        "compatible endpoint (--runner openai --base-url URL --model M), or execution.runner "
        "in skillrt.yaml; resume reuses the run's own runner unless told otherwise",
    )
    add_runner_flags(group, dry_run=False)
    group.add_argument(
        "--dry-run",
        action="store_true",
        help="show the first phase's assembled prompt; the run then waits, blocked",
    )
    p.add_argument(
        "--manual",
        action="store_true",
        help="print each phase's directive for an outside agent; continue with `advance`",
    )
    p.add_argument("--show-prompts", action="store_true", help="print every phase prompt in full")


def _help(parser: argparse.ArgumentParser) -> Callable[[CliContext], int]:
    from skillrt.cli.context import group_help

    return group_help(parser)  # help on stderr, or the usage error under --json


# -- the test hook ---------------------------------------------------------------------
def _checkpoint() -> Checkpoint | None:
    wanted = {p.strip() for p in os.environ.get(PAUSE_ENV, "").split(",") if p.strip()}
    if not wanted:
        return None
    marker = os.environ.get(PAUSE_FILE_ENV)

    def pause(point: str, run_id: str) -> None:
        if point not in wanted:
            return
        sys.stdout.flush()
        if marker:
            tmp = f"{marker}.tmp"
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump({"point": point, "run_id": run_id, "pid": os.getpid()}, fh)
            os.replace(tmp, marker)
        while True:  # until the test kills us
            time.sleep(3600)

    return pause


# -- runners ---------------------------------------------------------------------------
def _open(ctx: CliContext) -> Workflows:
    """The workflow service of a runtime whose ``execution`` config has the runner flags
    over it (``dispatch_cmds.open_with_runner_flags``); SIGTERM then interrupts the
    command like Ctrl-C, so a phase agent never outlives it."""
    from skillrt.cli.dispatch_cmds import open_with_runner_flags
    from skillrt.cli.runner_flags import runner_flags_given
    from skillrt.errors import UsageError

    if getattr(ctx.args, "manual", False) and runner_flags_given(ctx.args):
        raise UsageError(
            "--manual drives the phases by hand: it takes no runner options "
            f"({', '.join(runner_flags_given(ctx.args))})",
            arguments=runner_flags_given(ctx.args),
        )
    _interrupt_on_sigterm()
    return open_with_runner_flags(ctx).workflows()


def _interrupt_on_sigterm() -> None:
    """Make SIGTERM (``kill``, ``timeout``) and Ctrl-C raise KeyboardInterrupt, recorded
    so that one swallowed where it landed still ends the run at its next checkpoint
    (:mod:`skillrt.interrupts`): the runner then ends its agent's process group before
    the command exits (exit 130, ``E_INTERRUPTED``)."""
    import signal

    from skillrt import interrupts

    interrupts.raise_on(signal.SIGTERM, signal.SIGINT)


# -- printing --------------------------------------------------------------------------
class _Printer:
    """Prints events as they arrive (human) or collects them (--json)."""

    def __init__(self, ctx: CliContext, *, show_prompts: bool) -> None:
        self.json = ctx.json
        self.show_prompts = show_prompts
        self.events: list[dict[str, Any]] = []
        #: Events heard (printed or collected): what this invocation did.
        self.heard = 0

    def __call__(self, event: WorkflowEvent) -> None:
        self.heard += 1
        if self.json:
            from skillrt.serialize import to_jsonable

            data = to_jsonable(event)
            if event.kind != "phase_awaiting" and not self.show_prompts:
                data.pop("prompt", None)
            self.events.append(data)
            return
        write = sys.stdout.write
        for line in _event_lines(event, show_prompts=self.show_prompts):
            write(line + "\n")
        sys.stdout.flush()


def _event_lines(event: WorkflowEvent, *, show_prompts: bool) -> list[str]:
    from skillrt.cli.output import bold

    kind = event.kind
    out: list[str] = []
    if kind == "created":
        out.append(bold(f"workflow run {event.run_id}"))
        out.append(f"  -> {event.directive}")
    elif kind == "step":
        out.append(f"[step {event.step}/6] {event.name}: {_step_text(event)}")
        out.append(f"  -> {event.directive}")
    elif kind == "agents_started":
        out.append(f"[step 5/6] {event.name}: started")
        out.append(f"  -> {event.directive}")
    elif kind in ("phase_started", "phase_awaiting"):
        n = event.extra.get("index", 0) + 1
        total = event.extra.get("total", "?")
        attempt = event.extra.get("attempt")
        again = f" (attempt {attempt})" if attempt and attempt > 1 else ""
        out.append(f"  [phase {n}/{total}] {event.phase_id}: agent {event.agent}{again}")
        out.append(f"    -> {event.directive}")
        if event.prompt and (kind == "phase_awaiting" or show_prompts):
            out.append(f"----- BEGIN PROMPT ({event.phase_id}) -----")
            out.append(event.prompt.rstrip("\n"))
            out.append("----- END PROMPT -----")
    elif kind == "phase_verified":
        sha = str(event.extra.get("sha256", ""))[:12]
        how = " (verified on resume)" if event.extra.get("verified_on_resume") else ""
        ran = _ran_text(event.extra.get("runner"))
        out.append(
            f"  [phase] {event.phase_id}: memory file verified{how}, "
            f"{event.extra.get('bytes')} bytes, sha256 {sha}{ran}"
        )
        out.append(f"    -> {event.directive}")
    elif kind == "phase_failed":
        out.append(f"  [phase] {event.phase_id}: FAILED: {event.directive}")
    elif kind == "agent_settled":
        out.append(f"  [phase] {event.phase_id}: {event.directive}")
    elif kind == "blocked":
        err = event.error or {}
        out.append(f"BLOCKED [{err.get('code')}]: {err.get('message')}")
        out.append(f"  -> {event.directive}")
    elif kind == "completed":
        out.append(f"[step 6/6] {event.name}:")
        summary = (event.output or {}).get("summary", "")
        out.extend(f"  {line}" for line in str(summary).splitlines())
        out.append(event.directive)
    return out


def _ran_text(ran: Any) -> str:
    """``; <kind> <model>, from its reply, 120+45 tokens`` for a verified phase."""
    if not isinstance(ran, dict):
        return ""
    bits = [" ".join(str(ran[k]) for k in ("kind", "model") if ran.get(k))]
    if ran.get("memory_from") == "reply":
        bits.append("from its reply")
    if ran.get("tokens_in") is not None or ran.get("tokens_out") is not None:
        bits.append(f"{ran.get('tokens_in') or 0}+{ran.get('tokens_out') or 0} tokens")
    text = ", ".join(b for b in bits if b)
    return f"; {text}" if text else ""


def _step_text(event: WorkflowEvent) -> str:
    o = event.output or {}
    if event.step == 1:
        return f"task_id={o.get('task_id')}"
    if event.step == 2:
        return (
            f"domain={o.get('domain')} confidence={o.get('confidence')} "
            f"score={o.get('score')} ({str(o.get('method')).split('@')[0]})"
        )
    if event.step == 3:
        cfg = o.get("skill_config", {})
        phases = " -> ".join(f"{p['id']}({p['agent']})" for p in cfg.get("phases", []))
        return f"skill_config {cfg.get('name')}: {phases}"
    if event.step == 4:
        return f"memory_file={o.get('memory_file')}"
    if event.step == 5:
        return f"phases_completed={len(o.get('phases_completed', []))}"
    return ""


def _result(status: WorkflowStatus, printer: _Printer, **extra: Any) -> dict[str, Any]:
    from skillrt.serialize import to_jsonable

    data: dict[str, Any] = to_jsonable(status)
    data.update(extra)
    data["events"] = printer.events
    return data


def _drive(ctx: CliContext, action: Callable[[_Printer], WorkflowStatus]) -> int:
    printer = _Printer(ctx, show_prompts=bool(getattr(ctx.args, "show_prompts", False)))
    dry_run = bool(getattr(ctx.args, "dry_run", False))
    if dry_run:
        printer.show_prompts = True
    status = action(printer)
    if dry_run and not status.complete:
        # A dry run runs no agent: it shows the next phase's prompt, and the run waits.
        waiting = next((p for p in status.phases if p.state != "verified"), None)
        where = f"at phase '{waiting.phase_id}'" if waiting is not None else f"at {status.state}"
        note = (
            f"dry run: no agent ran; run {status.run_id} waits {where} (nothing failed). "
            f"Continue with `skillrt workflow resume {status.run_id} --runner-cmd CMD` (or "
            "--runner openai --base-url URL --model M), or write the memory file and "
            "`skillrt workflow advance`."
        )
        ctx.emit(_result(status, printer, dry_run=True, note=note), note)
        return 0
    if ctx.json:
        ctx.emit(_result(status, printer))
    elif not status.complete:
        # A completed run ends with the marker line its completion event printed.
        sys.stdout.write(f"run {status.run_id}: {status.state}; next: {status.next}\n")
    return 0


def cmd_start(ctx: CliContext) -> int:
    from pathlib import Path

    from skillrt.cli.runner_flags import runner_options

    args = ctx.args
    service = _open(ctx)

    def action(printer: _Printer) -> WorkflowStatus:
        status: WorkflowStatus = service.start(
            args.skill,
            args.query,
            runner_options=runner_options(args),
            manual=bool(args.manual),
            domain=args.domain,
            memory_dir=Path(args.memory_dir).resolve() if args.memory_dir else None,
            learnings_dir=Path(args.learnings_dir).resolve() if args.learnings_dir else None,
            observer=printer,
            checkpoint=_checkpoint(),
        )
        return status

    return _drive(ctx, action)


def cmd_resume(ctx: CliContext) -> int:
    from skillrt.cli.runner_flags import runner_options

    service = _open(ctx)

    def action(printer: _Printer) -> WorkflowStatus:
        status: WorkflowStatus = service.resume(
            ctx.args.run_id,
            runner_options=runner_options(ctx.args),
            manual=bool(ctx.args.manual),
            observer=printer,
            checkpoint=_checkpoint(),
        )
        if status.complete and not printer.heard and not ctx.json:
            sys.stdout.write(f"run {status.run_id} is already complete\n")
        return status

    return _drive(ctx, action)


def cmd_advance(ctx: CliContext) -> int:
    service = ctx.runtime.workflows()

    def action(printer: _Printer) -> WorkflowStatus:
        status: WorkflowStatus = service.advance(
            ctx.args.run_id, ctx.args.phase, observer=printer, checkpoint=_checkpoint()
        )
        return status

    return _drive(ctx, action)


def cmd_status(ctx: CliContext) -> int:
    service = ctx.runtime.workflows()
    status = service.status(ctx.args.run_id)
    from skillrt.serialize import to_jsonable

    data: dict[str, Any] = to_jsonable(status)
    if ctx.args.transitions:
        data["transitions_log"] = service.transitions(ctx.args.run_id)
    ctx.emit(data, lambda: _status_human(status, data.get("transitions_log")))
    return 0


def _status_human(status: WorkflowStatus, transitions: list[dict[str, Any]] | None) -> str:
    from skillrt.cli.output import bold, table
    from skillrt.orchestration.fsm import STEPS

    lines = [
        bold(f"run {status.run_id}: {status.skill}"),
        f"state:   {status.state}"
        + (f" (at {status.blocked_from})" if status.blocked_from else "")
        + f"   mode: {status.mode}",
        f"query:   {status.query}",
    ]
    if status.task_id:
        lines.append(f"task_id: {status.task_id}")
    step2 = status.steps.get("2")
    if step2:
        lines.append(
            f"domain:  {step2.get('domain')} ({step2.get('confidence')}, {step2.get('score')})"
        )
    rows = []
    for s in STEPS:
        done = str(s.number) in status.steps
        mark = "done" if done else ("current" if status.current_step == s.number else "")
        rows.append([str(s.number), s.name, mark])
    lines += ["", table(["STEP", "NAME", "STATE"], rows)]
    if status.phases:
        prow = [
            [
                p.phase_id,
                p.agent,
                p.state,
                str(p.attempts),
                _ran_text(p.runner).removeprefix("; ") or "-",
                p.memory_file,
            ]
            for p in status.phases
        ]
        head = ["PHASE", "AGENT", "STATE", "ATTEMPTS", "RUNNER", "MEMORY FILE"]
        lines += ["", table(head, prow)]
    if status.last_error:
        lines += [
            "",
            f"last error [{status.last_error.get('code')}]: {status.last_error.get('message')}",
        ]
    summary = status.steps.get("6", {}).get("summary")
    if summary:
        lines += ["", str(summary)]
    if transitions:
        lines += [""]
        for t in transitions:
            what = t["phase_id"] or (f"step {t['step']}" if t["step"] else "run")
            lines.append(
                f"  #{t['seq']:<3} {t['kind']:<5} {what:<16} {t['from_state'] or '-'} -> "
                f"{t['to_state']}"
            )
    lines += ["", f"next: {status.next}"]
    return "\n".join(lines)


def cmd_list(ctx: CliContext) -> int:
    runs = ctx.runtime.workflows().list(limit=ctx.args.limit)

    def human() -> str:
        from skillrt.cli.output import table

        rows = [
            [
                r.run_id,
                r.skill,
                r.state,
                r.task_id or "-",
                time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.updated_at)),
                r.query.replace("\n", " ")[:50],
            ]
            for r in runs
        ]
        return table(["RUN_ID", "SKILL", "STATE", "TASK_ID", "UPDATED", "QUERY"], rows)

    ctx.emit({"runs": runs}, human)
    return 0
