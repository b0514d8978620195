"""Step 5 of the protocol (seed 002 TRIGGER_AGENTS): each phase's agent run (or its
directive issued, in manual mode) and its memory file verified.

:class:`PhaseSteps` is the part of :class:`~skillrt.orchestration.protocol.WorkflowEngine`
that drives phases; the engine supplies the store, the settings and how events are
emitted (the abstract methods below).

A runner that returns text (``writes_files`` False: a model's answer) is asked for the
memory file's content as its reply, and the engine writes the reply to the file
(atomically) before verifying it; a file the agent wrote itself during the attempt wins
over its reply. A memory file that fails verification for a reason a new attempt can
fix (missing, empty, not completed, too large, unreadable) gets one more attempt with
the reason in its prompt; then the run blocks. ``Status: BLOCKED`` blocks at once.

While an agent runs, its process group is recorded with the phase; a resume never
starts a phase's agent beside a live earlier one (:meth:`PhaseSteps._settle_agent`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from skillrt.errors import (
    MemoryVerificationFailed,
    PhaseRunFailed,
    RunnerError,
    SkillrtError,
    WorkflowAgentRunning,
    WorkflowError,
    WorkflowRunnerRequired,
)
from skillrt.execution.base import Runner, RunnerResult
from skillrt.execution.processes import (
    AgentProcess,
    SpawnHook,
    end_group,
    group_alive,
    watch_spawns,
)
from skillrt.orchestration.agents import PhaseAgents, PhaseCall, PreparedPhase
from skillrt.orchestration.events import EventKind
from skillrt.orchestration.fsm import PhaseState, RunState
from skillrt.orchestration.learnings import LearningsBook
from skillrt.orchestration.memory import MemoryFolder, reply_content, summary_file_name
from skillrt.orchestration.prompt import Delivery, PhasePrompt, build_phase_prompt
from skillrt.orchestration.spec import PhaseSpec, WorkflowSpec
from skillrt.orchestration.state import PhaseRecord, RunRecord, WorkflowStore

if TYPE_CHECKING:
    from skillrt.orchestration.settings import EngineSettings, RunnerFactory

__all__ = ["PhaseSteps", "RunnerSlot", "file_io"]

log = logging.getLogger(__name__)

#: Verification failures another attempt of the phase can fix (it gets one, with the
#: reason in its prompt). ``blocked`` is the agent's own answer; the others are the
#: file system's.
_RETRY_REASONS = frozenset(
    {"missing", "empty", "empty_reply", "not_completed", "too_large", "unreadable"}
)


class RunnerSlot:
    """The runner for this drive: given, or built from the run's saved spec on first use."""

    def __init__(
        self, runner: Runner | None, spec: Mapping[str, Any] | None, factory: RunnerFactory | None
    ) -> None:
        self._runner = runner
        self._spec = spec
        self._factory = factory

    def get(self, run_id: str) -> Runner:
        if self._runner is None:
            if self._spec is None or self._factory is None:
                raise WorkflowRunnerRequired(
                    f"run {run_id} needs a runner to run its next phase: pass --runner-cmd, "
                    "--runner openai --base-url URL --model M (or --manual to drive the "
                    "phases yourself)",
                    run_id=run_id,
                )
            self._runner = self._factory(self._spec)
        return self._runner


class PhaseSteps(ABC):
    """Step 5 of :class:`~skillrt.orchestration.protocol.WorkflowEngine`."""

    store: WorkflowStore
    settings: EngineSettings
    agents: PhaseAgents
    #: The owner the engine drives its run as.
    _owner: str | None

    @abstractmethod
    def _point(self, name: str, run_id: str) -> None:
        """A named checkpoint (the CLI's test hook)."""

    @abstractmethod
    def _emit(self, run_id: str, kind: EventKind, state: RunState, seq: int, **fields: Any) -> None:
        """Tell the observer of an event whose transition committed."""

    @abstractmethod
    def _spec(self, rec: RunRecord) -> WorkflowSpec:
        """The run's step-3 snapshot of its workflow."""

    @abstractmethod
    def _folder(self, rec: RunRecord) -> MemoryFolder:
        """The run's memory folder."""

    @abstractmethod
    def _learnings(self, rec: RunRecord) -> LearningsBook:
        """Where the run's domain learnings are kept."""

    def _run_phases(self, rec: RunRecord, runner: RunnerSlot) -> bool:
        """Run or issue each unverified phase in order; False when awaiting an agent."""
        spec = self._spec(rec)
        folder = self._folder(rec)
        for prec in rec.phases:
            if prec.state is PhaseState.VERIFIED:
                continue
            phase = spec.phase(prec.phase_id)
            if prec.state in (PhaseState.RUNNING, PhaseState.FAILED):
                # Interrupted or failed earlier: an agent a killed worker left behind is
                # waited for or ended first; then the memory file may be complete already.
                self._settle_agent(rec, prec)
                try:
                    verified = folder.verify(prec.memory_file, phase_id=phase.id)
                except MemoryVerificationFailed:
                    pass
                else:
                    self._mark_verified(
                        rec, spec, prec, verified.sha256, verified.bytes, resumed=True
                    )
                    continue
            if rec.mode == "manual":
                self._issue_manual(rec, spec, phase, prec, folder)
                return False
            agent = runner.get(rec.run_id)
            if agent.dry_run:
                self._show_dry_run(rec, spec, phase, prec, folder, agent)
                return False
            self._run_phase(rec, spec, phase, prec, folder, agent)
        return True

    def _settle_agent(self, rec: RunRecord, prec: PhaseRecord) -> None:
        """Never run a phase beside a live earlier agent of it (one a killed worker left).

        Gone: its record is cleared. Alive on this host: an agent that writes files may
        still finish its memory file, so it gets up to ``orphan_wait_s``; then (at once
        for one that returns text, whose reply has no reader left) its process group is
        ended. Alive on another host, not ours to end, or not told apart from a process
        that took its group id over (no ``/proc`` to read the leader's start time):
        :class:`WorkflowAgentRunning` until its lease (the phase's timeout) runs out.
        Whenever the record is cleared, ``agent_settled`` says how (``ended``).
        """
        if not prec.agent_process:
            return
        agent = AgentProcess.from_dict(prec.agent_process)
        lease = prec.agent_process.get("lease_until")
        left = float(lease) - time.time() if isinstance(lease, (int, float)) else None

        def refuse(why: str) -> WorkflowAgentRunning:
            return WorkflowAgentRunning(
                f"phase {prec.phase_id} of run {rec.run_id}: its earlier agent (process group "
                f"{agent.pgid} on {agent.host}) is still running and {why}; no second agent "
                "starts beside it. Stop it, or resume after it ends"
                + (f" (its lease ends in {left:.0f} s)" if left and left > 0 else ""),
                run_id=rec.run_id,
                phase_id=prec.phase_id,
                host=agent.host,
                pgid=agent.pgid,
                lease_expires_in_s=round(left, 3) if left is not None else None,
            )

        ended = False
        earlier = f"the phase's earlier agent (process group {agent.pgid})"
        if not agent.local:
            if left is None or left > 0:
                raise refuse("runs on another host")
            # Its lease ran out: whatever it was doing, it may not write now.
            how = f"the lease of {earlier} on {agent.host} ran out"
        elif not group_alive(agent):
            how = f"{earlier} finished"
        else:
            wait = max(0.0, self.settings.orphan_wait_s if agent.writes_files else 0.0)
            if wait:
                log.warning(
                    "phase %s of run %s: its earlier agent (process group %d), left running "
                    "by a killed worker, still runs; waiting up to %g s for it to finish its "
                    "memory file",
                    prec.phase_id, rec.run_id, agent.pgid, wait,
                )  # fmt: skip
            deadline = time.monotonic() + wait
            while group_alive(agent) and time.monotonic() < deadline:
                time.sleep(0.05)
            if group_alive(agent):
                if agent.start is None:
                    raise refuse(
                        "cannot be told apart from a process that took its group id over "
                        "(no /proc to read its start time from), so it is not ended"
                    )
                if not end_group(agent.pgid, grace_s=self.settings.kill_grace_s):
                    raise refuse("cannot be ended from this process")
                ended = True
                how = f"ended {earlier} that a killed worker left running"
            else:
                how = f"{earlier} finished"
        self.store.record_agent(rec.run_id, prec.phase_id, None, owner=self._owner)
        self._emit(
            rec.run_id,
            "agent_settled",
            RunState.TRIGGERING_AGENTS,
            rec.seq,
            step=5,
            phase_id=prec.phase_id,
            agent=prec.agent,
            directive=how,
            extra={"pgid": agent.pgid, "ended": ended},
        )

    def _run_phase(
        self,
        rec: RunRecord,
        spec: WorkflowSpec,
        phase: PhaseSpec,
        prec: PhaseRecord,
        folder: MemoryFolder,
        runner: Runner,
    ) -> None:
        """Run the phase's agent; a verification failure another attempt can fix gets
        one more attempt, told why (as does a resumed phase whose last attempt failed so)."""
        failure = _verification_failure(prec.last_error)
        for last in (False, True):
            try:
                self._attempt_phase(rec, spec, phase, prec, folder, runner, failure)
                return
            except MemoryVerificationFailed as exc:
                if last or runner.dry_run or exc.reason not in _RETRY_REASONS:
                    raise
                failure = exc.message
            rec = self.store.load(rec.run_id)
            prec = rec.phase(phase.id)

    def _attempt_phase(
        self,
        rec: RunRecord,
        spec: WorkflowSpec,
        phase: PhaseSpec,
        prec: PhaseRecord,
        folder: MemoryFolder,
        runner: Runner,
        failure: str | None,
    ) -> None:
        run_id = rec.run_id
        self._point(f"phase:{phase.id}", run_id)
        prepared = self._prepare(rec, spec, phase, prec.index, folder, runner, failure=failure)
        seq = self._begin(run_id, phase, prepared.prompt)
        path = folder.path_for(prec.memory_file)
        self._announce(
            rec, spec, phase, prec, prepared, seq, path, "phase_started",
            f"Agent '{phase.agent}' (role {prepared.role}) runs phase "
            f"{prec.index + 1}/{len(spec.phases)} '{phase.id}'; "
            + (f"its reply is written to {path}" if not runner.writes_files
               else f"it must write {path}"),
            attempt=prec.attempts + 1,
        )  # fmt: skip
        self._point(f"phase:{phase.id}:running", run_id)
        ran: dict[str, Any] = runner.describe()
        before = _stamp(path)
        timeout = prepared.call.timeout_s or self.settings.default_timeout_s
        # The memory file is put in place as soon as the runner returns, before its
        # execution is recorded: a store failing then (E_STORE_UNAVAILABLE) loses no
        # reply, and resume verifies the file instead of running the agent again.
        delivered: list[str | Exception] = []

        def deliver(result: RunnerResult) -> None:
            try:
                delivered.append(
                    self._deliver(run_id, folder, prec.memory_file, before, result, runner)
                )
            except Exception as exc:  # raised below, once the runner call has ended
                delivered.append(exc)

        started: list[AgentProcess] = []
        try:
            with watch_spawns(self._agent_recorder(run_id, phase.id, timeout, started)):
                result = self.agents.run(prepared, on_result=deliver)
        except RunnerError as exc:
            err = PhaseRunFailed(
                f"phase {phase.id}: the agent's runner failed: {exc.message}",
                run_id=run_id,
                phase_id=phase.id,
                retryable=exc.retryable,
                runner_error=exc.to_dict(),
            )
            self._mark_failed(rec, phase, err, runner={**ran, "error": exc.code})
            raise err from exc
        except BaseException:  # interrupted (SIGTERM, Ctrl-C), or the store failed
            self._forget_ended(run_id, phase.id, started)
            raise
        if not delivered:  # an agents implementation that does not call on_result
            deliver(result)
        source = delivered[-1]
        if isinstance(source, Exception):
            raise source
        ran.update(_ran(result, source))
        self._point(f"phase:{phase.id}:written", run_id)
        try:
            verified = folder.verify(prec.memory_file, phase_id=phase.id)
        except MemoryVerificationFailed as exc:
            failed = exc
            if source == "none" and exc.reason == "missing" and not runner.writes_files:
                failed = _empty_reply(phase.id, path, runner, result)
            failed.fill(run_id=run_id)
            self._mark_failed(rec, phase, failed, runner=ran)
            if failed is exc:
                raise
            raise failed from None
        self._mark_verified(rec, spec, prec, verified.sha256, verified.bytes, runner=ran)

    def _agent_recorder(
        self, run_id: str, phase_id: str, timeout_s: float | None, started: list[AgentProcess]
    ) -> SpawnHook:
        """Records each agent process group the phase's runner starts, with its lease: the
        phase timeout (plus the kill grace) from now; and keeps it in ``started``."""

        def record(agent: AgentProcess) -> None:
            data = agent.to_dict()
            if timeout_s:
                data["lease_until"] = time.time() + timeout_s + self.settings.kill_grace_s
            self.store.record_agent(run_id, phase_id, data, owner=self._owner)
            started.append(agent)

        return record

    def _forget_ended(self, run_id: str, phase_id: str, started: list[AgentProcess]) -> None:
        """An attempt that stops without a transition (interrupted; the store failed)
        clears its agent's record when the agent is gone (the runner ended it, or it
        finished): nothing is left for a resume to settle. A live one stays recorded."""
        if not started or any(group_alive(agent) for agent in started):
            return
        try:
            self.store.record_agent(run_id, phase_id, None, owner=self._owner)
        except SkillrtError:
            pass  # the store cannot be written now: the next resume settles the record

    def _deliver(
        self,
        run_id: str,
        folder: MemoryFolder,
        name: str,
        before: tuple[int, int, int] | None,
        result: RunnerResult,
        runner: Runner,
    ) -> str:
        """Put the phase's memory file in place: ``agent`` when the agent wrote it during
        this attempt (it wins over its reply), ``reply`` when its reply was written (for
        a runner that returns text, or an agent that wrote no file), ``none`` when there
        was nothing to write (a blank reply, a dry run)."""
        path = folder.path_for(name)
        now = _stamp(path)
        if now is not None and now != before:
            return "agent"
        if runner.dry_run:
            return "none"
        text = reply_content(result.output)
        if not text:
            return "none"
        file_io(lambda: folder.write(name, text), run_id)
        return "reply"

    def _issue_manual(
        self,
        rec: RunRecord,
        spec: WorkflowSpec,
        phase: PhaseSpec,
        prec: PhaseRecord,
        folder: MemoryFolder,
    ) -> None:
        prepared = self._prepare(rec, spec, phase, prec.index, folder, None)
        if prec.state is PhaseState.RUNNING:
            seq = rec.seq  # already issued and saved: repeat the directive
        else:
            self._point(f"phase:{phase.id}", rec.run_id)
            seq = self._begin(rec.run_id, phase, prepared.prompt)
        path = folder.root / prec.memory_file
        self._announce(
            rec, spec, phase, prec, prepared, seq, path, "phase_awaiting",
            f"Execute agent '{phase.agent}' (role {prepared.role}) with the prompt "
            f"below. It must write {path} ending with the line 'Status: COMPLETED'. Then "
            f"run: skillrt workflow advance {rec.run_id} {phase.id}",
        )  # fmt: skip

    def _show_dry_run(
        self,
        rec: RunRecord,
        spec: WorkflowSpec,
        phase: PhaseSpec,
        prec: PhaseRecord,
        folder: MemoryFolder,
        runner: Runner,
    ) -> None:
        """A dry run: the phase's prompt is assembled and shown, no agent runs. The phase
        is issued (``running``, as in manual mode), so the run waits there: nothing
        failed and nothing is blocked."""
        prepared = self._prepare(rec, spec, phase, prec.index, folder, runner)
        if prec.state is PhaseState.RUNNING:
            seq = rec.seq  # issued earlier: show it again
        else:
            self._point(f"phase:{phase.id}", rec.run_id)
            seq = self._begin(rec.run_id, phase, prepared.prompt)
        path = folder.root / prec.memory_file
        self._announce(
            rec, spec, phase, prec, prepared, seq, path, "phase_awaiting",
            f"dry run: no agent ran. The prompt above is what agent '{phase.agent}' would "
            f"get; the run waits at phase {prec.index + 1}/{len(spec.phases)} "
            f"'{phase.id}'. Run it with `skillrt workflow resume {rec.run_id} --runner-cmd "
            f"CMD` (or --runner openai --base-url URL --model M), or write {path} yourself "
            f"and run `skillrt workflow advance {rec.run_id} {phase.id}`",
            dry_run=True,
        )  # fmt: skip

    def _begin(self, run_id: str, phase: PhaseSpec, prompt: str) -> int:
        """The phase's ``pending -> running`` transition (with its prompt's hash)."""
        return self.store.phase_transition(
            run_id, phase.id, PhaseState.RUNNING, prompt_sha256=_sha(prompt), owner=self._owner
        )

    def _announce(
        self,
        rec: RunRecord,
        spec: WorkflowSpec,
        phase: PhaseSpec,
        prec: PhaseRecord,
        prepared: PreparedPhase,
        seq: int,
        path: Path,
        event: EventKind,
        directive: str,
        **extra: Any,
    ) -> None:
        """The event that hands a phase to its agent (step 5), with its prompt."""
        self._emit(
            rec.run_id,
            event,
            RunState.TRIGGERING_AGENTS,
            seq,
            step=5,
            phase_id=phase.id,
            agent=phase.agent,
            memory_file=str(path),
            prompt=prepared.prompt,
            directive=directive,
            extra={"index": prec.index, "total": len(spec.phases), **extra},
        )

    def _mark_failed(
        self,
        rec: RunRecord,
        phase: PhaseSpec,
        err: SkillrtError,
        *,
        runner: Mapping[str, Any] | None = None,
    ) -> None:
        seq = self.store.phase_transition(
            rec.run_id,
            phase.id,
            PhaseState.FAILED,
            error=err.to_dict(),
            runner=runner,
            detail={"runner": dict(runner)} if runner else None,
            owner=self._owner,
        )
        self._emit(
            rec.run_id,
            "phase_failed",
            RunState.TRIGGERING_AGENTS,
            seq,
            step=5,
            phase_id=phase.id,
            agent=phase.agent,
            error=err.to_dict(),
            directive=err.message,
        )

    def _mark_verified(
        self,
        rec: RunRecord,
        spec: WorkflowSpec,
        prec: PhaseRecord,
        sha256: str,
        size: int,
        *,
        resumed: bool = False,
        manual: bool = False,
        runner: Mapping[str, Any] | None = None,
    ) -> None:
        detail: dict[str, Any] = {"bytes": size}
        if resumed:
            detail["verified_on_resume"] = True
        if manual:
            detail["advanced_manually"] = True
        if runner:
            detail["runner"] = dict(runner)
        seq = self.store.phase_transition(
            rec.run_id,
            prec.phase_id,
            PhaseState.VERIFIED,
            memory_sha256=sha256,
            detail=detail,
            runner=runner,
            owner=self._owner,
        )
        nxt = prec.index + 1
        if nxt < len(spec.phases):
            following = spec.phases[nxt]
            directive = (
                f"Phase {nxt + 1}/{len(spec.phases)} {following.id}: agent {following.agent}"
            )
        else:
            directive = "All phases verified; step 5 TRIGGER_AGENTS completes"
        self._emit(
            rec.run_id,
            "phase_verified",
            RunState.TRIGGERING_AGENTS,
            seq,
            step=5,
            phase_id=prec.phase_id,
            agent=prec.agent,
            memory_file=str(self._folder(rec).root / prec.memory_file),
            directive=directive,
            extra={"sha256": sha256, "bytes": size, **detail},
        )

    def _prepare(
        self,
        rec: RunRecord,
        spec: WorkflowSpec,
        phase: PhaseSpec,
        index: int,
        folder: MemoryFolder,
        runner: Runner | None,
        *,
        failure: str | None = None,
    ) -> PreparedPhase:
        assert rec.task_id is not None and rec.domain is not None
        task_id = rec.task_id
        # A phase sees its context patterns' matches among the files that exist before
        # it: never its own memory file, later phases' files or the step-6 summary.
        exclude = {p.memory_file_name(task_id) for p in spec.phases[index:]}
        exclude.add(summary_file_name(task_id))
        context = file_io(lambda: folder.match(phase.context, task_id, exclude=exclude), rec.run_id)
        learnings = self._learnings(rec).read(
            rec.domain, max_chars=self.settings.max_learnings_chars
        )
        task = build_phase_prompt(
            PhasePrompt(
                skill=spec.name,
                run_id=rec.run_id,
                task_id=task_id,
                phase=phase,
                index=index,
                total=len(spec.phases),
                domain=rec.domain,
                confidence=str(rec.steps[2].get("confidence", "")),
                learnings=learnings,
                context=tuple(context),
                memory_file=str(folder.root / phase.memory_file_name(task_id)),
                role=self.agents.role_for(phase),
                delivery=_delivery(runner),
                previous_failure=failure,
            )
        )
        call = PhaseCall(
            run_id=rec.run_id,
            skill=rec.skill,
            phase=phase,
            task=task,
            timeout_s=phase.timeout_s or self.settings.default_timeout_s,
            skill_dir=rec.skill_dir,
        )
        return self.agents.prepare(call, runner)


def _delivery(runner: Runner | None) -> Delivery:
    if runner is None:
        return "manual"
    return "file" if runner.writes_files else "reply"


def _verification_failure(error: Mapping[str, Any] | None) -> str | None:
    """The message of a phase's last error when it was a verification failure another
    attempt can fix (a resumed phase's prompt says why it runs again)."""
    if not error or error.get("code") != MemoryVerificationFailed.code:
        return None
    if error.get("reason") not in _RETRY_REASONS:
        return None
    return str(error.get("message") or "") or None


def _empty_reply(
    phase_id: str, path: Path, runner: Runner, result: RunnerResult
) -> MemoryVerificationFailed:
    """The agent wrote no memory file and its reply was blank: say that, not "missing"."""
    how = (
        f"its agent wrote no file at {path} and replied with nothing"
        if runner.writes_files
        else f"the model's reply was empty, so there was nothing to write to {path}"
    )
    exit_code = f" (exit {result.exit_code})" if result.exit_code else ""
    return MemoryVerificationFailed(
        f"phase {phase_id}: {how}{exit_code}",
        reason="empty_reply",
        phase_id=phase_id,
        memory_file=str(path),
    )


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What tells a file rewritten from the one that was there: inode, size, mtime."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _ran(result: RunnerResult, source: str) -> dict[str, Any]:
    """A phase attempt's runner record: exit, latency, tokens, where the file came from."""
    out: dict[str, Any] = {
        "exit_code": result.exit_code,
        "latency_ms": round(result.latency_ms, 3),
        "tokens_in": result.tokens_in,
        "tokens_out": result.tokens_out,
        "memory_from": source,
    }
    attempts = result.meta.get("attempts")
    if isinstance(attempts, int):
        out["runner_attempts"] = attempts
    return out


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


T = TypeVar("T")


def file_io(fn: Callable[[], T], run_id: str) -> T:
    """Run a file operation; an OSError becomes a structured, resumable WorkflowError."""
    try:
        return fn()
    except OSError as exc:
        raise WorkflowError(
            f"file operation failed: {exc}", run_id=run_id, path=getattr(exc, "filename", None)
        ) from exc
