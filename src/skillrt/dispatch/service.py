"""The dispatch/execution service behind ``SkillRuntime.dispatch / orchestrate / run /
run_skill / edges``: builds runners and dispatchers, and turns text into a plan.

Planning ``run`` text, in order:

1. a ``run_skill`` command (``/run_skill x task`` or ``run_skill x: task``) -> that skill;
2. ``$`` mentions through the invocation resolver -> the activated skill (forced); a
   mention that needs the user (ambiguous, disabled, did-you-mean, several) stops the
   run with that question; a mention of no skill at all is ordinary text;
3. the router -> its activation plan (``fallback_path`` feeds the fallback order).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from skillrt.dispatch.dispatcher import Dispatcher, DispatchRequest, DispatchResult
from skillrt.dispatch.edges import EdgeIndex, SkillEdge
from skillrt.dispatch.roles import RoleGuides
from skillrt.dispatch.rules import RoutingRules, RuleMatch
from skillrt.dispatch.run_skill import RunSkillResult, parse_run_skill, run_skill
from skillrt.errors import AmbiguousSkill, SkillNotFound
from skillrt.execution.base import Runner
from skillrt.execution.pipeline import PlanSource, RunPipeline, RunResult
from skillrt.execution.records import new_id
from skillrt.execution.runners import DryRunRunner, build_runner
from skillrt.routing.plan import ActivationPlan, PlannedSkill
from skillrt.skills.model import Skill

if TYPE_CHECKING:
    from skillrt.runtime import SkillRuntime

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


@dataclass(frozen=True)
class RunnerSpec:
    """Which runner to use; anything unset comes from ``execution`` config."""

    runner: str | None = None
    runner_cmd: str | None = None
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    dry_run: bool = False


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
    """Runs skills for a :class:`~skillrt.runtime.SkillRuntime`."""

    def __init__(self, runtime: SkillRuntime) -> None:
        self.runtime = runtime
        self._edges: EdgeIndex | None = None
        self._edges_registry: object | None = None
        self._roles: RoleGuides | None = None

    @property
    def config(self) -> Any:
        return self.runtime.config

    # -- building blocks -------------------------------------------------------------
    def edge_index(self) -> EdgeIndex:
        registry = self.runtime.registry
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
        self, spec: RunnerSpec | None = None, *, environ: Mapping[str, str] | None = None
    ) -> Runner:
        spec = spec or RunnerSpec()
        if spec.dry_run:
            return DryRunRunner()
        if environ is None:
            environ = self.runtime.env
        return build_runner(
            self.config.execution,
            runner=spec.runner,
            runner_cmd=spec.runner_cmd,
            base_url=spec.base_url,
            model=spec.model,
            api_key=spec.api_key,
            environ=environ,
            cwd=self.config.project_dir,
        )

    def dispatcher(
        self,
        runner: Runner | None = None,
        *,
        environ: Mapping[str, str] | None = None,
        run_id: str | None = None,
    ) -> Dispatcher:
        """A dispatcher over the runtime; ``environ`` defaults to the runtime's ``env``."""
        from skillrt.loading.report import observations_dir

        if environ is None:
            environ = self.runtime.env
        run_id = run_id or new_id("run")
        return Dispatcher(
            self.runtime.registry,
            self.config,
            runner or self.build_runner(environ=environ),
            store=self.runtime.store,
            edges=self.edge_index(),
            roles=self.roles(),
            environ=environ,
            run_id=run_id,
            spill_dir=observations_dir(self.config.project_dir, run_id),
        )

    # -- entry points ----------------------------------------------------------------
    def dispatch(
        self,
        request: DispatchRequest,
        *,
        runner: Runner | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> DispatchResult:
        return self.dispatcher(runner, environ=environ).dispatch(request)

    def run_skill(
        self,
        skill: str,
        task: str,
        context: Mapping[str, Any] | None = None,
        *,
        runner: Runner | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> RunSkillResult:
        return run_skill(self.dispatcher(runner, environ=environ), skill, task, context)

    def edges(self, name: str | None = None) -> tuple[SkillEdge, ...]:
        index = self.edge_index()
        if name is None:
            return index.all_edges()
        return index.edges(self.runtime.registry.get(name).qualified_name)

    def plan(self, text: str) -> PlanSource:
        """Turn ``text`` into a plan (see the module docstring)."""
        registry = self.runtime.registry
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
        resolution = self.runtime.resolve(text, surface="user")
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
        route = getattr(self.runtime, "route", None)
        if route is None:
            return PlanSource(
                "none", NO_SKILL_PLAN, text, reason="no router available", details=details
            )
        result = route(text)
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
        runner: Runner | None = None,
        environ: Mapping[str, str] | None = None,
        role: str | None = None,
        plan: PlanSource | None = None,
    ) -> RunResult:
        """The whole path: plan -> dispatch each step (with fallback) -> result."""
        from skillrt.execution.repair import Repairer

        source = plan or self.plan(text)
        dispatcher = self.dispatcher(runner, environ=environ)
        repairer = None
        if self.config.execution.repair_enabled:
            repairer = Repairer(dispatcher, self.runtime.store, self.repairs_dir)
        pipeline = RunPipeline(dispatcher, repairer=repairer, role=role)
        result = pipeline.run(source, run_id=dispatcher.run_id)
        if result.route_id is not None and dispatcher.runner.name != "dry-run":
            self._record_route_outcome(result)
        return result

    def _record_route_outcome(self, result: RunResult) -> None:
        """Fill the route event's execution_result / tokens / fallback_used (T1)."""
        from skillrt.telemetry.events import record_route_outcome

        self.runtime.flush_events()  # the route event must be stored before its outcome
        tokens_in = tokens_out = 0
        for step in result.steps:
            for dispatch in step.dispatches:
                for node in dispatch.walk():
                    tokens_in += node.tokens_in or 0
                    tokens_out += node.tokens_out or 0
        record_route_outcome(
            self.runtime.store,
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
        *,
        runner: Runner | None = None,
        environ: Mapping[str, str] | None = None,
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
        if skill is None:
            route = getattr(self.runtime, "route", None)
            if route is not None:
                result = route(text)
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
        dispatch = self.dispatch(request, runner=runner, environ=environ)
        return OrchestrateResult(
            source=source,
            role=role,
            skill=dispatch.skill,
            reason=reason,
            dispatch=dispatch,
            rule=match,
            route_id=route_id,
        )
