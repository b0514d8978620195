"""``dispatch``, ``orchestrate``, ``run``, ``run-skill``, ``edges``, ``repair``.

Runner flags are shared with ``workflow`` and ``mcp`` (``cli/runner_flags.py``):
``--runner-cmd CMD`` (a command reading the prompt on stdin), ``--runner openai
--base-url URL --model M`` (the API key comes from the environment variable named by
``execution.api_key_env``), ``--dry-run`` (print the assembled prompts; no model). A
command runner gets PATH, HOME, LANG, TERM, TMPDIR and ``execution.pass_env`` only.

A dry run records nothing (no route event, no execution rows, no stats) unless
``--state`` names the state explicitly.

Exit status: 0 when the request succeeded, 1 when it failed or needs the user's input
(``status`` in the JSON says which), 2 for bad usage.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skillrt.cli.context import CliContext
    from skillrt.dispatch.model import DispatchResult
    from skillrt.dispatch.pipeline import RunResult, StepResult
    from skillrt.dispatch.service import DispatchOptions, DispatchService
    from skillrt.runtime import SkillRuntime


def _runner_options(p: argparse.ArgumentParser) -> None:
    from skillrt.cli.runner_flags import add_runner_flags

    add_runner_flags(p.add_argument_group("runner"))


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser(
        "dispatch",
        parents=[common],
        help="dispatch one skill with a runtime header and the recursion guards (seed 000)",
    )
    p.add_argument("--skill", metavar="NAME", help="target skill (omit for no skill)")
    p.add_argument("--role", metavar="ROLE", help="role guide (default: dispatch.default_role)")
    p.add_argument(
        "--execution-mode", choices=("root", "delegated"), default="root", help="default: root"
    )
    p.add_argument(
        "--depth",
        type=int,
        default=0,
        metavar="N",
        help="the caller's depth; a delegated skill runs at N+1",
    )
    p.add_argument("--parent-skill", metavar="NAME", help="the skill that delegates")
    p.add_argument(
        "--edge-type",
        choices=("requires_now", "requires_later", "reference_only"),
        default="requires_now",
    )
    p.add_argument(
        "--visited-skills", metavar="A,B", default="", help="skills already run in this request"
    )
    p.add_argument("--prompt", required=True, metavar="TEXT", help="the task")
    p.add_argument("--request-id", metavar="ID")
    p.add_argument("--no-follow", action="store_true", help="do not run requires_now sub-skills")
    _runner_options(p)
    p.set_defaults(handler=cmd_dispatch)

    p = sub.add_parser(
        "orchestrate",
        parents=[common],
        help="pick role + skill from routing rules (or the router) and dispatch",
    )
    p.add_argument("text", metavar="CONVERSATION_TEXT")
    p.add_argument("--rules", metavar="FILE", help="routing rules YAML (skill-routing.yaml)")
    _runner_options(p)
    p.set_defaults(handler=cmd_orchestrate)

    p = sub.add_parser(
        "run",
        parents=[common],
        help="the whole path: $mentions / router -> plan -> dispatch -> runner, with fallback",
    )
    p.add_argument("text", metavar="TEXT")
    p.add_argument("--role", metavar="ROLE", help="role for the planned skills")
    _runner_options(p)
    p.set_defaults(handler=cmd_run)

    p = sub.add_parser(
        "run-skill",
        parents=[common],
        help="delegate a task to a skill (seed 001 §19 run_skill)",
    )
    p.add_argument("skill", nargs="?", metavar="SKILL")
    p.add_argument("task", nargs="?", metavar="TASK")
    p.add_argument(
        "--text", metavar="TEXT", help="'/run_skill <skill> <task>' or 'run_skill <skill>: <task>'"
    )
    p.add_argument(
        "--call-chain", metavar="A,B", default="", help="the caller's chain (cycle/depth checks)"
    )
    p.add_argument("--role", metavar="ROLE")
    _runner_options(p)
    p.set_defaults(handler=cmd_run_skill)

    p = sub.add_parser("edges", parents=[common], help="classified skill references (seed 000 §3)")
    p.add_argument("name", nargs="?", metavar="SKILL", help="one skill (default: all)")
    p.add_argument(
        "--type",
        choices=("requires_now", "requires_later", "reference_only"),
        help="only edges of this type",
    )
    p.set_defaults(handler=cmd_edges)

    p = sub.add_parser("repair", parents=[common], help="skill repair attempts and patches")
    rsub = p.add_subparsers(dest="repair_command", metavar="ACTION")
    lp = rsub.add_parser("list", parents=[common], help="repair attempts, newest first")
    lp.add_argument("--limit", type=int, default=50)
    lp.set_defaults(handler=cmd_repair_list)
    rp = rsub.add_parser("revert", parents=[common], help="restore a patch's original files")
    rp.add_argument("id", metavar="ATTEMPT_OR_PATCH_ID")
    rp.add_argument("--force", action="store_true", help="even if the files changed since")
    rp.set_defaults(handler=cmd_repair_revert)
    p.set_defaults(handler=_repair_help(p))


def _repair_help(parser: argparse.ArgumentParser) -> Any:
    def handler(ctx: CliContext) -> int:
        from skillrt.errors import UsageError

        raise UsageError("repair needs an action: list or revert", usage=parser.format_usage())

    return handler


# -- helpers ---------------------------------------------------------------------------
def _open(ctx: CliContext) -> tuple[DispatchService, DispatchOptions]:
    """Open the runtime with the runner flags over its ``execution`` config and build
    the runner (:func:`open_with_runner_flags`).

    The options carry the runner, the process environment, and whether to record: a dry
    run records nothing unless ``--state`` was given.
    """
    runtime = open_with_runner_flags(ctx)
    runner = runtime.build_runner()
    record = not runner.dry_run or bool(getattr(ctx.args, "state", None))
    return runtime.dispatch_service(), {"runner": runner, "environ": os.environ, "record": record}


def open_with_runner_flags(ctx: CliContext) -> SkillRuntime:
    """The command's runtime: its ``execution`` config with the runner flags applied
    (each flag overrides the key of the same name), the process environment as the
    runners' (keys are read from it; a command gets only its allowlist)."""
    from skillrt.cli.runner_flags import runner_options

    config = ctx.config()
    execution = runner_options(ctx.args).apply(config.execution)
    return ctx.open_runtime(config=config.replace_section(execution=execution), env=os.environ)


def _dry(options: DispatchOptions) -> bool:
    runner = options.get("runner")
    return runner is not None and runner.dry_run


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (value or "").split(",") if v.strip())


def _tree(result: DispatchResult, indent: str = "  ") -> list[str]:
    mode = result.execution_mode
    bits = [mode, f"depth {result.depth}"]
    if result.edge_type and mode == "delegated":
        bits.append(result.edge_type)
    bits.append(f"role {result.role}")
    label = result.skill or "(no skill)"
    status = result.status
    if result.error:
        status += f" [{result.error.get('code')}] {str(result.error.get('message', ''))[:120]}"
    lines = [f"{indent}{label}  ({', '.join(bits)})  {status}  {result.latency_ms:.1f} ms"]
    for b in result.blocked:
        code = (b.error or {}).get("code", "")
        lines.append(f"{indent}  x {b.target}: not run ({b.reason}{' ' + code if code else ''})")
    if result.later:
        lines.append(f"{indent}  next (requires_later): {', '.join(result.later)}")
    for child in result.children:
        lines.extend(_tree(child, indent + "  "))
    for d in result.delegations:
        lines.append(f"{indent}  run_skill {d.target_skill}: {d.status}")
        if d.dispatch is not None:
            lines.extend(_tree(d.dispatch, indent + "    "))
    return lines


def _prompts(result: DispatchResult) -> list[str]:
    out = []
    for node in result.walk():
        if node.prompt is not None:
            label = node.skill or "no skill"
            out.append(f"----- prompt: {label} (depth {node.depth}, {node.execution_mode}) -----")
            out.append(node.prompt.rstrip("\n"))
    return out


def _dispatch_human(result: DispatchResult, *, prompts: bool) -> str:
    lines = [f"Request {result.request_id}  runner: {result.runner}"]
    lines.extend(_tree(result))
    if prompts:
        lines.extend(_prompts(result))
    else:
        lines.append("Output:")
        lines.append(result.output.rstrip("\n") if result.output else "(empty)")
    return "\n".join(lines)


# -- handlers --------------------------------------------------------------------------
def cmd_dispatch(ctx: CliContext) -> int:
    from skillrt.dispatch.model import DispatchRequest

    a = ctx.args
    service, options = _open(ctx)
    request = DispatchRequest(
        skill=a.skill,
        prompt=a.prompt,
        role=a.role,
        execution_mode=a.execution_mode,
        depth=a.depth,
        parent_skill=a.parent_skill,
        edge_type=a.edge_type,
        visited_skills=_split(a.visited_skills),
        request_id=a.request_id,
        follow_edges=False if a.no_follow else None,
    )
    result = service.dispatch(request, **options)
    ctx.emit(result, lambda: _dispatch_human(result, prompts=_dry(options)))
    return 0 if result.ok else 1


def cmd_orchestrate(ctx: CliContext) -> int:
    a = ctx.args
    service, options = _open(ctx)
    result = service.orchestrate(a.text, a.rules, **options)

    def human() -> str:
        head = (
            f"Picked role {result.role}, skill {result.skill or '(none)'} "
            f"by {result.source}: {result.reason}"
        )
        return head + "\n" + _dispatch_human(result.dispatch, prompts=_dry(options))

    ctx.emit(result, human)
    return 0 if result.dispatch.ok else 1


def _step_human(i: int, n: int, step: StepResult) -> list[str]:
    label = step.planned or "(no skill)"
    via = f" via {step.path}" if step.path else ""
    lines = [f"Step {i}/{n}: {label} -> {step.status}{via}  ({step.latency_ms:.1f} ms)"]
    if step.transitions:
        lines.append("  transitions:")
        for t in step.transitions:
            why = f"  ({t.reason[:100]})" if t.reason else ""
            lines.append(f"    {t.path}: {t.from_state} -> {t.to_state}{why}")
    for s in step.skipped:
        lines.append(f"  skipped {s.path}: {s.reason}")
    for r in step.repairs:
        lines.append(f"  repair {r.skill}: {r.status} ({r.eligibility.reason})")
        for at in r.attempts:
            lines.append(
                f"    attempt {at.attempt} {at.attempt_id}: {at.outcome}"
                f" files={','.join(at.patched_files) or '-'}"
            )
    for d in step.dispatches:
        lines.extend(_tree(d, "  "))
    return lines


def _run_human(result: RunResult, *, prompts: bool) -> str:
    plan = result.plan
    names = ", ".join(" + ".join(g) for g in plan.groups) or "(no skill)"
    lines = [
        f"Run {result.run_id}  request {result.request_id}  runner: {result.runner}",
        f"Plan ({result.source}): {names}  cost: {plan.estimated_cost}",
    ]
    if result.reason:
        lines.append(f"  reason: {result.reason}")
    if plan.fallback_path:
        lines.append(f"  fallback: {' -> '.join(plan.fallback_path)}")
    for i, step in enumerate(result.steps, 1):
        lines.extend(_step_human(i, len(result.steps), step))
    if prompts:
        for step in result.steps:
            for d in step.dispatches:
                lines.extend(_prompts(d))
    elif result.output:
        lines.append("Output:")
        lines.append(result.output.rstrip("\n"))
    if result.question:
        lines.append("Needs your input:")
        lines.append(result.question)
    lines.append(f"Status: {result.status}  ({result.latency_ms:.1f} ms)")
    return "\n".join(lines)


def cmd_run(ctx: CliContext) -> int:
    a = ctx.args
    service, options = _open(ctx)
    result = service.run(a.text, role=a.role, **options)
    ctx.emit(result, lambda: _run_human(result, prompts=_dry(options)))
    return 0 if result.ok else 1


def cmd_run_skill(ctx: CliContext) -> int:
    from skillrt.dispatch.run_skill import parse_run_skill
    from skillrt.errors import UsageError

    a = ctx.args
    skill, task = a.skill, a.task
    if a.text:
        call = parse_run_skill(a.text)
        if call is None:
            raise UsageError(
                "--text must be '/run_skill <skill> <task>' or 'run_skill <skill>: <task>'",
                text=a.text,
            )
        skill, task = call.skill, call.task
    if not skill or not task:
        raise UsageError("run-skill needs SKILL and TASK (or --text)")
    service, options = _open(ctx)
    context: dict[str, Any] = {"call_chain": list(_split(a.call_chain))}
    if a.role:
        context["role"] = a.role
    result = service.run_skill(skill, task, context, **options)

    def human() -> str:
        lines = [
            f"run_skill {result.target_skill}: {result.status}",
            f"  call chain: {' -> '.join(result.call_chain)}",
            f"  skill file: {result.skill_file or '-'}",
        ]
        if result.error:
            lines.append(f"  error [{result.error.get('code')}]: {result.error.get('message')}")
        if result.dispatch is not None:
            lines.append(_dispatch_human(result.dispatch, prompts=_dry(options)))
        return "\n".join(lines)

    ctx.emit(result, human)
    return 0 if result.status == "delegated" else 1


def cmd_edges(ctx: CliContext) -> int:
    edges = ctx.runtime.edges(ctx.args.name)
    if ctx.args.type:
        edges = tuple(e for e in edges if e.type == ctx.args.type)

    def human() -> str:
        from skillrt.cli.output import table

        rows = [[e.source, e.type, e.target, f"{e.marker} (line {e.line})"] for e in edges]
        return table(["SOURCE", "TYPE", "TARGET", "EVIDENCE"], rows)

    ctx.emit({"edges": list(edges)}, human)
    return 0


def cmd_repair_list(ctx: CliContext) -> int:
    from skillrt.dispatch.repair import list_repair_attempts
    from skillrt.execution.patches import list_patches

    store = ctx.runtime.store
    attempts = list_repair_attempts(store, limit=ctx.args.limit)
    patches = list_patches(store)[: ctx.args.limit]

    def human() -> str:
        from skillrt.cli.output import table

        rows = [
            [
                a["attempt_id"],
                a["skill"],
                a["outcome"],
                a.get("patch_status") or "-",
                ", ".join(a["patched_files"]) or "-",
                (a["root_cause"] or a.get("stop_reason") or "")[:60],
            ]
            for a in attempts
        ]
        return table(["ATTEMPT", "SKILL", "OUTCOME", "PATCH", "FILES", "ROOT CAUSE"], rows)

    ctx.emit({"attempts": attempts, "patches": patches}, human)
    return 0


def cmd_repair_revert(ctx: CliContext) -> int:
    from skillrt.execution.patches import revert_patch

    record = revert_patch(ctx.runtime.store, ctx.args.id, force=ctx.args.force)
    files = ", ".join(f["path"] for f in record.files)
    ctx.emit(record, f"reverted {record.patch_id} of {record.skill}: {files}")
    return 0
