"""Fixtures for the ``$skill`` invocation tests: in-memory registries and real catalogues."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from skillrt.config import DiscoveryConfig, RootConfig, RuntimeConfig
from skillrt.invocation import InvocationResolver
from skillrt.runtime import SkillRuntime
from skillrt.skills.model import Skill
from skillrt.skills.registry import SkillRegistry


def skill(
    name: str,
    namespace: str | None = None,
    *,
    description: str | None = None,
    **fields: Any,
) -> Skill:
    """A Level-1 Skill built directly (no files): fast for resolver unit tests."""
    return Skill(
        name=name,
        description=description or f"Use when testing {name}.",
        path=Path("/nonexistent") / (namespace or "_") / name,
        skill_file=None,
        namespace=namespace,
        **fields,
    )


@dataclass
class StubBody:
    text: str
    report: dict[str, Any] = field(default_factory=dict)


class RecordingLoader:
    """A body loader that records which skills it loaded."""

    def __init__(self) -> None:
        self.loaded: list[str] = []

    def __call__(self, s: Skill) -> StubBody:
        self.loaded.append(s.qualified_name)
        return StubBody(f"BODY OF {s.qualified_name}", {"skill": s.qualified_name})


def make_resolver(
    skills: Iterable[Skill], *, disabled: Iterable[str] = (), loader: Any = None
) -> InvocationResolver:
    registry = SkillRegistry(list(skills), disabled=frozenset(disabled))
    return InvocationResolver(registry, load_body=loader or RecordingLoader())


@pytest.fixture
def resolver_for() -> Callable[..., InvocationResolver]:
    return make_resolver


#: The catalogue of seed 004 §7: project skills, a ``superpowers`` and a ``github`` plugin.
TABLE_PROJECT = ("systematic-debugging", "root-cause-debugging", "test-driven-development", "aleph")


@pytest.fixture
def table_runtime(tmp_path: Path, make_skill: Callable[..., Path]) -> Callable[..., SkillRuntime]:
    """A runtime over real SKILL.md files laid out like 004 §7's examples.

    ``table_runtime(plugins=False)`` leaves out the plugin roots (one fuzzy candidate).
    """

    def build(*, plugins: bool = True, disabled: Iterable[str] = ("aleph",)) -> SkillRuntime:
        project = tmp_path / "project-skills"
        for name in TABLE_PROJECT:
            make_skill(
                name,
                root=project,
                body=f"# {name}\n\nGuidance of {name}.\n",
                allowed__tools="Read Grep Bash(git:*)",
            )
        roots = [RootConfig(project, scope="project")]
        if plugins:
            sp = tmp_path / "superpowers"
            make_skill("systematic-debugging", root=sp, body="# Superpowers debugging\n")
            gh = tmp_path / "github"
            make_skill("gh-fix-ci", root=gh, body="# Fix CI\n\nRead the failing log.\n")
            roots += [RootConfig(sp, namespace="superpowers"), RootConfig(gh, namespace="github")]
        config = RuntimeConfig(
            project_dir=tmp_path,
            state_dir=tmp_path / ".skillrt",
            discovery=DiscoveryConfig(conventional_roots=False),
        )
        runtime = SkillRuntime(config, roots=roots)
        for name in disabled:
            runtime.disable(name)
        return runtime

    return build
