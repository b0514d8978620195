"""Following a skill's ``requires_now`` edges (seed 000 §5): each through the guards.

Edges joined by "or" are alternatives: the first that runs satisfies the group. A
sub-skill that fails has no fallback (the parent asked for *that* skill): its machine
goes ``fallback -> exit`` and the failure stays in the tree.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from skillrt.dispatch.edges import SkillEdge
from skillrt.dispatch.guards import first_blocking_guard
from skillrt.dispatch.model import (
    BlockedEdge,
    DispatchRequest,
    DispatchResult,
    DispatchSession,
    Prepared,
)
from skillrt.errors import SkillrtError
from skillrt.execution.fallback import PathState

if TYPE_CHECKING:
    from skillrt.dispatch.dispatcher import Dispatcher


def follow_edges(
    dispatcher: Dispatcher,
    edges: list[SkillEdge],
    prepared: Prepared,
    request: DispatchRequest,
    session: DispatchSession,
    parent_output: str,
    parent_execution_id: str | None,
) -> tuple[list[DispatchResult], list[BlockedEdge]]:
    children: list[DispatchResult] = []
    blocked: list[BlockedEdge] = []
    satisfied: set[frozenset[str]] = set()
    source = prepared.skill.qualified_name if prepared.skill else None
    header = prepared.header
    root_name = dispatcher.root_name()
    context = None
    if dispatcher.runner.name != "dry-run" and parent_output.strip():
        limit = dispatcher.config.dispatch.max_child_context_chars
        context = (
            parent_output
            if len(parent_output) <= limit
            else (parent_output[:limit] + f"\n[... {len(parent_output) - limit} more chars]")
        )
    for edge in edges:
        group = frozenset((edge.target, *edge.alternatives)) if edge.alternatives else None
        if group is not None and group in satisfied:
            blocked.append(BlockedEdge(source, edge.target, edge.type, "alternative_taken"))
            continue
        err = first_blocking_guard(
            header, edge.target, edge.type, root_skill=root_name, visited=session.visited_set()
        )
        if err is not None:
            blocked.append(BlockedEdge(source, edge.target, edge.type, "guard", err.to_dict()))
            continue
        target = dispatcher.registry.get(edge.target)
        if not dispatcher.registry.is_enabled(target):
            blocked.append(BlockedEdge(source, edge.target, edge.type, "disabled"))
            continue
        if target.disable_model_invocation:
            blocked.append(BlockedEdge(source, edge.target, edge.type, "model_invocation_disabled"))
            continue
        if not session.claim(edge.target, header.trace.depth + 1):
            blocked.append(BlockedEdge(source, edge.target, edge.type, "already_dispatched"))
            continue
        child_request = DispatchRequest(
            skill=edge.target,
            prompt=request.prompt,
            role=prepared.role,
            execution_mode="delegated",
            depth=header.trace.depth,
            parent_skill=source,
            edge_type=edge.type,
            request_id=session.request_id,
            follow_edges=request.follow_edges,
            call_chain=request.call_chain,
        )
        try:
            child_prepared = dispatcher.prepare(
                child_request, session, parent=header, parent_output=context
            )
        except SkillrtError as exc:  # e.g. its body is over the limits (reject policy)
            blocked.append(BlockedEdge(source, edge.target, edge.type, "error", exc.to_dict()))
            continue
        child, machine = dispatcher.execute(
            child_prepared,
            child_request,
            session,
            parent_execution_id=parent_execution_id,
        )
        if machine.state != PathState.SUCCESS.value:
            machine.advance(PathState.FALLBACK, "a required sub-skill has no fallback")
            machine.advance(PathState.EXIT, "sub-skill failed")
            child = dataclasses.replace(child, transitions=tuple(machine.transitions))
        children.append(child)
        if group is not None and child.ok:
            satisfied.add(group)
    return children, blocked
