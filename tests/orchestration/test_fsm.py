"""The state machines are data: every listed move is legal, every other one raises."""

from __future__ import annotations

import itertools

import pytest

from skillrt.errors import WorkflowIllegalTransition
from skillrt.orchestration.fsm import (
    PHASE_TRANSITIONS,
    RUN_TRANSITIONS,
    STEPS,
    PhaseState,
    RunState,
    check_phase,
    check_phase_order,
    check_run,
    check_step_output,
    step,
)


def test_steps_are_the_six_of_seed_002_in_order() -> None:
    assert [s.name for s in STEPS] == [
        "GENERATE_TASK_ID",
        "CLASSIFY_DOMAIN",
        "READ_SKILL",
        "CREATE_MEMORY",
        "TRIGGER_AGENTS",
        "COMPLETE_WORKFLOW",
    ]
    # Each step starts where the previous one ended (step 5 via triggering_agents).
    for before, after in itertools.pairwise(STEPS):
        assert after.requires is before.produces
    assert STEPS[0].requires is RunState.CREATED and STEPS[-1].produces is RunState.COMPLETED


def test_the_happy_path_is_a_chain_through_the_table() -> None:
    path = [
        RunState.CREATED,
        RunState.TASK_ID_GENERATED,
        RunState.DOMAIN_CLASSIFIED,
        RunState.SKILL_READ,
        RunState.MEMORY_CREATED,
        RunState.TRIGGERING_AGENTS,
        RunState.AGENTS_TRIGGERED,
        RunState.COMPLETED,
    ]
    for a, b in itertools.pairwise(path):
        check_run(a, b)


@pytest.mark.parametrize(("a", "b"), list(itertools.product(RunState, RunState)))
def test_run_transitions_not_in_the_table_raise(a: RunState, b: RunState) -> None:
    if b in RUN_TRANSITIONS[a]:
        check_run(a, b, blocked_from=b if a is RunState.BLOCKED else None)
        return
    with pytest.raises(WorkflowIllegalTransition) as exc:
        check_run(a, b, run_id="wf-x")
    assert exc.value.code == "E_WORKFLOW_ILLEGAL_TRANSITION"
    assert exc.value.context["from_state"] == a and exc.value.context["to_state"] == b


def test_skipping_or_reordering_steps_is_illegal() -> None:
    with pytest.raises(WorkflowIllegalTransition):
        check_run(RunState.CREATED, RunState.DOMAIN_CLASSIFIED)  # skip step 1
    with pytest.raises(WorkflowIllegalTransition):
        check_run(RunState.MEMORY_CREATED, RunState.AGENTS_TRIGGERED)  # skip the phases
    with pytest.raises(WorkflowIllegalTransition):
        check_run(RunState.SKILL_READ, RunState.DOMAIN_CLASSIFIED)  # go back
    with pytest.raises(WorkflowIllegalTransition):
        check_run(RunState.COMPLETED, RunState.CREATED)  # terminal


def test_blocked_resumes_only_where_it_stopped() -> None:
    check_run(RunState.BLOCKED, RunState.SKILL_READ, blocked_from=RunState.SKILL_READ)
    with pytest.raises(WorkflowIllegalTransition):
        check_run(RunState.BLOCKED, RunState.MEMORY_CREATED, blocked_from=RunState.SKILL_READ)
    with pytest.raises(WorkflowIllegalTransition):
        check_run(RunState.BLOCKED, RunState.COMPLETED, blocked_from=RunState.AGENTS_TRIGGERED)
    with pytest.raises(WorkflowIllegalTransition):  # nowhere to return to
        check_run(RunState.BLOCKED, RunState.SKILL_READ)


@pytest.mark.parametrize(("a", "b"), list(itertools.product(PhaseState, PhaseState)))
def test_phase_transitions_not_in_the_table_raise(a: PhaseState, b: PhaseState) -> None:
    if b in PHASE_TRANSITIONS[a]:
        check_phase(a, b)
        return
    with pytest.raises(WorkflowIllegalTransition):
        check_phase(a, b, phase_id="p")


def test_a_verified_phase_never_runs_again() -> None:
    assert PHASE_TRANSITIONS[PhaseState.VERIFIED] == frozenset()
    with pytest.raises(WorkflowIllegalTransition, match="never runs again"):
        check_phase(PhaseState.VERIFIED, PhaseState.RUNNING)


def test_phase_order() -> None:
    phases = [("a", PhaseState.VERIFIED), ("b", PhaseState.PENDING), ("c", PhaseState.PENDING)]
    check_phase_order(phases, 1)
    with pytest.raises(WorkflowIllegalTransition, match="before 'b' is verified"):
        check_phase_order(phases, 2)
    started_late = [("a", PhaseState.PENDING), ("b", PhaseState.RUNNING)]
    with pytest.raises(WorkflowIllegalTransition):
        check_phase_order(started_late, 0)


def test_step_outputs_follow_the_data_contract() -> None:
    check_step_output(1, {"task_id": "0123456789ab"})
    for bad in ("0123456789a", "0123456789abc", "0123456789AB", "0123-5678-ab"):
        with pytest.raises(WorkflowIllegalTransition):
            check_step_output(1, {"task_id": bad})
    check_step_output(2, {"domain": "technical", "confidence": "CERTAIN"})
    with pytest.raises(WorkflowIllegalTransition):
        check_step_output(2, {"domain": "technical", "confidence": "sure"})
    with pytest.raises(WorkflowIllegalTransition, match="skill_config"):
        check_step_output(3, {})
    with pytest.raises(WorkflowIllegalTransition):
        step(7)


def test_the_docs_table_every_state() -> None:
    from .conftest import REPO

    doc = (REPO / "docs" / "orchestration.md").read_text(encoding="utf-8")
    for state in [*RunState, *PhaseState]:
        assert f"| `{state.value}` |" in doc, state
    for s in STEPS:
        assert f"| {s.number} | {s.name} |" in doc, s.name
