"""The six-step protocol through the library API (runtime.workflow_*)."""

from __future__ import annotations

import os
import re
import sqlite3
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillrt.errors import (
    MemoryPathEscape,
    MemoryVerificationFailed,
    PhaseRunFailed,
    RunnerError,
    SkillrtError,
    UsageError,
    WorkflowConfigError,
    WorkflowIllegalTransition,
    WorkflowNotFound,
    WorkflowRunnerRequired,
)
from skillrt.execution.base import RunnerResult
from skillrt.orchestration.events import COMPLETE_MARKER, WorkflowEvent
from skillrt.runtime import SkillRuntime

from .conftest import InstantRunner, make_config, memory_text, write_composite

QUERY = "Add CSV export to the reports API, with tests"


class SimulatedCrash(BaseException):
    """Raised from a checkpoint: the process 'dies' there (nothing below runs)."""


def crash_at(point: str) -> Any:
    def checkpoint(name: str, run_id: str) -> None:
        if name == point:
            raise SimulatedCrash(name)

    return checkpoint


def only_run(rt: SkillRuntime) -> str:
    [run] = rt.workflow_list()
    return run.run_id


def normalised_memory(memory_dir: Path, task_id: str) -> dict[str, str]:
    return {
        p.name.replace(task_id, "TASK"): p.read_text(encoding="utf-8").replace(task_id, "TASK")
        for p in sorted(memory_dir.glob(f"{task_id}-*"))
    }


def test_full_run_honours_the_data_contract(runtime: SkillRuntime) -> None:
    runner = InstantRunner()
    events: list[WorkflowEvent] = []
    status = runtime.workflow_start("mini-flow", QUERY, runner=runner, observer=events.append)
    assert status.state == "completed" and status.complete
    assert list(status.steps) == ["1", "2", "3", "4", "5", "6"]
    task = status.steps["1"]["task_id"]
    assert re.fullmatch(r"[0-9a-f]{12}", task) and status.task_id == task
    assert status.steps["2"]["domain"] in ("technical", "personal", "creative", "professional")
    assert status.steps["2"]["confidence"] in ("CERTAIN", "PROBABLE", "UNCERTAIN")
    cfg = status.steps["3"]["skill_config"]
    assert [(p["id"], p["agent"]) for p in cfg["phases"]] == [
        ("plan", "planner"),
        ("build", "builder"),
        ("check", "checker"),
    ]
    assert cfg["phases"][1]["context"] == ["{task_id}-*.md"]
    memory_dir = Path(status.memory_dir)
    context = Path(status.steps["4"]["memory_file"])
    assert context == memory_dir / f"{task}-workflow-context.md"
    text = context.read_text(encoding="utf-8")
    assert QUERY in text and status.steps["2"]["domain"] in text and "planner" in text
    completed = status.steps["5"]["phases_completed"]
    assert [c["phase_id"] for c in completed] == ["plan", "build", "check"]
    assert completed[0]["memory_file"] == str(memory_dir / f"{task}-planner-memory.md")
    assert status.phases_completed == [
        {**{k: c[k] for k in ("phase_id", "agent", "memory_file")}, "verified_at": pv}
        for c, pv in zip(completed, [p.verified_at for p in status.phases], strict=True)
    ]
    assert "completed successfully" in status.steps["6"]["summary"]
    assert runner.calls == ["plan", "build", "check"]
    assert {Path(f).name for f in status.memory_files} == {
        f"{task}-workflow-context.md",
        f"{task}-planner-memory.md",
        f"{task}-builder-memory.md",
        f"{task}-checker-memory.md",
        f"{task}-workflow-summary.md",
    }
    assert events[0].kind == "created" and events[-1].kind == "completed"
    assert events[-1].directive == COMPLETE_MARKER
    assert [e.step for e in events if e.kind == "step"] == [1, 2, 3, 4, 5]
    assert [e.seq for e in events] == sorted(e.seq for e in events)


def test_every_directive_follows_its_commit(runtime: SkillRuntime) -> None:
    """Invariant 7: when a directive is emitted, another connection already sees the state."""
    db = runtime.config.state_db
    seen: list[str] = []

    def other() -> sqlite3.Connection:
        conn = sqlite3.connect(db)
        conn.row_factory = sqlite3.Row
        return conn

    def observer(event: WorkflowEvent) -> None:
        with other() as conn:
            run = conn.execute(
                "SELECT state, seq FROM workflow_runs WHERE run_id = ?", (event.run_id,)
            ).fetchone()
            assert run["state"] == event.state, event
            assert run["seq"] == event.seq, event
            if event.kind == "step":
                assert conn.execute(
                    "SELECT 1 FROM workflow_steps WHERE run_id = ? AND step = ?",
                    (event.run_id, event.step),
                ).fetchone()
            expected = {
                "phase_started": "running",
                "phase_verified": "verified",
                "phase_failed": "failed",
            }.get(event.kind)
            if expected:
                phase = conn.execute(
                    "SELECT state FROM workflow_phases WHERE run_id = ? AND phase_id = ?",
                    (event.run_id, event.phase_id),
                ).fetchone()
                assert phase["state"] == expected
        seen.append(event.kind)

    def agent_sees_running(phase: str, prompt: str) -> None:
        with other() as conn:
            state = conn.execute(
                "SELECT state FROM workflow_phases WHERE phase_id = ?", (phase,)
            ).fetchone()["state"]
        assert state == "running"  # saved before the agent was started

    runner = InstantRunner(before=agent_sees_running)
    runtime.workflow_start("mini-flow", QUERY, runner=runner, observer=observer)
    assert seen.count("phase_verified") == 3 and seen[-1] == "completed"


def test_context_patterns_and_learnings_reach_the_prompt(
    runtime: SkillRuntime, tmp_path: Path
) -> None:
    learnings = tmp_path / "state" / "learnings"
    learnings.mkdir(parents=True)
    (learnings / "technical.md").write_text(
        "# Technical\n\n- Always check the fixtures first.\n", encoding="utf-8"
    )
    runner = InstantRunner()
    status = runtime.workflow_start("mini-flow", QUERY, runner=runner, domain="technical")
    task = status.task_id
    assert status.steps["2"]["method"] == "explicit"

    def ctx_files(phase: str) -> list[str]:
        return re.findall(r"^### (\S+)$", runner.prompts[phase], re.M)

    assert ctx_files("plan") == [f"{task}-workflow-context.md"]
    # {task_id}-*.md: earlier phases only — never its own or a later phase's file.
    assert ctx_files("build") == [f"{task}-planner-memory.md", f"{task}-workflow-context.md"]
    assert ctx_files("check") == [f"{task}-workflow-context.md", f"{task}-builder-memory.md"]
    for prompt in runner.prompts.values():
        assert "Always check the fixtures first." in prompt  # step 0: learning injection
        assert "execution_mode: delegated" in prompt and "request_id: wf-" in prompt
        assert QUERY in prompt  # through the workflow context file
    assert "Plan it. Write " + f"{task}-planner-memory.md." in runner.prompts["plan"]
    memory_line = re.search(r"^Memory file: (.+)$", runner.prompts["build"], re.M)
    assert memory_line and memory_line[1] == str(
        Path(status.memory_dir) / f"{task}-builder-memory.md"
    )
    # Through the dispatcher: delegated header, role guide, the composite skill's body.
    role = runtime.config.dispatch.default_role  # "builder" has no role guide
    build = runner.prompts["build"]
    assert f"| role: {role} |" in build and f"  role: {role}" in build
    assert f'<role-guide role="{role}">' in build
    assert "<skill>" in build and "[Skill: mini-flow" in build
    assert "current_skill: mini-flow" in build


def test_phase_roles_pick_the_role_guide(runtime: SkillRuntime, skills_dir: Path) -> None:
    write_composite(
        skills_dir,
        "role-flow",
        phases=[
            {"id": "look", "agent": "scout", "role": "explorer", "instructions": "Look."},
            {"id": "fix", "agent": "fixer", "instructions": "Fix."},  # agent named as a role
        ],
    )
    runtime.refresh()
    runner = InstantRunner()
    done = runtime.workflow_start("role-flow", QUERY, runner=runner)
    assert done.complete
    assert '<role-guide role="explorer">' in runner.prompts["look"]
    assert '<role-guide role="fixer">' in runner.prompts["fix"]
    # Every phase run is recorded by the dispatcher, tagged with the run id.
    rows = (
        runtime.store.connection()
        .execute(
            "SELECT role, status, execution_mode FROM executions WHERE run_id = ? ORDER BY rowid",
            (done.run_id,),
        )
        .fetchall()
    )
    assert [tuple(r) for r in rows] == [
        ("explorer", "success", "delegated"),
        ("fixer", "success", "delegated"),
    ]


def test_an_unknown_role_is_refused_before_the_run_starts(
    runtime: SkillRuntime, skills_dir: Path
) -> None:
    write_composite(
        skills_dir,
        "bad-role",
        phases=[{"id": "a", "agent": "a", "role": "wizard", "instructions": "x"}],
    )
    runtime.refresh()
    with pytest.raises(SkillrtError) as exc:
        runtime.workflow_start("bad-role", QUERY, runner=InstantRunner())
    assert exc.value.code == "E_UNKNOWN_ROLE"
    assert runtime.workflow_list() == []


def test_learnings_are_merged_when_the_run_completes(runtime: SkillRuntime, tmp_path: Path) -> None:
    runner = InstantRunner(
        overrides={
            "plan": memory_text("plan", lesson="Shared lesson."),
            "build": memory_text("build", lesson="Build lesson."),
            "check": memory_text("check", lesson="Shared lesson."),
        }
    )
    first = runtime.workflow_start("mini-flow", QUERY, runner=runner, domain="technical")
    path = tmp_path / "state" / "learnings" / "technical.md"
    text = path.read_text(encoding="utf-8")
    assert f"- Shared lesson. _(task {first.task_id}, phase plan)_" in text
    assert f"- Build lesson. _(task {first.task_id}, phase build)_" in text
    assert text.count("Shared lesson") == 1
    assert first.steps["6"]["learnings"]["file"] == str(path)
    second = runtime.workflow_start("mini-flow", QUERY, runner=runner, domain="technical")
    assert path.read_text(encoding="utf-8") == text  # nothing new to learn
    assert second.complete
    # The next run's agents started with what the first one learned.
    assert "Build lesson." in runner.prompts["plan"]


def test_runner_failure_blocks_and_resume_continues(runtime: SkillRuntime) -> None:
    class Failing(InstantRunner):
        def run(self, prompt: str, *, timeout_s: float | None = None) -> RunnerResult:
            if "phase 2/3: build" in prompt:
                raise RunnerError("model crashed", retryable=True)
            return super().run(prompt, timeout_s=timeout_s)

    first = Failing()
    with pytest.raises(PhaseRunFailed) as exc:
        runtime.workflow_start("mini-flow", QUERY, runner=first)
    run_id = exc.value.context["run_id"]
    assert exc.value.code == "E_WORKFLOW_PHASE_FAILED" and exc.value.context["retryable"]
    status = runtime.workflow_status(run_id)
    assert (status.state, status.blocked_from) == ("blocked", "triggering_agents")
    assert [p.state for p in status.phases] == ["verified", "failed", "pending"]
    assert status.last_error and status.last_error["code"] == "E_WORKFLOW_PHASE_FAILED"
    assert "resume" in status.next

    second = InstantRunner()
    done = runtime.workflow_resume(run_id, runner=second)
    assert done.state == "completed"
    assert second.calls == ["build", "check"]  # plan was verified: it never runs again
    assert [p.attempts for p in done.phases] == [1, 2, 1]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (None, "missing"),
        ("", "empty"),
        ("half a file\n## Notes\n", "not_completed"),
        ("x\nStatus: BLOCKED\nWhich API version?\n", "blocked"),
    ],
)
def test_bad_memory_files_block_the_phase(
    runtime: SkillRuntime, text: str | None, reason: str
) -> None:
    runner = InstantRunner(overrides={"build": text})
    with pytest.raises(MemoryVerificationFailed) as exc:
        runtime.workflow_start("mini-flow", QUERY, runner=runner)
    assert exc.value.code == "E_MEMORY_VERIFICATION_FAILED"
    assert exc.value.context["reason"] == reason and exc.value.context["phase_id"] == "build"
    if reason == "blocked":  # the agent's own answer: no second attempt
        assert runner.calls == ["plan", "build"]
    else:  # one more attempt, told why; then blocked. check never started.
        assert runner.calls == ["plan", "build", "build"]
        assert "## Previous attempt" in runner.prompts["build"]
        # The second attempt's prompt says why the first was refused (the same reason).
        assert exc.value.message.rstrip(".") in runner.prompts["build"]
    run_id = exc.value.context["run_id"]
    status = runtime.workflow_status(run_id)
    assert status.state == "blocked" and status.phases[1].state == "failed"
    assert "advance" in status.next

    # The outside fix: write a proper file, then advance verifies it (no re-run).
    Path(status.phases[1].memory_file).write_text(memory_text("build"), encoding="utf-8")
    advanced = runtime.workflow_advance(run_id, "build")
    assert advanced.state == "triggering_agents"
    assert [p.state for p in advanced.phases] == ["verified", "verified", "pending"]
    finisher = InstantRunner()
    assert runtime.workflow_resume(run_id, runner=finisher).state == "completed"
    assert finisher.calls == ["check"]


def test_manual_mode_is_driven_by_advance(runtime: SkillRuntime) -> None:
    events: list[WorkflowEvent] = []
    status = runtime.workflow_start("mini-flow", QUERY, manual=True, observer=events.append)
    run_id = status.run_id
    assert status.state == "triggering_agents" and status.mode == "manual"
    assert [p.state for p in status.phases] == ["running", "pending", "pending"]
    awaiting = events[-1]
    assert awaiting.kind == "phase_awaiting" and awaiting.phase_id == "plan"
    assert awaiting.prompt and f"workflow advance {run_id} plan" in awaiting.directive

    with pytest.raises(MemoryVerificationFailed) as exc:
        runtime.workflow_advance(run_id, "plan")
    assert exc.value.context["reason"] == "missing" and exc.value.context["run_id"] == run_id
    assert runtime.workflow_status(run_id).state == "triggering_agents"  # still waiting
    with pytest.raises(WorkflowIllegalTransition):
        runtime.workflow_advance(run_id, "build")  # out of order
    with pytest.raises(WorkflowIllegalTransition):
        runtime.workflow_advance(run_id, "nope")

    for phase in ("plan", "build", "check"):
        current = runtime.workflow_status(run_id)
        [target] = [p for p in current.phases if p.phase_id == phase]
        assert target.state == "running"
        Path(target.memory_file).write_text(memory_text(phase), encoding="utf-8")
        events.clear()
        status = runtime.workflow_advance(run_id, phase, observer=events.append)
    assert status.state == "completed" and events[-1].directive == COMPLETE_MARKER
    with pytest.raises(WorkflowIllegalTransition):
        runtime.workflow_advance(run_id, "check")
    # resume on a completed run changes nothing
    assert runtime.workflow_resume(run_id).transitions == status.transitions


def test_manual_resume_repeats_the_pending_directive(runtime: SkillRuntime) -> None:
    status = runtime.workflow_start("mini-flow", QUERY, manual=True)
    events: list[WorkflowEvent] = []
    again = runtime.workflow_resume(status.run_id, observer=events.append)
    assert again.transitions == status.transitions  # nothing new was committed
    assert [e.kind for e in events] == ["phase_awaiting"] and events[0].phase_id == "plan"


def test_advance_before_step_5_is_illegal(runtime: SkillRuntime) -> None:
    with pytest.raises(SimulatedCrash):
        runtime.workflow_start(
            "mini-flow", QUERY, runner=InstantRunner(), checkpoint=crash_at("step:4")
        )
    run_id = only_run(runtime)
    with pytest.raises(WorkflowIllegalTransition, match="has not started"):
        runtime.workflow_advance(run_id, "plan")


POINTS = [
    "step:1",
    "step:2",
    "step:3",
    "step:4",
    "step:5",
    "phase:plan",
    "phase:plan:running",
    "phase:plan:written",
    "phase:build",
    "phase:build:running",
    "phase:build:written",
    "phase:check:written",
    "step:6",
    "step:6:commit",
    "complete",
]


@pytest.mark.parametrize("point", POINTS)
def test_in_process_crash_then_resume_equals_an_uninterrupted_run(
    tmp_path: Path, skills_dir: Path, point: str
) -> None:
    base_rt = SkillRuntime(make_config(tmp_path / "base"), roots=[skills_dir])
    base = base_rt.workflow_start("mini-flow", QUERY, runner=InstantRunner(), domain="technical")
    base_rt.close()

    rt = SkillRuntime(make_config(tmp_path / "crash"), roots=[skills_dir])
    first = InstantRunner()
    with pytest.raises(SimulatedCrash):
        rt.workflow_start(
            "mini-flow", QUERY, runner=first, domain="technical", checkpoint=crash_at(point)
        )
    run_id = only_run(rt)
    second = InstantRunner()
    done = rt.workflow_resume(run_id, runner=second)
    assert done.state == "completed"
    # Every crash point here is outside the agent call, so each phase's agent ran exactly
    # once overall: one whose file was written before the crash is verified, not re-run.
    assert not set(first.calls) & set(second.calls), (first.calls, second.calls)
    assert sorted(first.calls + second.calls) == ["build", "check", "plan"]
    assert done.steps["1"]["task_id"] == done.task_id
    assert [p.state for p in done.phases] == ["verified"] * 3
    assert normalised_memory(Path(done.memory_dir), done.task_id or "") == normalised_memory(
        Path(base.memory_dir), base.task_id or ""
    )
    strip = {"1", "4", "5", "6"}  # outputs that embed the task id or paths
    assert {k: v for k, v in done.steps.items() if k not in strip} == {
        k: v for k, v in base.steps.items() if k not in strip
    }
    learn = (tmp_path / "crash" / "state" / "learnings" / "technical.md").read_text("utf-8")
    base_learn = (tmp_path / "base" / "state" / "learnings" / "technical.md").read_text("utf-8")
    assert learn.replace(done.task_id or "", "T") == base_learn.replace(base.task_id or "", "T")
    rt.close()


def test_resume_runs_the_config_it_started_with(runtime: SkillRuntime, skills_dir: Path) -> None:
    with pytest.raises(SimulatedCrash):
        runtime.workflow_start(
            "mini-flow", QUERY, runner=InstantRunner(), checkpoint=crash_at("step:4")
        )
    write_composite(
        skills_dir,
        phases=[{"id": "other", "agent": "other", "instructions": "changed"}],
    )
    runner = InstantRunner()
    done = runtime.workflow_resume(only_run(runtime), runner=runner)
    assert runner.calls == ["plan", "build", "check"]
    assert done.complete


def test_symlinked_memory_file_pointing_outside_blocks(
    runtime: SkillRuntime, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(memory_text("plan"), encoding="utf-8")

    def plant(phase: str, prompt: str) -> None:
        path = Path(re.search(r"^Memory file: (.+)$", prompt, re.M)[1])  # type: ignore[index]
        path.symlink_to(outside)

    runner = InstantRunner(before=plant, overrides={"plan": None})
    with pytest.raises(MemoryPathEscape) as exc:
        runtime.workflow_start("mini-flow", QUERY, runner=runner)
    assert exc.value.code == "E_MEMORY_PATH_ESCAPE"
    assert runtime.workflow_status(exc.value.context["run_id"]).state == "blocked"


def test_bad_requests(runtime: SkillRuntime, skills_dir: Path, make_skill: Any) -> None:
    with pytest.raises(UsageError):
        runtime.workflow_start("mini-flow", "   ", runner=InstantRunner())
    with pytest.raises(WorkflowRunnerRequired):
        runtime.workflow_start("mini-flow", QUERY)
    with pytest.raises(WorkflowNotFound):
        runtime.workflow_status("wf-000000000000")
    make_skill("plain-skill", root=skills_dir)
    runtime.refresh()
    with pytest.raises(WorkflowConfigError, match="not a composite skill"):
        runtime.workflow_start("plain-skill", QUERY, runner=InstantRunner())
    write_composite(skills_dir, "broken-flow", config="name: broken-flow\nphases: []\n")
    runtime.refresh()
    with pytest.raises(WorkflowConfigError):
        runtime.workflow_start("broken-flow", QUERY, runner=InstantRunner())
    assert runtime.workflow_list() == []  # nothing was created by refused starts


def test_skill_given_as_a_folder(runtime: SkillRuntime, skills_dir: Path) -> None:
    done = runtime.workflow_start(
        str(skills_dir / "develop-feature"), QUERY, runner=InstantRunner()
    )
    assert done.skill == "develop-feature" and len(done.phases) == 4


def test_timeouts_reach_the_runner(runtime: SkillRuntime, skills_dir: Path) -> None:
    write_composite(
        skills_dir,
        "timed-flow",
        phases=[
            {"id": "a", "agent": "a", "instructions": "x", "timeout_s": 7},
            {"id": "b", "agent": "b", "instructions": "y"},
        ],
    )
    runtime.refresh()
    seen: list[float | None] = []

    class Timed(InstantRunner):
        def run(self, prompt: str, *, timeout_s: float | None = None) -> RunnerResult:
            seen.append(timeout_s)
            return super().run(prompt, timeout_s=timeout_s)

    runtime.workflow_start("timed-flow", QUERY, runner=Timed())
    assert seen == [7.0, runtime.config.execution.timeout_s]


def test_two_workflows_at_once_do_not_interfere(tmp_path: Path, skills_dir: Path) -> None:
    config = make_config(tmp_path)
    results: dict[int, Any] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def work(i: int) -> None:
        rt = SkillRuntime(config, roots=[skills_dir])  # its own connections
        try:
            runner = InstantRunner(before=lambda *_: barrier.wait(timeout=30) and None)
            results[i] = rt.workflow_start("mini-flow", f"{QUERY} #{i}", runner=runner)
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            rt.close()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert all(r.state == "completed" for r in results.values())
    assert len({r.task_id for r in results.values()}) == 4
    rt = SkillRuntime(config, roots=[skills_dir])
    for r in results.values():
        log = rt.workflows().transitions(r.run_id)
        assert [t["seq"] for t in log] == list(range(1, len(log) + 1))
        assert len(log) == 1 + 5 + 1 + 2 * 3 + 1  # created, steps, begin, phases, step 6
    rt.close()
    assert os.path.exists(config.state_db)


MANUAL_OPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("write"),
            st.sampled_from(["plan", "build", "check"]),
            st.sampled_from(["good", "bad", "blocked"]),
        ),
        st.tuples(st.just("advance"), st.sampled_from(["plan", "build", "check", "nope"])),
        st.tuples(st.just("resume"), st.none()),
    ),
    max_size=25,
)
AGENTS = {"plan": "planner", "build": "builder", "check": "checker"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(MANUAL_OPS)
def test_manual_mode_under_any_sequence_of_actions(ops: list[tuple[Any, ...]]) -> None:
    """Whatever an outside agent writes and whatever is advanced, verification gates order."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        skills = base / "skills"
        write_composite(skills)
        rt = SkillRuntime(make_config(base), roots=[skills], persist=False)
        status = rt.workflow_start("mini-flow", QUERY, manual=True, domain="technical")
        run_id, memory = status.run_id, Path(status.memory_dir)
        verified_files: dict[str, str] = {}
        for op in ops:
            before = rt.workflow_status(run_id)
            try:
                if op[0] == "write":
                    _, phase, kind = op
                    text = {
                        "good": memory_text(phase),
                        "bad": "half\n",
                        "blocked": "x\nStatus: BLOCKED\n?\n",
                    }[kind]
                    (memory / f"{status.task_id}-{AGENTS[phase]}-memory.md").write_text(
                        text, encoding="utf-8"
                    )
                elif op[0] == "advance":
                    rt.workflow_advance(run_id, op[1])
                else:
                    rt.workflow_resume(run_id)
            except (MemoryVerificationFailed, WorkflowIllegalTransition):
                after = rt.workflow_status(run_id)
                assert after.transitions == before.transitions  # refused: nothing moved
            now = rt.workflow_status(run_id)
            states = [p.state for p in now.phases]
            done = [s == "verified" for s in states]
            assert done == sorted(done, reverse=True)  # verified phases form a prefix
            assert states.count("running") <= 1
            for p in now.phases:
                if p.state == "verified":
                    verified_files.setdefault(p.phase_id, p.memory_sha256 or "")
                    assert p.memory_sha256 == verified_files[p.phase_id]  # verified once
            assert now.complete == all(done) == (now.state == "completed")
        rt.close()


def test_the_bundled_example_learnings_reach_every_phase(
    runtime: SkillRuntime, tmp_path: Path
) -> None:
    import shutil

    from .conftest import REPO

    learnings = tmp_path / "learnings"
    shutil.copytree(REPO / "examples" / "learnings", learnings)
    runner = InstantRunner()
    done = runtime.workflow_start(
        "develop-feature", QUERY, runner=runner, domain="technical", learnings_dir=learnings
    )
    assert done.learnings_dir == str(learnings)
    for prompt in runner.prompts.values():
        assert "A test that was never seen failing proves nothing" in prompt
    text = (learnings / "technical.md").read_text(encoding="utf-8")
    assert text.startswith("# Technical domain learnings")  # hand-written notes kept
    assert f"_(task {done.task_id}, phase verification)_" in text


def test_seed_002s_own_phases_run_on_the_role_guide_and_the_skill_body(
    runtime: SkillRuntime, skills_dir: Path, tmp_path: Path
) -> None:
    # Seed 002's data contract: each phase names only its id and its agent.
    config = {
        "name": "develop-project",
        "phases": [
            {"id": "clarification", "agent": "clarification"},
            {"id": "research", "agent": "explorer"},
        ],
    }
    folder = write_composite(skills_dir, "develop-project", config=config)
    (folder / "SKILL.md").write_text(
        "---\nname: develop-project\ndescription: Clarify, then research a project.\n---\n"
        "# Develop a project\n\nClarify the goal first; then research the codebase.\n",
        encoding="utf-8",
    )
    runtime.refresh()
    runner = InstantRunner()
    done = runtime.workflow_start("develop-project", QUERY, runner=runner)
    assert done.complete
    contract = runtime.workflow_status(done.run_id).steps["3"]["skill_config"]["phases"]
    assert [(p["id"], p["agent"], p["instructions"]) for p in contract] == [
        ("clarification", "clarification", None),
        ("research", "explorer", None),
    ]
    for phase, role in (("clarification", "fixer"), ("research", "explorer")):
        prompt = runner.prompts[phase]
        assert f'<role-guide role="{role}">' in prompt  # its agent's role guide
        assert "Clarify the goal first; then research the codebase." in prompt  # the body
        assert "gives this phase no instructions of its own" in prompt
    # Started from its folder (outside the registry), the body still reaches the agent.
    other = write_composite(
        tmp_path / "elsewhere", "loose-flow", config={**config, "name": "loose-flow"}
    )
    runner = InstantRunner()
    done = runtime.workflow_start(str(other), QUERY, runner=runner)
    assert done.complete
    assert "# loose-flow" in runner.prompts["clarification"]
