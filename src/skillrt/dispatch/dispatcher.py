"""The dispatcher of seed 000 §5, and all of its recursion, in one module.

``dispatch(request)``:

1. **Prepare** (:class:`~skillrt.dispatch.prepare.Preparer`): role guide, target skill,
   the four guards (000 §4) for a delegated request, the runtime header (000 §2), the
   bodies the mode allows (000 §1), the prompt.
2. **Run** the prompt through the runner under the 001 §10 path machine (one retry of a
   retryable failure; a missing prerequisite is fatal before any call). Each call is an
   ``executions`` row and feeds the per-skill stats (T2).
3. **Follow** the skill's ``requires_now`` edges (000 §3) as delegated children, each
   through the guards, and the ``run_skill`` lines a model wrote (001 §19); the
   children's results form the result tree. Edges joined by "or" are alternatives: the
   first that runs satisfies the group. A sub-skill that fails has no fallback (the
   parent asked for *that* skill): its machine goes ``fallback -> exit`` and the failure
   stays in the tree.

``run_skill(skill, task, context)`` (001 §19) delegates a sub-task: it checks the skill
exists and is enabled, builds the delegation context (``target_skill``, ``call_chain``,
``skill_file``), refuses a cycle (``a -> b -> a``, ``E_SKILL_REENTRY_BLOCKED``) and a
chain deeper than ``dispatch.run_skill_max_depth`` (``E_DEPTH_LIMIT``), then dispatches
the skill delegated and returns ``delegated`` or ``error``.

Termination: every hop passes the depth guard, and a request never dispatches the same
(skill, depth) pair twice, so a request makes at most ``skills x (max_depth + 1)``
dispatches whatever the graph (cycles included).

Other stages use the dispatcher through :class:`~skillrt.dispatch.model.SkillDispatcher`.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skillrt.config import RuntimeConfig
from skillrt.dispatch.edges import EdgeIndex, SkillEdge
from skillrt.dispatch.guards import first_blocking_guard
from skillrt.dispatch.header import RuntimeHeader, new_request_id
from skillrt.dispatch.model import (
    BlockedEdge,
    DispatchRequest,
    DispatchResult,
    DispatchSession,
    Prepared,
    ReadyDispatch,
    ResultHook,
    RunSkillResult,
    build_result,
)
from skillrt.dispatch.prepare import Preparer
from skillrt.dispatch.roles import RoleGuides
from skillrt.dispatch.run_skill import (
    MAX_CALLS_PER_OUTPUT,
    delegation_context,
    find_run_skill_calls,
)
from skillrt.errors import (
    AmbiguousSkill,
    DepthLimitExceeded,
    RunnerError,
    SkillDisabled,
    SkillNotFound,
    SkillReentryBlocked,
    SkillrtError,
)
from skillrt.execution.base import Runner, RunnerResult
from skillrt.execution.fallback import PathMachine, PathState, RoundLedger, run_path
from skillrt.execution.prerequisites import check_prerequisites
from skillrt.execution.records import ExecutionRecorder, ExecutionRow, new_id
from skillrt.loading.reads import SkillReads
from skillrt.skills.model import Skill
from skillrt.skills.registry import SkillRegistry
from skillrt.store.base import Store

__all__ = ["Dispatcher"]


class Dispatcher:
    """Dispatches skills over one registry, config and runner (a
    :class:`~skillrt.dispatch.model.SkillDispatcher`)."""

    def __init__(
        self,
        registry: SkillRegistry,
        config: RuntimeConfig,
        runner: Runner,
        *,
        store: Store | None = None,
        edges: EdgeIndex | None = None,
        roles: RoleGuides | None = None,
        environ: Mapping[str, str] | None = None,
        run_id: str | None = None,
        spill_dir: Path | None = None,
        stats_hook: Any = True,
        keep_prompts: bool | None = None,
    ) -> None:
        self.registry = registry
        self.config = config
        self.runner = runner
        self.store = store
        self.edges = edges or EdgeIndex(
            registry.skills(), max_bytes=config.discovery.max_skill_file_bytes
        )
        self.preparer = Preparer(registry, config, roles or RoleGuides(config.dispatch.roles_dir))
        # The environment prerequisites are checked against (and the runner's allowlist
        # is taken from); without one, only the default PATH (like the runner's).
        self.environ: Mapping[str, str] = environ if environ is not None else {"PATH": os.defpath}
        self.run_id = run_id
        self.spill_dir = spill_dir
        self.stats_hook = stats_hook
        self.keep_prompts = runner.dry_run if keep_prompts is None else keep_prompts

    # -- sessions --------------------------------------------------------------------
    def new_session(
        self,
        request_id: str | None = None,
        *,
        ledger: RoundLedger | None = None,
        reads: SkillReads | None = None,
    ) -> DispatchSession:
        ex = self.config.execution
        return DispatchSession(
            request_id=request_id or new_request_id(),
            ledger=ledger
            or RoundLedger(
                max_retry_per_path=ex.max_retry_per_path,
                max_total_retries_per_skill=ex.max_total_retries_per_skill,
                max_repair_attempts_per_run=ex.max_repair_attempts_per_run,
            ),
            recorder=ExecutionRecorder(self.store, run_id=self.run_id, stats_hook=self.stats_hook),
            reads=reads or self.new_reads(),
        )

    def new_reads(self) -> SkillReads:
        """An empty memo of SKILL.md reads for one request."""
        return SkillReads(self.config.limits, spill_dir=self.spill_dir)

    @property
    def root_skill(self) -> Skill | None:
        """The configured root skill (``dispatch.root_skill``), or None."""
        return self.preparer.root_skill

    def prepare(
        self,
        request: DispatchRequest,
        session: DispatchSession,
        *,
        parent: RuntimeHeader | None = None,
        parent_output: str | None = None,
    ) -> Prepared:
        """Header + guards + prompt for ``request`` (see :class:`Preparer`)."""
        return self.preparer.prepare(request, session, parent=parent, parent_output=parent_output)

    # -- run -------------------------------------------------------------------------
    def dispatch(
        self, request: DispatchRequest, *, session: DispatchSession | None = None
    ) -> DispatchResult:
        """Dispatch ``request`` and its ``requires_now`` sub-skills.

        A guard that blocks the request itself raises its error (000 §6); a failed run
        is a result with ``status == "failed"`` and ``error``.
        """
        session = session or self.new_session(request.request_id)
        prepared = self.prepare(request, session)
        return self.run_ready(ReadyDispatch(request, session, prepared))

    def ready(self, request: DispatchRequest) -> ReadyDispatch:
        """``request`` prepared in a new session of its own."""
        session = self.new_session(request.request_id)
        return ReadyDispatch(request, session, self.prepare(request, session))

    def run_ready(
        self, ready: ReadyDispatch, *, on_result: ResultHook | None = None
    ) -> DispatchResult:
        """Run a prepared request with no fallback (explicit dispatches, workflow
        phases): on failure its machine goes ``fallback -> exit``. ``on_result`` is
        told the runner's result before anything records it."""
        result, machine = self.execute(
            ready.prepared, ready.request, ready.session, on_result=on_result
        )
        if machine.state != PathState.SUCCESS.value:
            machine.advance(PathState.FALLBACK, "no fallback for an explicit dispatch")
            machine.advance(PathState.EXIT, "failed")
            result = dataclasses.replace(result, transitions=tuple(machine.transitions))
        return result

    def execute(
        self,
        prepared: Prepared,
        request: DispatchRequest,
        session: DispatchSession,
        *,
        parent_execution_id: str | None = None,
        fallback_used: bool = False,
        machine: PathMachine | None = None,
        on_result: ResultHook | None = None,
    ) -> tuple[DispatchResult, PathMachine]:
        """Run a prepared dispatch under its path machine, then follow its edges.

        On failure the machine is left in ``retryable_failure`` / ``fatal_failure`` for
        the caller (the fallback controller, or :meth:`dispatch`) to move on.
        """
        skill = prepared.skill
        session.claim(skill.qualified_name if skill else None, prepared.header.trace.depth)
        if skill is not None:
            session.visit(skill.qualified_name)
        machine = machine or PathMachine(prepared.path, sink=session.recorder.transition)
        ids: list[str] = []
        started = time.perf_counter()

        def attempt(n: int) -> RunnerResult:
            execution_id = new_id("exe")
            ids.append(execution_id)
            return self.attempt(
                prepared,
                request,
                session,
                execution_id=execution_id,
                parent_execution_id=parent_execution_id,
                fallback_used=fallback_used,
                on_result=on_result,
            )

        run = run_path(machine, attempt, session.ledger)
        execution_id = ids[-1] if ids else None
        if not run.ok or run.value is None:
            return (
                self._result(
                    prepared,
                    session,
                    execution_id=execution_id,
                    attempts=run.attempts,
                    started=started,
                    error=run.error,
                    transitions=tuple(machine.transitions),
                ),
                machine,
            )
        result = self.finish(
            prepared,
            request,
            session,
            run.value,
            execution_id=execution_id,
            attempts=run.attempts,
            started=started,
        )
        return dataclasses.replace(result, transitions=tuple(machine.transitions)), machine

    def attempt(
        self,
        prepared: Prepared,
        request: DispatchRequest,
        session: DispatchSession,
        *,
        execution_id: str,
        parent_execution_id: str | None = None,
        fallback_used: bool = False,
        on_result: ResultHook | None = None,
    ) -> RunnerResult:
        """One runner call (prerequisites checked first), recorded; raises on failure.
        ``on_result`` hears of a success first: recording it may fail (the store)."""
        skill = prepared.skill
        t0 = time.perf_counter()
        count_stats = not self.runner.dry_run
        try:
            if skill is not None:
                check_prerequisites(skill, self.environ)
            res = self.runner.run(prepared.prompt, timeout_s=self.config.execution.timeout_s)
        except SkillrtError as exc:
            scope = exc.scope if isinstance(exc, RunnerError) else "skill"
            self._record(
                session,
                execution_id,
                prepared,
                status="failed",
                latency_ms=float(
                    (exc.latency_ms if isinstance(exc, RunnerError) else None) or _ms(t0)
                ),
                parent_id=parent_execution_id,
                fallback_used=fallback_used,
                error=exc,
                # Not the skill's fault: a runner that cannot run, or a prerequisite the
                # router already reports as "unavailable".
                count_stats=count_stats
                and exc.code != "E_PREREQUISITE_MISSING"
                and scope != "runner",
            )
            raise
        if on_result is not None:
            on_result(res)
        self._record(
            session,
            execution_id,
            prepared,
            status="success",
            latency_ms=res.latency_ms,
            parent_id=parent_execution_id,
            fallback_used=fallback_used,
            result=res,
            count_stats=count_stats,
        )
        return res

    def finish(
        self,
        prepared: Prepared,
        request: DispatchRequest,
        session: DispatchSession,
        res: RunnerResult,
        *,
        execution_id: str | None,
        attempts: int,
        started: float,
    ) -> DispatchResult:
        """The result of a successful call: follow its edges and run_skill lines."""
        skill = prepared.skill
        children: list[DispatchResult] = []
        blocked: list[BlockedEdge] = []
        later: tuple[str, ...] = ()
        if skill is not None:
            edges = self.edges.edges(skill, session.reads.raw(skill))
            later = tuple(e.target for e in edges if e.type == "requires_later")
            follow = (
                self.config.dispatch.follow_edges
                if request.follow_edges is None
                else request.follow_edges
            )
            if follow:
                children, blocked = self._follow_edges(
                    [e for e in edges if e.type == "requires_now"],
                    prepared,
                    request,
                    session,
                    res.output,
                    execution_id,
                )
        delegations: tuple[RunSkillResult, ...] = ()
        if self.config.dispatch.follow_run_skill and not self.runner.dry_run:
            delegations = self._follow_run_skill_calls(res.output, prepared, request, session)
        return self._result(
            prepared,
            session,
            execution_id=execution_id,
            attempts=attempts,
            started=started,
            res=res,
            children=tuple(children),
            blocked=tuple(blocked),
            later=later,
            delegations=delegations,
        )

    # -- recursion: requires_now edges (000 §5) ----------------------------------------
    def _follow_edges(
        self,
        edges: list[SkillEdge],
        prepared: Prepared,
        request: DispatchRequest,
        session: DispatchSession,
        parent_output: str,
        parent_execution_id: str | None,
    ) -> tuple[list[DispatchResult], list[BlockedEdge]]:
        children: list[DispatchResult] = []
        blocked: list[BlockedEdge] = []
        satisfied: set[frozenset[str]] = set()
        source = prepared.skill.qualified_name if prepared.skill else None
        header = prepared.header
        root_name = self.preparer.root_name()
        context = None
        if not self.runner.dry_run and parent_output.strip():
            limit = self.config.dispatch.max_child_context_chars
            context = (
                parent_output
                if len(parent_output) <= limit
                else (parent_output[:limit] + f"\n[... {len(parent_output) - limit} more chars]")
            )
        for edge in edges:
            group = frozenset((edge.target, *edge.alternatives)) if edge.alternatives else None
            if group is not None and group in satisfied:
                blocked.append(BlockedEdge(source, edge.target, edge.type, "alternative_taken"))
                continue
            err = first_blocking_guard(
                header, edge.target, edge.type, root_skill=root_name, visited=session.visited_set()
            )
            if err is not None:
                blocked.append(BlockedEdge(source, edge.target, edge.type, "guard", err.to_dict()))
                continue
            target = self.registry.get(edge.target)
            if not self.registry.is_enabled(target):
                blocked.append(BlockedEdge(source, edge.target, edge.type, "disabled"))
                continue
            if target.disable_model_invocation:
                reason = "model_invocation_disabled"
                blocked.append(BlockedEdge(source, edge.target, edge.type, reason))
                continue
            if not session.claim(edge.target, header.trace.depth + 1):
                blocked.append(BlockedEdge(source, edge.target, edge.type, "already_dispatched"))
                continue
            child_request = DispatchRequest(
                skill=edge.target,
                prompt=request.prompt,
                role=prepared.role,
                execution_mode="delegated",
                depth=header.trace.depth,
                parent_skill=source,
                edge_type=edge.type,
                request_id=session.request_id,
                follow_edges=request.follow_edges,
                call_chain=request.call_chain,
            )
            try:
                child_prepared = self.prepare(
                    child_request, session, parent=header, parent_output=context
                )
            except SkillrtError as exc:  # e.g. its body is over the limits (reject policy)
                blocked.append(BlockedEdge(source, edge.target, edge.type, "error", exc.to_dict()))
                continue
            child, machine = self.execute(
                child_prepared, child_request, session, parent_execution_id=parent_execution_id
            )
            if machine.state != PathState.SUCCESS.value:
                machine.advance(PathState.FALLBACK, "a required sub-skill has no fallback")
                machine.advance(PathState.EXIT, "sub-skill failed")
                child = dataclasses.replace(child, transitions=tuple(machine.transitions))
            children.append(child)
            if group is not None and child.ok:
                satisfied.add(group)
        return children, blocked

    # -- recursion: run_skill (001 §19) ------------------------------------------------
    def run_skill(
        self,
        skill: str,
        task: str,
        context: Mapping[str, Any] | None = None,
        *,
        session: DispatchSession | None = None,
    ) -> RunSkillResult:
        """Delegate ``task`` to ``skill`` (001 §19; see the module docstring).

        ``context`` may hold ``call_chain`` (the caller's chain, outermost first), ``role``,
        ``request_id`` and ``text`` (extra context for the prompt).
        """
        ctx = dict(context or {})
        raw_chain = ctx.get("call_chain") or ()
        if isinstance(raw_chain, str):
            raw_chain = [c for c in raw_chain.split(",") if c.strip()]
        chain = tuple(self.preparer.qualify(str(c).strip()) for c in raw_chain)
        try:
            target = self.registry.get(skill)
        except (SkillNotFound, AmbiguousSkill) as exc:
            return _refused(skill, (*chain, skill), None, exc)
        name = target.qualified_name
        new_chain = (*chain, name)
        skill_file = str(target.skill_file) if target.skill_file else None
        if not self.registry.is_enabled(target):
            message = f"Skill '{name}' is disabled. Enable it with `skillrt enable {name}`."
            return _refused(name, new_chain, skill_file, SkillDisabled(message, name=name))
        max_depth = self.config.dispatch.run_skill_max_depth
        common: dict[str, Any] = {
            "request_id": session.request_id if session else ctx.get("request_id"),
            "current_skill": chain[-1] if chain else None,
            "target_skill": name,
            "depth": len(chain),
            "skill_stack": list(chain),
            "call_chain": list(new_chain),
        }
        if name in chain:
            cycle = " -> ".join(chain[chain.index(name) :] + (name,))
            err: SkillrtError = SkillReentryBlocked(
                f"run_skill cycle: {cycle}", guard="cycle", **common
            )
            return _refused(name, new_chain, skill_file, err)
        if len(new_chain) > max_depth:
            err = DepthLimitExceeded(
                f"run_skill depth {len(new_chain)} is over the limit of {max_depth} "
                f"({' -> '.join(new_chain)})",
                guard="depth",
                max_depth=max_depth,
                **common,
            )
            return _refused(name, new_chain, skill_file, err)
        request = DispatchRequest(
            skill=name,
            prompt=task,
            role=ctx.get("role"),
            execution_mode="delegated",
            depth=len(chain),
            parent_skill=chain[-1] if chain else None,
            edge_type="requires_now",
            visited_skills=chain,
            request_id=ctx.get("request_id"),
            context=delegation_context(name, new_chain, skill_file, ctx),
            call_chain=new_chain,
        )
        try:
            result = self.dispatch(request, session=session)
        except SkillrtError as exc:
            return _refused(name, new_chain, skill_file, exc)
        if not result.ok:
            return RunSkillResult(
                "error", name, new_chain, skill_file, error=result.error, dispatch=result
            )
        return RunSkillResult(
            "delegated",
            name,
            new_chain,
            skill_file,
            result={
                "output": result.output,
                "request_id": result.request_id,
                "execution_id": result.execution_id,
                "depth": result.depth,
                "runner": result.runner,
            },
            dispatch=result,
        )

    def _follow_run_skill_calls(
        self,
        output: str,
        prepared: Prepared,
        request: DispatchRequest,
        session: DispatchSession,
    ) -> tuple[RunSkillResult, ...]:
        """Run the ``run_skill`` lines of a model's output, with the emitter's chain."""
        calls = find_run_skill_calls(output)[:MAX_CALLS_PER_OUTPUT]
        if not calls:
            return ()
        chain = request.call_chain or prepared.header.trace.skill_stack
        context = {"call_chain": list(chain), "role": prepared.role}
        return tuple(
            self.run_skill(call.skill, call.task, context, session=session) for call in calls
        )

    def _result(
        self, prepared: Prepared, session: DispatchSession, **fields: Any
    ) -> DispatchResult:
        return build_result(
            prepared,
            session,
            runner=self.runner.name,
            keep_prompt=self.keep_prompts,
            **fields,
        )

    def _record(
        self,
        session: DispatchSession,
        execution_id: str,
        prepared: Prepared,
        *,
        status: str,
        latency_ms: float,
        parent_id: str | None,
        fallback_used: bool,
        count_stats: bool,
        result: RunnerResult | None = None,
        error: SkillrtError | None = None,
    ) -> None:
        header = prepared.header
        session.recorder.execution(
            ExecutionRow(
                execution_id=execution_id,
                request_id=session.request_id,
                skill=prepared.skill.qualified_name if prepared.skill else None,
                role=prepared.role,
                execution_mode=header.execution_mode,
                depth=header.trace.depth,
                path=prepared.path,
                runner=self.runner.name,
                status=status,
                latency_ms=latency_ms,
                parent_id=parent_id,
                edge_type=prepared.edge_type,
                exit_code=result.exit_code if result else _exit_code(error),
                tokens_in=result.tokens_in if result else None,
                tokens_out=result.tokens_out if result else None,
                truncated=result.truncated if result else False,
                fallback_used=fallback_used,
                error_code=error.code if error else None,
                error_message=error.message if error else None,
            ),
            count_stats=count_stats,
        )


def _exit_code(error: SkillrtError | None) -> int | None:
    return error.exit_code if isinstance(error, RunnerError) else None


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def _refused(
    target: str, chain: tuple[str, ...], skill_file: str | None, exc: SkillrtError
) -> RunSkillResult:
    return RunSkillResult("error", target, chain, skill_file, error=exc.to_dict())
