"""A stand-in for the ``skills_ref`` package (skills-ref 0.1.1) backed by skillrt.

The conformance test puts this folder first on ``PYTHONPATH`` and runs skills-ref's own
test suite against it: every function here is a thin mapping onto skillrt's API, so the
suite checks skillrt's parser, validator and catalogue renderer, not this shim.
"""

from .errors import ParseError, SkillError, ValidationError
from .models import SkillProperties
from .parser import find_skill_md, read_properties
from .prompt import to_prompt
from .validator import validate

#: Lets the conformance test check that this shim, not a real skills-ref, was imported.
SKILLRT_ADAPTER = True

__all__ = [
    "ParseError",
    "SkillError",
    "SkillProperties",
    "ValidationError",
    "find_skill_md",
    "read_properties",
    "to_prompt",
    "validate",
]

__version__ = "0.1.1"
