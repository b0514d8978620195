"""The dispatch/execution service behind ``SkillRuntime.dispatch / orchestrate / run /
run_skill / edges``: builds runners and dispatchers, and turns text into a plan.

It is given the narrow collaborators it uses (the registry, a ``$mention`` resolver,
the routing that records its events, the store), never the facade.

Planning ``run`` text, in order:

1. a ``run_skill`` command (``/run_skill x task`` or ``run_skill x: task``) -> that skill;
2. ``$`` mentions through the invocation resolver -> the activated skill (forced); a
   mention that needs the user (ambiguous, disabled, did-you-mean, several) stops the
   run with that question; a mention of no skill at all is ordinary text;
3. the router -> its activation plan (``fallback_path`` feeds the fallback order).

A ``$mention`` run reads the skill's SKILL.md once: the resolver's activation, the
prompt and the edge index all use the run's :class:`~skillrt.loading.reads.SkillReads`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict, Unpack

from skillrt.config import RuntimeConfig
from skillrt.dispatch.dispatcher import Dispatcher
from skillrt.dispatch.edges import EdgeIndex, SkillEdge
from skillrt.dispatch.model import DispatchRequest, DispatchResult, RunSkillResult
from skillrt.dispatch.pipeline import PlanSource, RunPipeline, RunResult
from skillrt.dispatch.roles import RoleGuides
from skillrt.dispatch.rules import RoutingRules, RuleMatch
from skillrt.dispatch.run_skill import parse_run_skill
from skillrt.errors import AmbiguousSkill, SkillNotFound
from skillrt.execution.base import Runner
from skillrt.execution.options import RunnerOptions
from skillrt.execution.records import new_id
from skillrt.execution.runners import build_runner
from skillrt.loading.reads import SkillReads
from skillrt.routing.plan import ActivationPlan, PlannedSkill, RouteResult
from skillrt.skills.model import Skill
from skillrt.skills.registry import SkillRegistry
from skillrt.store.base import Store

if TYPE_CHECKING:
    from skillrt.invocation.resolver import BodyLoader
    from skillrt.invocation.results import Resolution, Surface

__all__ = [
    "ASK_CODES",
    "DispatchOptions",
    "DispatchService",
    "MentionResolver",
    "OrchestrateResult",
    "RecordedRoutes",
    "RouteText",
    "forced_plan",
]

#: Resolver diagnostics that need the user before anything runs (004 §7).
ASK_CODES = frozenset(
    {
        "AMBIGUOUS",
        "FUZZY_SUGGESTION",
        "DISABLED",
        "MULTIPLE_MENTIONS",
        "GLOB_NOT_SUPPORTED",
        "MODEL_INVOCATION_DISABLED",
        "LOAD_FAILED",
    }
)


class MentionResolver(Protocol):
    """What planning needs of the ``$skill`` resolver (seed 004)."""

    def resolve(
        self,
        text: str,
        *,
        surface: Surface = "user",
        apply_commands: bool = False,
        load_body: BodyLoader | None = None,
    ) -> Resolution: ...


class RouteText(Protocol):
    """Routes a request; its T1 event is recorded unless ``record=False``."""

    def __call__(self, query: str, *, record: bool | None = None) -> RouteResult: ...


@dataclass(frozen=True)
class RecordedRoutes:
    """What planning needs of routing: a route whose T1 event is recorded (unless
    ``record=False``), and the queued events written before an outcome is added (the
    facade's :meth:`~skillrt.runtime.SkillRuntime.route` and ``flush_events``)."""

    route: RouteText
    flush_events: Callable[[], bool]


class DispatchOptions(TypedDict, total=False):
    """How a dispatch runs (every entry point takes these; the facade passes them on)."""

    #: The runner; by default the ``execution`` config's (dry-run unless set).
    runner: Runner | None
    #: The environment the runner's allowlist and prerequisite checks read.
    environ: Mapping[str, str] | None
    #: Record route events, executions and stats (False: a dry run that leaves no trace).
    record: bool


@dataclass(frozen=True)
class OrchestrateResult:
    """What ``orchestrate`` picked, why, and the dispatch it made."""

    #: ``rule``, ``router``, ``default`` or ``none`` (no skill at all).
    source: Literal["rule", "router", "default", "none"]
    role: str
    skill: str | None
    reason: str
    dispatch: DispatchResult
    rule: RuleMatch | None = None
    route_id: str | None = None


def forced_plan(names: tuple[str, ...], skills: Mapping[str, Skill]) -> ActivationPlan:
    """A plan of explicitly named skills, run one after another, no fallback skills."""
    planned = tuple(
        PlannedSkill(
            name=n,
            forced=True,
            score=1.0,
            cost_hint=skills[n].routing.cost_hint if n in skills else "medium",
            parallel_safe=False,
        )
        for n in names
    )
    costs = [p.cost_hint for p in planned]
    cost = "high" if "high" in costs else ("medium" if "medium" in costs else "low")
    return ActivationPlan(
        skills=planned,
        groups=tuple((n,) for n in names),
        estimated_cost=cost if planned else "low",
        fallback_path=("no-skill", "ask-user"),
    )


NO_SKILL_PLAN = ActivationPlan(
    skills=(), groups=(), estimated_cost="low", fallback_path=("no-skill", "ask-user")
)


class DispatchService:
    """Runs skills over a registry, with runners, plans, fallback and repair.

    Args:
        config: The runtime configuration.
        registry: The current registry (asked on every call: a refresh replaces it).
        store: Where executions, stats, patches and route outcomes are recorded.
        resolver: The current ``$mention`` resolver.
        routing: The router, recording its events; None plans ``run`` text without it.
        env: The default environment for runners and prerequisite checks.
    """

    def __init__(
        self,
        config: RuntimeConfig,
        *,
        registry: Callable[[], SkillRegistry],
        store: Store,
        resolver: Callable[[], MentionResolver],
        routing: RecordedRoutes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.routing = routing
        self.env = env
        self._registry = registry
        self._resolver = resolver
        self._edges: EdgeIndex | None = None
        self._edges_registry: object | None = None
        self._roles: RoleGuides | None = None

    @property
    def registry(self) -> SkillRegistry:
        return self._registry()

    # -- building blocks -------------------------------------------------------------
    def edge_index(self) -> EdgeIndex:
        registry = self.registry
        if self._edges is None or self._edges_registry is not registry:
            self._edges = EdgeIndex(
                registry.skills(), max_bytes=self.config.discovery.max_skill_file_bytes
            )
            self._edges_registry = registry
        return self._edges

    def roles(self) -> RoleGuides:
        if self._roles is None:
            self._roles = RoleGuides(self.config.dispatch.roles_dir)
        return self._roles

    def build_runner(
        self, options: RunnerOptions | None = None, *, environ: Mapping[str, str] | None = None
    ) -> Runner:
        """The runner ``execution`` config names, with ``options`` over it (the one way
        every entry point builds one: :func:`skillrt.execution.runners.build_runner`)."""
        return build_runner(
            self.config.execution,
            options,
            environ=self.env if environ is None else environ,
            cwd=self.config.project_dir,
        )

    def dispatcher(
        self,
        runner: Runner | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        run_id: str | None = None,
        record: bool = True,
        keep_prompts: bool | None = None,
        timeout_s: float | None = None,
        spill: bool = True,
    ) -> Dispatcher:
        """A dispatcher for one run; ``environ`` defaults to the service's ``env``.

        ``record=False`` writes no execution rows or stats; ``timeout_s`` replaces
        ``execution.timeout_s`` (a workflow phase's own timeout); ``spill=False`` keeps
        a truncated body's full text out of ``.agent/runs/<run_id>/observations``.
        """
        from skillrt.loading.report import observations_dir

        if environ is None:
            environ = self.env
        run_id = run_id or new_id("run")
        config = self.config
        if timeout_s is not None:
            execution = dataclasses.replace(config.execution, timeout_s=timeout_s)
            config = dataclasses.replace(config, execution=execution)
        return Dispatcher(
            self.registry,
            config,
            runner or self.build_runner(environ=environ),
            store=self.store if record else None,
            edges=self.edge_index(),
            roles=self.roles(),
            environ=environ,
            run_id=run_id,
            spill_dir=observations_dir(config.project_dir, run_id) if spill else None,
            keep_prompts=keep_prompts,
        )

    # -- entry points ----------------------------------------------------------------
    def dispatch(
        self, request: DispatchRequest, **options: Unpack[DispatchOptions]
    ) -> DispatchResult:
        """Dispatch one skill (000 §5): header, guards, prompt, runner, sub-skills."""
        return self._dispatcher(options).dispatch(request)

    def run_skill(
        self,
        skill: str,
        task: str,
        context: Mapping[str, Any] | None = None,
        **options: Unpack[DispatchOptions],
    ) -> RunSkillResult:
        """Delegate ``task`` to ``skill`` (001 §19): ``delegated`` or ``error``."""
        return self._dispatcher(options).run_skill(skill, task, context)

    def edges(self, name: str | None = None) -> tuple[SkillEdge, ...]:
        """The classified skill references of ``name`` (every skill's when None)."""
        index = self.edge_index()
        if name is None:
            return index.all_edges()
        return index.edges(self.registry.get(name).qualified_name)

    def plan(
        self, text: str, *, reads: SkillReads | None = None, record: bool | None = None
    ) -> PlanSource:
        """Turn ``text`` into a plan (see the module docstring); ``reads`` is the run's
        memo of SKILL.md reads, ``record`` whether the route's event is written."""
        registry = self.registry
        skills = {s.qualified_name: s for s in registry.skills()}
        call = parse_run_skill(text)
        if call is not None:
            try:
                name = registry.get(call.skill).qualified_name
            except (SkillNotFound, AmbiguousSkill) as exc:
                return PlanSource(
                    "run_skill",
                    NO_SKILL_PLAN,
                    call.task,
                    reason=exc.message,
                    question=exc.message,
                    details={"run_skill": {"skill": call.skill, "form": call.form}},
                )
            return PlanSource(
                "run_skill",
                forced_plan((name,), skills),
                call.task or text,
                reason=f"run_skill {name}",
                details={"run_skill": {"skill": name, "form": call.form}},
            )
        load = reads.load if reads is not None else None
        resolution = self._resolver().resolve(text, surface="user", load_body=load)
        diagnostics = [
            {"code": d.code, "message": d.message, "mention": d.mention_id}
            for d in resolution.diagnostics
        ]
        details: dict[str, Any] = {"query": text, "diagnostics": diagnostics}
        if resolution.activated:
            names = resolution.activated_names
            return PlanSource(
                "mention",
                forced_plan(names, skills),
                resolution.task_text.strip() or text,
                reason="; ".join(resolution.lines),
                details={**details, "using": list(resolution.lines)},
            )
        asks = [d for d in resolution.diagnostics if d.code in ASK_CODES]
        if asks:
            question = "\n".join(d.message for d in asks)
            return PlanSource(
                "mention", NO_SKILL_PLAN, text, reason=question, question=question, details=details
            )
        if self.routing is None:
            return PlanSource(
                "none", NO_SKILL_PLAN, text, reason="no router available", details=details
            )
        result = self.routing.route(text, record=record)
        return PlanSource(
            "router",
            result.plan,
            text,
            reason=result.routing_reason,
            route=result,
            details={**details, "route_id": result.route_id},
        )

    def run(
        self,
        text: str,
        *,
        role: str | None = None,
        plan: PlanSource | None = None,
        **options: Unpack[DispatchOptions],
    ) -> RunResult:
        """The whole path: plan -> dispatch each step (with fallback) -> result."""
        from skillrt.dispatch.repair import Repairer

        record = options.get("record", True)
        dispatcher = self._dispatcher(options)
        reads = dispatcher.new_reads()
        source = plan or self.plan(text, reads=reads, record=None if record else False)
        repairer = None
        if self.config.execution.repair_enabled:
            repairer = Repairer(dispatcher, dispatcher.store, self.repairs_dir)
        pipeline = RunPipeline(dispatcher, repairer=repairer, role=role)
        result = pipeline.run(source, run_id=dispatcher.run_id, reads=reads)
        if result.route_id is not None and record and not dispatcher.runner.dry_run:
            self._record_route_outcome(result)
        return result

    def _dispatcher(self, options: DispatchOptions) -> Dispatcher:
        return self.dispatcher(
            options.get("runner"),
            environ=options.get("environ"),
            record=options.get("record", True),
        )

    def _record_route_outcome(self, result: RunResult) -> None:
        """Fill the route event's execution_result / tokens / fallback_used (T1)."""
        from skillrt.telemetry.events import record_route_outcome

        if self.routing is not None:
            self.routing.flush_events()  # the route event must be stored before its outcome
        tokens_in = tokens_out = 0
        for step in result.steps:
            for dispatch in step.dispatches:
                for node in dispatch.walk():
                    tokens_in += node.tokens_in or 0
                    tokens_out += node.tokens_out or 0
        record_route_outcome(
            self.store,
            str(result.route_id),
            execution_result="success" if result.ok else "exit",
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            fallback_used=any(s.fallback_used for s in result.steps),
        )

    @property
    def repairs_dir(self) -> Path:
        return Path(self.config.state_dir) / "repairs"

    def orchestrate(
        self,
        text: str,
        rules: RoutingRules | Path | str | None = None,
        **options: Unpack[DispatchOptions],
    ) -> OrchestrateResult:
        """Pick role + skill from ``rules`` (then the router, then the default); dispatch."""
        if rules is None:
            rules = self.config.dispatch.rules_file
        if rules is None:
            parsed = RoutingRules(rules=())
        elif isinstance(rules, RoutingRules):
            parsed = rules
        else:
            parsed = RoutingRules.from_file(rules)
        default_role = parsed.default_role or self.config.dispatch.default_role
        match = parsed.match(text)
        source: Literal["rule", "router", "default", "none"]
        route_id: str | None = None
        skill: str | None = None
        role = default_role
        reason = ""
        if match is not None:
            source, role, skill = "rule", match.role or default_role, match.skill
            reason = f"rule {match.rule_id!r} matched: {', '.join(match.matched)}"
        if skill is None and self.routing is not None:
            record = None if options.get("record", True) else False
            result = self.routing.route(text, record=record)
            route_id = result.route_id
            if result.plan.skills:
                skill = result.plan.skills[0].name
                if match is None:
                    source = "router"
                reason = (reason + "; " if reason else "") + (
                    f"router picked {skill}: {result.routing_reason}"
                )
        if skill is None and parsed.default_skill:
            skill = parsed.default_skill
            if match is None:
                source = "default"
            reason = (reason + "; " if reason else "") + "the rules' default skill"
        if skill is None and match is None:
            source = "none"
            reason = reason or "no rule matched and the router found no skill"
        request = DispatchRequest(skill=skill, prompt=text, role=role, execution_mode="root")
        dispatch = self.dispatch(request, **options)
        return OrchestrateResult(
            source=source,
            role=role,
            skill=dispatch.skill,
            reason=reason,
            dispatch=dispatch,
            rule=match,
            route_id=route_id,
        )
