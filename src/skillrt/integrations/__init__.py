"""skillrt inside Python agent frameworks: the skill tools (route, activate, read a
resource) and the routed skill injected into the agent's instructions for each turn.

- :mod:`skillrt.integrations.openai_agents` (``pip install 'skillrt[openai-agents]'``)
- :mod:`skillrt.integrations.pydantic_ai` (``pip install 'skillrt[pydantic-ai]'``)

Both are thin layers over :class:`skillrt.integrations.toolkit.SkillToolkit`, which
calls the same :class:`~skillrt.mcp.service.SkillService` (and so the same
``SkillRuntime`` methods) as the MCP server, the daemon and the prompt hooks. Each
framework is imported only by its own module.
"""
