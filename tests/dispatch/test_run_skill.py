"""D6: run_skill (001 §19)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.dispatch.prompt import header_yaml_in
from skillrt.dispatch.run_skill import find_run_skill_calls, parse_run_skill
from skillrt.execution.runners import DryRunRunner

from .support import ENV, make_runtime, scripted


@pytest.mark.parametrize(
    ("text", "skill", "task", "form"),
    [
        ("/run_skill code-review check the diff", "code-review", "check the diff", "slash"),
        (
            "  /run_skill acme:gh-fix-ci fix CI\nmore lines",
            "acme:gh-fix-ci",
            "fix CI\nmore lines",
            "slash",
        ),
        ("run_skill code-review: check the diff", "code-review", "check the diff", "message"),
        ("run_skill acme:gh-fix-ci: fix it", "acme:gh-fix-ci", "fix it", "message"),
        ("/run_skill solo", "solo", "", "slash"),
    ],
)
def test_parse_forms(text: str, skill: str, task: str, form: str) -> None:
    call = parse_run_skill(text)
    assert call is not None
    assert (call.skill, call.task, call.form) == (skill, task, form)


@pytest.mark.parametrize(
    "text", ["please /run_skill x y", "run_skill x y", "/run_skillx y", "/run_skill", "hello"]
)
def test_not_a_run_skill_command(text: str) -> None:
    assert parse_run_skill(text) is None


def test_find_calls_outside_code_fences() -> None:
    out = (
        "Thinking.\nrun_skill code-review: look at it\n```\nrun_skill evil-x: no\n```\n"
        "/run_skill commit-messages write one\nrun_skill empty-x:\n"
    )
    assert [(c.skill, c.task) for c in find_run_skill_calls(out)] == [
        ("code-review", "look at it"),
        ("commit-messages", "write one"),
    ]


def test_delegated_result_shape_and_injected_context(examples_rt) -> None:
    result = examples_rt.run_skill(
        "systematic-debugging",
        "find it",
        {"call_chain": ["executing-plans"]},
        runner=DryRunRunner(),
    )
    data = result.to_dict()
    assert data["status"] == "delegated"
    assert data["target_skill"] == "systematic-debugging"
    assert data["call_chain"] == ["executing-plans", "systematic-debugging"]
    assert data["skill_file"].endswith("systematic-debugging/SKILL.md")
    assert set(data["result"]) >= {"output", "request_id", "execution_id", "depth"}
    prompt = result.dispatch.prompt
    assert "target_skill: systematic-debugging" in prompt
    assert "  call_chain:\n    - executing-plans\n    - systematic-debugging" in prompt
    assert f"skill_file: {data['skill_file']}" in prompt
    assert "execution_mode: delegated" in header_yaml_in(prompt)


def test_missing_skill_is_an_error_result(examples_rt) -> None:
    data = examples_rt.run_skill("nope-x", "t", runner=DryRunRunner()).to_dict()
    assert data["status"] == "error"
    assert data["error"]["code"] == "SkillNotFound"
    assert data["skill_file"] is None


def test_cycle_is_detected(examples_rt) -> None:
    data = examples_rt.run_skill(
        "writing-plans",
        "t",
        {"call_chain": ["writing-plans", "code-review"]},
        runner=DryRunRunner(),
    ).to_dict()
    assert data["status"] == "error"
    assert data["error"]["code"] == "E_SKILL_REENTRY_BLOCKED"
    assert "writing-plans -> code-review -> writing-plans" in data["error"]["message"]


def test_depth_limit_is_two_by_default(examples_rt) -> None:
    ok = examples_rt.run_skill(
        "code-review", "t", {"call_chain": ["writing-plans"]}, runner=DryRunRunner()
    )
    assert ok.status == "delegated"
    data = examples_rt.run_skill(
        "code-review",
        "t",
        {"call_chain": ["writing-plans", "commit-messages"]},
        runner=DryRunRunner(),
    ).to_dict()
    assert data["status"] == "error"
    assert data["error"]["code"] == "E_DEPTH_LIMIT"
    assert data["error"]["max_depth"] == 2


def test_depth_limit_from_config(make_skill, tmp_path: Path) -> None:

    make_skill("aa-x")
    rt = make_runtime(tmp_path / "skills", tmp=tmp_path, dispatch={"run_skill_max_depth": 1})
    data = rt.run_skill("aa-x", "t", {"call_chain": ["bb-x"]}, runner=DryRunRunner()).to_dict()
    assert data["error"]["code"] == "E_DEPTH_LIMIT"


def test_disabled_skill_is_an_error(examples_rt) -> None:
    examples_rt.disable("code-review")
    data = examples_rt.run_skill("code-review", "t", runner=DryRunRunner()).to_dict()
    assert data["error"]["code"] == "SkillDisabled"


def test_default_runner_is_dry_run(examples_rt) -> None:
    result = examples_rt.run_skill("code-review", "check it")
    assert result.status == "delegated"
    assert result.result["runner"] == "dry-run"
    assert "<task>\ncheck it\n</task>" in result.result["output"]


def test_runner_failure_is_an_error_result(examples_rt, tmp_path: Path) -> None:
    model = scripted(tmp_path, [{"exit": 2, "stderr": "no"}])
    data = examples_rt.run_skill("code-review", "t", runner=model.runner(), environ=ENV).to_dict()
    assert data["status"] == "error"
    assert data["error"]["code"] == "E_RUNNER"


def test_run_skill_lines_in_a_models_output_are_followed(examples_rt, tmp_path: Path) -> None:
    model = scripted(
        tmp_path,
        [
            {"match": "current_skill: code-review", "stdout": "review done"},
            {
                "match": "current_skill: commit-messages",
                "stdout": "run_skill code-review: review the staged diff\n"
                "run_skill commit-messages: again\n",
            },
        ],
    )
    result = examples_rt.run_skill(
        "commit-messages", "write it", runner=model.runner(), environ=ENV
    )
    delegations = result.dispatch.delegations
    assert [(d.target_skill, d.status) for d in delegations] == [
        ("code-review", "delegated"),
        ("commit-messages", "error"),
    ]
    assert delegations[0].call_chain == ("commit-messages", "code-review")
    assert delegations[0].result["output"] == "review done"
    assert delegations[1].error["code"] == "E_SKILL_REENTRY_BLOCKED"
