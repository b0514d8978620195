"""Assemble the prompt a runner receives.

Sections, in order, each delimited by a tag a model (and a test) can find::

    <runtime-header>   the 000 §2 header as a ```yaml block (always)
    <role-guide>       the role guide (delegated mode)
    <root-skill>       the root skill's injection block (root mode, once)
    <skill>            the target skill's injection block (003 §6)
    <parent-output>    what the parent skill produced (sub-skills)
    <context>          caller-supplied context (run_skill's delegation context)
    <task>             the task text
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillrt.dispatch.header import RuntimeHeader

_HEADER_BLOCK = re.compile(r"<runtime-header>\n```yaml\n(.*?)```\n</runtime-header>", re.DOTALL)


@dataclass(frozen=True)
class PromptParts:
    header: RuntimeHeader
    task: str
    role: str | None = None
    role_guide: str | None = None
    root_block: str | None = None
    skill_block: str | None = None
    parent_skill: str | None = None
    parent_output: str | None = None
    context: str | None = None


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def assemble(parts: PromptParts) -> str:
    """The prompt text for ``parts``."""
    out = [
        "<runtime-header>\n```yaml\n",
        parts.header.to_yaml(),
        "```\n</runtime-header>\n",
    ]
    if parts.role_guide is not None:
        out.append(f'\n<role-guide role="{_attr(parts.role or "")}">\n')
        out.append(parts.role_guide.rstrip("\n"))
        out.append("\n</role-guide>\n")
    if parts.root_block is not None:
        out.append("\n<root-skill>\n")
        out.append(parts.root_block.rstrip("\n"))
        out.append("\n</root-skill>\n")
    if parts.skill_block is not None:
        out.append("\n<skill>\n")
        out.append(parts.skill_block.rstrip("\n"))
        out.append("\n</skill>\n")
    if parts.parent_output:
        out.append(f'\n<parent-output skill="{_attr(parts.parent_skill or "")}">\n')
        out.append(parts.parent_output.rstrip("\n"))
        out.append("\n</parent-output>\n")
    if parts.context:
        out.append("\n<context>\n")
        out.append(parts.context.rstrip("\n"))
        out.append("\n</context>\n")
    out.append("\n<task>\n")
    out.append(parts.task.rstrip("\n"))
    out.append("\n</task>\n")
    return "".join(out)


def header_yaml_in(prompt: str) -> str | None:
    """The header YAML inside an assembled prompt (for tests and tools)."""
    m = _HEADER_BLOCK.search(prompt)
    return m.group(1) if m else None
