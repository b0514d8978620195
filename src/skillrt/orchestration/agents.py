"""How a phase agent is started: through the dispatcher (seed 000), or directly.

Both split a phase agent's start in two, because seed 002 invariant 7 sits between the
halves: :meth:`PhaseAgents.prepare` assembles the exact prompt (the engine then commits
``pending -> running`` and prints the directive), and :meth:`PhaseAgents.run` runs it.

* :class:`DispatchedAgents` (what the runtime uses): each phase is a *delegated*
  dispatch of the composite skill with the phase's role — runtime header, role guide,
  the composite skill's SKILL.md, and the phase task — run under the dispatcher's
  path machine (one retry of a retryable runner failure) and recorded as an
  ``executions`` row tagged with the run id. ``requires_now`` edges of the composite
  skill are not followed: its phases are the plan.
* :class:`DirectAgents`: runtime header + task, straight to the runner (for engines
  built without a registry).

The role: the phase's ``role`` when set (it must be a known role guide), else the
agent's name when a role guide of that name exists, else ``dispatch.default_role``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

from skillrt.dispatch.model import DispatchRequest, ReadyDispatch, ResultHook, SkillDispatcher
from skillrt.errors import RunnerError, SkillNotFound
from skillrt.execution.base import Runner, RunnerResult
from skillrt.orchestration.prompt import runtime_header
from skillrt.orchestration.spec import PhaseSpec

if TYPE_CHECKING:
    from collections.abc import Callable

    from skillrt.config import RuntimeConfig
    from skillrt.dispatch.roles import RoleGuides
    from skillrt.skills.registry import SkillRegistry

    #: ``(runner, timeout_s, run_id) -> dispatcher`` for a run's phases (the runtime
    #: builds it over its dispatch service).
    DispatcherFactory = Callable[[Runner, float | None, str], SkillDispatcher]

__all__ = [
    "DirectAgents",
    "DispatchedAgents",
    "PhaseAgents",
    "PhaseCall",
    "PhaseDispatch",
    "PreparedPhase",
]


@dataclass(frozen=True)
class PhaseCall:
    """Who runs a phase: the run, the composite skill, the phase and its task text."""

    run_id: str
    skill: str
    phase: PhaseSpec
    task: str
    timeout_s: float | None
    #: The composite skill's folder (its SKILL.md when the registry does not have it).
    skill_dir: str | None = None


@dataclass(frozen=True)
class PhaseDispatch:
    """A phase prepared as a delegated dispatch, and the dispatcher that runs it."""

    dispatcher: SkillDispatcher
    ready: ReadyDispatch


@dataclass(frozen=True)
class PreparedPhase:
    """The assembled prompt of one phase agent and what runs it: ``runner`` (None when
    prepared only to show the prompt, manual mode) and, for a dispatched phase, its
    ready dispatch."""

    call: PhaseCall
    prompt: str
    role: str
    runner: Runner | None = None
    dispatch: PhaseDispatch | None = None


class PhaseAgents(ABC):
    """Prepares and runs phase agents."""

    def role_for(self, phase: PhaseSpec) -> str:
        """The role the phase's agent runs as."""
        return phase.dispatch_role

    def validate(self, phases: tuple[PhaseSpec, ...]) -> None:  # noqa: B027 - optional hook
        """Raise before a run starts if a phase could never be dispatched."""

    @abstractmethod
    def prepare(self, call: PhaseCall, runner: Runner | None) -> PreparedPhase:
        """Assemble the prompt for ``runner`` (None: only to show it, manual mode)."""

    @abstractmethod
    def run(self, prepared: PreparedPhase, *, on_result: ResultHook | None = None) -> RunnerResult:
        """Run a prepared agent; raise :class:`RunnerError` on failure. ``on_result``
        hears of the runner's result before anything is recorded of it (a store that
        then fails raises ``StoreError``, and the caller has the reply already)."""


class DirectAgents(PhaseAgents):
    """Runtime header + phase task, run by the runner as is."""

    def prepare(self, call: PhaseCall, runner: Runner | None) -> PreparedPhase:
        role = self.role_for(call.phase)
        header = runtime_header(call.skill, role, call.run_id, call.phase.id)
        prompt = f"<runtime-header>\n```yaml\n{header}```\n</runtime-header>\n\n{call.task}"
        return PreparedPhase(call=call, prompt=prompt, role=role, runner=runner)

    def run(self, prepared: PreparedPhase, *, on_result: ResultHook | None = None) -> RunnerResult:
        if prepared.runner is None:
            raise RunnerError("this phase was prepared without a runner", retryable=False)
        result = prepared.runner.run(prepared.prompt, timeout_s=prepared.call.timeout_s)
        if on_result is not None:
            on_result(result)
        return result


class DispatchedAgents(PhaseAgents):
    """Each phase agent is a delegated dispatch of the composite skill.

    Args:
        registry: The skills (the composite skill is dispatched from it when it is there).
        config: The runtime configuration (``dispatch.default_role``).
        roles: The role guides.
        dispatcher: Builds the dispatcher of one run's phases: ``(runner, timeout_s,
            run_id)``; it keeps no prompts and follows no edges' outputs into context.
    """

    def __init__(
        self,
        registry: SkillRegistry,
        config: RuntimeConfig,
        *,
        roles: RoleGuides,
        dispatcher: DispatcherFactory,
    ) -> None:
        self.registry = registry
        self.config = config
        self.roles = roles
        self._make = dispatcher
        self._dispatchers: dict[tuple[int, float | None, str], SkillDispatcher] = {}

    def _dispatcher(self, runner: Runner, timeout_s: float | None, run_id: str) -> SkillDispatcher:
        key = (id(runner), timeout_s, run_id)
        found = self._dispatchers.get(key)
        if found is None:
            found = self._dispatchers[key] = self._make(runner, timeout_s, run_id)
        return found

    def role_for(self, phase: PhaseSpec) -> str:
        """The phase's role, else its agent's name if that is a role, else the default."""
        if phase.role:
            return phase.role
        if phase.agent in self.roles.names():
            return phase.agent
        return self.config.dispatch.default_role

    def validate(self, phases: tuple[PhaseSpec, ...]) -> None:
        """Every explicit ``role`` must have a role guide (:class:`UnknownRole`)."""
        for phase in phases:
            if phase.role:
                self.roles.get(phase.role)

    def _target(self, skill: str) -> str | None:
        try:
            return self.registry.get(skill).qualified_name
        except SkillNotFound:
            return None  # started from a folder outside the registry: role guide + task

    def prepare(self, call: PhaseCall, runner: Runner | None) -> PreparedPhase:
        from skillrt.execution.runners import DryRunRunner

        role = self.role_for(call.phase)
        target = self._target(call.skill)
        context = None
        if target is None and call.phase.instructions is None and call.skill_dir:
            # A phase without instructions runs on the skill's body: a composite started
            # from a folder outside the registry still gets it, as context.
            context = self._folder_body(call.skill, call.skill_dir)
        request = DispatchRequest(
            skill=target,
            prompt=call.task,
            role=role,
            execution_mode="delegated",
            depth=0,
            request_id=f"{call.run_id}-{call.phase.id}",
            context=context,
            follow_edges=False,
        )
        # Manual mode only shows the prompt: a dry-run runner stands in.
        dispatcher = self._dispatcher(runner or DryRunRunner(), call.timeout_s, call.run_id)
        ready = dispatcher.ready(request)
        dispatch = PhaseDispatch(dispatcher, ready) if runner is not None else None
        return PreparedPhase(
            call=call, prompt=ready.prompt, role=role, runner=runner, dispatch=dispatch
        )

    def _folder_body(self, name: str, skill_dir: str) -> str | None:
        from pathlib import Path

        from skillrt.loading import injection_block, load_skill_body
        from skillrt.skills.model import SkillRef
        from skillrt.skills.reader import find_skill_md

        folder = Path(skill_dir)
        skill_md = find_skill_md(folder)
        if skill_md is None:
            return None
        ref = SkillRef(name, name, "folder", folder, skill_md)
        return injection_block(ref, load_skill_body(ref, self.config.limits))

    def run(self, prepared: PreparedPhase, *, on_result: ResultHook | None = None) -> RunnerResult:
        """Run the phase's dispatch (the dispatcher's path machine: one retry of a
        retryable runner failure, no fallback); raise :class:`RunnerError` when it failed.
        ``on_result`` hears of the runner's result before its execution is recorded."""
        if prepared.dispatch is None:
            raise RunnerError("this phase was prepared without a runner", retryable=False)
        dispatch = prepared.dispatch
        result = dispatch.dispatcher.run_ready(dispatch.ready, on_result=on_result)
        if result.ok:
            return RunnerResult(
                output=result.output,
                exit_code=result.exit_code or 0,
                latency_ms=result.latency_ms,
                tokens_in=result.tokens_in,
                tokens_out=result.tokens_out,
                truncated=result.truncated,
                meta={"execution_id": result.execution_id, "attempts": result.attempts},
            )
        error = dict(result.error or {})
        raise RunnerError(
            str(error.get("message") or "the phase agent failed"),
            retryable=bool(error.get("retryable")),
            attempts=result.attempts,
            execution_id=result.execution_id,
            cause=error,
        )
