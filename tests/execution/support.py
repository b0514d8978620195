"""Shared helpers for the dispatch and execution tests."""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillrt.config import DiscoveryConfig, RootConfig, RuntimeConfig
from skillrt.execution.runners import CommandRunner
from skillrt.runtime import SkillRuntime

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SHARED = REPO.parent / "shared"
EXAMPLES = REPO / "examples" / "skills"
SCRIPT = HERE / "scripted_runner.py"
#: The environment runners get in tests: enough to find python, nothing else.
ENV = {"PATH": os.environ.get("PATH", os.defpath)}


def make_runtime(
    *roots: Path | RootConfig, tmp: Path, persist: bool = False, **sections: Any
) -> SkillRuntime:
    """A runtime over ``roots`` only; ``sections`` replace config sections
    (``dispatch={"max_depth": 2}``)."""
    data: dict[str, Any] = {"discovery": {"conventional_roots": False}}
    data.update(sections)
    config = RuntimeConfig.from_mapping(data, base_dir=tmp)
    config = config.replace_section(
        discovery=DiscoveryConfig(conventional_roots=False), state_dir=tmp / ".skillrt"
    )
    explicit = [
        r if isinstance(r, RootConfig) else RootConfig(Path(r), scope="flag") for r in roots
    ]
    return SkillRuntime(config, roots=explicit, persist=persist)


@dataclass
class Scripted:
    """A real subprocess runner driven by a rules file (see scripted_runner.py)."""

    rules_path: Path
    log_path: Path

    @property
    def cmd(self) -> str:
        return " ".join(
            shlex.quote(x)
            for x in (sys.executable, str(SCRIPT), str(self.rules_path), str(self.log_path))
        )

    def runner(self, **kwargs: Any) -> CommandRunner:
        kwargs.setdefault("env", ENV)
        return CommandRunner(self.cmd, **kwargs)

    def calls(self) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines()]

    def set_rules(self, rules: list[dict[str, Any]]) -> None:
        self.rules_path.write_text(json.dumps(rules), encoding="utf-8")


def scripted(tmp: Path, rules: list[dict[str, Any]], name: str = "model") -> Scripted:
    s = Scripted(tmp / f"{name}.rules.json", tmp / f"{name}.log")
    s.set_rules(rules)
    return s
