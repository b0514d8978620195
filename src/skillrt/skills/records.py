"""Skill <-> JSON records, for the index cache and for ``--json`` output."""

from __future__ import annotations

import dataclasses
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


# -- the index cache's compact form ---------------------------------------------------
# Only what the file says is stored, and only where it differs from the defaults; where
# the skill was found (folder, namespace, scope, root) comes from the walk on every run.
# Smaller rows are faster to select and decode: a warm 10,000-skill walk decodes them all.

_ROUTING_DEFAULTS = RoutingMeta()


def _field_defaults(cls: type[Any]) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...]]:
    """A dataclass's plain defaults, and (name, factory) for the mutable ones."""
    plain: dict[str, Any] = {}
    factories: list[tuple[str, Any]] = []
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            plain[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            factories.append((f.name, f.default_factory))
    return plain, tuple(factories)


_SKILL_PLAIN, _SKILL_FACTORIES = _field_defaults(Skill)
_ROUTING_PLAIN, _ROUTING_FACTORIES = _field_defaults(RoutingMeta)
_PREREQ_PLAIN, _ = _field_defaults(Prerequisites)
#: Keys of a cache record copied as they are.
_PLAIN_KEYS = frozenset(
    {
        "name",
        "description",
        "content_hash",
        "license",
        "compatibility",
        "argument_hint",
        "context",
        "metadata",
        "extra",
        "disable_model_invocation",
        "user_invocable",
    }
)


def _template(
    plain: dict[str, Any], factories: tuple[tuple[str, Any], ...]
) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...]]:
    """Defaults to copy per instance, and the factories that must run per instance.

    Frozen values (``RoutingMeta()``, ``Prerequisites()``) are immutable, so one default
    instance is shared; mutable ones (the ``metadata`` and ``extra`` dicts) are made anew.
    """
    template = dict(plain)
    per_instance = []
    for name, factory in factories:
        if factory in (RoutingMeta, Prerequisites):
            template[name] = factory()
        else:
            per_instance.append((name, factory))
    return template, tuple(per_instance)


_SKILL_TEMPLATE = _template(_SKILL_PLAIN, _SKILL_FACTORIES)
_ROUTING_TEMPLATE = _template(_ROUTING_PLAIN, _ROUTING_FACTORIES)


def _fresh_defaults(template: tuple[dict[str, Any], tuple[tuple[str, Any], ...]]) -> dict[str, Any]:
    state = template[0].copy()
    for name, factory in template[1]:
        state[name] = factory()
    return state


def _new(cls: type[Any], state: dict[str, Any]) -> Any:
    """A frozen dataclass instance whose fields are exactly ``state``, without ``__init__``.

    Cache records were written from these very classes, so there is nothing to check,
    and skipping the frozen ``__init__`` (one ``object.__setattr__`` per field) makes a
    warm 10,000-skill listing several times cheaper to build. None of these classes has
    a ``__post_init__``; ``state`` always holds every field (defaults filled in).
    """
    obj = object.__new__(cls)
    object.__setattr__(obj, "__dict__", state)
    return obj


_ROUTING_KEYS = frozenset(
    {"triggers", "anti_triggers", "examples", "cost_hint", "parallel_safe", "always", "bins", "env"}
)


def _routing_from(r: dict[str, Any]) -> RoutingMeta:
    if not isinstance(r, dict):
        raise ValueError("routing in a cache record is not an object")
    if not _ROUTING_KEYS.issuperset(r):
        raise KeyError("unknown routing key in cache record")
    state = _fresh_defaults(_ROUTING_TEMPLATE)
    if "triggers" in r:
        state["triggers"] = tuple(r["triggers"])
    if "anti_triggers" in r:
        state["anti_triggers"] = tuple(r["anti_triggers"])
    if "examples" in r:
        state["examples"] = tuple(r["examples"])
    if "cost_hint" in r:
        state["cost_hint"] = r["cost_hint"]
    if "parallel_safe" in r:
        state["parallel_safe"] = r["parallel_safe"]
    if "always" in r:
        state["always"] = r["always"]
    if "bins" in r or "env" in r:
        state["prerequisites"] = _new(
            Prerequisites, {"bins": tuple(r.get("bins", ())), "env": tuple(r.get("env", ()))}
        )
    return _new(RoutingMeta, state)  # type: ignore[no-any-return]


def cache_dumps(item: Skill | BrokenSkill, *, racy: bool = False) -> str:
    """The compact cache record of a freshly parsed skill (location left out); ``racy``
    marks a record whose file was too recent for mtime to prove it unchanged."""
    skill_file = str(item.skill_file) if item.skill_file else None
    diags = [
        [d.code, d.severity, d.message, None if d.path == skill_file else d.path, d.field]
        for d in item.diagnostics
    ]
    if isinstance(item, BrokenSkill):
        return dumps({"broken": True, "diagnostics": diags})
    rec: dict[str, Any] = {
        "name": item.name,
        "description": item.description,
        "content_hash": item.content_hash,
    }
    if racy:
        rec["racy"] = True
    if diags:
        rec["diagnostics"] = diags
    for key in ("license", "compatibility", "argument_hint", "context"):
        value = getattr(item, key)
        if value is not None:
            rec[key] = value
    if item.allowed_tools:
        rec["allowed_tools"] = list(item.allowed_tools)
    if item.metadata:
        rec["metadata"] = item.metadata
    if item.extra:
        rec["extra"] = item.extra
    if item.disable_model_invocation:
        rec["disable_model_invocation"] = True
    if not item.user_invocable:
        rec["user_invocable"] = False
    r = item.routing
    if r != _ROUTING_DEFAULTS:
        routing: dict[str, Any] = {}
        for key in ("triggers", "anti_triggers", "examples"):
            if getattr(r, key):
                routing[key] = list(getattr(r, key))
        if r.cost_hint != "medium":
            routing["cost_hint"] = r.cost_hint
        if r.prerequisites.bins:
            routing["bins"] = list(r.prerequisites.bins)
        if r.prerequisites.env:
            routing["env"] = list(r.prerequisites.env)
        if r.parallel_safe:
            routing["parallel_safe"] = True
        if r.always:
            routing["always"] = True
        rec["routing"] = routing
    return dumps(rec)


def cache_loads(
    text: str,
    *,
    path: Path,
    skill_file: Path,
    namespace: str | None,
    source: str,
    root: Path | None,
) -> Skill | BrokenSkill:
    """Rebuild a skill from :func:`cache_dumps` output plus where it was found now."""
    return cache_build(
        json.loads(text),
        path=path,
        skill_file=skill_file,
        namespace=namespace,
        source=source,
        root=root,
    )


def cache_build(
    rec: dict[str, Any],
    *,
    path: Path,
    skill_file: Path,
    namespace: str | None,
    source: str,
    root: Path | None,
) -> Skill | BrokenSkill:
    """:func:`cache_loads` for a record that is already decoded."""
    raw_diags = rec.get("diagnostics")
    diags: tuple[Diagnostic, ...] = ()
    if raw_diags:
        file_str = str(skill_file)
        diags = tuple(
            Diagnostic(d[0], d[1], d[2], file_str if d[3] is None else d[3], d[4])
            for d in raw_diags
        )
    if rec.get("broken"):
        return BrokenSkill(path, skill_file, source, namespace, diags)
    state = _fresh_defaults(_SKILL_TEMPLATE)
    state["path"] = path
    state["skill_file"] = skill_file
    state["namespace"] = namespace
    state["source"] = source
    state["root"] = root
    state["diagnostics"] = diags
    for key, value in rec.items():
        if key in _PLAIN_KEYS:
            state[key] = value
        elif key == "routing":
            state[key] = _routing_from(value)
        elif key == "allowed_tools":
            state[key] = tuple(value)
        elif key not in ("diagnostics", "racy"):
            raise KeyError(key)  # a record from another format: parse the file again
    if "name" not in state or "description" not in state:
        raise KeyError("name")
    return _new(Skill, state)  # type: ignore[no-any-return]


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
