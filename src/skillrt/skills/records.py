"""Skill <-> JSON records, for the index cache and for ``--json`` output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillrt.skills.model import BrokenSkill, Diagnostic, Prerequisites, RoutingMeta, Skill


def _diag_dict(d: Diagnostic) -> dict[str, Any]:
    return {
        "code": d.code,
        "severity": d.severity,
        "message": d.message,
        "path": d.path,
        "field": d.field,
    }


def _diag(d: dict[str, Any]) -> Diagnostic:
    return Diagnostic(d["code"], d["severity"], d["message"], d.get("path"), d.get("field"))


def skill_to_record(skill: Skill | BrokenSkill) -> dict[str, Any]:
    if isinstance(skill, BrokenSkill):
        return {
            "broken": True,
            "path": str(skill.path),
            "skill_file": str(skill.skill_file) if skill.skill_file else None,
            "source": skill.source,
            "namespace": skill.namespace,
            "diagnostics": [_diag_dict(d) for d in skill.diagnostics],
        }
    r = skill.routing
    return {
        "name": skill.name,
        "description": skill.description,
        "path": str(skill.path),
        "skill_file": str(skill.skill_file) if skill.skill_file else None,
        "namespace": skill.namespace,
        "source": skill.source,
        "root": str(skill.root) if skill.root else None,
        "license": skill.license,
        "compatibility": skill.compatibility,
        "allowed_tools": list(skill.allowed_tools),
        "metadata": skill.metadata,
        "routing": {
            "triggers": list(r.triggers),
            "anti_triggers": list(r.anti_triggers),
            "examples": list(r.examples),
            "cost_hint": r.cost_hint,
            "prerequisites": {"bins": list(r.prerequisites.bins), "env": list(r.prerequisites.env)},
            "parallel_safe": r.parallel_safe,
            "always": r.always,
        },
        "disable_model_invocation": skill.disable_model_invocation,
        "user_invocable": skill.user_invocable,
        "argument_hint": skill.argument_hint,
        "context": skill.context,
        "content_hash": skill.content_hash,
        "diagnostics": [_diag_dict(d) for d in skill.diagnostics],
        "extra": skill.extra,
    }


def skill_from_record(rec: dict[str, Any]) -> Skill | BrokenSkill:
    diags = tuple(_diag(d) for d in rec.get("diagnostics", ()))
    skill_file = Path(rec["skill_file"]) if rec.get("skill_file") else None
    if rec.get("broken"):
        return BrokenSkill(
            Path(rec["path"]), skill_file, rec["source"], rec.get("namespace"), diags
        )
    r = rec["routing"]
    return Skill(
        name=rec["name"],
        description=rec["description"],
        path=Path(rec["path"]),
        skill_file=skill_file,
        namespace=rec.get("namespace"),
        source=rec["source"],
        root=Path(rec["root"]) if rec.get("root") else None,
        license=rec.get("license"),
        compatibility=rec.get("compatibility"),
        allowed_tools=tuple(rec["allowed_tools"]),
        metadata=dict(rec["metadata"]),
        routing=RoutingMeta(
            triggers=tuple(r["triggers"]),
            anti_triggers=tuple(r["anti_triggers"]),
            examples=tuple(r["examples"]),
            cost_hint=r["cost_hint"],
            prerequisites=Prerequisites(
                tuple(r["prerequisites"]["bins"]), tuple(r["prerequisites"]["env"])
            ),
            parallel_safe=r["parallel_safe"],
            always=r["always"],
        ),
        disable_model_invocation=rec["disable_model_invocation"],
        user_invocable=rec["user_invocable"],
        argument_hint=rec.get("argument_hint"),
        context=rec.get("context"),
        content_hash=rec["content_hash"],
        diagnostics=diags,
        extra=dict(rec.get("extra", {})),
    )


def dumps(rec: dict[str, Any]) -> str:
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":"))


def entry_to_json(
    skill: Skill,
    *,
    enabled: bool,
    shadowed: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The ``skillrt list --json`` shape of one skill (CLI contract)."""
    r = skill.routing
    out: dict[str, Any] = {
        "name": skill.name,
        "qualified_name": skill.qualified_name,
        "namespace": skill.namespace,
        "description": skill.description,
        "path": str(skill.path),
        "skill_file": str(skill.skill_file) if skill.skill_file else None,
        "source": skill.source,
        "enabled": enabled,
        "valid": skill.valid,
        "disable_model_invocation": skill.disable_model_invocation,
        "allowed_tools": list(skill.allowed_tools),
        "routing": {
            "triggers": list(r.triggers),
            "anti_triggers": list(r.anti_triggers),
            "cost_hint": r.cost_hint,
            "prerequisites": {"bins": list(r.prerequisites.bins), "env": list(r.prerequisites.env)},
            "parallel_safe": r.parallel_safe,
            "always": r.always,
        },
        "diagnostics": [_diag_dict(d) for d in skill.diagnostics],
    }
    if shadowed:
        out["shadowed"] = shadowed
    return out
