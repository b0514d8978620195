"""What the MCP server publishes at one moment: tools' enum, resources, instructions.

A :class:`Publication` is an immutable snapshot built from the runtime's registry. Hot
reload builds a new one and compares keys to decide which list-changed notifications to
send. Nothing here imports the MCP SDK; ``server.py`` turns these values into wire types.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillrt.config import McpConfig
from skillrt.mcp.files import DigestCache, SkillFile, list_skill_files
from skillrt.mcp.instructions import HOOKED, PREAMBLE
from skillrt.mcp.uris import INDEX_URI, SKILL_FILE, skill_path, skill_uri
from skillrt.serialize import to_jsonable
from skillrt.skills.model import Skill

if TYPE_CHECKING:
    from skillrt.runtime import SkillRuntime

#: ``_meta`` key prefix for skill resources (SEP-2640 reverse-domain prefix).
META_PREFIX = "io.modelcontextprotocol.skills/"
#: Cache hints on skills/list and skills/get (SEP-2549): always revalidate, since
#: hot reload may change a skill at any moment.
TTL_MS = 0


@dataclass(frozen=True)
class ResourceInfo:
    """One listed resource."""

    uri: str
    name: str
    title: str | None
    description: str | None
    mime_type: str
    size: int | None
    meta: dict[str, Any]


@dataclass(frozen=True)
class PublishedSkill:
    skill: Skill
    files: tuple[SkillFile, ...]

    @property
    def qualified_name(self) -> str:
        return self.skill.qualified_name

    @property
    def uri(self) -> str:
        return skill_uri(self.qualified_name)


@dataclass(frozen=True)
class Publication:
    """Everything listed to clients, keyed so changes can be detected cheaply."""

    skills: tuple[PublishedSkill, ...]
    #: Names offered in ``load_skill``'s enum.
    activatable: tuple[str, ...]
    instructions: str
    catalog_names: tuple[str, ...] = ()
    #: Every skill in the registry (enabled or not), by qualified name.
    known: frozenset[str] = frozenset()
    _by_name: dict[str, PublishedSkill] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_name.update({p.qualified_name: p for p in self.skills})

    def get(self, qualified_name: str) -> PublishedSkill | None:
        return self._by_name.get(qualified_name)

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self._by_name)

    @property
    def tools_key(self) -> str:
        return _digest(self.activatable)

    @property
    def resources_key(self) -> str:
        return _digest(
            [(p.qualified_name, [(f.path, f.sha256) for f in p.files]) for p in self.skills]
        )

    def resources(self) -> list[ResourceInfo]:
        """The index resource, then every file of every published skill."""
        out = [
            ResourceInfo(
                INDEX_URI,
                "skills-index",
                "Skill index",
                "JSON index of the skills on this server: name, description, SKILL.md URI, "
                "and every file with its size and sha256.",
                "application/json",
                None,
                {},
            )
        ]
        for p in self.skills:
            for f in p.files:
                out.append(_file_resource(p, f))
        return out

    def index(self) -> dict[str, Any]:
        """The ``skill://index.json`` document (skills/list-style metadata)."""
        return {
            "skills": [
                {
                    "name": p.qualified_name,
                    "description": p.skill.description,
                    "uri": p.uri,
                    "sha256": p.files[0].sha256 if p.files else None,
                    "files": [
                        {
                            "path": f.path,
                            "uri": skill_uri(p.qualified_name, f.path),
                            "size": f.size,
                            "sha256": f.sha256,
                        }
                        for f in p.files
                    ],
                }
                for p in self.skills
            ]
        }


def _file_resource(p: PublishedSkill, f: SkillFile) -> ResourceInfo:
    meta: dict[str, Any] = {
        f"{META_PREFIX}skill": p.qualified_name,
        f"{META_PREFIX}sha256": f.sha256,
        f"{META_PREFIX}size": f.size,
    }
    if f.path == SKILL_FILE:
        # SEP-2640: SKILL.md carries the skill's own name and description.
        return ResourceInfo(
            skill_uri(p.qualified_name, f.path),
            p.skill.name,
            p.qualified_name,
            p.skill.description,
            f.mime_type,
            f.size,
            meta,
        )
    return ResourceInfo(
        skill_uri(p.qualified_name, f.path),
        f"{skill_path(p.qualified_name)}/{f.path}",
        None,
        f"{f.path} of skill {p.qualified_name}",
        f.mime_type,
        f.size,
        meta,
    )


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def build_publication(
    runtime: SkillRuntime,
    config: McpConfig,
    digests: DigestCache,
    *,
    usage: Mapping[str, int] | None = None,
) -> Publication:
    """Snapshot the runtime's registry: enabled skills, their files, the catalogue."""
    registry = runtime.registry
    enabled = sorted(registry.enabled_skills(), key=lambda s: s.qualified_name)
    published: list[PublishedSkill] = []
    for skill in enabled:
        files: tuple[SkillFile, ...] = ()
        if config.resources and skill.skill_file is not None:
            files = tuple(
                list_skill_files(
                    skill.path,
                    runtime.config.limits,
                    digests,
                    max_files=config.max_resources_per_skill,
                )
            )
        published.append(PublishedSkill(skill, files))
    activatable = activatable_names(enabled)
    text, listed = instructions_for(runtime, config, usage=usage)
    return Publication(
        tuple(published),
        activatable,
        text,
        listed,
        frozenset(s.qualified_name for s in registry.skills()),
    )


def activatable_names(enabled: Iterable[Skill]) -> tuple[str, ...]:
    """The names a model may load (load_skill's enum), by name."""
    return tuple(sorted(s.qualified_name for s in enabled if not s.disable_model_invocation))


def instructions_for(
    runtime: SkillRuntime, config: McpConfig, *, usage: Mapping[str, int] | None = None
) -> tuple[str, tuple[str, ...]]:
    """The server's instructions and the skills they list: from the registry alone (no
    skill's files are read), so ``initialize`` can be answered before the rest of the
    snapshot is built. Beside a prompt hook, the fixed :data:`HOOKED` text, whatever the
    budget (which bounds a catalogue, and there is none): the client lists its own
    skills' descriptions, the hook injects the one a message needs, and load_skill's
    enum names them all; listing them again would repeat each in the model's context."""
    if config.with_hook:
        return HOOKED, ()
    return fit_instructions(runtime, config.instructions_budget, usage=usage)


def fit_instructions(
    runtime: SkillRuntime,
    budget: int,
    *,
    usage: Mapping[str, int] | None = None,
    preamble: str = PREAMBLE,
) -> tuple[str, tuple[str, ...]]:
    """The preamble plus the Level-1 catalogue, never longer than ``budget`` characters.

    The catalogue first drops the descriptions of the least-used skills; when even the
    names do not fit, only the first skills (by name) are listed and a closing line says
    how many more ``route_skills`` can find.
    """
    from skillrt.skills.catalog import render_skills

    catalog = runtime.catalog(budget=max(0, budget - len(preamble)), usage=usage)
    if len(preamble) + catalog.chars <= budget:
        return preamble + catalog.text, catalog.names
    skills = sorted(
        (s for s in runtime.registry.enabled_skills() if not s.disable_model_invocation),
        key=lambda s: s.qualified_name,
    )

    def attempt(k: int) -> str:
        rest = len(skills) - k
        note = f"\n({rest} more skills not listed: call route_skills to find them.)"
        body = render_skills(skills[:k], budget=0).text
        return preamble + body + note

    lo, hi = 0, len(skills)
    while lo < hi:  # the largest k whose listing fits
        mid = (lo + hi + 1) // 2
        if len(attempt(mid)) <= budget:
            lo = mid
        else:
            hi = mid - 1
    text = attempt(lo)
    if len(text) > budget:  # not even the preamble fits: the note alone, cut to size
        text = f"{len(skills)} skills: call route_skills to find the right one."[:budget]
    return text, tuple(s.qualified_name for s in skills[:lo])


class FrontmatterCache:
    """Verbatim frontmatter of SKILL.md files (SEP-2640 entries), keyed by sha256."""

    def __init__(self) -> None:
        self._cache: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get(self, p: PublishedSkill) -> dict[str, Any]:
        key = p.files[0].sha256 if p.files else ""
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            return hit
        data = _read_frontmatter(p.skill)
        if key:
            with self._lock:
                self._cache[key] = data
        return data


def _read_frontmatter(skill: Skill) -> dict[str, Any]:
    from skillrt.errors import SkillrtError
    from skillrt.fileopen import open_regular
    from skillrt.skills.frontmatter import parse_frontmatter

    data: dict[str, Any] = {}
    if skill.skill_file is not None:
        try:
            fh, _ = open_regular(skill.skill_file)  # never blocks on a FIFO swapped in
            with fh:
                text = fh.read().decode("utf-8-sig", errors="replace")
            data, _ = parse_frontmatter(text)
        except (OSError, SkillrtError):
            data = {}
    out = {str(k): to_jsonable(v) for k, v in data.items()}
    out.setdefault("name", skill.name)
    out.setdefault("description", skill.description)
    return out


def skill_entry(p: PublishedSkill, frontmatter: FrontmatterCache) -> dict[str, Any]:
    """A SEP-2640 ``Skill`` entry: SKILL.md URI, verbatim frontmatter, file manifest."""
    return {
        "uri": p.uri,
        "frontmatter": frontmatter.get(p),
        "resources": [
            {"uri": skill_uri(p.qualified_name, f.path), "digest": f.digest, "size": f.size}
            for f in p.files
        ],
    }
