"""The dispatcher of seed 000 §5: header, guards, prompt, runner, sub-skills.

``dispatch(request)``:

1. **Prepare** (:meth:`Dispatcher.prepare`): resolve the role guide and the target
   skill; for a delegated request check the four guards (000 §4) against the caller;
   build the runtime header (000 §2); load what the mode allows (root: the root skill
   once plus the target; delegated: the role guide plus the target, 000 §1); assemble
   the prompt.
2. **Run** the prompt through the runner under the 001 §10 path machine (one retry of a
   retryable failure; a missing prerequisite is fatal before any call). Each call is an
   ``executions`` row and feeds the per-skill stats (T2).
3. **Follow** the skill's ``requires_now`` edges (000 §3) as delegated children, each
   through the guards; the children's results form the result tree. Edges joined by
   "or" are alternatives: the first that runs satisfies the group.

Termination: every hop passes the depth guard, and a request never dispatches the same
(skill, depth) pair twice, so a request makes at most ``skills x (max_depth + 1)``
dispatches whatever the graph (cycles included).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.config import RuntimeConfig
from skillrt.dispatch.edges import EDGE_TYPES, EdgeIndex
from skillrt.dispatch.guards import check_hop
from skillrt.dispatch.header import (
    EXECUTION_MODES,
    Identity,
    Policy,
    RuntimeHeader,
    Trace,
    new_request_id,
)
from skillrt.dispatch.model import (
    BlockedEdge,
    DispatchRequest,
    DispatchResult,
    DispatchSession,
    Prepared,
    build_result,
)
from skillrt.dispatch.prompt import PromptParts, assemble
from skillrt.dispatch.roles import RoleGuides
from skillrt.dispatch.subskills import follow_edges
from skillrt.errors import (
    ConfigError,
    EdgeNotExecutable,
    RunnerError,
    SkillDisabled,
    SkillNotFound,
    SkillrtError,
    UsageError,
)
from skillrt.execution.base import Runner, RunnerResult
from skillrt.execution.fallback import (
    NO_SKILL,
    PathMachine,
    PathState,
    RoundLedger,
    run_path,
    skill_path,
)
from skillrt.execution.prerequisites import check_prerequisites
from skillrt.execution.records import ExecutionRecorder, ExecutionRow, new_id
from skillrt.skills.model import Skill
from skillrt.skills.registry import SkillRegistry
from skillrt.store.base import Store

if TYPE_CHECKING:
    from skillrt.dispatch.run_skill import RunSkillResult


__all__ = [
    "BlockedEdge",
    "DispatchRequest",
    "DispatchResult",
    "DispatchSession",
    "Dispatcher",
    "Prepared",
]


class Dispatcher:
    """Dispatches skills over one registry, config and runner."""

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
        self.roles = roles or RoleGuides(config.dispatch.roles_dir)
        # The environment prerequisites are checked against (and the runner's allowlist
        # is taken from); without one, only the default PATH (like the runner's).
        self.environ: Mapping[str, str] = environ if environ is not None else {"PATH": os.defpath}
        self.run_id = run_id
        self.spill_dir = spill_dir
        self.stats_hook = stats_hook
        self.keep_prompts = runner.name == "dry-run" if keep_prompts is None else keep_prompts
        self.policy = Policy(
            forbid_root_reload=config.dispatch.forbid_root_reload,
            max_depth=config.dispatch.max_depth,
            allow_reentry=config.dispatch.allow_reentry,
        )
        self._root: tuple[Skill | None] | None = None

    # -- sessions --------------------------------------------------------------------
    def new_session(
        self, request_id: str | None = None, *, ledger: RoundLedger | None = None
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
        )

    @property
    def root_skill(self) -> Skill | None:
        """The configured root skill (``dispatch.root_skill``), or None."""
        if self._root is None:
            name = self.config.dispatch.root_skill
            if not name:
                self._root = (None,)
            else:
                try:
                    self._root = (self.registry.get(name),)
                except SkillNotFound as exc:
                    raise ConfigError(
                        f"dispatch.root_skill '{name}' is not a known skill",
                        root_skill=name,
                    ) from exc
        return self._root[0]

    def root_name(self) -> str | None:
        """The root skill's qualified name, or None."""
        root = self.root_skill
        return root.qualified_name if root is not None else None

    def _qualify(self, name: str) -> str:
        try:
            return self.registry.get(name).qualified_name
        except SkillrtError:
            return name

    # -- prepare ---------------------------------------------------------------------
    def prepare(
        self,
        request: DispatchRequest,
        session: DispatchSession,
        *,
        parent: RuntimeHeader | None = None,
        parent_output: str | None = None,
    ) -> Prepared:
        """Header + guards + prompt for ``request`` (raises a guard's error).

        ``parent`` is the caller's header for a sub-skill found in the tree; without it a
        delegated request describes its caller with its own fields (``parent_skill``,
        ``depth``, ``visited_skills``), as the CLI does.
        """
        if request.execution_mode not in EXECUTION_MODES:
            raise UsageError(
                f"execution mode must be root or delegated, got {request.execution_mode!r}",
                execution_mode=request.execution_mode,
            )
        if request.edge_type not in EDGE_TYPES:
            raise UsageError(
                f"edge type must be one of {', '.join(EDGE_TYPES)}, got {request.edge_type!r}",
                edge_type=request.edge_type,
            )
        if request.depth < 0:
            raise UsageError("depth must be >= 0", depth=request.depth)
        role = request.role or self.config.dispatch.default_role
        guide = self.roles.get(role)  # validates the role in either mode
        skill = self._target(request.skill) if request.skill else None
        target = skill.qualified_name if skill is not None else None
        root_name = self.root_name()
        loads: list[dict[str, Any]] = []
        if request.execution_mode == "root":
            if (
                parent is not None
                or request.parent_skill
                or request.depth
                or request.visited_skills
            ):
                raise UsageError(
                    "root mode is the outermost request: no --parent-skill, --depth or "
                    "--visited-skills (use --execution-mode delegated)",
                    execution_mode="root",
                )
            header = RuntimeHeader(
                "root",
                Identity(role, target, None, root_loaded=True),
                self.policy,
                Trace(session.request_id, 0, (target,) if target else (), ()),
            )
            if target is not None and request.edge_type != "requires_now":
                # Root mode has no caller, so only the edge-type guard can apply.
                raise EdgeNotExecutable(
                    f"the edge to '{target}' is {request.edge_type}; only requires_now edges "
                    "run automatically",
                    request_id=session.request_id,
                    current_skill=None,
                    target_skill=target,
                    depth=0,
                    skill_stack=[],
                    guard="edge_type",
                    edge_type=request.edge_type,
                )
        else:
            caller = parent or self._caller_header(request, role, session)
            if target is not None:
                check_hop(
                    caller,
                    target,
                    request.edge_type,
                    root_skill=root_name,
                    visited=session.visited_set(),
                )
            visited = tuple(v for v in self._visited_for_child(caller, session) if v != target)
            if target is None:
                header = RuntimeHeader(
                    "delegated",
                    Identity(role, None, caller.identity.current_skill, True),
                    self.policy,
                    Trace(
                        session.request_id,
                        caller.trace.depth + 1,
                        caller.trace.skill_stack,
                        visited,
                    ),
                )
            else:
                header = caller.child(target, visited=visited)
            if header.identity.role != role:
                header = RuntimeHeader(
                    header.execution_mode,
                    Identity(
                        role, header.identity.current_skill, header.identity.origin_skill, True
                    ),
                    header.policy,
                    header.trace,
                )
        parts = PromptParts(
            header=header,
            task=request.prompt,
            role=role,
            context=request.context,
            parent_skill=header.identity.origin_skill,
            parent_output=parent_output,
        )
        if request.execution_mode == "root":
            root = self.root_skill
            if root is not None and root.qualified_name != target:
                block, report = self._load(root)
                parts = _with(parts, root_block=block)
                loads.append(report)
        else:
            parts = _with(parts, role_guide=guide.text)
        if skill is not None:
            block, report = self._load(skill)
            loads.append(report)
            if request.execution_mode == "root" and target == root_name:
                parts = _with(parts, root_block=block)
            else:
                parts = _with(parts, skill_block=block)
        return Prepared(
            header=header,
            prompt=assemble(parts),
            skill=skill,
            role=role,
            path=skill_path(target) if target else NO_SKILL,
            edge_type=request.edge_type if request.execution_mode == "delegated" else None,
            loads=tuple(loads),
        )

    def _target(self, name: str) -> Skill:
        skill = self.registry.get(name)
        if not self.registry.is_enabled(skill):
            raise SkillDisabled(
                f"Skill '{skill.qualified_name}' is disabled. Enable it with "
                f"`skillrt enable {skill.qualified_name}`.",
                name=skill.qualified_name,
            )
        return skill

    def _caller_header(
        self, request: DispatchRequest, role: str, session: DispatchSession
    ) -> RuntimeHeader:
        """The caller of a delegated request, as its flags describe it."""
        parent = self._qualify(request.parent_skill) if request.parent_skill else None
        visited = [self._qualify(v) for v in request.visited_skills]
        for name in (*visited, *([parent] if parent else [])):
            session.visit(name)
        stack = [v for v in visited if v != parent]
        if parent is not None:
            stack.append(parent)
        return RuntimeHeader(
            "delegated" if request.depth > 0 else "root",
            Identity(role, parent, None, root_loaded=True),
            self.policy,
            Trace(
                session.request_id,
                request.depth,
                tuple(stack),
                tuple(v for v in visited if v != parent),
            ),
        )

    def _visited_for_child(
        self, caller: RuntimeHeader, session: DispatchSession
    ) -> tuple[str, ...]:
        out = list(caller.trace.visited_skills)
        for name in session.visited:
            if name not in out:
                out.append(name)
        current = caller.identity.current_skill
        if current is not None and current not in out:
            out.append(current)
        return tuple(out)

    def _load(self, skill: Skill) -> tuple[str, dict[str, Any]]:
        from skillrt.loading import injection_block, load_skill_body

        result = load_skill_body(skill, self.config.limits, spill_dir=self.spill_dir)
        r = result.report
        return injection_block(skill, result), {
            "skill": r.skill,
            "path": r.path,
            "sha256": r.sha256,
            "bytes_read": r.bytes_read,
            "chars_returned": r.chars_returned,
            "truncated": r.truncated,
            "storage_ref": r.storage_ref,
        }

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
        result, machine = self.execute(prepared, request, session)
        if machine.state != PathState.SUCCESS.value:
            machine.advance(PathState.FALLBACK, "no fallback for an explicit dispatch")
            machine.advance(PathState.EXIT, "failed")
            result = _replace(result, transitions=tuple(machine.transitions))
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
        return _replace(result, transitions=tuple(machine.transitions)), machine

    def attempt(
        self,
        prepared: Prepared,
        request: DispatchRequest,
        session: DispatchSession,
        *,
        execution_id: str,
        parent_execution_id: str | None = None,
        fallback_used: bool = False,
    ) -> RunnerResult:
        """One runner call (prerequisites checked first), recorded; raises on failure."""
        skill = prepared.skill
        t0 = time.perf_counter()
        count_stats = self.runner.name != "dry-run"
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
            edges = self.edges.edges(skill)
            later = tuple(e.target for e in edges if e.type == "requires_later")
            follow = (
                self.config.dispatch.follow_edges
                if request.follow_edges is None
                else request.follow_edges
            )
            if follow:
                children, blocked = follow_edges(
                    self,
                    [e for e in edges if e.type == "requires_now"],
                    prepared,
                    request,
                    session,
                    res.output,
                    execution_id,
                )
        delegations: tuple[RunSkillResult, ...] = ()
        if self.config.dispatch.follow_run_skill and self.runner.name != "dry-run":
            from skillrt.dispatch.run_skill import follow_run_skill_calls

            delegations = follow_run_skill_calls(self, res.output, prepared, request, session)
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


def _with(parts: PromptParts, **changes: Any) -> PromptParts:
    import dataclasses

    return dataclasses.replace(parts, **changes)


def _replace(result: DispatchResult, **changes: Any) -> DispatchResult:
    import dataclasses

    return dataclasses.replace(result, **changes)
