"""Everything before a runner call (seed 000 §1, §2, §4): header, guards, prompt.

:class:`Preparer` resolves the role guide and the target skill; for a delegated request
it checks the four guards against the caller; it builds the runtime header and loads
what the mode allows (root: the root skill once plus the target; delegated: the role
guide plus the target), then assembles the prompt. It never runs anything and never
recurses: :mod:`skillrt.dispatch.dispatcher` does both.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from skillrt.config import RuntimeConfig
from skillrt.dispatch.edges import EDGE_TYPES
from skillrt.dispatch.guards import check_hop
from skillrt.dispatch.header import EXECUTION_MODES, Identity, Policy, RuntimeHeader, Trace
from skillrt.dispatch.model import DispatchRequest, DispatchSession, Prepared
from skillrt.dispatch.prompt import PromptParts, assemble
from skillrt.dispatch.roles import RoleGuides
from skillrt.errors import (
    ConfigError,
    EdgeNotExecutable,
    SkillDisabled,
    SkillNotFound,
    SkillrtError,
    UsageError,
)
from skillrt.execution.fallback import NO_SKILL, skill_path
from skillrt.loading.report import injection_block
from skillrt.skills.model import Skill
from skillrt.skills.registry import SkillRegistry

__all__ = ["Preparer"]


class Preparer:
    """Prepares dispatches over one registry, config and set of role guides."""

    def __init__(self, registry: SkillRegistry, config: RuntimeConfig, roles: RoleGuides) -> None:
        self.registry = registry
        self.config = config
        self.roles = roles
        self.policy = Policy(
            forbid_root_reload=config.dispatch.forbid_root_reload,
            max_depth=config.dispatch.max_depth,
            allow_reentry=config.dispatch.allow_reentry,
        )
        self._root: tuple[Skill | None] | None = None

    @property
    def root_skill(self) -> Skill | None:
        """The configured root skill (``dispatch.root_skill``), or None."""
        if self._root is None:
            name = self.config.dispatch.root_skill
            if not name:
                self._root = (None,)
            else:
                try:
                    self._root = (self.registry.get(name),)
                except SkillNotFound as exc:
                    raise ConfigError(
                        f"dispatch.root_skill '{name}' is not a known skill",
                        root_skill=name,
                    ) from exc
        return self._root[0]

    def root_name(self) -> str | None:
        """The root skill's qualified name, or None."""
        root = self.root_skill
        return root.qualified_name if root is not None else None

    def qualify(self, name: str) -> str:
        """``name``'s qualified name, or ``name`` itself when no skill has it."""
        try:
            return self.registry.get(name).qualified_name
        except SkillrtError:
            return name

    def prepare(
        self,
        request: DispatchRequest,
        session: DispatchSession,
        *,
        parent: RuntimeHeader | None = None,
        parent_output: str | None = None,
    ) -> Prepared:
        """Header + guards + prompt for ``request`` (raises a guard's error).

        ``parent`` is the caller's header for a sub-skill found in the tree; without it a
        delegated request describes its caller with its own fields (``parent_skill``,
        ``depth``, ``visited_skills``), as the CLI does.
        """
        if request.execution_mode not in EXECUTION_MODES:
            raise UsageError(
                f"execution mode must be root or delegated, got {request.execution_mode!r}",
                execution_mode=request.execution_mode,
            )
        if request.edge_type not in EDGE_TYPES:
            raise UsageError(
                f"edge type must be one of {', '.join(EDGE_TYPES)}, got {request.edge_type!r}",
                edge_type=request.edge_type,
            )
        if request.depth < 0:
            raise UsageError("depth must be >= 0", depth=request.depth)
        role = request.role or self.config.dispatch.default_role
        guide = self.roles.get(role)  # validates the role in either mode
        skill = self._target(request.skill) if request.skill else None
        target = skill.qualified_name if skill is not None else None
        root_name = self.root_name()
        loads: list[dict[str, Any]] = []
        if request.execution_mode == "root":
            header = self._root_header(request, role, target, session, has_parent=bool(parent))
        else:
            header = self._delegated_header(request, role, target, session, parent, root_name)
        parts = PromptParts(
            header=header,
            task=request.prompt,
            role=role,
            context=request.context,
            parent_skill=header.identity.origin_skill,
            parent_output=parent_output,
        )
        if request.execution_mode == "root":
            root = self.root_skill
            if root is not None and root.qualified_name != target:
                block, report = self._load(root, session)
                parts = dataclasses.replace(parts, root_block=block)
                loads.append(report)
        else:
            parts = dataclasses.replace(parts, role_guide=guide.text)
        if skill is not None:
            block, report = self._load(skill, session)
            loads.append(report)
            if request.execution_mode == "root" and target == root_name:
                parts = dataclasses.replace(parts, root_block=block)
            else:
                parts = dataclasses.replace(parts, skill_block=block)
        return Prepared(
            header=header,
            prompt=assemble(parts),
            skill=skill,
            role=role,
            path=skill_path(target) if target else NO_SKILL,
            edge_type=request.edge_type if request.execution_mode == "delegated" else None,
            loads=tuple(loads),
        )

    def _root_header(
        self,
        request: DispatchRequest,
        role: str,
        target: str | None,
        session: DispatchSession,
        *,
        has_parent: bool,
    ) -> RuntimeHeader:
        if has_parent or request.parent_skill or request.depth or request.visited_skills:
            raise UsageError(
                "root mode is the outermost request: no --parent-skill, --depth or "
                "--visited-skills (use --execution-mode delegated)",
                execution_mode="root",
            )
        if target is not None and request.edge_type != "requires_now":
            # Root mode has no caller, so only the edge-type guard can apply.
            raise EdgeNotExecutable(
                f"the edge to '{target}' is {request.edge_type}; only requires_now edges "
                "run automatically",
                request_id=session.request_id,
                current_skill=None,
                target_skill=target,
                depth=0,
                skill_stack=[],
                guard="edge_type",
                edge_type=request.edge_type,
            )
        return RuntimeHeader(
            "root",
            Identity(role, target, None, root_loaded=True),
            self.policy,
            Trace(session.request_id, 0, (target,) if target else (), ()),
        )

    def _delegated_header(
        self,
        request: DispatchRequest,
        role: str,
        target: str | None,
        session: DispatchSession,
        parent: RuntimeHeader | None,
        root_name: str | None,
    ) -> RuntimeHeader:
        caller = parent or self._caller_header(request, role, session)
        if target is not None:
            check_hop(
                caller,
                target,
                request.edge_type,
                root_skill=root_name,
                visited=session.visited_set(),
            )
        visited = tuple(v for v in self._visited_for_child(caller, session) if v != target)
        if target is None:
            header = RuntimeHeader(
                "delegated",
                Identity(role, None, caller.identity.current_skill, True),
                self.policy,
                Trace(
                    session.request_id, caller.trace.depth + 1, caller.trace.skill_stack, visited
                ),
            )
        else:
            header = caller.child(target, visited=visited)
        if header.identity.role != role:
            identity = Identity(
                role, header.identity.current_skill, header.identity.origin_skill, True
            )
            header = RuntimeHeader(header.execution_mode, identity, header.policy, header.trace)
        return header

    def _target(self, name: str) -> Skill:
        skill = self.registry.get(name)
        if not self.registry.is_enabled(skill):
            raise SkillDisabled(
                f"Skill '{skill.qualified_name}' is disabled. Enable it with "
                f"`skillrt enable {skill.qualified_name}`.",
                name=skill.qualified_name,
            )
        return skill

    def _caller_header(
        self, request: DispatchRequest, role: str, session: DispatchSession
    ) -> RuntimeHeader:
        """The caller of a delegated request, as its flags describe it."""
        parent = self.qualify(request.parent_skill) if request.parent_skill else None
        visited = [self.qualify(v) for v in request.visited_skills]
        for name in (*visited, *([parent] if parent else [])):
            session.visit(name)
        stack = [v for v in visited if v != parent]
        if parent is not None:
            stack.append(parent)
        return RuntimeHeader(
            "delegated" if request.depth > 0 else "root",
            Identity(role, parent, None, root_loaded=True),
            self.policy,
            Trace(
                session.request_id,
                request.depth,
                tuple(stack),
                tuple(v for v in visited if v != parent),
            ),
        )

    def _visited_for_child(
        self, caller: RuntimeHeader, session: DispatchSession
    ) -> tuple[str, ...]:
        out = list(caller.trace.visited_skills)
        for name in session.visited:
            if name not in out:
                out.append(name)
        current = caller.identity.current_skill
        if current is not None and current not in out:
            out.append(current)
        return tuple(out)

    def _load(self, skill: Skill, session: DispatchSession) -> tuple[str, dict[str, Any]]:
        result = session.reads.load(skill)
        r = result.report
        return injection_block(skill, result), {
            "skill": r.skill,
            "path": r.path,
            "sha256": r.sha256,
            "bytes_read": r.bytes_read,
            "chars_returned": r.chars_returned,
            "truncated": r.truncated,
            "storage_ref": r.storage_ref,
        }
