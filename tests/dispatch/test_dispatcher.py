"""D1, D2, D5: modes, the injected header, prompt assembly, the result tree, records."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from skillrt.dispatch.model import DispatchRequest
from skillrt.dispatch.prompt import header_yaml_in
from skillrt.errors import ConfigError, SkillDisabled, SkillNotFound, UnknownRole, UsageError
from skillrt.execution.records import list_executions
from skillrt.execution.runners import DryRunRunner

from .support import ENV, make_runtime, scripted


def sections(prompt: str) -> list[str]:
    tags = [
        "<runtime-header>",
        "<role-guide",
        "<root-skill>",
        "<skill>",
        "<parent-output",
        "<context>",
        "<task>",
    ]
    return [t for t in tags if t in prompt]


@pytest.fixture
def rooted(make_skill, tmp_path: Path):
    make_skill("tao-x", body="# Tao\nROOT-BODY-MARKER\n**REQUIRED SUB-SKILL:** Use leaf-x\n")
    make_skill("work-x", body="# Work\nWORK-BODY\n**REQUIRED SUB-SKILL:** Use leaf-x\n")
    make_skill("leaf-x", body="# Leaf\nLEAF-BODY\n")
    rt = make_runtime(tmp_path / "skills", tmp=tmp_path, dispatch={"root_skill": "tao-x"})
    yield rt
    rt.close()


def test_root_mode_loads_the_root_skill_once_and_delegated_only_role_and_target(rooted) -> None:
    result = rooted.dispatch(DispatchRequest(skill="work-x", prompt="do it"), runner=DryRunRunner())
    root, child = result, result.children[0]
    assert sections(root.prompt) == ["<runtime-header>", "<root-skill>", "<skill>", "<task>"]
    assert root.prompt.count("ROOT-BODY-MARKER") == 1
    assert "WORK-BODY" in root.prompt
    # Delegated: role guide + target skill only; no root, no parent skill body.
    assert sections(child.prompt) == ["<runtime-header>", "<role-guide", "<skill>", "<task>"]
    assert "ROOT-BODY-MARKER" not in child.prompt and "WORK-BODY" not in child.prompt
    assert "LEAF-BODY" in child.prompt
    assert "# Role: fixer" in child.prompt
    loaded = [load["skill"] for node in result.walk() for load in node.loads]
    assert loaded.count("tao-x") == 1


def test_root_skill_as_target_is_loaded_once(rooted) -> None:
    result = rooted.dispatch(DispatchRequest(skill="tao-x", prompt="t"), runner=DryRunRunner())
    assert result.prompt.count("ROOT-BODY-MARKER") == 1
    assert sections(result.prompt) == ["<runtime-header>", "<root-skill>", "<task>"]


def test_unknown_root_skill_is_a_config_error(make_skill, tmp_path: Path) -> None:
    make_skill("work-x")
    rt = make_runtime(tmp_path / "skills", tmp=tmp_path, dispatch={"root_skill": "nope-x"})
    with pytest.raises(ConfigError):
        rt.dispatch(DispatchRequest(skill="work-x", prompt="t"), runner=DryRunRunner())


def test_header_is_injected_on_every_call(examples_rt) -> None:
    result = examples_rt.dispatch(
        DispatchRequest(skill="executing-plans", prompt="t", role="explorer"),
        runner=DryRunRunner(),
    )
    seen = []
    for node in result.walk():
        data = yaml.safe_load(header_yaml_in(node.prompt))
        assert data == yaml.safe_load(node.header.to_yaml())
        assert data["identity"]["current_skill"] == node.skill
        assert data["identity"]["role"] == "explorer"
        assert data["trace"]["request_id"] == result.request_id
        seen.append((data["execution_mode"], data["trace"]["depth"], data["trace"]["skill_stack"]))
    assert seen == [
        ("root", 0, ["executing-plans"]),
        ("delegated", 1, ["executing-plans", "systematic-debugging"]),
        ("delegated", 2, ["executing-plans", "systematic-debugging", "test-driven-development"]),
    ]
    # Runtime context only: never written into any SKILL.md.
    assert "execution_mode" not in examples_rt.get("executing-plans").skill_file.read_text()


def test_seed_cli_example_header(examples_rt) -> None:
    """000 §8's example: --depth 1 --parent-skill executing-plans -> header depth 2."""
    result = examples_rt.dispatch(
        DispatchRequest(
            skill="systematic-debugging",
            prompt="find the root cause",
            role="fixer",
            execution_mode="delegated",
            depth=1,
            parent_skill="executing-plans",
            edge_type="requires_now",
            visited_skills=("writing-plans", "executing-plans"),
            request_id="req-2026-02-15-001",
            follow_edges=False,
        ),
        runner=DryRunRunner(),
    )
    data = yaml.safe_load(header_yaml_in(result.prompt))
    assert data["execution_mode"] == "delegated"
    assert data["identity"] == {
        "role": "fixer",
        "current_skill": "systematic-debugging",
        "origin_skill": "executing-plans",
        "root_loaded": True,
    }
    assert data["trace"] == {
        "request_id": "req-2026-02-15-001",
        "depth": 2,
        "skill_stack": ["writing-plans", "executing-plans", "systematic-debugging"],
        "visited_skills": ["writing-plans", "executing-plans"],
    }


def test_requires_now_children_and_later_edges(examples_rt) -> None:
    result = examples_rt.dispatch(
        DispatchRequest(skill="executing-plans", prompt="t"), runner=DryRunRunner()
    )
    assert [(n.skill, n.depth, n.edge_type) for n in result.walk()] == [
        ("executing-plans", 0, None),
        ("systematic-debugging", 1, "requires_now"),
        ("test-driven-development", 2, "requires_now"),
    ]
    assert result.later == ("finishing-work",)
    off = examples_rt.dispatch(
        DispatchRequest(skill="executing-plans", prompt="t", follow_edges=False),
        runner=DryRunRunner(),
    )
    assert off.children == ()


def test_children_get_the_parents_output_as_context(examples_rt, tmp_path: Path) -> None:
    model = scripted(tmp_path, [{"stdout": "PARENT-SAID-THIS"}])
    result = examples_rt.dispatch(
        DispatchRequest(skill="executing-plans", prompt="t", follow_edges=True),
        runner=model.runner(),
        environ=ENV,
    )
    child_prompt = model.calls()[1]["prompt_head"]
    assert '<parent-output skill="executing-plans">' in child_prompt
    assert "PARENT-SAID-THIS" in child_prompt
    assert result.children[0].output == "PARENT-SAID-THIS"
    assert result.prompt is None  # prompts are kept for dry runs only


def test_alternatives_run_only_the_first_that_succeeds(make_skill, tmp_path: Path) -> None:
    make_skill("lead-x", body="**REQUIRED SUB-SKILL:** Use alt-one (recommended) or alt-two\n")
    make_skill("alt-one")
    make_skill("alt-two")
    rt = make_runtime(tmp_path / "skills", tmp=tmp_path)
    result = rt.dispatch(DispatchRequest(skill="lead-x", prompt="t"), runner=DryRunRunner())
    assert [c.skill for c in result.children] == ["alt-one"]
    assert [(b.target, b.reason) for b in result.blocked] == [("alt-two", "alternative_taken")]


def test_disabled_and_model_invocation_disabled_children_are_not_run(
    make_skill, tmp_path: Path
) -> None:
    make_skill(
        "lead-x", body="**REQUIRED SUB-SKILL:** Use off-x\n\n**REQUIRED SUB-SKILL:** Use manual-x\n"
    )
    make_skill("off-x")
    make_skill("manual-x", disable__model__invocation=True)
    rt = make_runtime(tmp_path / "skills", tmp=tmp_path)
    rt.disable("off-x")
    result = rt.dispatch(DispatchRequest(skill="lead-x", prompt="t"), runner=DryRunRunner())
    assert result.children == ()
    assert {(b.target, b.reason) for b in result.blocked} == {
        ("off-x", "disabled"),
        ("manual-x", "model_invocation_disabled"),
    }
    with pytest.raises(SkillDisabled):
        rt.dispatch(DispatchRequest(skill="off-x", prompt="t"), runner=DryRunRunner())


def test_diamond_runs_each_skill_once(make_skill, tmp_path: Path) -> None:
    make_skill(
        "top-x", body="**REQUIRED SUB-SKILL:** Use left-x\n\n**REQUIRED SUB-SKILL:** Use right-x\n"
    )
    make_skill("left-x", body="**REQUIRED SUB-SKILL:** Use bottom-x\n")
    make_skill("right-x", body="**REQUIRED SUB-SKILL:** Use bottom-x\n")
    make_skill("bottom-x")
    rt = make_runtime(tmp_path / "skills", tmp=tmp_path)
    result = rt.dispatch(DispatchRequest(skill="top-x", prompt="t"), runner=DryRunRunner())
    names = [n.skill for n in result.walk()]
    assert sorted(names) == ["bottom-x", "left-x", "right-x", "top-x"]
    # right-x's edge to bottom-x is blocked: bottom-x already ran in this request.
    right = result.children[1]
    assert [(b.target, (b.error or {}).get("code")) for b in right.blocked] == [
        ("bottom-x", "E_SKILL_REENTRY_BLOCKED")
    ]


def test_role_errors_and_usage_errors(examples_rt) -> None:
    with pytest.raises(UnknownRole) as info:
        examples_rt.dispatch(
            DispatchRequest(skill="code-review", prompt="t", role="wizard"), runner=DryRunRunner()
        )
    assert info.value.code == "E_UNKNOWN_ROLE"
    assert "fixer" in info.value.context["available"]
    with pytest.raises(UsageError):
        examples_rt.dispatch(
            DispatchRequest(skill="code-review", prompt="t", parent_skill="writing-plans"),
            runner=DryRunRunner(),
        )
    with pytest.raises(UsageError):
        examples_rt.dispatch(
            DispatchRequest(skill="code-review", prompt="t", execution_mode="sideways"),  # type: ignore[arg-type]
            runner=DryRunRunner(),
        )
    with pytest.raises(SkillNotFound):
        examples_rt.dispatch(DispatchRequest(skill="nope-x", prompt="t"), runner=DryRunRunner())


def test_no_skill_dispatch(examples_rt) -> None:
    result = examples_rt.dispatch(
        DispatchRequest(skill=None, prompt="hello"), runner=DryRunRunner()
    )
    assert result.ok and result.path == "no-skill"
    assert sections(result.prompt) == ["<runtime-header>", "<task>"]


def test_executions_are_recorded(examples_rt) -> None:
    result = examples_rt.dispatch(
        DispatchRequest(skill="executing-plans", prompt="t"), runner=DryRunRunner()
    )
    rows = list_executions(examples_rt.store)
    assert len(rows) == 3
    assert {r["request_id"] for r in rows} == {result.request_id}
    by_skill = {r["skill"]: r for r in rows}
    assert by_skill["systematic-debugging"]["parent_id"] == result.execution_id
    assert by_skill["test-driven-development"]["depth"] == 2
    assert all(r["status"] == "success" and r["runner"] == "dry-run" for r in rows)


def test_failed_dispatch_is_a_result_with_an_error(examples_rt, tmp_path: Path) -> None:
    model = scripted(tmp_path, [{"exit": 1, "stderr": "boom"}])
    result = examples_rt.dispatch(
        DispatchRequest(skill="code-review", prompt="t"), runner=model.runner(), environ=ENV
    )
    assert result.status == "failed"
    assert result.error["code"] == "E_RUNNER"
    assert result.exit_code == 1
    assert [(t.from_state, t.to_state) for t in result.transitions] == [
        ("selected", "running"),
        ("running", "fatal_failure"),
        ("fatal_failure", "fallback"),
        ("fallback", "exit"),
    ]
