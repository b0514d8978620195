"""What a failed run says about itself (001 §11): the failure report, the §11.3
"near success" vote with the §11.2 hard stops, and the §13 improvement rules.

A run may print a ``skillrt-failure-report`` JSON block (stdout or stderr); without one
the report is filled by heuristics (progress from "step N of M", root causes from
distinct error lines, scope from mentions of the skill's files, an artefact from the
output's length). See docs/execution.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skillrt.skills.model import Skill

REPORT_TAG = "skillrt-failure-report"
_REPORT_BLOCK = re.compile(rf"```{REPORT_TAG}\s*\n(.*?)```", re.DOTALL)
_STEP = re.compile(r"\bstep\s+(\d+)\s*(?:/|of)\s*(\d+)\b", re.IGNORECASE)
_ERROR_LINE = re.compile(r"\b(error|exception|traceback|failed|fatal)\b", re.IGNORECASE)
_PERMISSION = re.compile(r"permission denied|EACCES|EPERM|not permitted|forbidden", re.I)
_VOLATILE = re.compile(r"0x[0-9a-f]+|\d+|/[\w./-]+", re.IGNORECASE)
MIN_ARTIFACT_CHARS = 200


@dataclass(frozen=True)
class FailureReport:
    """What is known about a failure, for the §11.3 checks and the repair prompt."""

    error_signature: str
    error_code: str
    #: ``retryable`` or ``fatal``.
    error_class: str
    scope: str | None
    task_progress: float | None
    root_causes: tuple[str, ...]
    root_cause_count: int | None
    change_scope_within_skill: bool | None
    estimated_fix_attempts: int | None
    has_intermediate_artifact: bool
    error_count: int
    steps_completed: int | None = None
    steps_total: int | None = None
    output_chars: int = 0
    #: ``reported`` (the run's own JSON block) or ``heuristic``.
    source: str = "heuristic"


@dataclass(frozen=True)
class Eligibility:
    """The §11.3 vote (and any §11.2 hard stop)."""

    eligible: bool
    checks: dict[str, bool]
    met: int
    reason: str


# -- failure report ------------------------------------------------------------------
def _reported_block(texts: list[str]) -> dict[str, Any] | None:
    for text in texts:
        for m in _REPORT_BLOCK.finditer(text):
            try:
                data = json.loads(m.group(1))
            except ValueError:
                continue
            if isinstance(data, dict):
                return data
    return None


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _signature(code: str, exit_code: Any, lines: list[str]) -> str:
    first = lines[0] if lines else ""
    norm = _VOLATILE.sub("N", first.strip())[:160]
    bits = [code]
    if isinstance(exit_code, int):
        bits.append(f"exit={exit_code}")
    if norm:
        bits.append(norm)
    return " ".join(bits)


def build_failure_report(error: Mapping[str, Any], skill: Skill) -> FailureReport:
    """A :class:`FailureReport` from a failed dispatch's error dict."""
    texts = [
        str(error.get("output_tail") or ""),
        str(error.get("output_excerpt") or ""),
        str(error.get("stderr") or ""),
    ]
    code = str(error.get("code") or "E_RUNNER")
    retryable = bool(error.get("retryable"))
    scope = error.get("scope") if isinstance(error.get("scope"), str) else None
    combined = "\n".join(t for t in texts if t)
    error_lines: list[str] = []
    for line in combined.splitlines():
        if _ERROR_LINE.search(line) and line.strip() not in error_lines:
            error_lines.append(line.strip())
    output = texts[0] or texts[1]
    data = _reported_block(texts)
    if data is not None:
        causes = tuple(str(c) for c in data.get("root_causes") or () if isinstance(c, str))
        count = data.get("root_cause_count")
        errors = data.get("errors")
        return FailureReport(
            error_signature=str(data.get("error_signature") or "")
            or _signature(code, error.get("exit_code"), error_lines),
            error_code=code,
            error_class="retryable" if retryable else "fatal",
            scope=scope,
            task_progress=_num(data.get("task_progress")),
            root_causes=causes,
            root_cause_count=int(count) if isinstance(count, int) else (len(causes) or None),
            change_scope_within_skill=data.get("change_scope_within_skill")
            if isinstance(data.get("change_scope_within_skill"), bool)
            else None,
            estimated_fix_attempts=data.get("estimated_fix_attempts")
            if isinstance(data.get("estimated_fix_attempts"), int)
            else None,
            has_intermediate_artifact=bool(data.get("artifacts"))
            or bool(data.get("has_intermediate_artifact")),
            error_count=len(errors) if isinstance(errors, list) else len(error_lines),
            steps_completed=data.get("steps_completed")
            if isinstance(data.get("steps_completed"), int)
            else None,
            steps_total=data.get("steps_total")
            if isinstance(data.get("steps_total"), int)
            else None,
            output_chars=len(output),
            source="reported",
        )
    steps = _STEP.findall(combined)
    done = total = None
    progress: float | None = None
    if steps:
        done, total = max((int(a), int(b)) for a, b in steps)
        progress = min(done / total, 1.0) if total else None
    signatures = {_VOLATILE.sub("N", line)[:120] for line in error_lines}
    count = min(len(signatures), 50)
    skill_markers = ["SKILL.md", "scripts/", "references/", str(skill.path)]
    within = any(marker in combined for marker in skill_markers) if combined else None
    return FailureReport(
        error_signature=_signature(code, error.get("exit_code"), error_lines),
        error_code=code,
        error_class="retryable" if retryable else "fatal",
        scope=scope,
        task_progress=progress,
        root_causes=tuple(error_lines[:5]),
        root_cause_count=count if error_lines else None,
        change_scope_within_skill=within,
        estimated_fix_attempts=(1 if count <= 1 else count) if error_lines else None,
        has_intermediate_artifact=len(output.strip()) >= MIN_ARTIFACT_CHARS,
        error_count=len(error_lines),
        steps_completed=done,
        steps_total=total,
        output_chars=len(output),
        source="heuristic",
    )


def eligibility(report: FailureReport, error: Mapping[str, Any]) -> Eligibility:
    """The §11.3 majority vote, after the §11.2 hard stops."""
    checks = {
        "task_progress": report.task_progress is not None and report.task_progress >= 0.7,
        "root_cause_count": report.root_cause_count is not None and report.root_cause_count <= 2,
        "change_scope_within_skill": report.change_scope_within_skill is True,
        "estimated_fix_attempts": report.estimated_fix_attempts is not None
        and report.estimated_fix_attempts <= 1,
        "intermediate_artifact": report.has_intermediate_artifact,
    }
    met = sum(checks.values())
    stop: str | None = None
    text = f"{error.get('message', '')}\n{error.get('stderr', '')}"
    if report.error_code == "E_PREREQUISITE_MISSING":
        stop = "a prerequisite is missing (001 §11.2: external dependency unavailable)"
    elif report.scope == "runner":
        stop = "the runner cannot run (not a skill defect)"
    elif report.scope == "transient" or report.error_class == "retryable":
        stop = "a transient failure (timeout / rate limit / server error), not a skill defect"
    elif _PERMISSION.search(text):
        stop = "a permission or security restriction (001 §11.2)"
    if stop is not None:
        return Eligibility(False, checks, met, stop)
    if met >= 3:
        return Eligibility(True, checks, met, f"near success: {met} of 5 checks met")
    return Eligibility(False, checks, met, f"not near success: {met} of 5 checks met (need 3)")


def improvement(before: FailureReport, after: FailureReport) -> tuple[str, str]:
    """``(verdict, why)``: ``more_errors``, ``improved`` or ``no_improvement`` (§13)."""
    if after.error_count > before.error_count:
        return "more_errors", f"errors went from {before.error_count} to {after.error_count}"
    if before.error_class == "fatal" and after.error_class == "retryable":
        return "improved", "the failure went from fatal to retryable"
    if (after.steps_completed or 0) > (before.steps_completed or 0):
        return "improved", f"steps advanced to {after.steps_completed}"
    if (after.task_progress or 0.0) > (before.task_progress or 0.0) + 1e-9:
        return "improved", f"progress rose to {after.task_progress:.2f}"
    if after.output_chars > before.output_chars * 1.1 + 10:
        return "improved", "the output is more complete"
    return "no_improvement", "no metric improved after the repair"
