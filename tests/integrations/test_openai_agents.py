"""The OpenAI Agents SDK integration, run by the SDK's own runner on its scripted model
(agents.testing.ScriptedModel): no network, no key."""

from __future__ import annotations

import json
from typing import Any

from agent_support import kit_for, route_surfaces
from agents import Agent, Runner, ToolCallOutputItem, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from skillrt.integrations.openai_agents import skill_tools, with_skills
from skillrt.runtime import SkillRuntime

set_tracing_disabled(True)


def outputs(result: Any) -> list[str]:
    return [str(i.output) for i in result.new_items if isinstance(i, ToolCallOutputItem)]


def test_tools_and_turn_instructions_in_a_real_run(runtime: SkillRuntime) -> None:
    model = ScriptedModel(
        [
            [function_call("route_skills", {"query": "audit this for injection"}, call_id="c1")],
            [function_call("load_skill", {"name": "security-audit"}, call_id="c2")],
            [
                function_call(
                    "read_skill_resource",
                    {
                        "name": "security-audit",
                        "path": "references/checklist.md",
                        "section": "## Security",
                    },
                    call_id="c3",
                )
            ],
            [function_call("load_skill", {"name": "deploy"}, call_id="c4")],
            [assistant_message("Reviewed.")],
        ]
    )
    kit = kit_for(runtime, "openai-agents")
    agent = with_skills(Agent(name="dev", instructions="Be brief.", model=model), kit)
    result = Runner.run_sync(agent, "please do a code review of my pr")
    assert result.final_output == "Reviewed."

    first = model.first_call
    assert first is not None and first.system_instructions is not None
    assert first.system_instructions.startswith("Be brief.\n\nUsing skill: code-review\n")
    assert {t.name for t in first.tools} >= {
        "route_skills",
        "load_skill",
        "read_skill_resource",
    }
    routed, body, section, refused = outputs(result)
    assert "security-audit" in json.loads(routed)["skills"]
    assert body == "# Security audit\n\nRead references/checklist.md.\n"
    assert "Check injection." in section and "Names." not in section
    assert json.loads(refused)["code"] == "MODEL_INVOCATION_DISABLED"
    # One route for the turn's instructions (asked before each of the 5 model calls,
    # routed once) plus the route_skills call.
    assert route_surfaces(runtime) == ["openai-agents", "openai-agents"]


def test_no_skill_leaves_the_instructions_alone(runtime: SkillRuntime) -> None:
    model = ScriptedModel([[assistant_message("Paris.")]])
    agent = with_skills(
        Agent(name="dev", instructions="Be brief.", model=model), kit_for(runtime, "openai-agents")
    )
    Runner.run_sync(agent, "what is the capital of France?")
    assert model.first_call is not None and model.first_call.system_instructions == "Be brief."


def test_dollar_mention_wins(runtime: SkillRuntime) -> None:
    model = ScriptedModel([[assistant_message("ok")]])
    agent = with_skills(Agent(name="dev", model=model), kit_for(runtime, "openai-agents"))
    Runner.run_sync(agent, "$deploy ship it")
    assert model.first_call is not None
    assert (model.first_call.system_instructions or "").startswith("Using skill: deploy\n")


def test_bad_tool_arguments_are_an_answer_not_a_crash(runtime: SkillRuntime) -> None:
    tool = next(t for t in skill_tools(kit_for(runtime, "x")) if t.name == "read_skill_resource")
    import asyncio

    text = asyncio.run(tool.on_invoke_tool(None, "{not json"))  # type: ignore[arg-type]
    assert json.loads(text)["code"] == "E_USAGE"
    text = asyncio.run(
        tool.on_invoke_tool(
            None,
            json.dumps(  # type: ignore[arg-type]
                {"name": "security-audit", "path": "/etc/passwd"}
            ),
        )
    )
    assert json.loads(text)["code"] == "PathTraversalBlocked"
