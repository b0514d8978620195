"""The six-step orchestration protocol (seed 002), driven from durable state.

:class:`WorkflowEngine` runs a composite skill step by step. Before each step it reads
the run's stored state; each step ends with one committed transition; only then does
the observer hear of it (the directive is printed strictly after the commit). A run
stopped at any point — killed, crashed, blocked by a failed runner or memory file —
continues from its stored state with :meth:`WorkflowEngine.resume`; a phase whose
memory file was verified never runs again.

Step 5 runs each phase's agent through a :class:`~skillrt.execution.base.Runner`
(``runner`` mode) or prints its directive for an outside agent and waits for
``advance`` (``manual`` mode). Either way the phase advances only when its memory file
passes verification; there is no way around it.

How a phase runs, is retried and is verified, and how a resume settles an agent a
killed worker left running: :mod:`skillrt.orchestration.phases`.
"""

from __future__ import annotations

import functools
import hashlib
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from skillrt import interrupts
from skillrt.errors import (
    InternalError,
    MemoryVerificationFailed,
    SkillrtError,
    StoreConflict,
    StoreError,
    UsageError,
    WorkflowBusy,
    WorkflowError,
    WorkflowIllegalTransition,
    WorkflowNotFound,
    WorkflowRunnerRequired,
)
from skillrt.execution.base import Runner
from skillrt.fileopen import read_regular
from skillrt.orchestration.agents import DirectAgents, PhaseAgents
from skillrt.orchestration.documents import (
    PhaseOutcome,
    render_summary,
    render_summary_document,
    render_workflow_context,
)
from skillrt.orchestration.domains import DomainClassifier
from skillrt.orchestration.events import (
    COMPLETE_MARKER,
    Checkpoint,
    EventKind,
    Observer,
    WorkflowEvent,
)
from skillrt.orchestration.fsm import STEPS, PhaseState, RunState, check_phase, step
from skillrt.orchestration.learnings import (
    FileLearnings,
    Learning,
    LearningsBook,
    extract_learnings,
)
from skillrt.orchestration.memory import MemoryFolder, context_file_name, summary_file_name
from skillrt.orchestration.phases import PhaseSteps, RunnerSlot, file_io
from skillrt.orchestration.settings import EngineSettings, RunnerFactory
from skillrt.orchestration.spec import WorkflowSpec, load_workflow_spec
from skillrt.orchestration.state import (
    LeaseKeeper,
    RunRecord,
    WorkflowStore,
    current_owner,
)

__all__ = ["EngineSettings", "Mode", "RunnerFactory", "WorkflowEngine", "new_run_id"]

Mode = Literal["runner", "manual"]

#: Errors that say nothing about the run itself: the run is left as it was.
_NOT_BLOCKING = (WorkflowBusy, WorkflowIllegalTransition, WorkflowNotFound, WorkflowRunnerRequired)
#: The step each resting state leads to (steps 1-4 and 6; step 5 is handled apart).
_NEXT_STEP = {s.requires: s.number for s in STEPS}


def new_run_id() -> str:
    return f"wf-{uuid.uuid4().hex[:12]}"


class WorkflowEngine(PhaseSteps):
    """Drives workflow runs stored in a :class:`WorkflowStore`.

    Args:
        store: Durable run state.
        settings: Folders and limits.
        classifier: Builds the domain classifier (called once, only if step 2 runs).
        runner_factory: Rebuilds a runner from a run's saved runner spec on resume.
        observer: Hears every event, after its transition committed.
        checkpoint: Called at named points (``step:N``, ``phase:ID``,
            ``phase:ID:running``, ``phase:ID:written``, ``complete``); the CLI's test hook.
        agents: How phase agents are prepared and run (the dispatcher, by default in the
            runtime; :class:`DirectAgents` here).
        worker_id: This worker's name as a run's owner (unique per process); default
            ``host:pid:start``, which also lets a worker on the same host see at once
            that an owner died. Any other name is only taken over when its lease ends.
    """

    def __init__(
        self,
        store: WorkflowStore,
        settings: EngineSettings,
        *,
        classifier: Callable[[], DomainClassifier],
        runner_factory: RunnerFactory | None = None,
        observer: Observer | None = None,
        checkpoint: Checkpoint | None = None,
        agents: PhaseAgents | None = None,
        worker_id: str | None = None,
    ) -> None:
        self.store = store
        self.worker_id = worker_id
        #: The owner this engine drives its run as (set when it claims one).
        self._owner: str | None = None
        self.agents = agents or DirectAgents()
        self.settings = settings
        self._classifier_factory = classifier
        self._classifier: DomainClassifier | None = None
        self.runner_factory = runner_factory
        self.observer = observer
        self.checkpoint = checkpoint

    # -- public API --------------------------------------------------------------------
    def start(
        self,
        *,
        skill: str,
        skill_dir: Path,
        query: str,
        mode: Mode = "runner",
        runner: Runner | None = None,
        runner_spec: Mapping[str, Any] | None = None,
        domain: str | None = None,
        memory_dir: Path | None = None,
        learnings_dir: Path | None = None,
    ) -> RunRecord:
        """Create a run and drive it as far as it goes (to completion in runner mode)."""
        if not query.strip():
            raise UsageError("the workflow query is empty", skill=skill)
        if mode not in ("runner", "manual"):
            raise UsageError(f"unknown workflow mode {mode!r}", mode=mode)
        if mode == "runner" and runner is None and runner_spec is None:
            raise WorkflowRunnerRequired(
                "a workflow in runner mode needs a runner (--runner-cmd CMD, --runner openai "
                "--base-url URL --model M, or execution.runner in skillrt.yaml) or --manual",
                skill=skill,
            )
        # Fail fast, before a run exists: a bad config or an unknown role.
        self.agents.validate(load_workflow_spec(skill_dir).phases)
        run_id = new_run_id()
        owner = self._claimant()
        options: dict[str, Any] = {}
        if domain is not None:
            options["domain"] = domain
        self.store.create_run(
            run_id=run_id,
            skill=skill,
            skill_dir=str(Path(skill_dir).absolute()),
            query=query,
            mode=mode,
            runner=runner_spec if runner_spec is not None else _describe(runner),
            memory_dir=str((memory_dir or self.settings.memory_dir).absolute()),
            learnings_dir=str((learnings_dir or self.settings.learnings_dir).absolute()),
            options=options,
            owner=owner,
        )
        first = step(1)
        self._emit(
            run_id,
            "created",
            RunState.CREATED,
            1,
            name=first.name,
            directive=f"Step 1 {first.name}: {first.directive}",
        )
        return self._drive(run_id, RunnerSlot(runner, runner_spec, self.runner_factory), owner)

    def resume(
        self,
        run_id: str,
        *,
        runner: Runner | None = None,
        mode: Mode | None = None,
        runner_spec: Mapping[str, Any] | None = None,
    ) -> RunRecord:
        """Continue a stopped run from its stored state; a completed run is returned as is.

        ``mode`` / ``runner_spec`` switch the rest of the run (saved for later resumes);
        without them the run keeps its own, and a runner is rebuilt from its saved spec.
        """
        rec = self.store.load(run_id)
        if rec.state is RunState.COMPLETED:
            return rec
        if runner is not None and runner_spec is None:
            runner_spec = _describe(runner)
        new_mode, spec = rec.mode, rec.runner
        if mode is not None or runner_spec is not None:
            new_mode = mode or ("runner" if runner_spec is not None else rec.mode)
            spec = runner_spec if new_mode == "runner" else None
        factory = self.runner_factory
        if runner is None and new_mode == "runner" and spec and factory and self._needs_agent(rec):
            # Rebuilt before anything is written: a runner that cannot be had (its key
            # variable unset: E_CONFIG) leaves the run exactly as it was, with no event.
            runner = factory(spec)
        owner = self._claimant()
        self.store.claim(run_id, owner)
        try:
            if new_mode != rec.mode or spec != rec.runner:
                self.store.set_mode(run_id, new_mode, spec, owner=owner)
                rec = self.store.load(run_id)
            slot = RunnerSlot(runner, rec.runner, self.runner_factory)
            return self._drive(run_id, slot, owner)
        finally:
            self._release(run_id, owner)

    def _needs_agent(self, rec: RunRecord) -> bool:
        """Whether driving ``rec`` on runs a phase agent: a phase is left whose memory
        file does not verify as it stands (or the phases are not read yet)."""
        if not rec.phases:
            return True
        folder = self._folder(rec)
        for prec in rec.phases:
            if prec.state is PhaseState.VERIFIED:
                continue
            try:
                folder.verify(prec.memory_file, phase_id=prec.phase_id)
            except WorkflowError:
                return True
        return False

    def advance(self, run_id: str, phase_id: str) -> RunRecord:
        """Verify ``phase_id``'s memory file and move the FSM on (seed 002 advance_phase).

        Blocks with :class:`MemoryVerificationFailed` when the file is missing, empty or
        not completed; nothing changes then. A live earlier agent of the phase (a killed
        worker's) is settled first, as :meth:`resume` does. In manual mode the next
        phase's directive (or the completion) follows; in runner mode ``resume`` runs the
        next phase.
        """
        owner = self._claimant()
        self.store.claim(run_id, owner)
        self._owner = owner
        try:
            rec = self.store.load(run_id)
            if rec.state is RunState.COMPLETED:
                raise WorkflowIllegalTransition(
                    f"run {run_id} is completed; there is nothing to advance", run_id=run_id
                )
            if rec.active_state is not RunState.TRIGGERING_AGENTS:
                raise WorkflowIllegalTransition(
                    f"run {run_id} is at '{rec.active_state}'; advance verifies the phases of "
                    "step 5 (TRIGGER_AGENTS), which has not started",
                    run_id=run_id,
                    state=rec.active_state,
                )
            try:
                prec = rec.phase(phase_id)
            except KeyError:
                raise WorkflowIllegalTransition(
                    f"run {run_id} has no phase {phase_id!r}; phases: "
                    + ", ".join(p.phase_id for p in rec.phases),
                    run_id=run_id,
                    phase_id=phase_id,
                ) from None
            check_phase(prec.state, PhaseState.VERIFIED, run_id=run_id, phase_id=phase_id)
            # An agent a killed worker left running may still write the file: it is
            # waited for or ended first (or advance refuses), as resume does.
            self._settle_agent(rec, prec)
            spec = self._spec(rec)
            folder = self._folder(rec)
            try:
                verified = folder.verify(prec.memory_file, phase_id=phase_id)
            except WorkflowError as exc:
                exc.fill(run_id=run_id)
                raise
            if rec.state is RunState.BLOCKED:
                self.store.unblock(run_id, owner=owner)
            self._mark_verified(rec, spec, prec, verified.sha256, verified.bytes, manual=True)
            if rec.mode == "manual":
                return self._drive(run_id, RunnerSlot(None, None, None), owner)
            return self.store.load(run_id)
        finally:
            self._release(run_id, owner)

    def _claimant(self) -> str:
        return self.worker_id or current_owner()

    def _release(self, run_id: str, owner: str) -> None:
        """Give the run up; when the store cannot be reached the lease runs out instead."""
        try:
            self.store.release(run_id, owner)
        except StoreError:
            pass

    # -- the drive loop ----------------------------------------------------------------
    def _drive(self, run_id: str, runner: RunnerSlot, owner: str) -> RunRecord:
        try:
            self.store.claim(run_id, owner)
            self._owner = owner
            with LeaseKeeper(self.store, run_id, owner):
                return self._drive_loop(run_id, runner)
        except _NOT_BLOCKING:
            raise
        except StoreError:
            raise
        except SkillrtError as exc:
            exc.fill(run_id=run_id)
            self._block(run_id, exc.to_dict())
            raise
        except Exception as exc:
            self._block(run_id, InternalError(f"{type(exc).__name__}: {exc}").to_dict())
            raise
        finally:
            self._release(run_id, owner)

    def _drive_loop(self, run_id: str, runner: RunnerSlot) -> RunRecord:
        owner = self._owner
        rec = self.store.load(run_id)
        if rec.state is RunState.BLOCKED:
            self.store.unblock(run_id, owner=owner)
            rec = self.store.load(run_id)
        while rec.state is not RunState.COMPLETED:
            if rec.state is RunState.TRIGGERING_AGENTS:
                if not self._run_phases(rec, runner):
                    return self.store.load(run_id)  # manual: awaiting an outside agent
                self._complete_agents(self.store.load(run_id))
            elif rec.state is RunState.MEMORY_CREATED:
                self._point("step:5", run_id)
                seq = self.store.begin_agents(run_id, owner=owner)
                self._emit_agents_started(rec, seq)
            else:
                number = _NEXT_STEP[rec.state]
                self._point(f"step:{number}", run_id)
                self._run_step(number, rec)
            rec = self.store.load(run_id)
        return rec

    def _block(self, run_id: str, error: Mapping[str, Any]) -> None:
        try:
            seq = self.store.block(run_id, error, owner=self._owner)
        except SkillrtError:
            return  # the run cannot be blocked (gone, completed); the error still surfaces
        phase = error.get("phase_id")
        if error.get("code") == MemoryVerificationFailed.code and phase:
            how = (
                f"fix or write the memory file, then `skillrt workflow advance {run_id} {phase}`"
                f" — or `skillrt workflow resume {run_id}` to run the phase again"
            )
        else:
            how = f"fix the cause, then `skillrt workflow resume {run_id}`"
        self._emit(run_id, "blocked", RunState.BLOCKED, seq, error=error, directive=how)

    # -- steps 1-4 and 6 ---------------------------------------------------------------
    def _run_step(self, number: int, rec: RunRecord) -> None:
        if number == 1:
            self._step_task_id(rec)
        elif number == 2:
            self._step_domain(rec)
        elif number == 3:
            self._step_read_skill(rec)
        elif number == 4:
            self._step_create_memory(rec)
        elif number == 6:
            self._step_complete(rec)
        else:  # pragma: no cover - the FSM table has no other resting state
            raise WorkflowIllegalTransition(
                f"no step runs from state {rec.state}", run_id=rec.run_id
            )

    def _step_task_id(self, rec: RunRecord) -> None:
        folder = self._folder(rec)
        for _ in range(8):
            task_id = uuid.uuid4().hex[:12]
            if folder.root.exists() and any(
                p.name.startswith(task_id) for p in folder.root.iterdir()
            ):
                continue  # a stray file already claims this id
            try:
                seq = self.store.complete_step(
                    rec.run_id, 1, {"task_id": task_id}, task_id=task_id, owner=self._owner
                )
            except StoreConflict:
                continue  # another run holds this task id
            self._emit_step(rec.run_id, 1, {"task_id": task_id}, seq)
            return
        raise WorkflowError("could not find an unused task id", run_id=rec.run_id)

    def _step_domain(self, rec: RunRecord) -> None:
        classifier = self._get_classifier()
        explicit = rec.options.get("domain")
        result = classifier.explicit(explicit) if explicit else classifier.classify(rec.query)
        output = result.to_output()
        seq = self.store.complete_step(
            rec.run_id, 2, output, domain=result.domain, owner=self._owner
        )
        self._emit_step(rec.run_id, 2, output, seq)

    def _step_read_skill(self, rec: RunRecord) -> None:
        assert rec.task_id is not None
        spec = load_workflow_spec(Path(rec.skill_dir))
        task_id = rec.task_id
        output = {"skill_config": spec.to_dict()}
        phases = [(p.id, p.agent, p.memory_file_name(task_id)) for p in spec.phases]
        seq = self.store.complete_step(rec.run_id, 3, output, phases=phases, owner=self._owner)
        self._emit_step(rec.run_id, 3, output, seq)

    def _step_create_memory(self, rec: RunRecord) -> None:
        assert rec.task_id is not None
        spec = self._spec(rec)
        folder = self._folder(rec)
        folder.ensure()
        task_id = rec.task_id
        text = render_workflow_context(
            task_id=task_id,
            query=rec.query,
            skill=rec.skill,
            domain=rec.steps[2],
            spec=spec,
            memory_files={p.id: p.memory_file_name(task_id) for p in spec.phases},
        )
        path = file_io(lambda: folder.write(context_file_name(task_id), text), rec.run_id)
        output = {"memory_file": str(path), "memory_dir": str(folder.root)}
        seq = self.store.complete_step(rec.run_id, 4, output, owner=self._owner)
        self._emit_step(rec.run_id, 4, output, seq)

    def _complete_agents(self, rec: RunRecord) -> None:
        folder = self._folder(rec)
        completed = [
            {
                "phase_id": p.phase_id,
                "agent": p.agent,
                "memory_file": str(folder.root / p.memory_file),
                "sha256": p.memory_sha256,
            }
            for p in rec.phases
        ]
        output = {"phases_completed": completed}
        seq = self.store.complete_step(rec.run_id, 5, output, owner=self._owner)
        self._emit_step(rec.run_id, 5, output, seq)

    def _step_complete(self, rec: RunRecord) -> None:
        assert rec.task_id is not None and rec.domain is not None
        folder = self._folder(rec)
        task_id = rec.task_id
        outcomes: list[PhaseOutcome] = []
        lessons: list[Learning] = []
        changed: list[str] = []
        for p in rec.phases:
            path = folder.path_for(p.memory_file)
            # Never a FIFO; a file grown past the limit since it was verified is cut, and its
            # changed hash below reports it.
            read = functools.partial(read_regular, path, limit=folder.max_file_bytes + 1)
            data: bytes = file_io(read, rec.run_id)
            text = data.decode("utf-8-sig", errors="replace")
            sha = hashlib.sha256(data).hexdigest()
            outcomes.append(PhaseOutcome(p.phase_id, p.agent, p.memory_file, text, sha))
            if p.memory_sha256 and sha != p.memory_sha256:
                changed.append(p.phase_id)  # edited after verification: report, not hide
            lessons += [Learning(t, task_id, p.phase_id) for t in extract_learnings(text)]
        confidence = str(rec.steps[2].get("confidence", ""))
        summary = render_summary(
            skill=rec.skill,
            task_id=task_id,
            domain=rec.domain,
            confidence=confidence,
            outcomes=outcomes,
        )
        document = render_summary_document(
            skill=rec.skill, task_id=task_id, query=rec.query, summary=summary, outcomes=outcomes
        )
        summary_path = file_io(
            lambda: folder.write(summary_file_name(task_id), document), rec.run_id
        )
        learnings_file = None
        if self.settings.merge_learnings and lessons:
            book = self._learnings(rec)
            merged = file_io(lambda: book.merge(rec.domain or "", lessons), rec.run_id)
            learnings_file = str(merged.path) if merged.path is not None else None
        output: dict[str, Any] = {
            "summary": summary,
            "summary_file": str(summary_path),
            "memory_files": [str(folder.root / p.memory_file) for p in rec.phases],
            "learnings": {
                "domain": rec.domain,
                "file": learnings_file,
                "in_store": self.settings.learnings is not None,
                "lessons": [f"{x.phase_id}: {x.text}" for x in lessons],
            },
        }
        if changed:
            output["changed_after_verification"] = changed
        self._point("step:6:commit", rec.run_id)
        seq = self.store.complete_step(rec.run_id, 6, output, owner=self._owner)
        self._point("complete", rec.run_id)
        self._emit(
            rec.run_id,
            "completed",
            RunState.COMPLETED,
            seq,
            step=6,
            name=step(6).name,
            output=output,
            directive=COMPLETE_MARKER,
        )

    # -- helpers -----------------------------------------------------------------------
    def _get_classifier(self) -> DomainClassifier:
        if self._classifier is None:
            self._classifier = self._classifier_factory()
        return self._classifier

    def _learnings(self, rec: RunRecord) -> LearningsBook:
        if self.settings.learnings is not None:
            return self.settings.learnings
        return FileLearnings(Path(rec.learnings_dir))

    def _spec(self, rec: RunRecord) -> WorkflowSpec:
        # The step-3 snapshot, never the file again: a resumed run runs what it started.
        return WorkflowSpec.from_dict(rec.steps[3]["skill_config"])

    def _folder(self, rec: RunRecord) -> MemoryFolder:
        return MemoryFolder(
            rec.memory_dir,
            max_file_bytes=self.settings.max_memory_file_bytes,
            max_context_file_chars=self.settings.max_context_file_chars,
        )

    def _point(self, name: str, run_id: str) -> None:
        # Every checkpoint is a safe place to stop (kill -9 at any of them resumes):
        # a SIGTERM whose KeyboardInterrupt was swallowed ends the run here.
        interrupts.check()
        if self.checkpoint is not None:
            self.checkpoint(name, run_id)

    def _emit_step(self, run_id: str, number: int, output: Mapping[str, Any], seq: int) -> None:
        spec = step(number)
        if number < 6:
            nxt = step(number + 1)
            directive = f"Step {nxt.number} {nxt.name}: {nxt.directive}"
        else:
            directive = COMPLETE_MARKER
        self._emit(
            run_id,
            "step",
            spec.produces,
            seq,
            step=number,
            name=spec.name,
            output=output,
            directive=directive,
        )

    def _emit_agents_started(self, rec: RunRecord, seq: int) -> None:
        first = rec.phases[0] if rec.phases else None
        directive = (
            f"Phase 1/{len(rec.phases)} {first.phase_id}: agent {first.agent}"
            if first
            else "no phases"
        )
        self._emit(
            rec.run_id,
            "agents_started",
            RunState.TRIGGERING_AGENTS,
            seq,
            step=5,
            name=step(5).name,
            directive=directive,
        )

    def _emit(
        self,
        run_id: str,
        kind: EventKind,
        state: RunState,
        seq: int,
        **fields: Any,
    ) -> None:
        # Only ever called after the transition's transaction committed (invariant 7).
        if self.observer is not None:
            self.observer(
                WorkflowEvent(run_id=run_id, kind=kind, state=state.value, seq=seq, **fields)
            )


def _describe(runner: Runner | None) -> dict[str, Any] | None:
    """How to build ``runner`` again on resume (:meth:`Runner.describe`)."""
    return runner.describe() if runner is not None else None
