from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hook_support import build_skills


@pytest.fixture
def skills(tmp_path: Path, make_skill: Callable[..., Path]) -> Path:
    return build_skills(tmp_path / "skills", make_skill)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path
