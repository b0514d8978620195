"""skillrt for the OpenAI Agents SDK (``pip install 'skillrt[openai-agents]'``).

    from agents import Agent, Runner
    from skillrt import SkillRuntime
    from skillrt.integrations.openai_agents import SkillToolkit, with_skills

    kit = SkillToolkit(SkillRuntime(roots=["skills"]), surface="openai-agents")
    agent = with_skills(Agent(name="dev", instructions="You write code."), kit)
    result = await Runner.run(agent, "review this SQL query for injection")

:func:`skill_tools` gives the three tools as :class:`agents.FunctionTool`;
:func:`skill_instructions` gives dynamic instructions that add, on every turn, the
skill routed for the turn's last user message; :func:`with_skills` clones an agent with
both.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from skillrt.integrations.toolkit import SkillToolkit, require, with_context

require("agents", "openai-agents")

from agents import Agent, FunctionTool, RunContextWrapper  # noqa: E402
from agents.tool_context import ToolContext  # noqa: E402

__all__ = ["SkillToolkit", "skill_instructions", "skill_tools", "with_skills"]

Instructions = Callable[[RunContextWrapper[Any], Agent[Any]], Awaitable[str]]


def skill_tools(toolkit: SkillToolkit) -> list[FunctionTool]:
    """``route_skills``, ``load_skill`` and ``read_skill_resource`` as SDK tools."""
    tools = []
    for spec in toolkit.specs():

        async def invoke(_ctx: ToolContext[Any], raw: str, name: str = spec.name) -> str:
            try:
                args = json.loads(raw) if raw else {}
            except ValueError:
                args = None  # the tool answers with its structured argument error
            return await asyncio.to_thread(toolkit.call, name, args)

        tools.append(
            FunctionTool(
                name=spec.name,
                description=spec.description,
                params_json_schema=spec.input_schema,
                on_invoke_tool=invoke,
                strict_json_schema=False,  # optional arguments (a section) are allowed
            )
        )
    return tools


def _last_user_text(items: list[Any]) -> tuple[str | None, list[dict[str, str]]]:
    """The turn's last user message and the messages before it (text only)."""
    messages: list[dict[str, str]] = []
    for item in items:
        role = item.get("role") if isinstance(item, dict) else getattr(item, "role", None)
        content = item.get("content") if isinstance(item, dict) else getattr(item, "content", None)
        if role not in ("user", "assistant"):
            continue
        if isinstance(content, list):
            content = "\n".join(
                str(p.get("text", "")) if isinstance(p, dict) else str(getattr(p, "text", ""))
                for p in content
            )
        if isinstance(content, str) and content.strip():
            messages.append({"role": role, "content": content})
    for i in range(len(messages) - 1, -1, -1):
        if messages[i]["role"] == "user":
            return messages[i]["content"], messages[:i]
    return None, messages


def skill_instructions(toolkit: SkillToolkit, base: str | None = None) -> Instructions:
    """Dynamic instructions: ``base``, then the skill routed for the turn's last user
    message (its ``$name`` mentions first), or ``base`` alone when none applies."""

    async def instructions(ctx: RunContextWrapper[Any], _agent: Agent[Any]) -> str:
        prompt, history = _last_user_text(list(ctx.turn_input))
        if not prompt:
            return base or ""
        text = await asyncio.to_thread(toolkit.instructions, prompt, history[-6:])
        return with_context(base, text)

    return instructions


def with_skills(agent: Agent[Any], toolkit: SkillToolkit) -> Agent[Any]:
    """A copy of ``agent`` with the skill tools and the per-turn skill instructions
    (its own instructions must be a string or None)."""
    if agent.instructions is not None and not isinstance(agent.instructions, str):
        from skillrt.errors import UsageError

        raise UsageError("with_skills needs string instructions; use skill_instructions()")
    return agent.clone(
        tools=[*agent.tools, *skill_tools(toolkit)],
        instructions=skill_instructions(toolkit, agent.instructions),
    )
