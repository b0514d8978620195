"""Fixtures for orchestration tests: composite skills, runtimes, an in-process agent."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from skillrt.config import OrchestrationConfig, RoutingConfig, RuntimeConfig
from skillrt.execution.base import Runner, RunnerResult
from skillrt.runtime import SkillRuntime

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
EXAMPLE_SKILL = REPO / "examples" / "skills" / "develop-feature"
AGENT = HERE / "agent_runner.py"

HEADER = re.compile(
    r"^\[Workflow: (?P<skill>\S+) \| phase (?P<i>\d+)/(?P<n>\d+): (?P<phase>\S+) \| "
    r"agent: (?P<agent>\S+) \| role: (?P<role>\S+) \| task_id: (?P<task>[0-9a-f]{12})\]$",
    re.M,
)
MEMORY = re.compile(r"^Memory file: (?P<path>.+)$", re.M)


def memory_text(phase: str, *, lesson: str | None = None, status: str = "Status: COMPLETED") -> str:
    lesson = lesson or f"Lesson learned in {phase}."
    return f"{phase} concluded.\n\n## Result\n- done\n\n## Learnings\n- {lesson}\n\n{status}\n"


@dataclass
class InstantRunner(Runner):
    """An in-process agent that writes files: writes the phase's memory file at once
    (atomically) and replies with nothing (or ``replies[phase]``)."""

    name: str = "instant"
    writes_files: bool = True
    calls: list[str] = field(default_factory=list)
    prompts: dict[str, str] = field(default_factory=dict)
    #: phase id -> text to write instead of the default (None: write nothing).
    overrides: dict[str, str | None] = field(default_factory=dict)
    #: phase id -> the reply (default: an empty reply).
    replies: dict[str, str] = field(default_factory=dict)
    #: Called with (phase_id, prompt) before writing (tests hook checks here).
    before: Callable[[str, str], None] | None = None

    def run(self, prompt: str, *, timeout_s: float | None = None) -> RunnerResult:
        head = HEADER.search(prompt)
        mem = MEMORY.search(prompt)
        assert head is not None and mem is not None, prompt[:500]
        phase = head["phase"]
        self.calls.append(phase)
        self.prompts[phase] = prompt
        if self.before is not None:
            self.before(phase, prompt)
        text = self.overrides.get(phase, memory_text(phase))
        if text is not None:
            path = Path(mem["path"])
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        return RunnerResult(output=self.replies.get(phase, ""), latency_ms=0.0)


@dataclass
class TextRunner(Runner):
    """An in-process model that returns text: replies with the phase's memory file
    content and never writes a file (skillrt writes the reply)."""

    name: str = "text"
    writes_files: bool = False
    calls: list[str] = field(default_factory=list)
    #: Called with (phase_id, prompt) before replying.
    before: Callable[[str, str], None] | None = None

    def run(self, prompt: str, *, timeout_s: float | None = None) -> RunnerResult:
        head = HEADER.search(prompt)
        assert head is not None, prompt[:500]
        phase = head["phase"]
        self.calls.append(phase)
        if self.before is not None:
            self.before(phase, prompt)
        return RunnerResult(output=memory_text(phase), latency_ms=0.0)


def write_composite(
    root: Path,
    name: str = "mini-flow",
    *,
    phases: list[dict[str, Any]] | None = None,
    config: Any = None,
) -> Path:
    """A composite skill folder with SKILL.md and config.yaml."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: A composite test workflow.\n---\n# {name}\n",
        encoding="utf-8",
    )
    if config is None:
        config = {
            "name": name,
            "phases": phases
            or [
                {
                    "id": "plan",
                    "agent": "planner",
                    "instructions": "Plan it. Write {task_id}-planner-memory.md.",
                    "context": ["{task_id}-workflow-context.md"],
                },
                {
                    "id": "build",
                    "agent": "builder",
                    "instructions": "Build it.",
                    "context": ["{task_id}-*.md"],
                },
                {
                    "id": "check",
                    "agent": "checker",
                    "instructions": "Check it.",
                    "context": ["{task_id}-workflow-context.md", "{task_id}-builder-memory.md"],
                },
            ],
        }
    text = config if isinstance(config, str) else yaml.safe_dump(config, sort_keys=False)
    (folder / "config.yaml").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    root.mkdir()
    shutil.copytree(EXAMPLE_SKILL, root / "develop-feature")
    write_composite(root)
    return root


def make_config(tmp_path: Path, **orch: Any) -> RuntimeConfig:
    state = tmp_path / "state"
    return RuntimeConfig(
        project_dir=tmp_path,
        state_dir=state,
        routing=RoutingConfig(embedding_backend="hashing"),
        orchestration=OrchestrationConfig(**orch),
    )


@pytest.fixture
def runtime(tmp_path: Path, skills_dir: Path) -> Iterator[SkillRuntime]:
    rt = SkillRuntime(make_config(tmp_path), roots=[skills_dir])
    yield rt
    rt.close()


def cli_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLRT_")}
    env.update(extra)
    return env


def skillrt_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "skillrt", *args]


def agent_cmd(log: Path, *extra: str) -> str:
    import shlex

    return " ".join(shlex.quote(x) for x in [sys.executable, str(AGENT), "--log", str(log), *extra])
