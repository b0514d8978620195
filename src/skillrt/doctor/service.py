"""``diagnose``: every section of the doctor's report, from explicit collaborators.

The facade (:meth:`skillrt.runtime.SkillRuntime.doctor`) passes the catalogue, the
registry, the store and the settings; nothing here reads flags or the environment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from skillrt.doctor.analysis import analyse
from skillrt.doctor.environment import environment
from skillrt.doctor.listing import listing_report
from skillrt.doctor.model import DoctorReport
from skillrt.doctor.triggers import trigger_eval

if TYPE_CHECKING:
    from skillrt.config import RootConfig, RuntimeConfig
    from skillrt.eval.datasets import LabelledQuery
    from skillrt.skills.model import Skill
    from skillrt.skills.registry import SkillRegistry
    from skillrt.store.base import Store

__all__ = ["diagnose"]

Progress = Callable[[str, int, int], None]


def diagnose(
    skills: Sequence[Skill],
    *,
    config: RuntimeConfig,
    registry: SkillRegistry,
    store: Store,
    explicit_roots: Sequence[RootConfig] | None = None,
    catalogs: Sequence[Path] = (),
    env: dict[str, str] | None = None,
    queries: Sequence[LabelledQuery] | None = None,
    queries_source: str = "",
    samples: int | None = None,
    context_window: int | None = None,
    daemon_socket: str | None = None,
    progress: Progress | None = None,
) -> DoctorReport:
    """The report over ``skills``.

    ``queries``: a labelled set for the trigger eval (``skillrt eval``'s format).
    """
    known = {s.qualified_name for s in registry.skills()}

    def is_enabled(skill: Skill) -> bool:
        return registry.is_enabled(skill) if skill.qualified_name in known else True

    result = analyse(
        skills,
        config.routing,
        store.local,
        is_enabled=is_enabled,
        env=env,
        samples=samples,
        progress=progress,
    )
    triggers = None
    if queries is not None:
        from skillrt.eval.harness import evaluate

        def step(done: int, total: int) -> None:
            if progress is not None:
                progress("trigger eval", done, total)

        report = evaluate(result.router, queries, progress=step, keep_outcomes=True)
        triggers = trigger_eval(report.outcomes, queries_source)
    env_section = environment(
        config,
        explicit_roots=explicit_roots,
        registry=registry,
        catalogs=catalogs,
        skills=len(skills),
        store=store,
        backend=result.router.index.model_id,
        daemon_socket=daemon_socket,
    )
    return DoctorReport(
        environment=env_section,
        shadowing=result.shadowing,
        unreachable=result.unreachable,
        risk=result.risk,
        listing=listing_report(skills, result.router.index.enabled, context_window=context_window),
        triggers=triggers,
        analysis=result.summary,
    )
