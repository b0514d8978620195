"""Errors of composite-skill orchestration (seed 002), each with a stable code.

::

    WorkflowError                    E_WORKFLOW
    ├── WorkflowConfigError          E_WORKFLOW_CONFIG           config.yaml is missing/invalid
    ├── WorkflowNotFound             E_WORKFLOW_NOT_FOUND        no run with that id
    ├── IllegalTransition            E_WORKFLOW_ILLEGAL_TRANSITION  the FSM forbids the move
    ├── WorkflowBusy                 E_WORKFLOW_BUSY             another live process owns the run
    │   └── WorkflowLeaseLost        E_WORKFLOW_LEASE_LOST       this process's lease ran out
    ├── WorkflowRunnerRequired       E_WORKFLOW_RUNNER_REQUIRED  resume needs a runner it lacks
    ├── PhaseRunFailed               E_WORKFLOW_PHASE_FAILED     the phase's runner failed
    ├── MemoryVerificationFailed     E_MEMORY_VERIFICATION_FAILED  memory file not acceptable
    └── MemoryPathEscape             E_MEMORY_PATH_ESCAPE        a path leaves the memory folder
"""

from __future__ import annotations

from skillrt.errors import WorkflowError

__all__ = [
    "IllegalTransition",
    "MemoryPathEscape",
    "MemoryVerificationFailed",
    "PhaseRunFailed",
    "WorkflowBusy",
    "WorkflowConfigError",
    "WorkflowError",
    "WorkflowLeaseLost",
    "WorkflowNotFound",
    "WorkflowRunnerRequired",
]


class WorkflowConfigError(WorkflowError):
    """A composite skill's ``config.yaml`` is missing or invalid; ``problems`` lists each."""

    code = "E_WORKFLOW_CONFIG"


class WorkflowNotFound(WorkflowError):
    """No workflow run has that id."""

    code = "E_WORKFLOW_NOT_FOUND"


class IllegalTransition(WorkflowError):
    """The state machine does not allow this move (a skipped or reordered step or phase)."""

    code = "E_WORKFLOW_ILLEGAL_TRANSITION"


class WorkflowBusy(WorkflowError):
    """Another live process is driving this run right now."""

    code = "E_WORKFLOW_BUSY"


class WorkflowLeaseLost(WorkflowBusy):
    """This process's lease on the run expired and another worker took the run over: it
    stops driving it (nothing it does after that is written)."""

    code = "E_WORKFLOW_LEASE_LOST"


class WorkflowRunnerRequired(WorkflowError):
    """The run needs a runner to continue and none was given or saved."""

    code = "E_WORKFLOW_RUNNER_REQUIRED"


class PhaseRunFailed(WorkflowError):
    """A phase's agent run failed (runner error); the run is blocked and can be resumed."""

    code = "E_WORKFLOW_PHASE_FAILED"


class MemoryVerificationFailed(WorkflowError):
    """A phase's memory file is missing, empty, blocked or lacks the completion line.

    ``reason`` is one of: ``missing``, ``empty``, ``not_completed``, ``blocked``,
    ``too_large``, ``not_a_file``, ``unreadable``.
    """

    code = "E_MEMORY_VERIFICATION_FAILED"


class MemoryPathEscape(WorkflowError):
    """A memory path (agent name, context pattern, symlink) would leave the memory folder."""

    code = "E_MEMORY_PATH_ESCAPE"
