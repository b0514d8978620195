"""skillrt for Pydantic AI (``pip install 'skillrt[pydantic-ai]'``).

    from pydantic_ai import Agent
    from skillrt import SkillRuntime
    from skillrt.integrations.pydantic_ai import SkillToolkit, skill_toolset

    kit = SkillToolkit(SkillRuntime(roots=["skills"]), surface="pydantic-ai")
    agent = Agent("openai:gpt-5", instructions="You write code.",
                  toolsets=[skill_toolset(kit)])
    result = await agent.run("review this SQL query for injection")

:func:`skill_toolset` is a :class:`pydantic_ai.toolsets.FunctionToolset` holding the
three skill tools and, as its instructions, the skill routed for each run's prompt.
:func:`skill_instructions` is that instructions function alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from skillrt.integrations.toolkit import SkillToolkit, require

require("pydantic_ai", "pydantic-ai")

from pydantic_ai import RunContext, Tool  # noqa: E402
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart  # noqa: E402
from pydantic_ai.toolsets import FunctionToolset  # noqa: E402

__all__ = ["SkillToolkit", "skill_instructions", "skill_toolset", "skill_tools"]


def skill_tools(toolkit: SkillToolkit) -> list[Tool[Any]]:
    """``route_skills``, ``load_skill`` and ``read_skill_resource`` as Pydantic AI
    tools, with the MCP server's JSON Schemas."""
    tools = []
    for spec in toolkit.specs():

        async def invoke(*, _name: str = spec.name, **kwargs: Any) -> str:
            return await asyncio.to_thread(toolkit.call, _name, kwargs)

        tools.append(
            Tool.from_schema(
                invoke, name=spec.name, description=spec.description, json_schema=spec.input_schema
            )
        )
    return tools


def _text(prompt: Any) -> str | None:
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, (list, tuple)):
        parts = [p for p in prompt if isinstance(p, str)]
        return "\n".join(parts) or None
    return None


def _history(messages: list[Any]) -> list[dict[str, str]]:
    """Text of the earlier turns (user prompts and model text), oldest first."""
    out: list[dict[str, str]] = []
    for message in messages:
        for part in getattr(message, "parts", ()):
            if isinstance(message, ModelRequest) and isinstance(part, UserPromptPart):
                text = _text(part.content)
                if text:
                    out.append({"role": "user", "content": text})
            elif isinstance(message, ModelResponse) and isinstance(part, TextPart):
                out.append({"role": "assistant", "content": part.content})
    return out


def skill_instructions(toolkit: SkillToolkit) -> Callable[[RunContext[Any]], Awaitable[str]]:
    """Instructions for a run: the skill routed for its prompt (``$name`` first), or ""."""

    async def instructions(ctx: RunContext[Any]) -> str:
        prompt = _text(ctx.prompt)
        if not prompt:
            return ""
        history = _history(list(ctx.messages))
        if history and history[-1] == {"role": "user", "content": prompt}:
            history.pop()
        return await asyncio.to_thread(toolkit.instructions, prompt, history[-6:])

    return instructions


def skill_toolset(toolkit: SkillToolkit) -> FunctionToolset[Any]:
    """The skill tools plus the per-run skill instructions, as one toolset."""
    return FunctionToolset(skill_tools(toolkit), instructions=skill_instructions(toolkit))
