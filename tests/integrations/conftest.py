from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
from hook_support import build_skills

from skillrt.config import RuntimeConfig
from skillrt.runtime import SkillRuntime
from skillrt.store import open_location


@pytest.fixture
def runtime(tmp_path: Path, make_skill: Callable[..., Path]) -> SkillRuntime:
    root = build_skills(tmp_path / "skills", make_skill)
    make_skill(
        "security-audit",
        description="Audit code for injection and secrets.",
        body="# Security audit\n\nRead references/checklist.md.\n",
        root=root,
        files={
            "references/checklist.md": "# Checklist\n\n## Security\n\nCheck injection.\n\n"
            "## Style\n\nNames.\n"
        },
    )
    config = RuntimeConfig(state_dir=tmp_path / "state")
    return SkillRuntime(config, roots=[root], store=open_location(tmp_path / "state" / "state.db"))
