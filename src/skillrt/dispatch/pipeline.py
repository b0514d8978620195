"""``run``: an activation plan executed step by step with the 001 §10 fallback.

For each group of the plan (groups run in order; the skills of a group run in
parallel, at most ``routing.max_parallel_skills`` and never more than 2) every planned
skill is a *step*:

1. the planned skill runs as a root-mode dispatch (its ``requires_now`` sub-skills
   follow under the guards);
2. on failure its path machine moves to ``fallback`` and the step tries, in order:
   a repair of the skill (only when ``execution.repair_enabled``), the next-best skills
   of the same intent (the route's ``fallback_path``, at most
   ``execution.max_fallback_skills``, skipping banned and unavailable ones), the
   no-skill path (the task with no skill body), and finally asking the user (a
   ``needs_user_input`` result with the question);
3. when a later path succeeds, every machine waiting in ``fallback`` moves to
   ``success``; when the step ends by asking the user, they move to ``exit``.

A runner that cannot run at all (``scope=runner``: command not found, bad key, bad
URL) ends the step at once with ``failed``: no other skill would fare better.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from skillrt.dispatch.model import (
    DispatchRequest,
    DispatchResult,
    DispatchSession,
    SkillDispatcher,
)
from skillrt.errors import SkillrtError
from skillrt.execution.fallback import (
    ASK_USER,
    NO_SKILL,
    PathMachine,
    PathState,
    Transition,
    skill_path,
)
from skillrt.execution.prerequisites import missing_prerequisites
from skillrt.execution.records import new_id
from skillrt.loading.reads import SkillReads
from skillrt.routing.plan import ActivationPlan, RouteResult

if TYPE_CHECKING:
    from skillrt.dispatch.repair import Repairer, RepairOutcome

PlanKind = Literal["mention", "router", "run_skill", "explicit", "none"]
#: The most skills a group runs at once (001 §7 max_parallel_skills).
MAX_PARALLEL = 2


@dataclass(frozen=True)
class PlanSource:
    """Where a run's plan came from: ``$`` mentions, the router, or given directly."""

    kind: PlanKind
    plan: ActivationPlan
    task: str
    reason: str = ""
    route: RouteResult | None = None
    #: When the resolver needs the user to choose (ambiguous / several mentions).
    question: str | None = None
    #: The resolver's or router's own report, for --json.
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def fallback_skills(self) -> tuple[str, ...]:
        """Next-best skills named by the plan's fallback path (001 §8)."""
        return tuple(p for p in self.plan.fallback_path if p not in (NO_SKILL, ASK_USER))


@dataclass(frozen=True)
class SkippedPath:
    """A fallback candidate that was not tried, and why."""

    path: str
    reason: str


@dataclass(frozen=True)
class StepResult:
    """One planned skill's execution, with every path it took."""

    planned: str | None
    #: ``success``, ``needs_user_input`` or ``failed``.
    status: str
    #: The path that produced the output (``skill:x``, ``no-skill``), or None.
    path: str | None
    output: str
    fallback_used: bool
    dispatches: tuple[DispatchResult, ...]
    transitions: tuple[Transition, ...]
    skipped: tuple[SkippedPath, ...] = ()
    question: str | None = None
    error: dict[str, Any] | None = None
    repairs: tuple[RepairOutcome, ...] = ()
    latency_ms: float = 0.0


@dataclass(frozen=True)
class RunResult:
    """The whole run: plan, steps, output (or the question for the user)."""

    run_id: str
    request_id: str
    query: str
    task: str
    source: PlanKind
    reason: str
    plan: ActivationPlan
    #: ``success``, ``needs_user_input`` or ``failed``.
    status: str
    output: str
    steps: tuple[StepResult, ...]
    route_id: str | None = None
    question: str | None = None
    banned_paths: tuple[str, ...] = ()
    runner: str = ""
    latency_ms: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "success"


class RunPipeline:
    """Executes plans through a dispatcher with fallback (and repair)."""

    def __init__(
        self,
        dispatcher: SkillDispatcher,
        *,
        repairer: Repairer | None = None,
        role: str | None = None,
        max_parallel: int | None = None,
    ) -> None:
        self.dispatcher = dispatcher
        self.config = dispatcher.config
        self.repairer = repairer
        self.role = role
        limit = max_parallel or self.config.routing.max_parallel_skills
        self.max_parallel = max(1, min(limit, MAX_PARALLEL))

    def run(
        self, source: PlanSource, *, run_id: str | None = None, reads: SkillReads | None = None
    ) -> RunResult:
        """Run ``source``'s plan; ``reads`` holds the bodies planning already read."""
        started = time.perf_counter()
        run_id = run_id or self.dispatcher.run_id or new_id("run")
        session = self.dispatcher.new_session(reads=reads)
        if source.question is not None:
            return self._result(source, run_id, session, (), "needs_user_input", started)
        groups = source.plan.groups or tuple((s.name,) for s in source.plan.skills)
        steps: list[StepResult] = []
        planned_names = set(source.plan.names)
        if source.plan.no_skill or not groups:
            steps.append(self._step(None, source, session, planned_names))
        else:
            for group in groups:
                steps.extend(self._group(group, source, session, planned_names))
        status = "success"
        if any(s.status == "failed" for s in steps):
            status = "failed"
        elif any(s.status == "needs_user_input" for s in steps):
            status = "needs_user_input"
        return self._result(source, run_id, session, tuple(steps), status, started)

    def _group(
        self,
        group: Sequence[str],
        source: PlanSource,
        session: DispatchSession,
        planned: set[str],
    ) -> list[StepResult]:
        if len(group) == 1 or self.max_parallel == 1:
            return [self._step(name, source, session, planned) for name in group]
        with ThreadPoolExecutor(max_workers=min(len(group), self.max_parallel)) as pool:
            futures = [pool.submit(self._step, name, source, session, planned) for name in group]
            return [f.result() for f in futures]

    # -- one step ----------------------------------------------------------------------
    def _step(
        self,
        planned: str | None,
        source: PlanSource,
        session: DispatchSession,
        planned_names: set[str],
    ) -> StepResult:
        started = time.perf_counter()
        step = _Step(planned)
        first = skill_path(planned) if planned else NO_SKILL
        if session.ledger.banned(first):
            step.skipped.append(SkippedPath(first, "banned for this round (failed twice)"))
        else:
            done = self._try(step, planned, source, session, fallback_used=False)
            if done or step.fatal_runner:
                return step.finish(started)
        # fallback 0: repair the failed skill in place (001 §11-13)
        if planned and step.last_failed is not None and self._repair(step, source, session):
            return step.finish(started)
        # fallback 1: next-best skills of the same intent
        tried_skills = 0
        for name in source.fallback_skills:
            if tried_skills >= self.config.execution.max_fallback_skills:
                break
            path = skill_path(name)
            reason = self._skip_reason(name, path, step, session, planned_names)
            if reason is not None:
                step.skipped.append(SkippedPath(path, reason))
                continue
            tried_skills += 1
            if self._try(step, name, source, session, fallback_used=True):
                return step.finish(started)
            if step.fatal_runner:
                return step.finish(started)
        # fallback 2: the no-skill path
        if NO_SKILL not in step.tried:
            if session.ledger.banned(NO_SKILL):
                step.skipped.append(SkippedPath(NO_SKILL, "banned for this round (failed twice)"))
            elif self._try(step, None, source, session, fallback_used=planned is not None):
                return step.finish(started)
            if step.fatal_runner:
                return step.finish(started)
        # fallback 3: ask the user
        step.ask_user(source)
        return step.finish(started)

    def _skip_reason(
        self,
        name: str,
        path: str,
        step: _Step,
        session: DispatchSession,
        planned_names: set[str],
    ) -> str | None:
        d = self.dispatcher
        if path in step.tried:
            return "already tried in this step"
        if name in planned_names:
            return "runs as its own step of the plan"
        if session.ledger.banned(path):
            return "banned for this round (failed twice)"
        try:
            skill = d.registry.get(name)
        except SkillrtError as exc:
            return f"unknown skill ({exc.code})"
        if not d.registry.is_enabled(skill):
            return "disabled"
        missing = missing_prerequisites(skill, d.environ)
        if missing:
            return f"unavailable: missing {', '.join(missing)}"
        return None

    def _try(
        self,
        step: _Step,
        skill: str | None,
        source: PlanSource,
        session: DispatchSession,
        *,
        fallback_used: bool,
    ) -> bool:
        """Run one path; True when the step is done (success)."""
        path = skill_path(skill) if skill else NO_SKILL
        step.tried.append(path)
        request = DispatchRequest(
            skill=skill,
            prompt=source.task,
            role=self.role,
            execution_mode="root",
            request_id=session.request_id,
        )
        machine = PathMachine(path, sink=session.recorder.transition)
        try:
            prepared = self.dispatcher.prepare(request, session)
        except SkillrtError as exc:
            # The path cannot even be assembled (disabled, body refused...): fatal.
            machine.advance(PathState.RUNNING, "selected path started")
            session.ledger.record_failure(path)
            machine.advance(PathState.FATAL_FAILURE, exc.message, error_code=exc.code)
            step.fail(machine, None, exc.to_dict(), fatal_runner=False)
            return False
        result, machine = self.dispatcher.execute(
            prepared, request, session, fallback_used=fallback_used, machine=machine
        )
        if result.ok:
            step.succeed(machine, result, fallback_used=fallback_used)
            return True
        error = result.error or {}
        step.fail(
            machine,
            result,
            error,
            fatal_runner=error.get("scope") == "runner" and not error.get("retryable"),
            request=request,
        )
        return False

    def _repair(self, step: _Step, source: PlanSource, session: DispatchSession) -> bool:
        if self.repairer is None or not self.config.execution.repair_enabled:
            return False
        failed = step.last_failed
        if failed is None or failed.result is None or failed.request is None:
            return False
        outcome = self.repairer.repair(failed.result, failed.request, session)
        step.repairs.append(outcome)
        if outcome.result is not None and outcome.result.ok:
            step.succeed(None, outcome.result, fallback_used=False, via="repair")
            return True
        return False

    def _result(
        self,
        source: PlanSource,
        run_id: str,
        session: DispatchSession,
        steps: tuple[StepResult, ...],
        status: str,
        started: float,
    ) -> RunResult:
        question = source.question
        if question is None:
            questions = [s.question for s in steps if s.question]
            question = "\n\n".join(questions) if questions else None
        return RunResult(
            run_id=run_id,
            request_id=session.request_id,
            query=source.details.get("query", source.task)
            if isinstance(source.details.get("query"), str)
            else source.task,
            task=source.task,
            source=source.kind,
            reason=source.reason,
            plan=source.plan,
            status=status,
            output=_join_outputs(steps),
            steps=steps,
            route_id=source.route.route_id if source.route is not None else None,
            question=question,
            banned_paths=session.ledger.banned_paths,
            runner=self.dispatcher.runner.name,
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
            details=source.details,
        )


@dataclass
class _Failed:
    machine: PathMachine
    result: DispatchResult | None
    error: dict[str, Any]
    request: DispatchRequest | None


class _Step:
    """Mutable bookkeeping of one step while it runs."""

    def __init__(self, planned: str | None) -> None:
        self.planned = planned
        self.tried: list[str] = []
        self.waiting: list[PathMachine] = []  # machines in "fallback"
        self.machines: list[PathMachine] = []
        self.dispatches: list[DispatchResult] = []
        self.skipped: list[SkippedPath] = []
        self.repairs: list[RepairOutcome] = []
        self.failures: list[_Failed] = []
        self.status = "running"
        self.path: str | None = None
        self.output = ""
        self.fallback_used = False
        self.question: str | None = None
        self.error: dict[str, Any] | None = None
        self.fatal_runner = False

    @property
    def last_failed(self) -> _Failed | None:
        return self.failures[-1] if self.failures else None

    def fail(
        self,
        machine: PathMachine,
        result: DispatchResult | None,
        error: dict[str, Any],
        *,
        fatal_runner: bool,
        request: DispatchRequest | None = None,
    ) -> None:
        self.machines.append(machine)
        if result is not None:
            self.dispatches.append(result)
        self.failures.append(_Failed(machine, result, error, request))
        reason = "runner unusable: " if fatal_runner else "path failed: "
        machine.advance(PathState.FALLBACK, reason + str(error.get("message", ""))[:300])
        self.waiting.append(machine)
        if fatal_runner:
            self.fatal_runner = True
            self.status = "failed"
            self.error = error
            self._close("exit", "the runner cannot run; no fallback path can succeed")

    def succeed(
        self,
        machine: PathMachine | None,
        result: DispatchResult,
        *,
        fallback_used: bool,
        via: str = "fallback",
    ) -> None:
        if machine is not None:
            self.machines.append(machine)
        self.dispatches.append(result)
        self.status = "success"
        self.path = result.path if via != "repair" else f"repair:{result.path}"
        self.output = result.output
        self.fallback_used = fallback_used or via == "repair" and bool(self.waiting)
        self._close("success", f"{via} path {result.path} succeeded")

    def ask_user(self, source: PlanSource) -> None:
        self.status = "needs_user_input"
        self.question = _question(source, self)
        self._close("exit", "asking the user for more information")

    def _close(self, to: str, reason: str) -> None:
        for m in self.waiting:
            if m.state == PathState.FALLBACK.value:
                m.advance(to, reason)
        self.waiting.clear()

    def finish(self, started: float) -> StepResult:
        transitions: list[Transition] = []
        for m in self.machines:
            transitions.extend(m.transitions)
        transitions.sort(key=lambda t: t.at)
        return StepResult(
            planned=self.planned,
            status=self.status,
            path=self.path,
            output=self.output,
            fallback_used=self.fallback_used,
            dispatches=tuple(self.dispatches),
            transitions=tuple(transitions),
            skipped=tuple(self.skipped),
            question=self.question,
            error=self.error,
            repairs=tuple(self.repairs),
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
        )


def _question(source: PlanSource, step: _Step) -> str:
    what = f"the '{step.planned}' skill" if step.planned else "the request"
    tried = []
    for f in step.failures:
        msg = str(f.error.get("message", "failed"))
        tried.append(f"- {f.machine.path}: {f.error.get('code', 'E_RUNNER')}: {msg[:200]}")
    for s in step.skipped:
        tried.append(f"- {s.path}: not tried ({s.reason})")
    lines = [
        f"I could not complete {what} with the skills available here.",
        "What I tried:",
        *tried,
        "Could you add what is missing (the tool, credentials or details named above), "
        "or tell me how you would like to proceed?",
        f"Task: {source.task[:500]}",
    ]
    return "\n".join(lines)


def _join_outputs(steps: Sequence[StepResult]) -> str:
    done = [s for s in steps if s.status == "success"]
    if len(steps) == 1 and done:
        return done[0].output
    parts = []
    for s in done:
        label = s.planned or "no-skill"
        parts.append(f"## {label}\n\n{s.output.rstrip()}\n")
    return "\n".join(parts)
