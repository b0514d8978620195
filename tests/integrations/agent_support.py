"""Helpers for the agent-framework tests."""

from __future__ import annotations

from skillrt.integrations.toolkit import SkillToolkit
from skillrt.runtime import SkillRuntime


def kit_for(runtime: SkillRuntime, surface: str) -> SkillToolkit:
    return SkillToolkit(runtime, surface=surface)


def route_surfaces(runtime: SkillRuntime) -> list[str]:
    rows = runtime.store.connection().execute("SELECT surface FROM route_events").fetchall()
    return [r[0] for r in rows]
