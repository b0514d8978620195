"""The four recursion guards of seed 000 §4, checked in the seed's order.

1. root reload: the target is the root skill, it is loaded, and reloading is forbidden
   -> ``E_ROOT_RELOAD_BLOCKED``;
2. re-entry: the target already ran in this request (``visited_skills``), is on the
   stack, or is the current skill (a self-edge), and re-entry is not allowed
   -> ``E_SKILL_REENTRY_BLOCKED``;
3. depth: ``depth + 1 > max_depth`` -> ``E_DEPTH_LIMIT``;
4. edge type: anything but ``requires_now`` never runs automatically
   -> ``E_EDGE_NOT_EXECUTABLE``.

Every error carries ``request_id``, ``current_skill``, ``target_skill``, ``depth`` and
``skill_stack`` (000 §6), plus ``guard`` and the values the guard compared.
"""

from __future__ import annotations

from typing import Any

from skillrt.dispatch.edges import EdgeType
from skillrt.dispatch.header import RuntimeHeader
from skillrt.errors import (
    DepthLimitExceeded,
    DispatchError,
    EdgeNotExecutable,
    RootReloadBlocked,
    SkillReentryBlocked,
)

GUARD_ORDER = ("root_reload", "reentry", "depth", "edge_type")


def _context(header: RuntimeHeader, target: str, guard: str, **extra: Any) -> dict[str, Any]:
    return {
        "request_id": header.trace.request_id,
        "current_skill": header.identity.current_skill,
        "target_skill": target,
        "depth": header.trace.depth,
        "skill_stack": list(header.trace.skill_stack),
        "guard": guard,
        **extra,
    }


def first_blocking_guard(
    header: RuntimeHeader,
    target: str,
    edge_type: EdgeType | str,
    *,
    root_skill: str | None,
    visited: frozenset[str] | set[str] | None = None,
) -> DispatchError | None:
    """The error of the first guard (000 §4 order) that blocks ``header -> target``.

    ``header`` is the caller's header; ``visited`` adds the skills the whole request has
    run so far (the header's own list may be shorter than that).
    """
    ident, policy, trace = header.identity, header.policy, header.trace
    if (
        root_skill is not None
        and target == root_skill
        and ident.root_loaded
        and policy.forbid_root_reload
    ):
        return RootReloadBlocked(
            f"'{target}' is the root skill and is already loaded; a delegated call may not "
            "reload it (forbid_root_reload)",
            **_context(header, target, "root_reload", root_skill=root_skill),
        )
    if not policy.allow_reentry:
        seen = set(trace.visited_skills) | set(trace.skill_stack) | set(visited or ())
        if ident.current_skill is not None:
            seen.add(ident.current_skill)
        if target in seen:
            how = "itself" if target == ident.current_skill else "a skill that already ran"
            return SkillReentryBlocked(
                f"'{target}' is {how} in request {trace.request_id}; re-entry is not "
                "allowed (allow_reentry=false)",
                **_context(header, target, "reentry", visited_skills=sorted(seen)),
            )
    if trace.depth + 1 > policy.max_depth:
        return DepthLimitExceeded(
            f"dispatching '{target}' would reach depth {trace.depth + 1}, over max_depth "
            f"{policy.max_depth}",
            **_context(header, target, "depth", max_depth=policy.max_depth),
        )
    if edge_type != "requires_now":
        return EdgeNotExecutable(
            f"the edge to '{target}' is {edge_type}; only requires_now edges run automatically",
            **_context(header, target, "edge_type", edge_type=edge_type),
        )
    return None


def check_hop(
    header: RuntimeHeader,
    target: str,
    edge_type: EdgeType | str,
    *,
    root_skill: str | None,
    visited: frozenset[str] | set[str] | None = None,
) -> None:
    """Raise the first blocking guard's error; return when the hop may run."""
    err = first_blocking_guard(header, target, edge_type, root_skill=root_skill, visited=visited)
    if err is not None:
        raise err
