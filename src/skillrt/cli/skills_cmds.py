"""``list``, ``validate``, ``catalog``, ``enable``, ``disable``: Level-1 commands."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skillrt.serialize import to_jsonable

if TYPE_CHECKING:
    from skillrt.cli.context import CliContext
    from skillrt.skills.checks import ValidationResult
    from skillrt.skills.registry import SkillEntry


def register(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    p = sub.add_parser("list", parents=[common], help="list every skill found (Level 1)")
    p.add_argument("--enabled-only", action="store_true", help="hide disabled skills")
    p.set_defaults(handler=cmd_list)

    p = sub.add_parser(
        "validate", parents=[common], help="validate skill folders (or every skill under a root)"
    )
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--strict", action="store_true", help="treat warnings as failures")
    p.set_defaults(handler=cmd_validate)

    p = sub.add_parser(
        "catalog", parents=[common], help="the <available_skills> block for a model's context"
    )
    p.add_argument("--budget", type=int, metavar="CHARS", help="character budget")
    p.set_defaults(handler=cmd_catalog)

    from skillrt.cli.routing_cmds import add_catalogue_options

    for name, enabled in (("enable", True), ("disable", False)):
        p = sub.add_parser(
            name,
            parents=[common],
            help=f"{name} a skill (persisted)",
            description=f"{name.capitalize()} a skill of the roots or, with --catalog, of a "
            "JSONL catalogue (as route, eval and doctor read it); the state is kept in the "
            "state folder.",
        )
        p.add_argument("name", metavar="NAME")
        add_catalogue_options(p)
        p.set_defaults(handler=cmd_enable if enabled else cmd_disable)


def _entry_json(entry: SkillEntry) -> dict[str, Any]:
    from skillrt.skills.records import entry_to_json

    shadowed = [
        {"path": str(s.skill.path), "source": s.skill.source, "reason": s.reason}
        for s in entry.shadowed
    ]
    return entry_to_json(entry.skill, enabled=entry.enabled, shadowed=shadowed or None)


def cmd_list(ctx: CliContext) -> int:
    runtime = ctx.runtime
    registry = runtime.registry
    ctx.walk_reported = True  # its diagnostics are part of the listing
    entries = registry.list(include_disabled=not ctx.args.enabled_only)
    diagnostics = list(registry.diagnostics)
    if runtime.explicit_roots is None:  # --root means these roots: nothing to point at
        from skillrt.skills.discovery import resolve_roots, unsearched_folders

        discovery, project = runtime.config.discovery, runtime.config.project_dir
        diagnostics += unsearched_folders(
            discovery, project, resolve_roots(discovery, project, None)
        )
    broken = [
        {
            "path": str(b.path),
            "source": b.source,
            "namespace": b.namespace,
            "valid": False,
            "diagnostics": to_jsonable(b.diagnostics),
        }
        for b in registry.broken
    ]
    data = {
        "skills": [_entry_json(e) for e in entries],
        "broken": broken,
        "shadowed": [
            {
                "qualified_name": s.skill.qualified_name,
                "path": str(s.skill.path),
                "source": s.skill.source,
                "shadowed_by": str(s.shadowed_by),
                "reason": s.reason,
            }
            for s in registry.shadowed
        ],
        "diagnostics": to_jsonable(diagnostics),
    }

    def human() -> str:
        from skillrt.cli.output import table

        rows = []
        for e in entries:
            s = e.skill
            state = "enabled" if e.enabled else "disabled"
            mark = "" if s.valid else " (invalid)"
            desc = s.description.replace("\n", " ")
            rows.append(
                [
                    s.qualified_name,
                    s.source,
                    state + mark,
                    desc[:70] + ("…" if len(desc) > 70 else ""),
                ]
            )
        lines = [table(["NAME", "SCOPE", "STATE", "DESCRIPTION"], rows)]
        for b in registry.broken:
            for d in b.diagnostics:
                lines.append(f"broken: {b.path}: [{d.code}] {d.message}")
        for sh in registry.shadowed:
            lines.append(f"shadowed: {sh.skill.path}: {sh.reason}")
        for d in diagnostics:
            lines.append(f"{d.severity}: [{d.code}] {d.message}")
        lines.append(
            f"{len(entries)} skills, {len(registry.broken)} broken, "
            f"{len(registry.shadowed)} shadowed"
        )
        return "\n".join(lines)

    ctx.emit(data, human)
    return 0


def _result_json(r: ValidationResult) -> dict[str, Any]:
    return {
        "path": str(r.path),
        "name": r.name,
        "valid": r.valid,
        "diagnostics": to_jsonable(r.diagnostics),
    }


def cmd_validate(ctx: CliContext) -> int:
    results = ctx.runtime.validate([Path(p) for p in ctx.args.paths])
    strict = ctx.args.strict

    def ok(r: ValidationResult) -> bool:
        return r.valid and not (strict and r.diagnostics)

    all_ok = all(ok(r) for r in results)

    def human() -> str:
        lines = []
        for r in results:
            label = r.name or str(r.path)
            lines.append(f"{'ok  ' if ok(r) else 'FAIL'} {label}  ({r.path})")
            for d in r.diagnostics:
                lines.append(f"     {d.severity}: [{d.code}] {d.message}")
        bad = sum(not ok(r) for r in results)
        lines.append(f"{len(results)} checked, {bad} with problems")
        return "\n".join(lines)

    ctx.emit({"valid": all_ok, "results": [_result_json(r) for r in results]}, human)
    return 0 if all_ok else 1


def cmd_catalog(ctx: CliContext) -> int:
    if ctx.args.budget is not None and ctx.args.budget < 0:
        from skillrt.errors import UsageError

        raise UsageError("--budget must be 0 or more characters", budget=ctx.args.budget)
    cat = ctx.runtime.catalog(budget=ctx.args.budget)
    ctx.emit(
        {
            "catalog": cat.text,
            "chars": cat.chars,
            "budget": cat.budget,
            "names": list(cat.names),
            "descriptions_dropped": list(cat.descriptions_dropped),
            "over_budget": cat.over_budget,
        },
        cat.text,
    )
    return 0


def _set(ctx: CliContext, enabled: bool) -> int:
    args = ctx.args
    if args.catalog:
        from skillrt.cli.routing_cmds import catalogue_only

        config = ctx.config()
        if not getattr(args, "root", None):
            config = catalogue_only(config)
        runtime = ctx.open_runtime(config=config, catalogs=args.catalog, catalog_base=args.base)
    else:
        runtime = ctx.runtime
    skill = runtime.enable(args.name) if enabled else runtime.disable(args.name)
    word = "enabled" if enabled else "disabled"
    ctx.emit({"name": skill.qualified_name, "enabled": enabled}, f"{skill.qualified_name} {word}")
    return 0


def cmd_enable(ctx: CliContext) -> int:
    return _set(ctx, True)


def cmd_disable(ctx: CliContext) -> int:
    return _set(ctx, False)
