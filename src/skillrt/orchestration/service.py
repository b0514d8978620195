"""Wires the engine to a runtime: config, store, registry, runners, embedding backend.

:class:`Workflows` is what ``SkillRuntime.workflow_*`` delegate to; it resolves a
composite skill by name (or folder), the memory and learnings folders, and how a
run's saved runner spec is turned back into a runner on resume.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.config import OrchestrationConfig, RuntimeConfig
from skillrt.errors import WorkflowConfigError, WorkflowRunnerRequired
from skillrt.orchestration.agents import DispatchedAgents
from skillrt.orchestration.domains import DomainClassifier
from skillrt.orchestration.events import Checkpoint, Observer
from skillrt.orchestration.learnings_store import StoreLearnings
from skillrt.orchestration.protocol import EngineSettings, Mode, RunnerFactory, WorkflowEngine
from skillrt.orchestration.spec import CONFIG_FILENAME
from skillrt.orchestration.state import WorkflowStore
from skillrt.orchestration.status import RunSummary, WorkflowStatus, run_status, summary

if TYPE_CHECKING:
    from skillrt.execution.base import Runner
    from skillrt.skills.registry import SkillRegistry
    from skillrt.store.base import Store

__all__ = ["Workflows", "describe_runner", "resolve_dirs"]

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
    if runner is None:
        return None
    from skillrt.execution.runners import CommandRunner, DryRunRunner

    if isinstance(runner, CommandRunner):
        return {"kind": "command", "cmd": runner.command}
    if isinstance(runner, DryRunRunner):
        return {"kind": "dry-run"}
    return {"kind": "python", "name": getattr(runner, "name", type(runner).__name__)}


class Workflows:
    """Composite-skill runs over one runtime's config, store and registry."""

    def __init__(
        self,
        config: RuntimeConfig,
        store: Store,
        registry: Callable[[], SkillRegistry],
        *,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.store = WorkflowStore(
            store,
            synchronous=config.orchestration.synchronous,
            lease_s=config.orchestration.lease_s,
        )
        self._registry = registry
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
        )

    # -- building blocks ---------------------------------------------------------------
    def classifier(self) -> DomainClassifier:
        from skillrt.routing.embeddings import get_backend
        from skillrt.routing.router import backend_options

        orch = self.config.orchestration
        name = orch.embedding_backend or self.config.routing.embedding_backend
        if name == "none":
            name = "hashing"
        return DomainClassifier(
            get_backend(name, **backend_options(name, self.config.routing)),
            orch.domains or None,
            temperature=orch.domain_temperature,
            certain=orch.domain_certain,
            probable=orch.domain_probable,
        )

    def build_runner(self, spec: Mapping[str, Any]) -> Runner:
        """The default :data:`RunnerFactory`: rebuild a saved runner spec."""
        from skillrt.execution.runners import build_runner

        kind = spec.get("kind")
        if kind == "command":
            return build_runner(
                self.config.execution,
                runner="command",
                runner_cmd=str(spec.get("cmd") or ""),
                environ=self.environ,
                cwd=self.config.project_dir,
            )
        if kind == "dry-run":
            return build_runner(self.config.execution, runner="dry-run")
        raise WorkflowRunnerRequired(
            f"the run's runner ({spec.get('name') or kind}) cannot be rebuilt; pass a runner",
            runner=dict(spec),
        )

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
            agents=DispatchedAgents(
                self._registry(), self.config, store=self.store.store, environ=self.environ
            ),
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
    def start(
        self,
        skill: str,
        query: str,
        *,
        runner: Runner | None = None,
        runner_spec: Mapping[str, Any] | None = None,
        manual: bool = False,
        domain: str | None = None,
        memory_dir: Path | None = None,
        learnings_dir: Path | None = None,
        observer: Observer | None = None,
        checkpoint: Checkpoint | None = None,
        runner_factory: RunnerFactory | None = None,
    ) -> WorkflowStatus:
        name, folder = self.resolve_skill(skill)
        mode: Mode = "manual" if manual else "runner"
        rec = self.engine(
            observer=observer, checkpoint=checkpoint, runner_factory=runner_factory
        ).start(
            skill=name,
            skill_dir=folder,
            query=query,
            mode=mode,
            runner=runner,
            runner_spec=runner_spec if runner_spec is not None else describe_runner(runner),
            domain=domain,
            memory_dir=memory_dir,
            learnings_dir=learnings_dir,
        )
        return run_status(rec)

    def resume(
        self,
        run_id: str,
        *,
        runner: Runner | None = None,
        runner_spec: Mapping[str, Any] | None = None,
        manual: bool = False,
        observer: Observer | None = None,
        checkpoint: Checkpoint | None = None,
        runner_factory: RunnerFactory | None = None,
    ) -> WorkflowStatus:
        spec = runner_spec if runner_spec is not None else describe_runner(runner)
        mode: Mode | None = "manual" if manual else ("runner" if spec or runner else None)
        rec = self.engine(
            observer=observer, checkpoint=checkpoint, runner_factory=runner_factory
        ).resume(run_id, runner=runner, mode=mode, runner_spec=spec)
        return run_status(rec)

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
