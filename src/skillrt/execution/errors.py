"""Errors of the execution layer (runners, state machines, repair, patches).

All subclass the roots in :mod:`skillrt.errors`, so surfaces print them the same way::

    RunnerError                      E_RUNNER (retryable or fatal)
    ├── RunnerTimeout                E_RUNNER_TIMEOUT (retryable)
    └── MissingPrerequisite          E_PREREQUISITE_MISSING (fatal, 001 §10)
    IllegalTransition                E_ILLEGAL_TRANSITION
    PatchRejected                    E_PATCH_REJECTED (a repair proposal broke a rule)
    PatchConflict                    E_PATCH_CONFLICT (a revert would lose later edits)
    PatchNotFound                    E_PATCH_NOT_FOUND
"""

from __future__ import annotations

from typing import Any

from skillrt.errors import RunnerError, SkillrtError


class RunnerTimeout(RunnerError):
    """The runner did not answer within its timeout (always retryable)."""

    code = "E_RUNNER_TIMEOUT"

    def __init__(self, message: str, **context: Any) -> None:
        context.pop("retryable", None)
        super().__init__(message, retryable=True, **context)


class MissingPrerequisite(RunnerError):
    """A skill's declared ``prerequisites`` (bins on PATH, env set) are not met."""

    code = "E_PREREQUISITE_MISSING"

    def __init__(self, message: str, **context: Any) -> None:
        context.pop("retryable", None)
        super().__init__(message, retryable=False, scope="skill", **context)


class IllegalTransition(SkillrtError):
    """A state machine was asked for a transition its table does not allow."""

    code = "E_ILLEGAL_TRANSITION"


class PatchRejected(SkillrtError):
    """A repair patch proposal was refused (outside the skill folder, over budget...)."""

    code = "E_PATCH_REJECTED"


class PatchConflict(SkillrtError):
    """A patched file changed after the patch; reverting would lose those edits."""

    code = "E_PATCH_CONFLICT"


class PatchNotFound(SkillrtError):
    """No repair attempt or patch with that id."""

    code = "E_PATCH_NOT_FOUND"
