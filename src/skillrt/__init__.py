"""skillrt: a runtime for Agent Skills.

Find skills, decide which one a request needs, load only the text that is needed
(safely), dispatch sub-skills without loops, drive composite skills to the end across
crashes, and measure all of it.
"""

from importlib.metadata import PackageNotFoundError, version

from skillrt.config import RuntimeConfig
from skillrt.errors import SkillrtError
from skillrt.runtime import SkillRuntime
from skillrt.skills.model import Diagnostic, Skill, SkillRef
from skillrt.skills.registry import SkillRegistry

try:
    __version__ = version("skillrt")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+src"

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
