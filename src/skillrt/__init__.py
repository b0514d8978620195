"""skillrt: a runtime for Agent Skills.

Find skills, decide which one a request needs, load only the text that is needed
(safely), dispatch sub-skills without loops, drive composite skills to the end across
crashes, and measure all of it.

The public names below are imported on first use: ``import skillrt.daemon.client`` (the
prompt hook, which starts once per prompt) must not pay for the runtime it never uses.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing costs ~10 ms to import, once per prompt

if TYPE_CHECKING:
    from typing import Any

    from skillrt.config import RuntimeConfig
    from skillrt.errors import SkillrtError
    from skillrt.runtime import SkillRuntime
    from skillrt.skills.model import Diagnostic, Skill, SkillRef
    from skillrt.skills.registry import SkillRegistry

#: Public name -> the module that defines it.
_EXPORTS = {
    "Diagnostic": "skillrt.skills.model",
    "RuntimeConfig": "skillrt.config",
    "Skill": "skillrt.skills.model",
    "SkillRef": "skillrt.skills.model",
    "SkillRegistry": "skillrt.skills.registry",
    "SkillRuntime": "skillrt.runtime",
    "SkillrtError": "skillrt.errors",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
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


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS, "__version__"])


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
