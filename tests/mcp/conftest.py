"""MCP fixtures (helpers live in mcp_support.py, importable from the tests)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from mcp_support import build_catalogue


@pytest.fixture
def catalogue(tmp_path: Path, make_skill: Callable[..., Path]) -> Path:
    return build_catalogue(tmp_path / "skills", make_skill)


@pytest.fixture
def state(tmp_path: Path) -> Path:
    path = tmp_path / "state"
    path.mkdir()
    return path
