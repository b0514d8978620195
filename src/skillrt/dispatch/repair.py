"""Repair of a failed skill (seed 001 §11-13), off unless ``execution.repair_enabled``.

Flow, as the table :data:`REPAIR_TRANSITIONS` (the §12 list, plus the two early-stop
edges §13 needs: ``repair_planning -> fallback`` when no usable proposal comes back, and
``patching -> fallback`` when a proposal breaks a rule)::

    failure_detected -> repair_eligibility_check -> repair_planning | fallback
    repair_planning -> patching -> retry_execution -> success | repair_evaluation
    repair_evaluation -> repair_planning (improved, still eligible, budget left)
    repair_evaluation -> fallback (no improvement, more errors, budget spent)

Eligibility (§11.3) is a majority vote (3 of 5) over a :class:`FailureReport`:
``task_progress >= 0.7``, ``root_cause_count <= 2``, ``change_scope_within_skill``,
``estimated_fix_attempts <= 1`` and an intermediate artefact. The report comes from a
``skillrt-failure-report`` JSON block the run printed (stdout or stderr), else from
heuristics (documented in docs/execution.md). §11.2 failures are never repaired: a
missing prerequisite, a runner that cannot run, a transient failure (timeout, 429,
5xx), or a permission error.

Budgets (§13): ``max_repair_attempts_per_run`` and ``max_total_retries_per_skill`` (the
round ledger), ``max_patched_files_per_attempt``, ``max_patch_hunks_per_attempt``,
``max_added_tokens_in_skill_doc`` (:mod:`skillrt.execution.patches`). Early stops: no
improvement after a repair, more errors than before, a safety or scope violation.
Patches of a repair that ends in ``fallback`` are reverted unless
``execution.repair_keep_failed_patches``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillrt.dispatch.model import (
    DispatchRequest,
    DispatchResult,
    DispatchSession,
    SkillDispatcher,
)
from skillrt.errors import PatchRejected, SkillrtError
from skillrt.execution.failure import (
    Eligibility,
    FailureReport,
    build_failure_report,
    eligibility,
    improvement,
)
from skillrt.execution.fallback import StateMachine, Transition, skill_path
from skillrt.execution.patches import (
    PatchBudget,
    PatchProposal,
    PatchRecord,
    apply_patch,
    parse_proposal,
    plan_patch,
    revert_patch,
)
from skillrt.execution.records import ExecutionRow, new_id
from skillrt.fileopen import read_regular, text_of
from skillrt.skills.model import Skill
from skillrt.store.base import Store
from skillrt.store.repairs import RepairAttempt

#: 001 §12 plus the two §13 early-stop edges (see the module docstring).
REPAIR_TRANSITIONS: Mapping[str, frozenset[str]] = {
    "failure_detected": frozenset({"repair_eligibility_check"}),
    "repair_eligibility_check": frozenset({"repair_planning", "fallback"}),
    "repair_planning": frozenset({"patching", "fallback"}),
    "patching": frozenset({"retry_execution", "fallback"}),
    "retry_execution": frozenset({"success", "repair_evaluation"}),
    "repair_evaluation": frozenset({"repair_planning", "fallback"}),
    "success": frozenset(),
    "fallback": frozenset(),
}
MAX_FILE_CHARS_IN_PROMPT = 20_000
MAX_SKILL_MD_CHARS_IN_PROMPT = 40_000

__all__ = [
    "REPAIR_TRANSITIONS",
    "Eligibility",
    "FailureReport",
    "RepairAttempt",
    "RepairOutcome",
    "Repairer",
    "build_failure_report",
    "eligibility",
    "improvement",
    "list_repair_attempts",
    "repair_prompt",
]


@dataclass(frozen=True)
class RepairOutcome:
    """How a repair ended (``success`` or ``fallback``)."""

    skill: str
    status: str
    report: FailureReport
    eligibility: Eligibility
    attempts: tuple[RepairAttempt, ...] = ()
    transitions: tuple[Transition, ...] = ()
    result: DispatchResult | None = None
    reverted_patches: tuple[str, ...] = ()
    stop_reason: str | None = None


# -- the repair loop -----------------------------------------------------------------
class Repairer:
    """Runs the §12 machine for a failed skill through a dispatcher's runner."""

    def __init__(self, dispatcher: SkillDispatcher, store: Store | None, repairs_dir: Path) -> None:
        self.dispatcher = dispatcher
        self.store = store
        self.repairs_dir = repairs_dir
        ex = dispatcher.config.execution
        self.keep_failed = ex.repair_keep_failed_patches
        self.budget = PatchBudget(
            max_files=ex.max_patched_files_per_attempt,
            max_hunks=ex.max_patch_hunks_per_attempt,
            max_added_tokens_in_skill_doc=ex.max_added_tokens_in_skill_doc,
        )

    def repair(
        self, failed: DispatchResult, request: DispatchRequest, session: DispatchSession
    ) -> RepairOutcome:
        """Try to repair ``failed`` (a failed dispatch of a skill) and re-run it."""
        name = failed.skill or ""
        skill = self.dispatcher.registry.get(name)
        path = skill_path(skill.qualified_name)
        machine = StateMachine(
            "repair",
            REPAIR_TRANSITIONS,
            "failure_detected",
            f"repair:{skill.qualified_name}",
            sink=session.recorder.transition,
        )
        error = failed.error or {}
        report = build_failure_report(error, skill)
        verdict = eligibility(report, error)
        machine.advance("repair_eligibility_check", report.error_signature)
        attempts: list[RepairAttempt] = []
        applied: list[PatchRecord] = []
        ledger = session.ledger

        def done(status: str, reason: str, result: DispatchResult | None = None) -> RepairOutcome:
            reverted: list[str] = []
            if status != "success" and applied and not self.keep_failed and self.store:
                for record in reversed(applied):
                    try:
                        revert_patch(self.store, record.patch_id)
                        reverted.append(record.patch_id)
                    except SkillrtError:
                        pass  # left in place; listed by `skillrt repair list`
            return RepairOutcome(
                skill=skill.qualified_name,
                status=status,
                report=report,
                eligibility=verdict,
                attempts=tuple(attempts),
                transitions=tuple(machine.transitions),
                result=result,
                reverted_patches=tuple(reverted),
                stop_reason=None if status == "success" else reason,
            )

        if not verdict.eligible:
            machine.advance("fallback", verdict.reason)
            return done("fallback", verdict.reason)
        current = report
        n = 0
        while True:
            budget_problem = self._budget_problem(session, path)
            if budget_problem is not None:
                machine.advance("fallback", budget_problem)
                return done("fallback", budget_problem)
            n += 1
            attempt_id = new_id("rep")
            machine.attempt = n
            machine.advance("repair_planning", f"attempt {n}")
            try:
                proposal = self._propose(skill, current, error, session, attempt_id)
            except SkillrtError as exc:
                attempts.append(
                    self._record(
                        attempt_id,
                        skill,
                        n,
                        "proposal_failed",
                        current,
                        None,
                        None,
                        verdict,
                        exc.message,
                    )
                )
                machine.advance("fallback", f"no usable repair proposal: {exc.message}")
                return done("fallback", exc.message)
            try:
                planned = plan_patch(skill, proposal, self.budget)
                record = apply_patch(
                    self.store, self.repairs_dir, skill, planned, attempt_id=attempt_id
                )
            except (PatchRejected, OSError) as exc:
                message = exc.message if isinstance(exc, PatchRejected) else str(exc)
                attempts.append(
                    self._record(
                        attempt_id, skill, n, "rejected", current, proposal, None, verdict, message
                    )
                )
                machine.advance("patching", "checking the proposal")
                machine.advance("fallback", f"early stop (safety/scope): {message}")
                return done("fallback", message)
            applied.append(record)
            machine.advance("patching", f"patched {', '.join(p.path for p in planned)}")
            ledger.take_retry(path)
            machine.advance("retry_execution", "re-running the patched skill")
            try:
                prepared = self.dispatcher.prepare(request, session)
                started = time.perf_counter()
                res = self.dispatcher.attempt(
                    prepared, request, session, execution_id=new_id("exe")
                )
            except SkillrtError as exc:
                ledger.record_failure(path)
                after = build_failure_report(exc.to_dict(), skill)
                machine.advance("repair_evaluation", exc.message[:200])
                outcome, why = improvement(current, after)
                attempts.append(
                    self._record(
                        attempt_id, skill, n, outcome, current, proposal, record, verdict, why
                    )
                )
                if outcome != "improved":
                    machine.advance("fallback", f"early stop: {why}")
                    return done("fallback", why)
                again = eligibility(after, exc.to_dict())
                if not again.eligible:
                    machine.advance("fallback", again.reason)
                    return done("fallback", again.reason)
                current, error = after, exc.to_dict()
                continue
            ledger.record_success(path)
            result = self.dispatcher.finish(
                prepared,
                request,
                session,
                res,
                execution_id=None,
                attempts=n,
                started=started,
            )
            attempts.append(
                self._record(
                    attempt_id, skill, n, "success", current, proposal, record, verdict, None
                )
            )
            machine.advance("success", "the patched skill succeeded")
            return done("success", "", result)

    def _budget_problem(self, session: DispatchSession, path: str) -> str | None:
        ledger = session.ledger
        if ledger.retries_used(path) >= ledger.max_total_retries_per_skill:
            return "max_total_retries_per_skill is spent"
        if not ledger.take_repair():
            return "max_repair_attempts_per_run is spent"
        return None

    def _propose(
        self,
        skill: Skill,
        report: FailureReport,
        error: Mapping[str, Any],
        session: DispatchSession,
        attempt_id: str,
    ) -> PatchProposal:
        prompt = repair_prompt(skill, report, error, self.budget)
        runner = self.dispatcher.runner
        started = time.perf_counter()
        status, err = "success", None
        try:
            res = runner.run(prompt, timeout_s=self.dispatcher.config.execution.timeout_s)
            return parse_proposal(res.output)
        except SkillrtError as exc:
            status, err = "failed", exc
            raise
        finally:
            session.recorder.execution(
                ExecutionRow(
                    execution_id=new_id("exe"),
                    request_id=session.request_id,
                    skill=skill.qualified_name,
                    role=None,
                    execution_mode="repair",
                    depth=0,
                    path=f"repair:{skill.qualified_name}",
                    runner=runner.name,
                    status=status,
                    latency_ms=round((time.perf_counter() - started) * 1000, 3),
                    error_code=err.code if err else None,
                    error_message=err.message if err else None,
                ),
                count_stats=False,
            )

    def _record(
        self,
        attempt_id: str,
        skill: Skill,
        n: int,
        outcome: str,
        report: FailureReport,
        proposal: PatchProposal | None,
        patch: PatchRecord | None,
        verdict: Eligibility,
        stop_reason: str | None,
    ) -> RepairAttempt:
        attempt = RepairAttempt(
            attempt_id=attempt_id,
            skill=skill.qualified_name,
            attempt=n,
            outcome=outcome,
            error_signature=proposal.error_signature if proposal else report.error_signature,
            root_cause=proposal.root_cause if proposal else "",
            expected_effect=proposal.expected_effect if proposal else "",
            patched_files=tuple(f["path"] for f in patch.files) if patch else (),
            patch_id=patch.patch_id if patch else None,
            stop_reason=stop_reason,
        )
        if self.store is not None:
            self.store.repairs.add_attempt(
                attempt,
                run_id=self.dispatcher.run_id,
                eligibility={"met": verdict.met, "checks": verdict.checks},
                created_at=time.time(),
            )
        return attempt


def _quote_file(path: Path, *, chars: int, follow_symlinks: bool = True) -> str:
    """A skill file's first ``chars`` characters for the prompt, with a note when it is
    longer (a FIFO, device or symlink swapped in is quoted as unreadable rather than
    blocking the repair or leaving the folder)."""
    try:
        # Up to 4 bytes a character, and one more to know whether there is more.
        data = read_regular(path, limit=4 * chars + 4, follow_symlinks=follow_symlinks)
    except OSError as exc:
        return f"(unreadable: {exc.strerror or exc})"
    text = text_of(data, encoding="utf-8", errors="replace")
    if len(text) > chars:
        return text[:chars] + f"\n[... cut at {chars:,} characters]"
    return text


def repair_prompt(
    skill: Skill, report: FailureReport, error: Mapping[str, Any], budget: PatchBudget
) -> str:
    """The request for a patch proposal sent to the runner."""
    skill_md = ""
    if skill.skill_file is not None:
        skill_md = _quote_file(skill.skill_file, chars=MAX_SKILL_MD_CHARS_IN_PROMPT)
    listing: list[str] = []
    mentioned: list[str] = []
    blob = f"{error.get('stderr', '')}\n{error.get('output_tail', '')}\n{error.get('message', '')}"
    for sub in ("scripts", "references"):
        folder = skill.path / sub
        if not folder.is_dir():
            continue
        for p in sorted(folder.rglob("*")):
            if p.is_file() and not p.is_symlink():
                rel = p.relative_to(skill.path).as_posix()
                listing.append(f"- {rel} ({p.stat().st_size} bytes)")
                if (rel in blob or p.name in blob) and len(mentioned) < 3:
                    text = _quote_file(p, chars=MAX_FILE_CHARS_IN_PROMPT, follow_symlinks=False)
                    mentioned.append(f'<file path="{rel}">\n{text}\n</file>')
    report_json = json.dumps(dict(report.__dict__), indent=2, ensure_ascii=False, default=str)
    return "\n".join(
        [
            "<repair-request>",
            f"The skill '{skill.qualified_name}' failed. Propose the smallest fix inside its "
            "own folder so the same task succeeds on the next run.",
            "",
            "Rules:",
            "- Only SKILL.md, scripts/* and references/* of this skill may change; paths are "
            "relative to the skill folder.",
            f"- At most {budget.max_files} files and {budget.max_hunks} hunks; add at most "
            f"{budget.max_added_tokens_in_skill_doc} tokens to SKILL.md.",
            "- Never change name, allowed-tools, disable-model-invocation, user-invocable or "
            "prerequisites in the frontmatter, and never touch other skills or global policy.",
            "",
            "Answer with one JSON object in a ```json block:",
            '{"error_signature": "...", "root_cause": "...", "expected_effect": "...",',
            ' "files": [{"path": "scripts/x.py", "content": "<the whole new file>"}]}',
            'or give the same object without "files" followed by a ```diff block with a '
            "unified diff.",
            "</repair-request>",
            "",
            "<failure-report>",
            report_json,
            "</failure-report>",
            "",
            "<error>",
            str(error.get("message", "")),
            str(error.get("stderr", ""))[-4000:],
            "</error>",
            "",
            '<file path="SKILL.md">',
            skill_md,
            "</file>",
            "",
            "<skill-files>",
            *(listing or ["(no scripts/ or references/ files)"]),
            "</skill-files>",
            *mentioned,
        ]
    )


def list_repair_attempts(store: Store, *, limit: int = 100) -> list[dict[str, Any]]:
    """Repair attempts, newest first, with their patch's status."""
    return store.repairs.attempts(limit)
