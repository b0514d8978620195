"""Fixtures shared by the CLI tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder as the current directory, beside its own ``HOME``
    (``tmp_path/project``, ``tmp_path/home``), with ``SKILLRT_DEBUG`` unset so errors
    are reported as the CLI reports them (no traceback)."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SKILLRT_DEBUG", raising=False)
    return project
