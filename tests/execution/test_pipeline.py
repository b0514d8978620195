"""X2 + D5 run: plans executed with the 001 §10 fallback order, through real subprocesses."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skillrt.dispatch.pipeline import PlanSource
from skillrt.dispatch.service import forced_plan
from skillrt.execution.records import list_executions
from skillrt.execution.runners import DryRunRunner
from skillrt.loading.paths import FD_WALK
from skillrt.routing.plan import ActivationPlan, PlannedSkill, RouteResult
from skillrt.store.counters import skill_stats

from .support import ENV, make_runtime, scripted


def plan(*groups: tuple[str, ...], fallback: tuple[str, ...] = ()) -> ActivationPlan:
    names = [n for g in groups for n in g]
    return ActivationPlan(
        skills=tuple(PlannedSkill(n, False, 0.8, "low", len(g) > 1) for g in groups for n in g),
        groups=tuple(groups),
        estimated_cost="low",
        fallback_path=(*fallback, "no-skill", "ask-user") if names else ("ask-user",),
    )


def source(p: ActivationPlan, task: str = "do the task") -> PlanSource:
    return PlanSource("router", p, task, reason="test plan")


def skill_rule(name: str | None, **rule: object) -> dict[str, object]:
    return {"match": f"current_skill: {name if name else 'null'}", **rule}


def states(step, path: str) -> list[str]:
    out = [t.from_state for t in step.transitions if t.path == path][:1]
    return out + [t.to_state for t in step.transitions if t.path == path]


@pytest.fixture
def rt(examples_rt):
    return examples_rt


def run(rt, src: PlanSource, model) -> object:
    service = rt.dispatch_service()
    return service.run("", runner=model.runner(), environ=ENV, plan=src)


def test_primary_success(rt, tmp_path: Path) -> None:
    model = scripted(tmp_path, [skill_rule("code-review", stdout="LGTM")])
    result = run(rt, source(plan(("code-review",), fallback=("commit-messages",))), model)
    assert result.status == "success" and result.output == "LGTM"
    (step,) = result.steps
    assert step.path == "skill:code-review" and not step.fallback_used
    assert states(step, "skill:code-review") == ["selected", "running", "success"]


def test_fatal_failure_falls_back_to_the_next_best_skill(rt, tmp_path: Path) -> None:
    model = scripted(
        tmp_path,
        [
            skill_rule("code-review", exit=1, stderr="crashed"),
            skill_rule("sql-query-review", stdout="fallback answer"),
        ],
    )
    result = run(rt, source(plan(("code-review",), fallback=("sql-query-review",))), model)
    (step,) = result.steps
    assert result.status == "success" and result.output == "fallback answer"
    assert step.path == "skill:sql-query-review" and step.fallback_used
    assert states(step, "skill:code-review") == [
        "selected",
        "running",
        "fatal_failure",
        "fallback",
        "success",
    ]
    assert states(step, "skill:sql-query-review") == ["selected", "running", "success"]
    stats = skill_stats(rt.store, ["code-review", "sql-query-review"])
    assert (stats["code-review"].executions, stats["code-review"].failures) == (1, 1)
    assert stats["sql-query-review"].successes == 1
    assert stats["sql-query-review"].fallbacks == 1 and stats["code-review"].fallbacks == 0


def test_retry_then_ban_then_next_best_then_no_skill(rt, tmp_path: Path) -> None:
    model = scripted(
        tmp_path,
        [
            skill_rule("code-review", exit=75, stderr="busy"),
            skill_rule("sql-query-review", exit=2, stderr="nope"),
            skill_rule(None, stdout="generic answer"),
        ],
    )
    result = run(rt, source(plan(("code-review",), fallback=("sql-query-review",))), model)
    (step,) = result.steps
    assert result.output == "generic answer" and step.path == "no-skill"
    assert states(step, "skill:code-review") == [
        "selected",
        "running",
        "retryable_failure",
        "running",
        "retryable_failure",
        "fallback",
        "success",
    ]
    assert states(step, "skill:sql-query-review") == [
        "selected",
        "running",
        "fatal_failure",
        "fallback",
        "success",
    ]
    assert states(step, "no-skill") == ["selected", "running", "success"]
    assert result.banned_paths == ("skill:code-review",)
    assert [c["rule"] for c in model.calls()] == [0, 0, 1, 2]


def test_everything_fails_so_the_user_is_asked(rt, tmp_path: Path) -> None:
    model = scripted(tmp_path, [{"exit": 1, "stderr": "no luck"}])
    result = run(rt, source(plan(("code-review",), fallback=("sql-query-review",))), model)
    (step,) = result.steps
    assert result.status == "needs_user_input" and step.status == "needs_user_input"
    assert "skill:code-review" in result.question and "no-skill" in result.question
    for path in ("skill:code-review", "skill:sql-query-review", "no-skill"):
        assert states(step, path)[-2:] == ["fallback", "exit"]


def test_missing_prerequisite_is_fatal_without_calling_the_runner(rt, tmp_path: Path) -> None:
    model = scripted(tmp_path, [{"stdout": "generic"}])
    result = rt.run("$acme:gh-fix-ci the build is red", runner=model.runner(), environ=ENV)
    (step,) = result.steps
    assert step.path == "no-skill" and result.output == "generic"
    assert states(step, "skill:acme:gh-fix-ci") == [
        "selected",
        "running",
        "fatal_failure",
        "fallback",
        "success",
    ]
    failed = step.dispatches[0]
    assert failed.error["code"] == "E_PREREQUISITE_MISSING"
    assert failed.error["missing"] == ["bin:gh"]
    assert "current_skill: null" in model.calls()[0]["prompt_head"]
    assert len(model.calls()) == 1  # the skill itself never reached the runner
    rows = [r for r in list_executions(rt.store) if r["skill"] == "acme:gh-fix-ci"]
    assert rows[0]["error_code"] == "E_PREREQUISITE_MISSING"
    # Not counted against the skill's success rate: the router reports it unavailable.
    assert "acme:gh-fix-ci" not in skill_stats(rt.store, ["acme:gh-fix-ci"])


def test_unavailable_fallback_candidates_are_skipped(rt, tmp_path: Path) -> None:
    model = scripted(tmp_path, [skill_rule("code-review", exit=1), skill_rule(None, stdout="ok")])
    result = run(rt, source(plan(("code-review",), fallback=("acme:gh-fix-ci",))), model)
    (step,) = result.steps
    assert [(s.path, s.reason) for s in step.skipped] == [
        ("skill:acme:gh-fix-ci", "unavailable: missing bin:gh")
    ]
    assert step.path == "no-skill"


def test_a_banned_path_is_not_tried_again_in_the_round(rt, tmp_path: Path) -> None:
    model = scripted(
        tmp_path,
        [
            skill_rule("code-review", exit=75),
            skill_rule("commit-messages", exit=1),
            skill_rule(None, stdout="ok"),
        ],
    )
    p = plan(("code-review",), ("commit-messages",), fallback=("code-review",))
    result = run(rt, source(p), model)
    first, second = result.steps
    assert first.path == "no-skill" and second.path == "no-skill"
    assert ("skill:code-review", "runs as its own step of the plan") in [
        (s.path, s.reason) for s in second.skipped
    ]
    assert sum(1 for c in model.calls() if c["rule"] == 0) == 2  # two tries, then banned


def test_banned_primary_of_a_later_step_is_skipped(rt, tmp_path: Path) -> None:
    model = scripted(tmp_path, [skill_rule("code-review", exit=75), skill_rule(None, stdout="ok")])
    p = plan(("code-review",), ("code-review",))
    result = run(rt, source(p), model)
    assert [s.status for s in result.steps] == ["success", "success"]
    assert [(s.path, s.reason) for s in result.steps[1].skipped] == [
        ("skill:code-review", "banned for this round (failed twice)")
    ]
    assert sum(1 for c in model.calls() if c["rule"] == 0) == 2


def test_a_runner_that_cannot_run_stops_the_step(rt) -> None:
    from skillrt.execution.runners import CommandRunner

    service = rt.dispatch_service()
    result = service.run(
        "",
        runner=CommandRunner("no-such-model-cli-xyz", env=ENV),
        environ=ENV,
        plan=source(plan(("code-review",), fallback=("sql-query-review",))),
    )
    (step,) = result.steps
    assert result.status == "failed" and step.error["exit_code"] == 127
    assert len(step.dispatches) == 1
    assert states(step, "skill:code-review")[-2:] == ["fallback", "exit"]


def test_parallel_group_runs_both_skills_at_once(rt, tmp_path: Path) -> None:
    meet = str(tmp_path)
    model = scripted(
        tmp_path,
        [
            skill_rule("code-review", rendezvous=[meet, "a", "b"]),
            skill_rule("acme:release-notes", rendezvous=[meet, "b", "a"]),
        ],
    )
    result = run(rt, source(plan(("code-review", "acme:release-notes"))), model)
    assert [s.planned for s in result.steps] == ["code-review", "acme:release-notes"]
    assert [s.output for s in result.steps] == ["a met b", "b met a"]  # both ran at once
    assert result.output == "## code-review\n\na met b\n\n## acme:release-notes\n\nb met a\n"


def test_requires_now_sub_skills_are_part_of_the_result_tree(rt) -> None:
    result = rt.run("$executing-plans carry out task 2", runner=DryRunRunner(), environ=ENV)
    (step,) = result.steps
    tree = [(n.skill, n.depth) for n in step.dispatches[0].walk()]
    assert tree == [
        ("executing-plans", 0),
        ("systematic-debugging", 1),
        ("test-driven-development", 2),
    ]
    assert result.source == "mention" and result.task == "carry out task 2"


def test_mentions_that_need_the_user_stop_before_running(rt, tmp_path: Path) -> None:
    model = scripted(tmp_path, [{"stdout": "x"}])
    result = rt.run("$code-review and $commit-messages please", runner=model.runner(), environ=ENV)
    assert result.status == "needs_user_input" and result.steps == ()
    assert "code-review" in result.question
    assert model.calls() == []


def test_unknown_mention_is_ordinary_text_for_the_router(rt, monkeypatch) -> None:
    seen = []

    def route(text: str, **_: object) -> RouteResult:
        seen.append(text)
        return RouteResult("r-9", text, forced_plan(("commit-messages",), {}), "why", ())

    monkeypatch.setattr(rt.router, "route", route)
    result = rt.run("$nope-nothing write a message", runner=DryRunRunner(), environ=ENV)
    assert seen and result.source == "router" and result.route_id == "r-9"
    assert result.steps[0].path == "skill:commit-messages"


def test_run_skill_text_runs_that_skill(rt) -> None:
    result = rt.run("run_skill code-review: look at the diff", runner=DryRunRunner(), environ=ENV)
    assert result.source == "run_skill" and result.task == "look at the diff"
    assert result.steps[0].path == "skill:code-review"
    missing = rt.run("/run_skill nope-x do it", runner=DryRunRunner(), environ=ENV)
    assert missing.status == "needs_user_input" and "nope-x" in missing.question


def test_no_skill_plan(rt, tmp_path: Path) -> None:
    model = scripted(tmp_path, [skill_rule(None, stdout="plain answer")])
    result = run(rt, source(plan()), model)
    assert result.status == "success" and result.steps[0].path == "no-skill"
    assert result.output == "plain answer"


def test_dry_run_executions_do_not_feed_stats(rt) -> None:
    rt.run("$code-review look", runner=DryRunRunner(), environ=ENV)
    assert skill_stats(rt.store, ["code-review"]) == {}
    assert list_executions(rt.store)[0]["runner"] == "dry-run"


def test_persisted_store_keeps_the_run(make_skill, tmp_path: Path) -> None:
    make_skill("solo-x")
    rt = make_runtime(tmp_path / "skills", tmp=tmp_path, persist=True)
    result = rt.run("$solo-x go", runner=DryRunRunner(), environ=ENV)
    rt.close()
    rt2 = make_runtime(tmp_path / "skills", tmp=tmp_path, persist=True)
    rows = list_executions(rt2.store, run_id=result.run_id)
    assert [r["skill"] for r in rows] == ["solo-x"]


_OPENED: list[str] | None = None


def _watch_opens(event: str, args: tuple[object, ...]) -> None:
    if event == "open" and _OPENED is not None and isinstance(args[0], str):
        _OPENED.append(args[0])


@pytest.mark.skipif(not FD_WALK, reason="the jail opens by descriptor only where supported")
def test_a_mention_run_reads_skill_md_once_through_the_jail(make_skill, tmp_path: Path) -> None:
    global _OPENED
    make_skill("solo-x", body="# Solo\n\nDo the thing. Then stop.\n")
    rt = make_runtime(tmp_path / "skills", tmp=tmp_path)
    assert rt.registry.get("solo-x")  # discovery reads SKILL.md itself; the run starts after
    sys.addaudithook(_watch_opens)  # hooks cannot be removed: this one only records in here
    _OPENED = []
    try:
        result = rt.run("$solo-x go", runner=DryRunRunner(), environ=ENV)
        opened, _OPENED = _OPENED, None
    finally:
        _OPENED = None
    assert result.ok and result.source == "mention"
    assert "Do the thing" in result.output  # the body reached the prompt
    skill_md = [p for p in opened if Path(p).name == "SKILL.md"]
    # Once, and by the jail's descriptor walk (a bare name under an opened folder); an
    # open by full path would be a read around the loader.
    assert skill_md == ["SKILL.md"], opened
    rt.close()
