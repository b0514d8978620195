"""The skill registry: every skill found, who shadows whom, and what is enabled.

Level 1 only: the registry reads frontmatter, never a body.
"""

from __future__ import annotations

import builtins
import gc
import logging
import os
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from skillrt.config import DiscoveryConfig, RootConfig
from skillrt.errors import AmbiguousSkill, SkillNotFound, StoreError
from skillrt.skills.discovery import (
    FoundSkill,
    Root,
    WalkReport,
    resolve_roots,
    stands_alone,
    walk_root,
)
from skillrt.skills.index_cache import FileKey, IndexCache
from skillrt.skills.model import BrokenSkill, Diagnostic, ShadowedSkill, Skill
from skillrt.skills.reader import TRANSIENT_CODES, read_skill
from skillrt.store import skill_state
from skillrt.store.base import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SkillEntry:
    """A listed skill: the skill plus its enable state (what ``skillrt list`` prints)."""

    skill: Skill
    enabled: bool
    shadowed: tuple[ShadowedSkill, ...] = ()


class SkillRegistry:
    """Skills by qualified name, in discovery precedence order."""

    def __init__(
        self,
        skills: Iterable[Skill],
        *,
        broken: Sequence[BrokenSkill] = (),
        shadowed: Sequence[ShadowedSkill] = (),
        diagnostics: Sequence[Diagnostic] = (),
        store: Store | None = None,
        disabled: frozenset[str] | None = None,
    ) -> None:
        self._skills: dict[str, Skill] = {}
        self._by_name: dict[str, list[Skill]] = {}
        extra_shadowed: list[ShadowedSkill] = []
        for skill in skills:
            qn = skill.qualified_name
            if qn in self._skills:
                winner = self._skills[qn]
                if winner.skill_file is not None and winner.skill_file == skill.skill_file:
                    continue  # the same file reached from two overlapping roots
                extra_shadowed.append(
                    ShadowedSkill(
                        skill,
                        winner.path,
                        f"{qn} is also defined at {winner.path} "
                        f"({winner.source} scope), which takes precedence",
                    )
                )
                continue
            self._skills[qn] = skill
            self._by_name.setdefault(skill.name, []).append(skill)
        self.broken: tuple[BrokenSkill, ...] = tuple(broken)
        self.shadowed: tuple[ShadowedSkill, ...] = tuple(shadowed) + tuple(extra_shadowed)
        diags = list(diagnostics)
        self._store = store
        if disabled is None:
            disabled = frozenset()
            if store is not None:
                try:
                    disabled = skill_state.disabled_names(store)
                except StoreError as exc:
                    # S6 state is unreadable: list everything as enabled, and say so.
                    log.warning("enable/disable state unavailable: %s", exc)
                    diags.append(
                        Diagnostic(
                            "STATE_UNAVAILABLE",
                            "warning",
                            f"enable/disable state could not be read ({exc}); "
                            "every skill is shown as enabled",
                        )
                    )
        self._disabled: frozenset[str] = disabled
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diags)
        #: Index-cache counters of the discovery that built this registry.
        self.cache_hits = 0
        self.cache_misses = 0

    # -- construction -----------------------------------------------------------------
    @classmethod
    def discover(
        cls,
        config: DiscoveryConfig,
        *,
        project_dir: Path,
        store: Store | None = None,
        explicit_roots: tuple[RootConfig, ...] | None = None,
    ) -> SkillRegistry:
        """Walk the roots, parse (or reuse cached) frontmatter, apply precedence."""
        roots = resolve_roots(config, project_dir, explicit_roots)
        return cls.from_roots(roots, config, store=store)

    @classmethod
    def from_roots(
        cls, roots: Sequence[Root], config: DiscoveryConfig, *, store: Store | None = None
    ) -> SkillRegistry:
        report = WalkReport(diagnostics=[])
        skills: list[Skill] = []
        broken: list[BrokenSkill] = []
        with gc_paused():
            # Parsed skills are a per-machine cache: the store's local SQLite file.
            cache = IndexCache(
                store.local if store is not None else None,
                max_frontmatter_bytes=config.max_frontmatter_bytes,
            )
            for root in roots:
                #: skill folder -> its name, for the SKILL.md files nested in it
                listed: dict[Path, str] = {}
                for found in walk_root(root, config, report):
                    item = _load(found, config, cache)
                    if found.enclosing and not stands_alone(item, found.enclosing, listed):
                        continue  # one of the enclosing skill's files
                    if isinstance(item, BrokenSkill):
                        broken.append(item)
                    else:
                        skills.append(item)
                        listed[found.path] = item.name
            cache.flush()
            for problem in dict.fromkeys(cache.problems):
                report.diagnostics.append(Diagnostic("INDEX_CACHE_UNAVAILABLE", "warning", problem))
            registry = cls(skills, broken=broken, diagnostics=report.diagnostics, store=store)
        registry.cache_hits, registry.cache_misses = cache.hits, cache.misses
        return registry

    # -- lookup -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._skills)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._skills

    def skills(self) -> builtins.list[Skill]:
        """Every usable (not shadowed, not broken) skill, in precedence order."""
        return list(self._skills.values())

    def enabled_skills(self) -> builtins.list[Skill]:
        return [s for s in self._skills.values() if self.is_enabled(s)]

    def get(self, name: str) -> Skill:
        """A skill by qualified name (``ns:skill``) or by a bare name that is unique."""
        skill = self._skills.get(name)
        if skill is not None:
            return skill
        if ":" not in name:
            matches = self._by_name.get(name, [])
            if len(matches) == 1:
                return matches[0]
            if len(matches) > 1:
                ids = sorted(s.qualified_name for s in matches)
                raise AmbiguousSkill(
                    f"'{name}' names {len(ids)} skills: {', '.join(ids)}; use one of those ids",
                    name=name,
                    candidates=ids,
                )
        raise SkillNotFound(f"No skill named '{name}'", name=name)

    def find(self, name: str) -> builtins.list[Skill]:
        """Every skill whose bare name is ``name`` (one per namespace)."""
        return list(self._by_name.get(name, []))

    def is_enabled(self, skill: Skill | str) -> bool:
        qn = skill.qualified_name if isinstance(skill, Skill) else skill
        return qn not in self._disabled

    def set_enabled(self, name: str, enabled: bool) -> Skill:
        """Persist enable state; the name must resolve to a known skill."""
        skill = self.get(name)
        self.set_enabled_skill(skill, enabled)
        return skill

    def set_enabled_skill(self, skill: Skill, enabled: bool) -> None:
        """Persist the enable state of ``skill``, found here or elsewhere (a catalogue
        line routed beside the registry's skills)."""
        if self._store is not None:
            skill_state.set_enabled(self._store, skill.qualified_name, enabled)
        if enabled:
            self._disabled = self._disabled - {skill.qualified_name}
        else:
            self._disabled = self._disabled | {skill.qualified_name}

    def list(self, *, include_disabled: bool = True) -> builtins.list[SkillEntry]:
        shadows: dict[str, list[ShadowedSkill]] = {}
        for sh in self.shadowed:
            shadows.setdefault(sh.skill.qualified_name, []).append(sh)
        out = []
        for skill in self._skills.values():
            enabled = self.is_enabled(skill)
            if enabled or include_disabled:
                out.append(SkillEntry(skill, enabled, tuple(shadows.get(skill.qualified_name, ()))))
        return out

    def catalog(self, *, budget: int | None = None, usage: Mapping[str, int] | None = None) -> str:
        from skillrt.skills.catalog import render_catalog

        return render_catalog(self, budget=budget, usage=usage).text


_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_resume = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a catalogue is built.

    Discovery allocates a few objects per skill and creates no reference cycles, but
    the allocations trigger collections that re-scan every live object: a process
    holding a previous registry spent half its warm discovery time in the collector.
    Nested and concurrent pauses are counted; the collector is re-enabled by the last
    one, and only if it was enabled before the first.
    """
    global _gc_pauses, _gc_resume
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_resume = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_resume:
                gc.enable()


def _load(found: FoundSkill, config: DiscoveryConfig, cache: IndexCache) -> Skill | BrokenSkill:
    st = found.stat
    if st is None:
        try:
            st = os.stat(found.skill_file)
        except OSError:
            st = None
    root = found.root
    if st is not None:
        key = FileKey(str(found.skill_file), st.st_mtime_ns, st.st_size)
        item = cache.get(
            key,
            path=found.path,
            skill_file=found.skill_file,
            namespace=found.namespace,
            source=root.scope,
            root=root.path,
        )
        if item is not None:
            return item
    item = read_skill(
        found.path,
        skill_file=found.skill_file,
        namespace=found.namespace,
        source=root.scope,
        root=root.path,
        max_file_bytes=config.max_skill_file_bytes,
        max_frontmatter_bytes=config.max_frontmatter_bytes,
        stat_result=st,
    )
    if st is not None and not (
        isinstance(item, BrokenSkill) and any(d.code in TRANSIENT_CODES for d in item.diagnostics)
    ):
        cache.put(key, item)
    return item
