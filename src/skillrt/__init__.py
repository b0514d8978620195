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

    from skillrt.config import LoaderLimits, RootConfig, RuntimeConfig
    from skillrt.dispatch.edges import SkillEdge
    from skillrt.dispatch.model import DispatchRequest, DispatchResult, RunSkillResult
    from skillrt.dispatch.pipeline import RunResult
    from skillrt.dispatch.rules import RoutingRules
    from skillrt.dispatch.service import DispatchOptions, DispatchService, OrchestrateResult
    from skillrt.doctor.commands import CommandLine
    from skillrt.doctor.model import DoctorReport
    from skillrt.errors import SkillrtError
    from skillrt.eval.datasets import LabelledQuery
    from skillrt.eval.harness import EvalReport
    from skillrt.execution.base import Runner, RunnerResult
    from skillrt.execution.options import RunnerOptions
    from skillrt.invocation.resolver import InvocationResolver
    from skillrt.invocation.results import CommandOutcome, Completion, Resolution, Surface
    from skillrt.loading.report import LoadReport, LoadResult
    from skillrt.orchestration.events import Checkpoint, Observer
    from skillrt.orchestration.service import ResumeOptions, StartOptions, Workflows
    from skillrt.orchestration.settings import RunnerFactory
    from skillrt.orchestration.status import RunSummary, WorkflowStatus
    from skillrt.routing.plan import ActivationPlan, RouteResult
    from skillrt.routing.router import Router
    from skillrt.routing.why_not import WhyNot
    from skillrt.runtime import SkillRuntime
    from skillrt.skills.catalog import Catalog
    from skillrt.skills.checks import ValidationResult
    from skillrt.skills.model import Diagnostic, Skill, SkillRef
    from skillrt.skills.registry import SkillEntry, SkillRegistry
    from skillrt.store.base import Store
    from skillrt.store.feedback import Feedback
    from skillrt.telemetry.metrics import StatsReport
    from skillrt.telemetry.recording import RouteRecorder
    from skillrt.turns import TurnContext

#: Public name -> the module that defines it: the facade and every type it takes and
#: returns (a test checks the facade's signatures against this list).
_EXPORTS = {
    "ActivationPlan": "skillrt.routing.plan",
    "Catalog": "skillrt.skills.catalog",
    "Checkpoint": "skillrt.orchestration.events",
    "CommandOutcome": "skillrt.invocation.results",
    "Completion": "skillrt.invocation.results",
    "Diagnostic": "skillrt.skills.model",
    "DispatchOptions": "skillrt.dispatch.service",
    "DispatchRequest": "skillrt.dispatch.model",
    "DispatchResult": "skillrt.dispatch.model",
    "DispatchService": "skillrt.dispatch.service",
    "CommandLine": "skillrt.doctor.commands",
    "DoctorReport": "skillrt.doctor.model",
    "EvalReport": "skillrt.eval.harness",
    "Feedback": "skillrt.store.feedback",
    "InvocationResolver": "skillrt.invocation.resolver",
    "LabelledQuery": "skillrt.eval.datasets",
    "LoadReport": "skillrt.loading.report",
    "LoadResult": "skillrt.loading.report",
    "LoaderLimits": "skillrt.config",
    "Observer": "skillrt.orchestration.events",
    "OrchestrateResult": "skillrt.dispatch.service",
    "Resolution": "skillrt.invocation.results",
    "ResumeOptions": "skillrt.orchestration.service",
    "RootConfig": "skillrt.config",
    "RouteRecorder": "skillrt.telemetry.recording",
    "RouteResult": "skillrt.routing.plan",
    "Router": "skillrt.routing.router",
    "RoutingRules": "skillrt.dispatch.rules",
    "RunResult": "skillrt.dispatch.pipeline",
    "RunSkillResult": "skillrt.dispatch.model",
    "RunSummary": "skillrt.orchestration.status",
    "Runner": "skillrt.execution.base",
    "RunnerFactory": "skillrt.orchestration.settings",
    "RunnerOptions": "skillrt.execution.options",
    "RunnerResult": "skillrt.execution.base",
    "RuntimeConfig": "skillrt.config",
    "Skill": "skillrt.skills.model",
    "SkillEdge": "skillrt.dispatch.edges",
    "SkillEntry": "skillrt.skills.registry",
    "SkillRef": "skillrt.skills.model",
    "SkillRegistry": "skillrt.skills.registry",
    "SkillRuntime": "skillrt.runtime",
    "SkillrtError": "skillrt.errors",
    "StartOptions": "skillrt.orchestration.service",
    "StatsReport": "skillrt.telemetry.metrics",
    "Store": "skillrt.store.base",
    "Surface": "skillrt.invocation.results",
    "TurnContext": "skillrt.turns",
    "ValidationResult": "skillrt.skills.checks",
    "WhyNot": "skillrt.routing.why_not",
    "WorkflowStatus": "skillrt.orchestration.status",
    "Workflows": "skillrt.orchestration.service",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if name == "__version__":
        from skillrt.version import __version__ as value

        globals()["__version__"] = value
        return value
    raise AttributeError(f"module 'skillrt' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS, "__version__"])


__all__ = [
    "ActivationPlan",
    "Catalog",
    "Checkpoint",
    "CommandLine",
    "CommandOutcome",
    "Completion",
    "Diagnostic",
    "DispatchOptions",
    "DispatchRequest",
    "DispatchResult",
    "DispatchService",
    "DoctorReport",
    "EvalReport",
    "Feedback",
    "InvocationResolver",
    "LabelledQuery",
    "LoadReport",
    "LoadResult",
    "LoaderLimits",
    "Observer",
    "OrchestrateResult",
    "Resolution",
    "ResumeOptions",
    "RootConfig",
    "RouteRecorder",
    "RouteResult",
    "Router",
    "RoutingRules",
    "RunResult",
    "RunSkillResult",
    "RunSummary",
    "Runner",
    "RunnerFactory",
    "RunnerOptions",
    "RunnerResult",
    "RuntimeConfig",
    "Skill",
    "SkillEdge",
    "SkillEntry",
    "SkillRef",
    "SkillRegistry",
    "SkillRuntime",
    "SkillrtError",
    "StartOptions",
    "StatsReport",
    "Store",
    "Surface",
    "TurnContext",
    "ValidationResult",
    "WhyNot",
    "WorkflowStatus",
    "Workflows",
    "__version__",
]
