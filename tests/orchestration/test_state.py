"""Durable run state: migration 5, one transaction per transition, FSM-checked writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillrt.errors import StoreConflict, WorkflowBusy, WorkflowIllegalTransition, WorkflowNotFound
from skillrt.orchestration.fsm import PhaseState, RunState
from skillrt.orchestration.state import WorkflowStore, current_owner, owner_alive
from skillrt.store.sqlite import Store

TASK = "0123456789ab"


@pytest.fixture
def ws(tmp_path: Path) -> WorkflowStore:
    return WorkflowStore(Store(tmp_path / "state.db"))


def new_run(ws: WorkflowStore, run_id: str = "wf-1") -> str:
    ws.create_run(
        run_id=run_id,
        skill="flow",
        skill_dir="/skills/flow",
        query="q",
        mode="runner",
        runner={"kind": "command", "cmd": "x"},
        memory_dir="/m",
        learnings_dir="/l",
    )
    return run_id


def to_agents(ws: WorkflowStore, run_id: str) -> None:
    ws.complete_step(run_id, 1, {"task_id": TASK}, task_id=TASK)
    ws.complete_step(
        run_id, 2, {"domain": "technical", "confidence": "CERTAIN"}, domain="technical"
    )
    ws.complete_step(
        run_id,
        3,
        {"skill_config": {}},
        phases=[("a", "aa", f"{TASK}-aa-memory.md"), ("b", "bb", f"{TASK}-bb-memory.md")],
    )
    ws.complete_step(run_id, 4, {"memory_file": "/m/x"})
    ws.begin_agents(run_id)


def test_schema_slot_5_tables_and_wal(tmp_path: Path, ws: WorkflowStore) -> None:
    conn = ws.store.connection()
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"workflow_runs", "workflow_steps", "workflow_phases", "workflow_transitions"} <= tables
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert ws.store.schema_version() >= 5


@pytest.mark.parametrize(
    ("level", "result_tx", "intent_tx"),
    [("results", 2, 1), ("full", 2, 2), ("normal", 1, 1)],  # 2 = FULL (fsync), 1 = NORMAL
)
def test_synchronous_levels(tmp_path: Path, level: Any, result_tx: int, intent_tx: int) -> None:
    ws = WorkflowStore(Store(tmp_path / "s.db"), synchronous=level)
    with ws._tx(result=True) as tx:  # the SQL backend's transaction, on its connection
        assert tx.conn.execute("PRAGMA synchronous").fetchone()[0] == result_tx  # type: ignore[attr-defined]
    with ws._tx() as tx:
        assert tx.conn.execute("PRAGMA synchronous").fetchone()[0] == intent_tx  # type: ignore[attr-defined]
    # The store's own level is restored for everything else on the connection.
    assert ws.store.connection().execute("PRAGMA synchronous").fetchone()[0] == 1


def test_default_fsyncs_results_only(ws: WorkflowStore) -> None:
    seen: list[bool] = []
    real = ws._tx

    def spy(*, result: bool = False) -> Any:
        seen.append(result)
        return real(result=result)

    ws._tx = spy  # type: ignore[method-assign]
    run = new_run(ws)
    to_agents(ws, run)
    ws.phase_transition(run, "a", PhaseState.RUNNING)
    ws.phase_transition(run, "a", PhaseState.VERIFIED)
    ws.phase_transition(run, "b", PhaseState.RUNNING)
    ws.phase_transition(run, "b", PhaseState.FAILED, error={"code": "E"})
    # created, steps 1-4 | begin agents, a running | a verified | b running, b failed
    assert seen == [True, True, True, True, True, False, False, True, False, False]


def test_each_transition_is_one_numbered_row(ws: WorkflowStore) -> None:
    run = new_run(ws)
    to_agents(ws, run)
    ws.phase_transition(run, "a", PhaseState.RUNNING, prompt_sha256="p")
    ws.phase_transition(run, "a", PhaseState.VERIFIED, memory_sha256="m")
    log = ws.transitions(run)
    assert [t["seq"] for t in log] == list(range(1, len(log) + 1))
    assert [(t["from_state"], t["to_state"]) for t in log][-2:] == [
        ("pending", "running"),
        ("running", "verified"),
    ]
    rec = ws.load(run)
    assert rec.seq == len(log) and rec.task_id == TASK and rec.domain == "technical"
    assert rec.phase("a").state is PhaseState.VERIFIED and rec.phase("a").attempts == 1
    assert rec.phase("a").memory_sha256 == "m"
    assert set(rec.steps) == {1, 2, 3, 4}


def test_steps_cannot_be_skipped_or_repeated(ws: WorkflowStore) -> None:
    run = new_run(ws)
    with pytest.raises(WorkflowIllegalTransition):
        ws.complete_step(run, 2, {"domain": "technical", "confidence": "CERTAIN"})
    ws.complete_step(run, 1, {"task_id": TASK}, task_id=TASK)
    with pytest.raises(WorkflowIllegalTransition):
        ws.complete_step(run, 1, {"task_id": TASK})
    with pytest.raises(WorkflowIllegalTransition):
        ws.begin_agents(run)
    assert ws.load(run).state is RunState.TASK_ID_GENERATED
    assert len(ws.transitions(run)) == 2  # nothing half-written by the refused moves


def test_phases_in_order_and_step5_needs_all_verified(ws: WorkflowStore) -> None:
    run = new_run(ws)
    to_agents(ws, run)
    with pytest.raises(WorkflowIllegalTransition):
        ws.phase_transition(run, "b", PhaseState.RUNNING)  # a first
    with pytest.raises(WorkflowIllegalTransition):
        ws.phase_transition(run, "a", PhaseState.VERIFIED)  # pending -> verified
    with pytest.raises(WorkflowIllegalTransition):
        ws.phase_transition(run, "zz", PhaseState.RUNNING)
    with pytest.raises(WorkflowIllegalTransition):
        ws.complete_step(run, 5, {"phases_completed": []})
    for p in ("a", "b"):
        ws.phase_transition(run, p, PhaseState.RUNNING)
        ws.phase_transition(run, p, PhaseState.VERIFIED)
    with pytest.raises(WorkflowIllegalTransition):
        ws.phase_transition(run, "a", PhaseState.RUNNING)  # verified never runs again
    with pytest.raises(WorkflowIllegalTransition, match="have no output"):
        # step 6 validates that steps 1-5 are all recorded
        ws.store.connection().execute(
            "UPDATE workflow_runs SET state = 'agents_triggered' WHERE run_id = ?", (run,)
        )
        ws.complete_step(run, 6, {"summary": "s"})


def test_block_and_unblock(ws: WorkflowStore) -> None:
    run = new_run(ws)
    ws.complete_step(run, 1, {"task_id": TASK}, task_id=TASK)
    ws.block(run, {"code": "E_X", "message": "boom"})
    rec = ws.load(run)
    assert rec.state is RunState.BLOCKED and rec.blocked_from is RunState.TASK_ID_GENERATED
    assert rec.last_error == {"code": "E_X", "message": "boom"}
    ws.block(run, {"code": "E_Y", "message": "again"})  # already blocked: error updated
    assert ws.load(run).last_error["code"] == "E_Y"  # type: ignore[index]
    assert ws.unblock(run) is RunState.TASK_ID_GENERATED
    assert ws.load(run).state is RunState.TASK_ID_GENERATED


def test_unknown_run(ws: WorkflowStore) -> None:
    with pytest.raises(WorkflowNotFound) as exc:
        ws.load("wf-nope")
    assert exc.value.code == "E_WORKFLOW_NOT_FOUND"


def test_task_ids_are_unique_across_runs(ws: WorkflowStore) -> None:
    a, b = new_run(ws, "wf-a"), new_run(ws, "wf-b")
    ws.complete_step(a, 1, {"task_id": TASK}, task_id=TASK)
    with pytest.raises(StoreConflict):
        ws.complete_step(b, 1, {"task_id": TASK}, task_id=TASK)
    assert ws.load(b).state is RunState.CREATED


def test_claim_refuses_a_live_owner_and_takes_over_a_dead_one(ws: WorkflowStore) -> None:
    run = new_run(ws)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with open(f"/proc/{child.pid}/stat", encoding="ascii") as fh:
            start = fh.read().rsplit(")", 1)[1].split()[19]
        live = f"{os.uname().nodename}:{child.pid}:{start}"
        assert owner_alive(live)
        ws.claim(run, live)
        with pytest.raises(WorkflowBusy) as exc:
            ws.claim(run, current_owner())
        assert exc.value.code == "E_WORKFLOW_BUSY"
        # Same pid, different start time: a reused pid is not the owner.
        assert not owner_alive(f"{os.uname().nodename}:{child.pid}:1")
    finally:
        child.kill()
        child.wait()
    assert not owner_alive(live)
    ws.claim(run, current_owner())  # the dead owner's claim is taken over
    assert ws.load(run).owner == current_owner()
    ws.release(run, current_owner())
    assert ws.load(run).owner is None


def test_list_runs_newest_first(ws: WorkflowStore) -> None:
    new_run(ws, "wf-a")
    new_run(ws, "wf-b")
    ws.complete_step("wf-a", 1, {"task_id": TASK}, task_id=TASK)
    assert [r.run_id for r in ws.list_runs()] == ["wf-a", "wf-b"]
    assert [r.run_id for r in ws.list_runs(limit=1)] == ["wf-a"]


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("step"), st.integers(1, 6)),
        st.tuples(st.just("begin"), st.none()),
        st.tuples(
            st.just("phase"),
            st.tuples(st.sampled_from(["a", "b"]), st.sampled_from(list(PhaseState))),
        ),
        st.tuples(st.just("block"), st.none()),
        st.tuples(st.just("unblock"), st.none()),
    ),
    max_size=40,
)
OUTPUTS = {
    1: {"task_id": TASK},
    2: {"domain": "technical", "confidence": "CERTAIN"},
    3: {"skill_config": {}},
    4: {"memory_file": "/m/x"},
    5: {"phases_completed": []},
    6: {"summary": "s"},
}


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_no_sequence_of_moves_breaks_the_order(ops: list[tuple[str, Any]]) -> None:
    """Whatever is attempted, stored state only ever moves along the tables."""
    ws = WorkflowStore(Store(":memory:"))
    run = new_run(ws)
    for kind, arg in ops:
        before = ws.load(run)
        try:
            if kind == "step":
                phases = [("a", "aa", "a.md"), ("b", "bb", "b.md")] if arg == 3 else []
                ws.complete_step(run, arg, OUTPUTS[arg], task_id=TASK if arg == 1 else None,
                                 phases=phases)  # fmt: skip
            elif kind == "begin":
                ws.begin_agents(run)
            elif kind == "phase":
                ws.phase_transition(run, arg[0], arg[1])
            elif kind == "block":
                ws.block(run, {"code": "E_X", "message": "x"})
            else:
                ws.unblock(run)
        except WorkflowIllegalTransition:
            after = ws.load(run)
            assert (after.state, after.seq, after.steps, after.phases) == (
                before.state,
                before.seq,
                before.steps,
                before.phases,
            )
        rec = ws.load(run)
        # Step outputs are always a prefix 1..k of the six steps.
        assert sorted(rec.steps) == list(range(1, len(rec.steps) + 1))
        # Phases: verified ones form a prefix, and nothing after a non-verified one started.
        states = [p.state for p in rec.phases]
        first_open = next((i for i, s in enumerate(states) if s is not PhaseState.VERIFIED), None)
        if first_open is not None:
            assert all(s is PhaseState.PENDING for s in states[first_open + 1 :])
        if 5 in rec.steps:
            assert states and all(s is PhaseState.VERIFIED for s in states)
        log = ws.transitions(run)
        assert [t["seq"] for t in log] == list(range(1, rec.seq + 1))
