"""Dispatch (seed 000, 001 §19): runtime headers, skill edges, guards, role guides.

``Dispatcher.dispatch(DispatchRequest(...))`` builds the runtime header, applies the
four guards in the seed's order, assembles role guide / root skill / target skill and
runs the prompt, following ``requires_now`` sub-skill edges under the same guards.
"""

from skillrt.dispatch.dispatcher import (
    BlockedEdge,
    Dispatcher,
    DispatchRequest,
    DispatchResult,
    DispatchSession,
    Prepared,
)
from skillrt.dispatch.edges import EDGE_TYPES, EdgeIndex, EdgeType, SkillEdge, extract_edges
from skillrt.dispatch.guards import GUARD_ORDER, check_hop, first_blocking_guard
from skillrt.dispatch.header import Identity, Policy, RuntimeHeader, Trace, new_request_id
from skillrt.dispatch.roles import DEFAULT_ROLES, RoleGuide, RoleGuides
from skillrt.dispatch.rules import RoutingRule, RoutingRules, RuleMatch
from skillrt.dispatch.run_skill import (
    RunSkillCall,
    RunSkillResult,
    find_run_skill_calls,
    parse_run_skill,
    run_skill,
)

__all__ = [
    "DEFAULT_ROLES",
    "EDGE_TYPES",
    "GUARD_ORDER",
    "BlockedEdge",
    "DispatchRequest",
    "DispatchResult",
    "DispatchSession",
    "Dispatcher",
    "EdgeIndex",
    "EdgeType",
    "Identity",
    "Policy",
    "Prepared",
    "RoleGuide",
    "RoleGuides",
    "RoutingRule",
    "RoutingRules",
    "RuleMatch",
    "RunSkillCall",
    "RunSkillResult",
    "RuntimeHeader",
    "SkillEdge",
    "Trace",
    "check_hop",
    "extract_edges",
    "find_run_skill_calls",
    "first_blocking_guard",
    "new_request_id",
    "parse_run_skill",
    "run_skill",
]
