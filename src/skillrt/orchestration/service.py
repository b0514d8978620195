"""Composite-skill runs over the collaborators the runtime gives it.

:class:`Workflows` is what ``SkillRuntime.workflow_*`` delegate to. The runtime hands it
the store, the current registry, the phase agents (dispatches of the composite skill)
and the domain classifier; it resolves a composite skill by name (or folder), the
memory and learnings folders, and turns a run's saved runner spec back into a runner on
resume. Each operation's options are declared once (:class:`StartOptions`,
:class:`ResumeOptions`) and passed through unchanged.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from skillrt.config import OrchestrationConfig, RuntimeConfig
from skillrt.errors import WorkflowConfigError, WorkflowRunnerRequired
from skillrt.execution.options import RunnerOptions
from skillrt.orchestration.agents import PhaseAgents
from skillrt.orchestration.domains import DomainClassifier
from skillrt.orchestration.events import Checkpoint, Observer
from skillrt.orchestration.learnings_store import StoreLearnings
from skillrt.orchestration.protocol import Mode, WorkflowEngine
from skillrt.orchestration.settings import EngineSettings, RunnerFactory
from skillrt.orchestration.spec import CONFIG_FILENAME
from skillrt.orchestration.state import WorkflowStore
from skillrt.orchestration.status import RunSummary, WorkflowStatus, run_status, summary

if TYPE_CHECKING:
    from skillrt.execution.base import Runner
    from skillrt.skills.registry import SkillRegistry
    from skillrt.store.base import Store

__all__ = ["ResumeOptions", "StartOptions", "Workflows", "describe_runner", "resolve_dirs"]

_DEFAULTS = OrchestrationConfig()


def resolve_dirs(config: RuntimeConfig) -> tuple[Path, Path]:
    """The memory and learnings folders: defaults live under ``state_dir``; other
    relative paths are relative to the project folder."""
    orch = config.orchestration

    def one(value: Path, default: Path, leaf: str) -> Path:
        if value == default:
            return (config.state_dir / leaf).absolute()
        return value if value.is_absolute() else (config.project_dir / value).absolute()

    return (
        one(orch.memory_dir, _DEFAULTS.memory_dir, "memory"),
        one(orch.learnings_dir, _DEFAULTS.learnings_dir, "learnings"),
    )


def describe_runner(runner: Runner | None) -> dict[str, Any] | None:
    """How to rebuild ``runner`` on resume (saved with the run), when that is possible."""
    return runner.describe() if runner is not None else None


class ResumeOptions(TypedDict, total=False):
    """How a run continues (``start`` takes these too)."""

    #: Runs each phase's agent (None: the run's saved runner, if it can be rebuilt).
    runner: Runner | None
    #: Runner options (the CLI's runner flags) over the run's saved runner on resume, over
    #: the ``execution`` config on start; ignored when ``runner`` is given.
    runner_options: RunnerOptions | None
    #: How ``runner`` is saved for a later resume (default: :func:`describe_runner`).
    runner_spec: Mapping[str, Any] | None
    #: Issue each phase to an outside agent; :meth:`Workflows.advance` verifies it.
    manual: bool
    observer: Observer | None
    checkpoint: Checkpoint | None
    runner_factory: RunnerFactory | None


class StartOptions(ResumeOptions, total=False):
    """How a run starts."""

    #: Skip step 2's classification with this domain.
    domain: str | None
    memory_dir: Path | None
    learnings_dir: Path | None


class Workflows:
    """Composite-skill runs over one runtime's config, store and registry.

    Args:
        config: The runtime configuration.
        store: The state store (runs, phases, transitions, shared learnings).
        registry: The current registry.
        agents: Builds the phase agents of one operation (default: runtime header + task
            straight to the runner).
        classifier: Builds the step-2 domain classifier when a run needs one.
        environ: The environment a saved command runner is rebuilt with.
    """

    def __init__(
        self,
        config: RuntimeConfig,
        store: Store,
        registry: Callable[[], SkillRegistry],
        *,
        agents: Callable[[], PhaseAgents] | None = None,
        classifier: Callable[[], DomainClassifier] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.store = WorkflowStore(
            store,
            synchronous=config.orchestration.synchronous,
            lease_s=config.orchestration.lease_s,
        )
        self._registry = registry
        self._agents = agents
        self._classifier = classifier
        self.environ = dict(environ or {})
        memory_dir, learnings_dir = resolve_dirs(config)
        orch = config.orchestration
        self.settings = EngineSettings(
            memory_dir=memory_dir,
            learnings_dir=learnings_dir,
            default_timeout_s=config.execution.timeout_s,
            max_memory_file_bytes=orch.max_memory_file_bytes,
            max_context_file_chars=orch.max_context_file_chars,
            max_learnings_chars=orch.max_learnings_chars,
            merge_learnings=orch.merge_learnings,
            learnings=StoreLearnings(store) if store.shared else None,
            orphan_wait_s=orch.orphan_wait_s,
            kill_grace_s=config.execution.kill_grace_s,
        )

    # -- building blocks ---------------------------------------------------------------
    def classifier(self) -> DomainClassifier:
        if self._classifier is None:
            raise WorkflowConfigError("no domain classifier was given; pass a domain")
        return self._classifier()

    def start_runner(self, options: RunnerOptions | None = None) -> Runner | None:
        """The runner a run starts with when none is given: ``options`` over the
        ``execution`` config; None when that names none to run phases with (the default,
        dry-run, which only ``options`` choosing it explicitly selects)."""
        from skillrt.execution.runners import build_runner

        chosen = options or RunnerOptions()
        execution = chosen.apply(self.config.execution)
        if execution.runner == "dry-run" and chosen.kind() != "dry-run":
            return None
        return build_runner(execution, environ=self.environ, cwd=self.config.project_dir)

    def resume_runner(
        self, saved: Mapping[str, Any] | None, options: RunnerOptions | None = None
    ) -> Runner | None:
        """The runner a run resumes with when none is given: ``options`` over its saved
        runner (rebuilt by the same builder, its key read again), or the kind
        ``options`` choose; None without options (the engine rebuilds the saved one
        when a phase needs it) or when options that choose no kind meet a runner that
        cannot be rebuilt."""
        from skillrt.execution.runners import build_runner, rebuild_runner

        if options is None or not options.given():
            return None
        execution, cwd = self.config.execution, self.config.project_dir
        if saved is not None:
            rebuilt = rebuild_runner(
                execution, saved, options=options, environ=self.environ, cwd=cwd
            )
            if rebuilt is not None:
                return rebuilt
        if options.kind() is None:
            return None
        return build_runner(execution, options, environ=self.environ, cwd=cwd)

    def build_runner(self, spec: Mapping[str, Any]) -> Runner:
        """The default :data:`RunnerFactory`: rebuild a saved runner spec (the same
        builder, with the spec's settings as options; its API key read again)."""
        from skillrt.execution.runners import rebuild_runner

        runner = rebuild_runner(
            self.config.execution, spec, environ=self.environ, cwd=self.config.project_dir
        )
        if runner is None:
            raise WorkflowRunnerRequired(
                f"the run's runner ({spec.get('name') or spec.get('kind')}) cannot be rebuilt; "
                "pass a runner",
                runner=dict(spec),
            )
        return runner

    def engine(
        self,
        *,
        observer: Observer | None = None,
        checkpoint: Checkpoint | None = None,
        runner_factory: RunnerFactory | None = None,
    ) -> WorkflowEngine:
        return WorkflowEngine(
            self.store,
            self.settings,
            classifier=self.classifier,
            runner_factory=runner_factory or self.build_runner,
            observer=observer,
            checkpoint=checkpoint,
            agents=self._agents() if self._agents is not None else None,
            worker_id=self.config.orchestration.worker_id,
        )

    def resolve_skill(self, skill: str) -> tuple[str, Path]:
        """``(name, folder)`` of a composite skill given by name or by folder path."""
        candidate = Path(skill)
        if ("/" in skill or skill.startswith(".")) and candidate.is_dir():
            folder = candidate.resolve()
            return folder.name, folder
        found = self._registry().get(skill)
        folder = found.path
        if not (folder / CONFIG_FILENAME).is_file():
            raise WorkflowConfigError(
                f"skill {found.qualified_name} is not a composite skill: no {CONFIG_FILENAME} "
                f"in {folder}",
                skill=found.qualified_name,
                path=str(folder),
            )
        return found.qualified_name, folder

    # -- operations --------------------------------------------------------------------
    def start(self, skill: str, query: str, **options: Unpack[StartOptions]) -> WorkflowStatus:
        """Run composite ``skill`` on ``query``: the six steps, each phase through the
        runner (or, with ``manual``, issued to an outside agent and verified by
        :meth:`advance`). Raises (with ``run_id``) when the run blocks."""
        name, folder = self.resolve_skill(skill)
        runner = options.get("runner")
        spec = options.get("runner_spec")
        if runner is None and spec is None and not options.get("manual", False):
            runner = self.start_runner(options.get("runner_options"))
        rec = self._engine(options).start(
            skill=name,
            skill_dir=folder,
            query=query,
            mode="manual" if options.get("manual", False) else "runner",
            runner=runner,
            runner_spec=spec if spec is not None else describe_runner(runner),
            domain=options.get("domain"),
            memory_dir=options.get("memory_dir"),
            learnings_dir=options.get("learnings_dir"),
        )
        return run_status(rec)

    def resume(self, run_id: str, **options: Unpack[ResumeOptions]) -> WorkflowStatus:
        """Continue a stopped run from its saved state (its saved runner when none given)."""
        runner = options.get("runner")
        chosen = options.get("runner_options")
        if runner is None and chosen is not None and chosen.given():
            runner = self.resume_runner(self.store.load(run_id).runner, chosen)
        spec = options.get("runner_spec")
        if spec is None and runner is not None and runner.dry_run:
            # A dry run shows the next prompt; it does not replace the run's own runner.
            spec = self.store.load(run_id).runner
        if spec is None:
            spec = describe_runner(runner)
        mode: Mode | None = (
            "manual" if options.get("manual", False) else ("runner" if spec or runner else None)
        )
        rec = self._engine(options).resume(run_id, runner=runner, mode=mode, runner_spec=spec)
        return run_status(rec)

    def _engine(self, options: ResumeOptions) -> WorkflowEngine:
        return self.engine(
            observer=options.get("observer"),
            checkpoint=options.get("checkpoint"),
            runner_factory=options.get("runner_factory"),
        )

    def advance(
        self,
        run_id: str,
        phase: str,
        *,
        observer: Observer | None = None,
        checkpoint: Checkpoint | None = None,
    ) -> WorkflowStatus:
        rec = self.engine(observer=observer, checkpoint=checkpoint).advance(run_id, phase)
        return run_status(rec)

    def status(self, run_id: str) -> WorkflowStatus:
        return run_status(self.store.load(run_id))

    def list(self, *, limit: int | None = None) -> builtins.list[RunSummary]:
        return [summary(r) for r in self.store.list_runs(limit=limit)]

    def transitions(self, run_id: str) -> builtins.list[dict[str, Any]]:
        self.store.load(run_id)  # WorkflowNotFound for an unknown id
        return self.store.transitions(run_id)
