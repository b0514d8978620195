"""Composite skills: the six-step orchestration protocol of seed 002, with durable state.

``SkillRuntime.workflow_start / workflow_status / workflow_resume / workflow_list /
workflow_advance`` are the entry points; :class:`WorkflowEngine` drives a run from
the state stored by :class:`WorkflowStore`. See docs/orchestration.md.
"""

from skillrt.errors import (
    MemoryPathEscape,
    MemoryVerificationFailed,
    PhaseRunFailed,
    WorkflowBusy,
    WorkflowConfigError,
    WorkflowError,
    WorkflowIllegalTransition,
    WorkflowNotFound,
    WorkflowRunnerRequired,
)
from skillrt.orchestration.events import COMPLETE_MARKER, WorkflowEvent
from skillrt.orchestration.fsm import PhaseState, RunState
from skillrt.orchestration.protocol import WorkflowEngine
from skillrt.orchestration.settings import EngineSettings
from skillrt.orchestration.spec import PhaseSpec, WorkflowSpec, load_workflow_spec
from skillrt.orchestration.state import WorkflowStore
from skillrt.orchestration.status import RunSummary, WorkflowStatus

__all__ = [
    "COMPLETE_MARKER",
    "EngineSettings",
    "WorkflowIllegalTransition",
    "MemoryPathEscape",
    "MemoryVerificationFailed",
    "PhaseRunFailed",
    "PhaseSpec",
    "PhaseState",
    "RunState",
    "RunSummary",
    "WorkflowBusy",
    "WorkflowConfigError",
    "WorkflowEngine",
    "WorkflowError",
    "WorkflowEvent",
    "WorkflowNotFound",
    "WorkflowRunnerRequired",
    "WorkflowSpec",
    "WorkflowStatus",
    "WorkflowStore",
    "load_workflow_spec",
]
