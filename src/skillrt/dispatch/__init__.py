"""Dispatch (seed 000, 001 §19): runtime headers, skill edges, guards, role guides.

``Dispatcher.dispatch(DispatchRequest(...))`` builds the runtime header, applies the
four guards in the seed's order, assembles role guide / root skill / target skill and
runs the prompt, following ``requires_now`` sub-skill edges under the same guards.

Modules, each importing only those above it (a test walks the imports)::

    header, edges, roles, rules, run_skill      values, text, files
    guards                                      the four guards (000 §4)
    model                                       request, result tree, session; SkillDispatcher
    prompt, prepare                             header + guards + prompt (no runner)
    dispatcher                                  run, follow edges and run_skill: the recursion
    pipeline, repair                            a plan's steps with the 001 §10 fallback and
                                                repair, through SkillDispatcher
    service                                     plans text, builds runners and dispatchers

Below ``dispatch`` is ``execution`` (runners, the path machine, records), which imports
nothing of it; above it is ``orchestration``, which it never imports.

The names below are imported on first use, so importing one module of the package never
imports the others through this file.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module that defines it.
_EXPORTS = {
    "DEFAULT_ROLES": "skillrt.dispatch.roles",
    "EDGE_TYPES": "skillrt.dispatch.edges",
    "GUARD_ORDER": "skillrt.dispatch.guards",
    "BlockedEdge": "skillrt.dispatch.model",
    "DispatchRequest": "skillrt.dispatch.model",
    "DispatchResult": "skillrt.dispatch.model",
    "DispatchSession": "skillrt.dispatch.model",
    "Dispatcher": "skillrt.dispatch.dispatcher",
    "EdgeIndex": "skillrt.dispatch.edges",
    "EdgeType": "skillrt.dispatch.edges",
    "Identity": "skillrt.dispatch.header",
    "Policy": "skillrt.dispatch.header",
    "Prepared": "skillrt.dispatch.model",
    "ReadyDispatch": "skillrt.dispatch.model",
    "RoleGuide": "skillrt.dispatch.roles",
    "RoleGuides": "skillrt.dispatch.roles",
    "RoutingRule": "skillrt.dispatch.rules",
    "RoutingRules": "skillrt.dispatch.rules",
    "RuleMatch": "skillrt.dispatch.rules",
    "RunSkillCall": "skillrt.dispatch.run_skill",
    "RunSkillResult": "skillrt.dispatch.model",
    "RuntimeHeader": "skillrt.dispatch.header",
    "SkillDispatcher": "skillrt.dispatch.model",
    "SkillEdge": "skillrt.dispatch.edges",
    "Trace": "skillrt.dispatch.header",
    "check_hop": "skillrt.dispatch.guards",
    "extract_edges": "skillrt.dispatch.edges",
    "find_run_skill_calls": "skillrt.dispatch.run_skill",
    "first_blocking_guard": "skillrt.dispatch.guards",
    "new_request_id": "skillrt.dispatch.header",
    "parse_run_skill": "skillrt.dispatch.run_skill",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skillrt.dispatch' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
