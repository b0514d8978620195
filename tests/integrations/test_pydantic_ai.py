"""The Pydantic AI integration, run by Pydantic AI on its own offline models
(TestModel and FunctionModel): no network, no key."""

from __future__ import annotations

import json
from typing import Any

from agent_support import kit_for, route_surfaces
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from skillrt.integrations.pydantic_ai import skill_toolset
from skillrt.runtime import SkillRuntime


def test_scripted_run_uses_tools_and_gets_the_skill_in_its_instructions(
    runtime: SkillRuntime,
) -> None:
    seen: list[str | None] = []
    script = [
        [ToolCallPart("route_skills", {"query": "audit this for injection"}, tool_call_id="c1")],
        [ToolCallPart("load_skill", {"name": "security-audit"}, tool_call_id="c2")],
        [
            ToolCallPart(
                "read_skill_resource",
                {
                    "name": "security-audit",
                    "path": "references/checklist.md",
                    "section": "## Security",
                },
                tool_call_id="c3",
            )
        ],
        [TextPart("Reviewed.")],
    ]

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.instructions)
        return ModelResponse(parts=script[len(seen) - 1])

    kit = kit_for(runtime, "pydantic-ai")
    agent = Agent(FunctionModel(model), instructions="Be brief.", toolsets=[skill_toolset(kit)])
    result = agent.run_sync("please do a code review of my pr")
    assert result.output == "Reviewed."
    assert all(s is not None and s.startswith("Be brief.") for s in seen)
    assert all("Using skill: code-review\n[Skill: code-review" in (s or "") for s in seen)
    returns = [
        p
        for m in result.all_messages()
        for p in getattr(m, "parts", ())
        if isinstance(p, ToolReturnPart)
    ]
    routed, body, section = (str(p.content) for p in returns)
    assert "security-audit" in json.loads(routed)["skills"]
    assert "Check injection." in section and "Names." not in section
    assert route_surfaces(runtime) == ["pydantic-ai", "pydantic-ai"]


def test_test_model_calls_every_tool(runtime: SkillRuntime) -> None:
    agent = Agent(TestModel(), toolsets=[skill_toolset(kit_for(runtime, "pydantic-ai"))])
    result = agent.run_sync("$code-review check this")
    called = {
        p.tool_name
        for m in result.all_messages()
        for p in getattr(m, "parts", ())
        if isinstance(p, ToolReturnPart)
    }
    assert called == {"route_skills", "load_skill", "read_skill_resource"}


def test_no_skill_adds_no_instructions(runtime: SkillRuntime) -> None:
    seen: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.instructions)
        return ModelResponse(parts=[TextPart("Paris.")])

    agent = Agent(FunctionModel(model), toolsets=[skill_toolset(kit_for(runtime, "p"))])
    agent.run_sync("what is the capital of France?")
    assert seen == [None] or seen == [""]
