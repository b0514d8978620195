"""``diagnose``: every section of the doctor's report, from explicit collaborators.

The facade (:meth:`skillrt.runtime.SkillRuntime.doctor`) passes the catalogue, the
registry, the store and the settings; nothing here reads flags or the environment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from skillrt.doctor.analysis import analyse
from skillrt.doctor.commands import CommandLine
from skillrt.doctor.environment import environment
from skillrt.doctor.listing import listing_report
from skillrt.doctor.model import Collision, DoctorReport
from skillrt.doctor.priorities import copy_entries, findings, stub_entries
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
    commands: CommandLine | None = None,
    hidden: Sequence[tuple[Skill, Skill]] = (),
) -> DoctorReport:
    """The report over ``skills``.

    ``queries``: a labelled set for the trigger eval (``skillrt eval``'s format);
    ``commands``: how to write the commands the findings print (the caller's flags);
    ``hidden``: ``(hidden, used)`` skills of one name besides the registry's (catalogue
    lines named like another skill).
    """
    commands = commands or CommandLine()
    # A disabled skill is reported once, as disabled; nothing else is said about it.
    disabled = tuple(s.qualified_name for s in skills if not registry.is_enabled(s))
    skills = [s for s in skills if registry.is_enabled(s)]
    result = analyse(
        skills,
        config.routing,
        store.local,
        is_enabled=registry.is_enabled,
        env=env,
        samples=samples,
        progress=progress,
        commands=commands,
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
    collisions = _collisions(
        [(sh.skill, str(sh.shadowed_by)) for sh in registry.shadowed]
        + [(h, str(u.skill_file or u.path)) for h, u in hidden]
    )
    stubs = stub_entries(skills, result.stubs, commands)
    copies = copy_entries(skills, result.copies, commands)
    return DoctorReport(
        environment=env_section,
        shadowing=result.shadowing,
        unreachable=result.unreachable,
        risk=result.risk,
        listing=listing_report(skills, result.router.index.enabled, context_window=context_window),
        triggers=triggers,
        analysis=result.summary,
        findings=tuple(findings(collisions, stubs, copies, result.shadowing)),
        stubs=tuple(stubs),
        duplicates=tuple(copies),
        collisions=tuple(collisions),
        disabled=disabled,
    )


def _collisions(hidden: Sequence[tuple[Skill, str]]) -> list[Collision]:
    """``(hidden skill, where the used one lives)`` grouped by name."""
    groups: dict[str, tuple[str, list[str]]] = {}
    for skill, used in hidden:
        where = str(skill.skill_file or skill.path)
        groups.setdefault(skill.qualified_name, (used, []))[1].append(where)
    return [
        Collision(
            name=name,
            used=used,
            hidden=tuple(paths),
            action=(
                f"rename the skill in {paths[0]} (its name: line), or remove the one you "
                f"do not mean: only {used} is used"
            ),
        )
        for name, (used, paths) in sorted(groups.items())
    ]
