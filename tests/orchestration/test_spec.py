"""config.yaml: the example format, optional keys, and every kind of bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillrt.errors import MemoryPathEscape, WorkflowConfigError
from skillrt.orchestration.spec import (
    DEFAULT_CONTEXT,
    WorkflowSpec,
    load_workflow_spec,
    parse_workflow_spec,
)

from .conftest import EXAMPLE_SKILL


def phase(**kw: Any) -> dict[str, Any]:
    base = {"id": "p1", "agent": "a1", "instructions": "do it"}
    base.update(kw)
    return base


def test_example_develop_feature_config_loads() -> None:
    spec = load_workflow_spec(EXAMPLE_SKILL)
    assert spec.name == "develop-feature"
    assert [p.id for p in spec.phases] == [
        "clarification",
        "research",
        "implementation",
        "verification",
    ]
    assert [p.agent for p in spec.phases] == [p.id for p in spec.phases]
    assert spec.phases[0].context == ("{task_id}-workflow-context.md",)
    assert spec.phases[2].context == ("{task_id}-*.md",)
    assert "Status: COMPLETED" in spec.phases[0].instructions
    assert spec.phases[1].memory_file_name("0123456789ab") == "0123456789ab-research-memory.md"
    assert len(spec.sha256) == 64 and spec.source == EXAMPLE_SKILL / "config.yaml"


def test_optional_keys_and_defaults() -> None:
    spec = parse_workflow_spec(
        {
            "name": "flow",
            "description": "  text ",
            "phases": [
                phase(role="researcher", timeout_s=30, description="first"),
                phase(id="p2", agent="a2"),
            ],
        }
    )
    first, second = spec.phases
    assert first.dispatch_role == "researcher" and first.timeout_s == 30.0
    assert first.description == "first"
    assert second.dispatch_role == "a2" and second.timeout_s is None
    assert second.context == DEFAULT_CONTEXT  # the workflow context, by default
    assert spec.description == "text"


def test_snapshot_round_trip() -> None:
    spec = load_workflow_spec(EXAMPLE_SKILL)
    again = WorkflowSpec.from_dict(spec.to_dict())
    assert again.phases == spec.phases and again.name == spec.name
    assert again.sha256 == spec.sha256


def _problems(exc: pytest.ExceptionInfo[Any]) -> list[dict[str, Any]]:
    problems: list[dict[str, Any]] = exc.value.context["problems"]
    return problems


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"name": "f", "phases": [phase()], "extra": 1}, "extra"),
        ({"phases": [phase()]}, "name"),
        ({"name": "Bad Name", "phases": [phase()]}, "name"),
        ({"name": "f"}, "phases"),
        ({"name": "f", "phases": []}, "phases"),
        ({"name": "f", "phases": "nope"}, "phases"),
        ({"name": "f", "phases": ["x"]}, "phases[0]"),
        ({"name": "f", "phases": [phase(agnt="x")]}, "phases[0].agnt"),
        ({"name": "f", "phases": [phase(id=None)]}, "phases[0].id"),
        ({"name": "f", "phases": [phase(agent="Upper")]}, "phases[0].agent"),
        ({"name": "f", "phases": [phase(instructions="  ")]}, "phases[0].instructions"),
        ({"name": "f", "phases": [phase(context=5)]}, "phases[0].context"),
        ({"name": "f", "phases": [phase(context=[""])]}, "phases[0].context[0]"),
        ({"name": "f", "phases": [phase(context=["{agent}-x.md"])]}, "phases[0].context[0]"),
        ({"name": "f", "phases": [phase(timeout_s=0)]}, "phases[0].timeout_s"),
        ({"name": "f", "phases": [phase(timeout_s=True)]}, "phases[0].timeout_s"),
        ({"name": "f", "phases": [phase(role="Not OK")]}, "phases[0].role"),
        ({"name": "f", "phases": [phase(), phase()]}, "phases"),
        ({"name": "f", "phases": [phase(), phase(id="p2")]}, "phases"),  # same agent
        ([1, 2], "config.yaml"),
    ],
)
def test_invalid_configs_raise_structured_errors(data: Any, where: str) -> None:
    with pytest.raises(WorkflowConfigError) as exc:
        parse_workflow_spec(data)
    assert exc.value.code == "E_WORKFLOW_CONFIG"
    assert any(p["where"] == where for p in _problems(exc)), _problems(exc)
    assert exc.value.to_dict()["problems"]


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(WorkflowConfigError) as exc:
        parse_workflow_spec({"name": "BAD", "bogus": 1, "phases": [phase(id="X", instructions="")]})
    wheres = {p["where"] for p in _problems(exc)}
    assert {"name", "bogus", "phases[0].id", "phases[0].instructions"} <= wheres


@pytest.mark.parametrize(
    "agent", ["../evil", "a/b", "/etc/passwd", "..", "a\\b", "x\x00y", "~root"]
)
def test_agent_names_that_leave_the_memory_folder(agent: str) -> None:
    with pytest.raises(MemoryPathEscape) as exc:
        parse_workflow_spec({"name": "f", "phases": [phase(agent=agent)]})
    assert exc.value.code == "E_MEMORY_PATH_ESCAPE"


@pytest.mark.parametrize(
    "pattern", ["../*.md", "/etc/*", "sub/{task_id}.md", "..", "C:secret.md", "~/x.md"]
)
def test_context_patterns_that_leave_the_memory_folder(pattern: str) -> None:
    with pytest.raises(MemoryPathEscape):
        parse_workflow_spec({"name": "f", "phases": [phase(context=[pattern])]})


def test_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(WorkflowConfigError, match="not found"):
        load_workflow_spec(tmp_path)
    (tmp_path / "config.yaml").write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(WorkflowConfigError) as exc:
        load_workflow_spec(tmp_path)
    assert _problems(exc)[0]["line"] is not None
    (tmp_path / "config.yaml").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(WorkflowConfigError):
        load_workflow_spec(tmp_path)
    (tmp_path / "config.yaml").write_text("x" * 1_000_001, encoding="utf-8")
    with pytest.raises(WorkflowConfigError, match="limit"):
        load_workflow_spec(tmp_path)


@given(st.text(min_size=1, max_size=20))
def test_any_agent_name_is_either_a_plain_name_or_rejected(agent: str) -> None:
    try:
        spec = parse_workflow_spec({"name": "f", "phases": [phase(agent=agent)]})
    except (WorkflowConfigError, MemoryPathEscape):
        return
    name = spec.phases[0].memory_file_name("0123456789ab")
    assert "/" not in name and "\\" not in name and ".." not in name.split("-")
    assert Path(name).name == name


def test_a_phase_needs_only_its_id_and_agent() -> None:
    spec = parse_workflow_spec(
        {
            "name": "develop-project",
            "phases": [
                {"id": "clarification", "agent": "clarification"},
                {"id": "research", "agent": "research", "instructions": None},
            ],
        }
    )
    assert [p.instructions for p in spec.phases] == [None, None]
    again = type(spec).from_dict(spec.to_dict())
    assert again.phases == spec.phases
