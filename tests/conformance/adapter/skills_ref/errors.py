"""skills-ref's exceptions as skillrt's: ``ParseError`` *is* ``InvalidFrontmatter``."""

from __future__ import annotations

from skillrt.errors import InvalidFrontmatter, SkillrtError

SkillError = SkillrtError
ParseError = InvalidFrontmatter


class ValidationError(SkillrtError):
    """Required fields are missing or empty; ``errors`` holds every message."""

    code = "InvalidSkill"

    def __init__(self, message: str, errors: list[str] | None = None) -> None:
        super().__init__(message)
        self.errors = errors if errors is not None else [message]
