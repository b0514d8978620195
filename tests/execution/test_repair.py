"""X3: repair (001 §11-13): eligibility, the §12 machine, budgets, early stops, records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrt.dispatch.repair import (
    REPAIR_TRANSITIONS,
    FailureReport,
    build_failure_report,
    eligibility,
    improvement,
    list_repair_attempts,
)
from skillrt.execution.fallback import StateMachine
from skillrt.execution.patches import list_patches
from skillrt.execution.records import list_transitions
from skillrt.skills.model import Skill

from .support import ENV, make_runtime, scripted

SEED_12 = {
    ("failure_detected", "repair_eligibility_check"),
    ("repair_eligibility_check", "repair_planning"),
    ("repair_eligibility_check", "fallback"),
    ("repair_planning", "patching"),
    ("patching", "retry_execution"),
    ("retry_execution", "success"),
    ("retry_execution", "repair_evaluation"),
    ("repair_evaluation", "repair_planning"),
    ("repair_evaluation", "fallback"),
}
EARLY_STOP = {("repair_planning", "fallback"), ("patching", "fallback")}


def report_block(**fields: object) -> str:
    data = {
        "task_progress": 0.8,
        "root_causes": ["scripts/run.py prints the wrong version"],
        "change_scope_within_skill": True,
        "estimated_fix_attempts": 1,
        "artifacts": ["draft.md"],
        "steps_completed": 4,
        "steps_total": 5,
        "errors": ["wrong version"],
    }
    data.update(fields)
    return "partial work\n```skillrt-failure-report\n" + json.dumps(data) + "\n```\n"


def proposal(path: str, content: str) -> str:
    body = {
        "error_signature": "run.py: wrong version",
        "root_cause": "scripts/run.py prints v1",
        "expected_effect": "the run prints FIXED",
        "files": [{"path": path, "content": content}],
    }
    return "```json\n" + json.dumps(body) + "\n```\n"


@pytest.fixture
def repair_rt(make_skill, tmp_path: Path):
    make_skill(
        "fixme-x", body="# Fix me\nRun scripts/run.py.\n", files={"scripts/run.py": "print('v1')\n"}
    )
    (tmp_path / "outside.txt").write_text("precious\n")
    rt = make_runtime(tmp_path / "skills", tmp=tmp_path, execution={"repair_enabled": True})
    yield rt
    rt.close()


def run_py(rt) -> Path:
    return rt.get("fixme-x").path / "scripts" / "run.py"


def model_for(rt, tmp_path: Path, repair_answers: list[str], *, run_rules=None):
    script = str(run_py(rt))
    rules = [
        {"match": "<repair-request>", "sequence": [{"stdout": a} for a in repair_answers]},
        {
            "match": "current_skill: fixme-x",
            "when_file": script,
            "file_has": "FIXED",
            "stdout": "done",
        },
        *(run_rules or []),
        {
            "match": "current_skill: fixme-x",
            "exit": 1,
            "stdout": report_block(),
            "stderr": "error: wrong version\n",
        },
        {"match": "current_skill: null", "stdout": "generic"},
    ]
    return scripted(tmp_path, rules)


def test_repair_table_is_the_seed_plus_two_early_stops() -> None:
    edges = {(a, b) for a, bs in REPAIR_TRANSITIONS.items() for b in bs}
    assert edges == SEED_12 | EARLY_STOP


def test_repair_machine_rejects_other_moves() -> None:
    from skillrt.errors import IllegalTransition

    m = StateMachine("repair", REPAIR_TRANSITIONS, "failure_detected", "p")
    with pytest.raises(IllegalTransition):
        m.advance("patching")


def test_repair_fixes_the_skill_and_the_run_succeeds(repair_rt, tmp_path: Path) -> None:
    model = model_for(repair_rt, tmp_path, [proposal("scripts/run.py", "print('FIXED')\n")])
    result = repair_rt.run("$fixme-x do it", runner=model.runner(), environ=ENV)
    (step,) = result.steps
    assert result.status == "success" and result.output == "done"
    assert step.path == "repair:skill:fixme-x"
    (outcome,) = step.repairs
    assert outcome.status == "success"
    assert outcome.report.source == "reported" and outcome.eligibility.met == 5
    assert [t.to_state for t in outcome.transitions] == [
        "repair_eligibility_check",
        "repair_planning",
        "patching",
        "retry_execution",
        "success",
    ]
    assert run_py(repair_rt).read_text() == "print('FIXED')\n"
    (attempt,) = list_repair_attempts(repair_rt.store)
    assert attempt["outcome"] == "success"
    assert attempt["error_signature"] == "run.py: wrong version"
    assert attempt["root_cause"] == "scripts/run.py prints v1"
    assert attempt["expected_effect"] == "the run prints FIXED"
    assert attempt["patched_files"] == ["scripts/run.py"]
    assert attempt["patch_status"] == "applied"
    machines = {r["machine"] for r in list_transitions(repair_rt.store, result.run_id)}
    assert machines == {"fallback", "repair"}
    primary = [t for t in step.transitions if t.path == "skill:fixme-x"]
    assert [t.to_state for t in primary][-2:] == ["fallback", "success"]


def test_repair_is_off_unless_enabled(make_skill, tmp_path: Path) -> None:
    make_skill("fixme-x", files={"scripts/run.py": "print('v1')\n"})
    rt = make_runtime(tmp_path / "skills", tmp=tmp_path)
    model = model_for(rt, tmp_path, [proposal("scripts/run.py", "print('FIXED')\n")])
    result = rt.run("$fixme-x do it", runner=model.runner(), environ=ENV)
    assert result.steps[0].path == "no-skill" and result.steps[0].repairs == ()
    assert not any("<repair-request>" in c["prompt_head"] for c in model.calls())


def test_not_near_success_goes_straight_to_fallback(repair_rt, tmp_path: Path) -> None:
    bad = report_block(
        task_progress=0.2,
        root_causes=["a", "b", "c"],
        root_cause_count=3,
        change_scope_within_skill=False,
        estimated_fix_attempts=3,
        artifacts=[],
    )
    model = model_for(
        repair_rt,
        tmp_path,
        ["{}"],
        run_rules=[{"match": "current_skill: fixme-x", "exit": 1, "stdout": bad}],
    )
    result = repair_rt.run("$fixme-x do it", runner=model.runner(), environ=ENV)
    (outcome,) = result.steps[0].repairs
    assert outcome.status == "fallback" and not outcome.eligibility.eligible
    assert outcome.eligibility.met == 0
    assert [t.to_state for t in outcome.transitions] == ["repair_eligibility_check", "fallback"]
    assert result.steps[0].path == "no-skill"
    assert not any("<repair-request>" in c["prompt_head"] for c in model.calls())


@pytest.mark.parametrize("hostile", ["../outside.txt", "/etc/hostname", "assets/x.txt"])
def test_hostile_proposal_is_an_early_stop(repair_rt, tmp_path: Path, hostile: str) -> None:
    model = model_for(repair_rt, tmp_path, [proposal(hostile, "pwned")])
    result = repair_rt.run("$fixme-x do it", runner=model.runner(), environ=ENV)
    (outcome,) = result.steps[0].repairs
    assert outcome.status == "fallback"
    assert [t.to_state for t in outcome.transitions][-2:] == ["patching", "fallback"]
    assert (tmp_path / "outside.txt").read_text() == "precious\n"
    assert run_py(repair_rt).read_text() == "print('v1')\n"
    (attempt,) = list_repair_attempts(repair_rt.store)
    assert attempt["outcome"] == "rejected" and attempt["patch_id"] is None


def test_no_improvement_stops_and_reverts_the_patch(repair_rt, tmp_path: Path) -> None:
    model = model_for(repair_rt, tmp_path, [proposal("scripts/run.py", "print('v1.1')\n")])
    result = repair_rt.run("$fixme-x do it", runner=model.runner(), environ=ENV)
    (outcome,) = result.steps[0].repairs
    assert outcome.status == "fallback"
    assert "no metric improved" in outcome.stop_reason
    assert [t.to_state for t in outcome.transitions][-2:] == ["repair_evaluation", "fallback"]
    assert run_py(repair_rt).read_text() == "print('v1')\n"  # reverted
    assert outcome.reverted_patches == (list_patches(repair_rt.store)[0].patch_id,)
    assert list_patches(repair_rt.store)[0].status == "reverted"
    assert list_repair_attempts(repair_rt.store)[0]["outcome"] == "no_improvement"


def test_more_errors_after_a_repair_stops(repair_rt, tmp_path: Path) -> None:
    worse = report_block(errors=["e1", "e2", "e3"], task_progress=0.9)
    model = model_for(
        repair_rt,
        tmp_path,
        [proposal("scripts/run.py", "print('v9')\n")],
        run_rules=[
            {
                "match": "current_skill: fixme-x",
                "when_file": str(run_py(repair_rt)),
                "file_has": "v9",
                "exit": 1,
                "stdout": worse,
            }
        ],
    )
    result = repair_rt.run("$fixme-x do it", runner=model.runner(), environ=ENV)
    (outcome,) = result.steps[0].repairs
    assert outcome.attempts[0].outcome == "more_errors"
    assert outcome.status == "fallback"


def test_budget_limits_the_attempts(repair_rt, tmp_path: Path) -> None:
    script = str(run_py(repair_rt))
    better = [
        {
            "match": "current_skill: fixme-x",
            "when_file": script,
            "file_has": "step2",
            "exit": 1,
            "stdout": report_block(task_progress=0.95, steps_completed=5),
        },
        {
            "match": "current_skill: fixme-x",
            "when_file": script,
            "file_has": "step1",
            "exit": 1,
            "stdout": report_block(task_progress=0.9, steps_completed=5),
        },
    ]
    answers = [proposal("scripts/run.py", f"print('step{i}')\n") for i in (1, 2, 3)]
    model = model_for(repair_rt, tmp_path, answers, run_rules=better)
    result = repair_rt.run("$fixme-x do it", runner=model.runner(), environ=ENV)
    (outcome,) = result.steps[0].repairs
    assert len(outcome.attempts) == 2  # max_repair_attempts_per_run / retries budget
    assert outcome.attempts[0].outcome == "improved"
    assert "spent" in outcome.stop_reason
    assert run_py(repair_rt).read_text() == "print('v1')\n"
    assert len(outcome.reverted_patches) == 2
    assert result.steps[0].path == "no-skill"


def test_keep_failed_patches_option(make_skill, tmp_path: Path) -> None:
    make_skill("fixme-x", files={"scripts/run.py": "print('v1')\n"})
    rt = make_runtime(
        tmp_path / "skills",
        tmp=tmp_path,
        execution={"repair_enabled": True, "repair_keep_failed_patches": True},
    )
    model = model_for(rt, tmp_path, [proposal("scripts/run.py", "print('v1.1')\n")])
    rt.run("$fixme-x do it", runner=model.runner(), environ=ENV)
    assert run_py(rt).read_text() == "print('v1.1')\n"
    assert list_patches(rt.store)[0].status == "applied"


# -- reports, eligibility, improvement --------------------------------------------------
SKILL = Skill(name="s-x", description="d", path=Path("/skills/s-x"), skill_file=None)


def test_heuristic_report() -> None:
    error = {
        "code": "E_RUNNER",
        "exit_code": 1,
        "retryable": False,
        "scope": "skill",
        "stderr": "Traceback: error in /skills/s-x/scripts/a.py line 3\n",
        "output_excerpt": "Step 4 of 5 done\n" + "x" * 300,
    }
    r = build_failure_report(error, SKILL)
    assert r.source == "heuristic"
    assert r.task_progress == pytest.approx(0.8)
    assert (r.steps_completed, r.steps_total) == (4, 5)
    assert r.change_scope_within_skill is True
    assert r.has_intermediate_artifact is True
    assert r.root_cause_count == 1 and r.estimated_fix_attempts == 1
    assert r.error_signature.startswith("E_RUNNER exit=1 Traceback: error in")
    assert eligibility(r, error).eligible


@pytest.mark.parametrize(
    ("code", "scope", "retryable", "stderr"),
    [
        ("E_PREREQUISITE_MISSING", "skill", False, ""),
        ("E_RUNNER", "runner", False, ""),
        ("E_RUNNER_TIMEOUT", "transient", True, ""),
        ("E_RUNNER", "skill", False, "open: Permission denied"),
    ],
)
def test_hard_stops_of_11_2(code: str, scope: str, retryable: bool, stderr: str) -> None:
    error = {
        "code": code,
        "scope": scope,
        "retryable": retryable,
        "stderr": stderr,
        "output_excerpt": report_block(),
    }
    r = build_failure_report(error, SKILL)
    verdict = eligibility(r, error)
    assert not verdict.eligible and verdict.met == 5


def test_majority_vote_needs_three_of_five() -> None:
    base = {
        "error_signature": "s",
        "error_code": "E_RUNNER",
        "error_class": "fatal",
        "scope": "skill",
        "root_causes": (),
        "error_count": 1,
    }
    two = FailureReport(
        **base,
        task_progress=0.9,
        root_cause_count=1,
        change_scope_within_skill=False,
        estimated_fix_attempts=5,
        has_intermediate_artifact=False,
    )
    three = FailureReport(
        **base,
        task_progress=0.9,
        root_cause_count=1,
        change_scope_within_skill=True,
        estimated_fix_attempts=5,
        has_intermediate_artifact=False,
    )
    assert eligibility(two, {}).eligible is False
    assert eligibility(three, {}).eligible is True


def test_improvement_rules() -> None:
    base = {
        "error_signature": "s",
        "error_code": "E",
        "scope": "skill",
        "root_causes": (),
        "root_cause_count": 1,
        "change_scope_within_skill": True,
        "estimated_fix_attempts": 1,
        "has_intermediate_artifact": True,
    }
    before = FailureReport(**base, error_class="fatal", task_progress=0.7, error_count=1)
    same = FailureReport(**base, error_class="fatal", task_progress=0.7, error_count=1)
    assert improvement(before, same)[0] == "no_improvement"
    assert (
        improvement(
            before, FailureReport(**base, error_class="retryable", task_progress=0.7, error_count=1)
        )[0]
        == "improved"
    )
    assert (
        improvement(
            before, FailureReport(**base, error_class="fatal", task_progress=0.8, error_count=1)
        )[0]
        == "improved"
    )
    assert (
        improvement(
            before, FailureReport(**base, error_class="fatal", task_progress=0.9, error_count=2)
        )[0]
        == "more_errors"
    )
