"""The framework-neutral part of the agent integrations.

:class:`SkillToolkit` offers the MCP server's ``route_skills``, ``load_skill`` and
``read_skill_resource`` tools (same schemas, same answers, same structured error text)
and the per-turn context of :meth:`~skillrt.runtime.SkillRuntime.turn_context`, routes
recorded under the framework's surface name. A framework module only adapts these to
its own tool and instruction types.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from skillrt.errors import MissingExtra

if TYPE_CHECKING:
    from skillrt.mcp.service import SkillService
    from skillrt.mcp.tools import ToolSpec
    from skillrt.runtime import SkillRuntime
    from skillrt.turns import TurnContext

#: The tools an agent gets (the MCP server's ``resolve_mentions`` and ``run_skill`` are
#: for clients; a framework's own loop runs the skill).
TOOLS = ("route_skills", "load_skill", "read_skill_resource")


def require(module: str, extra: str) -> None:
    """Raise :class:`MissingExtra` with the pip command when ``module`` is missing."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise MissingExtra(
            f"this integration needs the '{module}' package: pip install 'skillrt[{extra}]'",
            module=module,
            extra=extra,
        )


class SkillToolkit:
    """Skill tools and per-turn skill context for one runtime.

    Args:
        runtime: A :class:`~skillrt.runtime.SkillRuntime` (or a started
            :class:`~skillrt.mcp.service.SkillService` to share one with a server).
        surface: The surface routes are recorded under.
        budget: Characters of skill context per turn (default: the hooks' budget).
    """

    def __init__(
        self,
        runtime: SkillRuntime | SkillService,
        *,
        surface: str = "agent",
        budget: int | None = None,
    ) -> None:
        from skillrt.mcp.service import SkillService

        if isinstance(runtime, SkillService):
            self.service = runtime
        else:
            self.service = SkillService(runtime, surface=surface)
        self.surface = surface
        self.budget = budget
        self._last: tuple[str, str] | None = None
        self._lock = threading.Lock()

    @property
    def runtime(self) -> SkillRuntime:
        return self.service.runtime

    def specs(self) -> list[ToolSpec]:
        """The tools' specs (name, description, JSON Schema of the arguments)."""
        return [s for s in self.service.tools() if s.name in TOOLS]

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> str:
        """Run one tool; the text a model reads (an error is its structured JSON)."""
        if name not in TOOLS:
            from skillrt.errors import UsageError

            raise UsageError(f"unknown skill tool {name!r}; tools: {', '.join(TOOLS)}")
        return self.service.call_tool(name, arguments).text

    def context(
        self, prompt: str, history: Sequence[str | Mapping[str, Any]] | None = None
    ) -> TurnContext:
        """The skill context for one user message (routes and records once per call)."""
        return self.service.turn_context(
            prompt, history=history, surface=self.surface, budget=self.budget
        )

    def instructions(
        self, prompt: str, history: Sequence[str | Mapping[str, Any]] | None = None
    ) -> str:
        """:meth:`context`'s text, computed once per prompt: a framework asks for its
        instructions before every model call of a turn, the route happens once."""
        with self._lock:
            last = self._last
        if last is not None and last[0] == prompt:
            return last[1]
        text = self.context(prompt, history).text
        with self._lock:
            self._last = (prompt, text)
        return text


def with_context(base: str | None, context: str) -> str:
    """The agent's own instructions, then the turn's skill context (either may be empty)."""
    return "\n\n".join(part for part in (base or "", context) if part)
