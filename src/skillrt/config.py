"""Runtime configuration: frozen dataclasses with the seeds' defaults.

``RuntimeConfig.from_file("skillrt.yaml")`` reads a project file; CLI flags override it
through :meth:`RuntimeConfig.replace_section`. Skill files never widen these limits.
Unknown keys are an error (a typo must not silently fall back to a default).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from skillrt.errors import ConfigError

# Seed 001 §18, routing defaults.
DEFAULT_SEMANTIC_TOP_K = 3
DEFAULT_SELECTION_THRESHOLD = 0.65
DEFAULT_MAX_PARALLEL_SKILLS = 2
DEFAULT_MAX_RETRY_PER_PATH = 1
DEFAULT_COLD_START_REQUESTS = 20
DEFAULT_MAX_REPAIR_ATTEMPTS_PER_RUN = 2
DEFAULT_MAX_SKILL_DELEGATE_DEPTH = 2
# Seed 003 §5 loader limits.
DEFAULT_MAX_SKILL_BODY_LINES = 500
DEFAULT_MAX_SKILL_BODY_CHARS = 40_000
DEFAULT_MAX_RESOURCE_FILE_BYTES = 2_000_000
DEFAULT_MAX_RESOURCE_EXCERPT_CHARS = 12_000
DEFAULT_ALLOWED_EXTENSIONS = (".md", ".txt", ".json", ".yaml", ".yml")
# S3 discovery bounds.
DEFAULT_MAX_DEPTH = 6
DEFAULT_MAX_DIRS_PER_ROOT = 2000
DEFAULT_MAX_SKILL_FILE_BYTES = 10_000_000
DEFAULT_MAX_FRONTMATTER_BYTES = 64_000
# Seed 000 §2 dispatcher policy.
DEFAULT_MAX_DISPATCH_DEPTH = 3

CONFIG_FILENAME = "skillrt.yaml"


@dataclass(frozen=True)
class RootConfig:
    """One skill root; ``namespace`` prefixes its skills as ``ns:skill`` (S5)."""

    path: Path
    namespace: str | None = None
    scope: str = "project"


@dataclass(frozen=True)
class DiscoveryConfig:
    """Where skills are found and how far the walk may go (S3)."""

    roots: tuple[RootConfig, ...] = ()
    #: Search ``<project>/.agents/skills``, ``<project>/skills``, ``~/.agents/skills``.
    conventional_roots: bool = True
    #: Opt-in client folders: ``.claude/skills`` and ``.codex/skills`` (project and user).
    claude_roots: bool = False
    codex_roots: bool = False
    max_depth: int = DEFAULT_MAX_DEPTH
    max_dirs_per_root: int = DEFAULT_MAX_DIRS_PER_ROOT
    max_skill_file_bytes: int = DEFAULT_MAX_SKILL_FILE_BYTES
    max_frontmatter_bytes: int = DEFAULT_MAX_FRONTMATTER_BYTES
    skip_dirs: tuple[str, ...] = (".git", "node_modules", "__pycache__", ".venv", ".hg", ".svn")
    #: Home folder for the user-scope roots; None means no user roots (the CLI fills it).
    home_dir: Path | None = None


@dataclass(frozen=True)
class LoaderLimits:
    """Level 2/3 limits (seed 003 §5)."""

    max_skill_body_lines: int = DEFAULT_MAX_SKILL_BODY_LINES
    max_skill_body_chars: int = DEFAULT_MAX_SKILL_BODY_CHARS
    #: What to do with an over-limit body: "truncate" keeps the key sections, "reject" refuses.
    body_policy: Literal["truncate", "reject"] = "truncate"
    max_resource_file_bytes: int = DEFAULT_MAX_RESOURCE_FILE_BYTES
    max_resource_excerpt_chars: int = DEFAULT_MAX_RESOURCE_EXCERPT_CHARS
    allowed_extensions: tuple[str, ...] = DEFAULT_ALLOWED_EXTENSIONS
    #: Content over this many chars is spilled to ``.agent/runs/<run_id>/observations/``.
    spill_threshold_chars: int = DEFAULT_MAX_RESOURCE_EXCERPT_CHARS


@dataclass(frozen=True)
class RoutingWeights:
    """Stage-2 score weights (seed 001 §6.2); they need not sum to 1 but default to it."""

    intent_match: float = 0.40
    trigger_match: float = 0.20
    success_rate: float = 0.15
    context_readiness: float = 0.10
    cost_penalty: float = 0.10
    conflict_penalty: float = 0.05


@dataclass(frozen=True)
class RoutingConfig:
    """Router defaults (seed 001 §18)."""

    semantic_top_k: int = DEFAULT_SEMANTIC_TOP_K
    selection_threshold: float = DEFAULT_SELECTION_THRESHOLD
    max_parallel_skills: int = DEFAULT_MAX_PARALLEL_SKILLS
    cold_start_requests: int = DEFAULT_COLD_START_REQUESTS
    weights: RoutingWeights = field(default_factory=RoutingWeights)
    #: "auto" (ONNX MiniLM when installed, else hashing), "onnx-minilm", "hashing",
    #: "sentence-transformers", or "none" (lexical only).
    embedding_backend: str = "auto"
    embedding_model_path: str | None = None
    #: Extra knobs the router defines (recall sizes, fusion weights, ...).
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DispatchConfig:
    """Dispatcher policy (seed 000 §2, 001 §19)."""

    max_depth: int = DEFAULT_MAX_DISPATCH_DEPTH
    forbid_root_reload: bool = True
    allow_reentry: bool = False
    root_skill: str | None = None
    run_skill_max_depth: int = DEFAULT_MAX_SKILL_DELEGATE_DEPTH
    roles_dir: Path | None = None
    default_role: str = "fixer"


@dataclass(frozen=True)
class ExecutionConfig:
    """Runners, fallback and repair budgets (seed 001 §10-13)."""

    runner: str = "dry-run"
    runner_cmd: str | None = None
    base_url: str | None = None
    model: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout_s: float = 300.0
    max_output_bytes: int = 1_000_000
    max_retry_per_path: int = DEFAULT_MAX_RETRY_PER_PATH
    repair_enabled: bool = False
    max_repair_attempts_per_run: int = DEFAULT_MAX_REPAIR_ATTEMPTS_PER_RUN
    max_total_retries_per_skill: int = 2
    max_patched_files_per_attempt: int = 3
    max_patch_hunks_per_attempt: int = 8
    max_added_tokens_in_skill_doc: int = 300


@dataclass(frozen=True)
class OrchestrationConfig:
    """Composite-skill runs (seed 002)."""

    memory_dir: Path = Path(".skillrt/memory")
    learnings_dir: Path = Path(".skillrt/learnings")
    domains: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TelemetryConfig:
    """Route events, metrics and gray release (seed 001 §14-15)."""

    enabled: bool = True
    candidate_config: Mapping[str, Any] | None = None
    candidate_share: float = 0.0
    otel: bool = True


@dataclass(frozen=True)
class RuntimeConfig:
    """Everything the runtime needs; every field has a working default."""

    project_dir: Path = Path(".")
    state_dir: Path = Path(".skillrt")
    discovery: DiscoveryConfig = field(default_factory=DiscoveryConfig)
    limits: LoaderLimits = field(default_factory=LoaderLimits)
    routing: RoutingConfig = field(default_factory=RoutingConfig)
    dispatch: DispatchConfig = field(default_factory=DispatchConfig)
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)
    orchestration: OrchestrationConfig = field(default_factory=OrchestrationConfig)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)

    @property
    def state_db(self) -> Path:
        return self.state_dir / "state.db"

    @classmethod
    def from_file(cls, path: Path | str, *, required: bool = True) -> RuntimeConfig:
        """Read a ``skillrt.yaml``; relative paths in it are relative to its folder."""
        path = Path(path)
        if not path.exists():
            if required:
                raise ConfigError(f"config file not found: {path}", path=str(path))
            return cls()
        import yaml

        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8-sig"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise ConfigError(f"cannot read config {path}: {exc}", path=str(path)) from exc
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise ConfigError(f"config {path} must be a YAML mapping", path=str(path))
        return cls.from_mapping(data, base_dir=path.parent.resolve())

    @classmethod
    def from_mapping(
        cls, data: Mapping[str, Any], *, base_dir: Path | None = None
    ) -> RuntimeConfig:
        base = base_dir or Path(".").resolve()
        data = dict(data)
        roots_raw = data.pop("roots", None)
        discovery_raw = dict(data.pop("discovery", {}) or {})
        if roots_raw is not None:
            discovery_raw["roots"] = roots_raw
        values: dict[str, Any] = {"project_dir": base, "state_dir": base / ".skillrt"}
        if "state_dir" in data:
            values["state_dir"] = _path(data.pop("state_dir"), base)
        values["discovery"] = _discovery(discovery_raw, base)
        section_types: dict[str, type[Any]] = {
            "limits": LoaderLimits,
            "routing": RoutingConfig,
            "dispatch": DispatchConfig,
            "execution": ExecutionConfig,
            "orchestration": OrchestrationConfig,
            "telemetry": TelemetryConfig,
        }
        for key, section_type in section_types.items():
            if key in data:
                values[key] = build_dataclass(section_type, data.pop(key) or {}, key, base)
        if "orchestration" not in values:
            values["orchestration"] = OrchestrationConfig(
                memory_dir=values["state_dir"] / "memory",
                learnings_dir=values["state_dir"] / "learnings",
            )
        if data:
            raise ConfigError(f"unknown config keys: {', '.join(sorted(data))}", keys=sorted(data))
        return cls(**values)

    def replace_section(self, **changes: Any) -> RuntimeConfig:
        """A copy with whole sections or top-level fields replaced."""
        return dataclasses.replace(self, **changes)


T = TypeVar("T")


def _path(value: Any, base: Path) -> Path:
    if not isinstance(value, str):
        raise ConfigError(f"expected a path string, got {value!r}")
    p = Path(value).expanduser()
    return p if p.is_absolute() else (base / p)


def _discovery(raw: dict[str, Any], base: Path) -> DiscoveryConfig:
    roots: list[RootConfig] = []
    for item in raw.pop("roots", None) or []:
        if isinstance(item, str):
            roots.append(RootConfig(path=_path(item, base)))
        elif isinstance(item, dict):
            unknown = set(item) - {"path", "namespace", "scope"}
            if unknown or "path" not in item:
                raise ConfigError(f"a root needs 'path' (and optional namespace, scope): {item!r}")
            ns = item.get("namespace")
            if ns is not None and not isinstance(ns, str):
                raise ConfigError(f"root namespace must be a string: {ns!r}")
            roots.append(
                RootConfig(
                    path=_path(item["path"], base),
                    namespace=ns,
                    scope=str(item.get("scope", "project")),
                )
            )
        else:
            raise ConfigError(f"a root must be a path or a mapping: {item!r}")
    disc = build_dataclass(DiscoveryConfig, raw, "discovery", base)
    return dataclasses.replace(disc, roots=tuple(roots))


def build_dataclass(cls: type[T], raw: Any, where: str, base: Path) -> T:
    """Build a config dataclass from a mapping, checking keys and simple types."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"'{where}' must be a mapping")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = set(raw) - set(fields)
    if unknown:
        raise ConfigError(
            f"unknown keys in '{where}': {', '.join(sorted(unknown))}",
            section=where,
            keys=sorted(unknown),
        )
    kwargs: dict[str, Any] = {}
    for key, value in raw.items():
        kwargs[key] = _coerce(value, hints[key], f"{where}.{key}", base)
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ConfigError(f"invalid '{where}': {exc}", section=where) from exc


def _coerce(value: Any, hint: Any, where: str, base: Path) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        non_none = [a for a in args if a is not type(None)]
        return _coerce(value, non_none[0], where, base)
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        return build_dataclass(hint, value, where, base)
    if hint is Path:
        return _path(value, base)
    if origin is Literal:
        if value not in args:
            raise ConfigError(f"'{where}' must be one of {list(args)}, got {value!r}")
        return value
    if origin is tuple:
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise ConfigError(f"'{where}' must be a list")
        return tuple(value)
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"'{where}' must be true or false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"'{where}' must be an integer, got {value!r}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"'{where}' must be a number, got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"'{where}' must be a string, got {value!r}")
        return value
    if origin in (Mapping, dict) or hint is Mapping:
        if not isinstance(value, Mapping):
            raise ConfigError(f"'{where}' must be a mapping")
        return dict(value)
    return value
