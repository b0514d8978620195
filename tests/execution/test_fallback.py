"""X2: the 001 §10 state machine, transitions as data, and the round ledger."""

from __future__ import annotations

import pytest

from skillrt.errors import IllegalTransition, RunnerError, SkillrtError
from skillrt.execution.fallback import (
    FALLBACK_TRANSITIONS,
    PathMachine,
    PathState,
    RoundLedger,
    StateMachine,
    run_path,
)
from skillrt.execution.records import ExecutionRecorder, list_transitions
from skillrt.store import open_location

from .support import make_runtime

SEED_EDGES = {
    ("selected", "running"),
    ("running", "success"),
    ("running", "retryable_failure"),
    ("running", "fatal_failure"),
    ("retryable_failure", "running"),
    ("retryable_failure", "fallback"),
    ("fatal_failure", "fallback"),
    ("fallback", "success"),
    ("fallback", "exit"),
}


def test_transition_table_is_exactly_the_seed() -> None:
    edges = {(a, b) for a, targets in FALLBACK_TRANSITIONS.items() for b in targets}
    assert edges == SEED_EDGES
    assert set(FALLBACK_TRANSITIONS) == {s.value for s in PathState}


@pytest.mark.parametrize(("a", "b"), sorted(SEED_EDGES))
def test_every_seed_transition_is_allowed(a: str, b: str) -> None:
    m = StateMachine("fallback", FALLBACK_TRANSITIONS, a, "p")
    t = m.advance(b, "why")
    assert (t.from_state, t.to_state, t.reason) == (a, b, "why")
    assert m.state == b


ALL = [s.value for s in PathState]


@pytest.mark.parametrize(("a", "b"), [(a, b) for a in ALL for b in ALL if (a, b) not in SEED_EDGES])
def test_every_other_transition_is_illegal(a: str, b: str) -> None:
    m = StateMachine("fallback", FALLBACK_TRANSITIONS, a, "p")
    with pytest.raises(IllegalTransition) as info:
        m.advance(b)
    assert info.value.code == "E_ILLEGAL_TRANSITION"
    assert m.state == a and m.transitions == []


def test_unknown_state_is_illegal() -> None:
    with pytest.raises(IllegalTransition):
        PathMachine("p").advance("dancing")


def fail(retryable: bool) -> RunnerError:
    return RunnerError("boom", retryable=retryable)


def test_success_first_time() -> None:
    m, ledger = PathMachine("skill:a"), RoundLedger()
    run = run_path(m, lambda n: "out", ledger)
    assert run.ok and run.value == "out" and run.attempts == 1
    assert [t.to_state for t in m.transitions] == ["running", "success"]


def test_one_retry_of_a_retryable_failure_then_success() -> None:
    calls = []

    def attempt(n: int) -> str:
        calls.append(n)
        if n == 1:
            raise fail(True)
        return "ok"

    m, ledger = PathMachine("skill:a"), RoundLedger()
    run = run_path(m, attempt, ledger)
    assert run.ok and calls == [1, 2]
    assert [t.to_state for t in m.transitions] == [
        "running",
        "retryable_failure",
        "running",
        "success",
    ]
    assert not ledger.banned("skill:a")


def test_at_most_one_retry_and_two_failures_ban_the_path() -> None:
    calls = []

    def attempt(n: int) -> str:
        calls.append(n)
        raise fail(True)

    m, ledger = PathMachine("skill:a"), RoundLedger()
    run = run_path(m, attempt, ledger)
    assert not run.ok and calls == [1, 2] and run.banned
    assert ledger.banned("skill:a")
    assert m.state == "retryable_failure"
    m.advance("fallback")
    # A banned path is not retried again in the round.
    m2 = PathMachine("skill:a")
    run2 = run_path(m2, attempt, ledger)
    assert not run2.ok and calls == [1, 2, 1]
    assert [t.to_state for t in m2.transitions] == ["running", "retryable_failure"]


def test_fatal_failure_is_never_retried() -> None:
    calls = []

    def attempt(n: int) -> str:
        calls.append(n)
        raise fail(False)

    m = PathMachine("skill:a")
    run = run_path(m, attempt, RoundLedger())
    assert calls == [1] and m.state == "fatal_failure"
    assert isinstance(run.error, RunnerError)


def test_non_runner_errors_are_fatal() -> None:
    def attempt(n: int) -> str:
        raise SkillrtError("loader said no")

    m = PathMachine("skill:a")
    assert not run_path(m, attempt, RoundLedger()).ok
    assert m.state == "fatal_failure"


def test_max_retry_per_path_zero_means_no_retry() -> None:
    def attempt(n: int) -> str:
        raise fail(True)

    m = PathMachine("skill:a")
    run_path(m, attempt, RoundLedger(max_retry_per_path=0))
    assert [t.to_state for t in m.transitions] == ["running", "retryable_failure"]


def test_per_skill_retry_budget() -> None:
    ledger = RoundLedger(max_total_retries_per_skill=1)
    outcomes = iter([fail(True), "ok", fail(True), fail(True)])

    def attempt(n: int) -> str:
        item = next(outcomes)
        if isinstance(item, Exception):
            raise item
        return item

    assert run_path(PathMachine("skill:a"), attempt, ledger).ok  # used the one retry
    m = PathMachine("skill:a")
    run_path(m, attempt, ledger)
    assert [t.to_state for t in m.transitions] == ["running", "retryable_failure"]


def test_success_resets_consecutive_failures() -> None:
    ledger = RoundLedger()
    ledger.record_failure("p")
    ledger.record_success("p")
    assert ledger.record_failure("p") is False
    assert ledger.record_failure("p") is True
    assert ledger.banned_paths == ("p",)


def test_transitions_are_recorded_in_the_store() -> None:
    store = open_location(":memory:")
    recorder = ExecutionRecorder(store, run_id="run-t", stats_hook=False)
    m = PathMachine("skill:a", sink=recorder.transition)
    run_path(m, lambda n: (_ for _ in ()).throw(fail(False)), RoundLedger())
    m.advance("fallback", "next")
    m.advance("exit", "gave up")
    rows = list_transitions(store, "run-t")
    assert [(r["from_state"], r["to_state"]) for r in rows] == [
        ("selected", "running"),
        ("running", "fatal_failure"),
        ("fatal_failure", "fallback"),
        ("fallback", "exit"),
    ]
    assert rows[1]["error_code"] == "E_RUNNER"
    assert rows[-1]["reason"] == "gave up"


def test_schema_slot_4_tables_exist(tmp_path) -> None:
    rt = make_runtime(tmp=tmp_path)
    tables = {
        r[0]
        for r in rt.store.connection().execute("SELECT name FROM sqlite_master WHERE type='table'")
    }
    assert {"executions", "fsm_transitions", "repair_attempts", "patches"} <= tables
