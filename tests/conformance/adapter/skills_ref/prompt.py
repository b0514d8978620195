"""skills-ref's ``to_prompt`` over skillrt's catalogue renderer (S7)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from skillrt.skills.catalog import render_skills

from .parser import load_skill


def to_prompt(skill_dirs: Sequence[Path | str]) -> str:
    skills = [load_skill(Path(d).resolve()) for d in skill_dirs]
    return render_skills(skills).text
