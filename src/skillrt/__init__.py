"""skillrt: a runtime for Agent Skills.

Find skills, decide which one a request needs, load only the text that is needed
(safely), dispatch sub-skills without loops, drive composite skills to the end across
crashes, and measure all of it.
"""

from typing import Any

from skillrt.config import RuntimeConfig
from skillrt.errors import SkillrtError
from skillrt.runtime import SkillRuntime
from skillrt.skills.model import Diagnostic, Skill, SkillRef
from skillrt.skills.registry import SkillRegistry


def __getattr__(name: str) -> Any:
    # importlib.metadata costs ~40 ms to import: only pay for it when the version is asked.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("skillrt")
        except PackageNotFoundError:  # running from a source tree
            value = "0.0.0+src"
        globals()["__version__"] = value
        return value
    raise AttributeError(f"module 'skillrt' has no attribute {name!r}")


__all__ = [
    "Diagnostic",
    "RuntimeConfig",
    "Skill",
    "SkillRef",
    "SkillRegistry",
    "SkillRuntime",
    "SkillrtError",
    "__version__",
]
