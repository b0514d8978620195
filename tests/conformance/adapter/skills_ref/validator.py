"""skills-ref's ``validate`` over skillrt's validator: every diagnostic's message."""

from __future__ import annotations

from pathlib import Path

from skillrt.skills.checks import validate_dir


def validate(skill_dir: Path | str) -> list[str]:
    # skills-ref reports every problem as a string; skillrt's warnings (name/folder
    # mismatch, unexpected fields) are errors there, so all diagnostics are returned.
    return [d.message for d in validate_dir(Path(skill_dir)).diagnostics]
