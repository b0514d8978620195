"""Runtime configuration: frozen dataclasses with the seeds' defaults.

``RuntimeConfig.from_file("skillrt.yaml")`` reads a project file; CLI flags override it
through :meth:`RuntimeConfig.replace_section`. Skill files never widen these limits.

A file is validated by pydantic against the dataclasses themselves, strictly: no value
changes type on the way in (``allowed_extensions: [1, null]`` is an error, not
``(1, None)``), unknown keys are errors (a typo must not silently fall back to a
default), and every problem is reported at once. Paths in a file are relative to its
folder (:data:`ConfigPath`). pydantic is imported only when a file has settings.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeVar

from skillrt import hook_budget
from skillrt.errors import ConfigError
from skillrt.runner_settings import RunnerSettings
from skillrt.score_terms import term_fields

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
#: Root scopes, in precedence order (S5): a project skill shadows a user skill.
ROOT_SCOPES = ("project", "user", "system")
_NAMESPACE = re.compile(r"[^\s:/\\]{1,64}")


def is_valid_namespace(value: str) -> bool:
    """A namespace is 1-64 characters with no whitespace, ``:``, ``/`` or ``\\``."""
    return bool(_NAMESPACE.fullmatch(value))


class _RelativeToFile:
    """How pydantic reads a :data:`ConfigPath`: a string, ``~`` expanded, relative to
    the config file's folder (the ``base`` in the validation context)."""

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.with_info_after_validator_function(
            _config_path, core_schema.str_schema()
        )


def _config_path(value: str, info: Any) -> Path:
    return _relative_to((info.context or {}).get("base", Path(".")), value)


def _relative_to(base: Path, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else base / p


def peek_state_dir(path: Path, default: Path | None = None) -> Path:
    """The ``state_dir`` of config file ``path`` (when it names none: ``default``, else
    ``<its folder>/.skillrt``), reading nothing else from it.

    The prompt hook runs once per prompt and only needs the state folder to find the
    daemon: it must not pay for validating the whole file (pydantic's import alone is
    ~0.1 s). Whoever builds the runtime reads the file with :meth:`from_file`, which
    resolves ``state_dir`` the same way and validates everything.
    """
    base = path.parent.resolve()
    data = _peek(path)
    value = data.get("state_dir") if isinstance(data, dict) else None
    if value is None:
        return default if default is not None else base / ".skillrt"
    if not isinstance(value, str):
        raise ConfigError("'state_dir': Input should be a valid string", field="state_dir")
    return _relative_to(base, value)


def peek_hook(path: Path) -> HookConfig:
    """The ``hook`` section of config file ``path``, read the way :func:`peek_state_dir`
    reads ``state_dir``: only this section is checked, exactly as
    :meth:`RuntimeConfig.from_file` checks it."""
    data = _peek(path)
    section = data.get("hook") if isinstance(data, dict) else None
    if section is None:
        return HookConfig()
    hook = build_dataclass(HookConfig, section, "hook", path.parent.resolve())
    check_hook(hook)
    return hook


_PEEKED: dict[str, Any] = {}


def _peek(path: Path) -> Any:
    """The YAML of ``path``, parsed once while it is unchanged (the hook peeks twice)."""
    import yaml

    try:
        st = path.stat()
        key = f"{path}\0{st.st_mtime_ns}\0{st.st_size}"
        if key not in _PEEKED:
            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            _PEEKED.clear()
            _PEEKED[key] = yaml.load(path.read_text(encoding="utf-8-sig"), Loader=loader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read config {path}: {exc}", path=str(path)) from exc
    return _PEEKED[key]


#: A path given in a config file (relative to the file's folder).
ConfigPath = Annotated[Path, _RelativeToFile()]
#: Every section is validated strictly, and refuses unknown keys.
_STRICT: dict[str, Any] = {"extra": "forbid", "strict": True}


@dataclass(frozen=True)
class RootConfig:
    """One skill root; ``namespace`` prefixes its skills as ``ns:skill`` (S5)."""

    path: Path
    namespace: str | None = None
    scope: str = "project"


@dataclass(frozen=True)
class DiscoveryConfig:
    """Where skills are found and how far the walk may go (S3)."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    roots: tuple[RootConfig, ...] = ()
    #: Search ``<project>/.agents/skills``, ``<project>/skills``, ``~/.agents/skills``.
    conventional_roots: bool = True
    #: Search every coding agent's own skill folders, in the project and the home
    #: folder: ``.claude/skills``, ``.codex/skills``, ``.gemini/skills`` (the skills a
    #: client reads are the ones its prompt hook routes to). ``--no-client-roots`` turns
    #: it off; the three switches below then pick single clients.
    client_roots: bool = True
    claude_roots: bool = False
    codex_roots: bool = False
    gemini_roots: bool = False
    max_depth: int = DEFAULT_MAX_DEPTH
    max_dirs_per_root: int = DEFAULT_MAX_DIRS_PER_ROOT
    max_skill_file_bytes: int = DEFAULT_MAX_SKILL_FILE_BYTES
    max_frontmatter_bytes: int = DEFAULT_MAX_FRONTMATTER_BYTES
    skip_dirs: tuple[str, ...] = (".git", "node_modules", "__pycache__", ".venv", ".hg", ".svn")
    #: Home folder for the user-scope roots; None means no user roots (the CLI fills it).
    home_dir: ConfigPath | None = None
    #: Codex CLI's home (``$CODEX_HOME``; the CLI fills it): its ``skills`` folder
    #: stands for ``~/.codex/skills``.
    codex_home: ConfigPath | None = None
    #: (folder, namespace) pairs: skills at or under the folder get the namespace (S5),
    #: whatever root they are found from; the deepest matching folder wins.
    namespaces: tuple[tuple[Path, str], ...] = ()


@dataclass(frozen=True)
class LoaderLimits:
    """Level 2/3 limits (seed 003 §5)."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    max_skill_body_lines: int = DEFAULT_MAX_SKILL_BODY_LINES
    max_skill_body_chars: int = DEFAULT_MAX_SKILL_BODY_CHARS
    #: What to do with an over-limit body: "truncate" keeps the key sections, "reject" refuses.
    body_policy: Literal["truncate", "reject"] = "truncate"
    max_resource_file_bytes: int = DEFAULT_MAX_RESOURCE_FILE_BYTES
    max_resource_excerpt_chars: int = DEFAULT_MAX_RESOURCE_EXCERPT_CHARS
    allowed_extensions: tuple[str, ...] = DEFAULT_ALLOWED_EXTENSIONS
    #: Content over this many chars is spilled to ``.agent/runs/<run_id>/observations/``.
    spill_threshold_chars: int = DEFAULT_MAX_RESOURCE_EXCERPT_CHARS
    #: SKILL.md files over this many bytes are refused at Level 2 (FileTooLarge).
    max_skill_file_bytes: int = DEFAULT_MAX_SKILL_FILE_BYTES


@term_fields(default=lambda term: term.weight)
class RoutingWeights:
    """Stage-2 score weights (seed 001 §6.2); they need not sum to 1 but default to it.

    A field per score term (:data:`skillrt.score_terms.SCORE_TERMS`: ``intent_match``
    0.40, ``trigger_match`` 0.20, ``success_rate`` 0.15, ``context_readiness`` 0.10,
    ``cost_penalty`` 0.10, ``conflict_penalty`` 0.05), its default the term's weight.
    """

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    if TYPE_CHECKING:  # the fields are the score terms', made with the class
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

        def __init__(self, **weights: float) -> None: ...

        def __getattr__(self, name: str) -> float: ...


@dataclass(frozen=True)
class RoutingConfig:
    """Router defaults (seed 001 §18)."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    semantic_top_k: int = DEFAULT_SEMANTIC_TOP_K
    selection_threshold: float = DEFAULT_SELECTION_THRESHOLD
    max_parallel_skills: int = DEFAULT_MAX_PARALLEL_SKILLS
    cold_start_requests: int = DEFAULT_COLD_START_REQUESTS
    weights: RoutingWeights = field(default_factory=RoutingWeights)
    #: "auto" (ONNX MiniLM when installed, else hashing), "onnx-minilm", "hashing",
    #: "sentence-transformers", or "none" (lexical only).
    embedding_backend: str = "auto"
    embedding_model_path: str | None = None
    #: "dynamic-int8": run a derived copy of the ONNX model whose matrix products stay
    #: int8 (1.6x faster queries, see docs/routing.md); "original": the file as shipped.
    embedding_model_variant: Literal["dynamic-int8", "original"] = "dynamic-int8"
    #: Where derived models are kept; None = ``~/.cache/skillrt/models``.
    model_cache_dir: ConfigPath | None = None
    #: Candidates scored per route: the union of the top-N lexical and top-N semantic
    #: hits (plus forced and trigger hits). ``semantic_top_k`` bounds which semantic-only
    #: hits may be *selected*; the wider pool feeds ranking, fallbacks and recall@k.
    candidate_pool: int = 12
    #: Token matching (docs/routing.md) for catalogues of at most this many skill texts
    #: (documents + examples); larger ones are routed on vectors alone. 0 turns it off.
    token_match_max_texts: int = 5_000
    #: Route on each skill's SKILL.md body too (its sections, docs/routing.md), not only
    #: its name, description, examples and triggers. Bodies are read through the loader's
    #: path jail and cached by the file's size and mtime.
    read_bodies: bool = True
    #: Log-odds added per unit of weighted non-intent evidence (see docs/routing.md).
    evidence_scale: float = 5.0
    #: An anti-trigger hit multiplies the total by this (a strong penalty, seed 001 §6.2).
    anti_trigger_factor: float = 0.25
    #: Cold start (seed 001 §15): damp a skill's total by up to this share during its
    #: first ``cold_start_requests`` routes. Off in eval runs (no history there).
    cold_start: bool = True
    cold_start_max_damping: float = 0.1
    #: Read per-skill stats (success rate, cold start) from the store.
    use_stats: bool = True
    #: Two skills whose document vectors are at least this similar overlap (the same
    #: procedure, or one a variant of the other) and never share a plan; None: the
    #: score model's value, fitted per embedding backend (docs/routing.md).
    overlap_threshold: float | None = None
    #: A second skill joins the plan for a clause of the request that asks for
    #: something, when its own calibrated probability of being needed there (beside the
    #: skills already planned; docs/routing.md) reaches this.
    companion_threshold: float = 0.9
    #: A brief ask (a short message asking for work, not a question) whose best skill
    #: falls at most this much under the threshold, with the runner-up's total at most
    #: ``brief_ask_lead`` of its own, is given that skill: brevity alone does not make it
    #: "no skill" (docs/routing.md, *The plan*). 0 turns it off.
    brief_ask_margin: float = 0.15
    brief_ask_lead: float = 0.1
    #: The reader (docs/routing.md, *The reader*): a learned second reranker that reads
    #: the request against the best candidates' texts and reorders them, with the weights
    #: of this file (``bench/train_reader.py --write``). None: no reader. No weights ship
    #: with the package: the ones trained here did not gain (docs/evaluation.md).
    reader_weights: ConfigPath | None = None
    #: Pointers (docs/routing.md, *Pointers*): when the decision is uncertain, the route
    #: names up to two more skills the user's model may load itself (name, why, how to
    #: load; never a body). False: no pointers anywhere.
    pointers: bool = True
    #: A runner-up of the primary skill is pointed to when its total is at least this
    #: share of the primary's (the softmax odds that it is the right one)...
    pointer_runner_up: float = 1.0
    #: ... or this share, when its document is at least ``pointer_similar`` like the
    #: primary's (a near neighbour). Every pointer needs at least this share.
    pointer_floor: float = 0.1
    pointer_similar: float = 0.7
    #: A clause's best skill that stays under ``companion_threshold`` is pointed to when
    #: its probability of being needed there reaches this.
    pointer_companion: float = 0.3
    #: One of the primary's first three runners-up is pointed to when the shipped
    #: second-need model (``routing.second_need``) gives it this probability of serving a
    #: second need of the request; above 1 turns it off.
    pointer_second_need: float = 0.35
    #: A request that ends in a quick question of fact about what it shows (a paste, a
    #: code span; ``request_form.fact_about_material``) gets the skills its plan would
    #: inject as pointers, not bodies (docs/routing.md, *Pointers*). Needs ``pointers``.
    #: Off by default: blind tests found it takes too many asks for work for facts
    #: (docs/evaluation.md, *Implicit requests*).
    point_quick_facts: bool = False
    #: Keep the raw query text in route events (off: only its sha256 and length).
    record_query_text: bool = False
    #: PATH used to check ``prerequisites.bins``; None = the caller's PATH.
    path: str | None = None
    #: Prior messages of ``history`` that count for context readiness.
    history_turns: int = 4
    #: Extra knobs the router defines (recall sizes, fusion weights, ...).
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DispatchConfig:
    """Dispatcher policy (seed 000 §2, 001 §19)."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    max_depth: int = DEFAULT_MAX_DISPATCH_DEPTH
    forbid_root_reload: bool = True
    allow_reentry: bool = False
    root_skill: str | None = None
    run_skill_max_depth: int = DEFAULT_MAX_SKILL_DELEGATE_DEPTH
    roles_dir: ConfigPath | None = None
    default_role: str = "fixer"
    #: Routing rules YAML for ``orchestrate`` (000 §8); the CLI's ``--rules`` wins.
    rules_file: ConfigPath | None = None
    #: Follow ``requires_now`` sub-skill edges automatically (under the guards).
    follow_edges: bool = True
    #: Run ``run_skill <skill>: <task>`` lines a model writes in its output (001 §19).
    follow_run_skill: bool = True
    #: How much of a parent's output a sub-skill's prompt receives as context.
    max_child_context_chars: int = 4000


@dataclass(frozen=True)
class ExecutionConfig(RunnerSettings):
    """Runners (:class:`RunnerSettings`: ``runner``, ``runner_cmd``, ...), fallback and
    repair budgets (seed 001 §10-13)."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    max_output_bytes: int = 1_000_000
    max_retry_per_path: int = DEFAULT_MAX_RETRY_PER_PATH
    repair_enabled: bool = False
    max_repair_attempts_per_run: int = DEFAULT_MAX_REPAIR_ATTEMPTS_PER_RUN
    max_total_retries_per_skill: int = 2
    max_patched_files_per_attempt: int = 3
    max_patch_hunks_per_attempt: int = 8
    max_added_tokens_in_skill_doc: int = 300
    #: Environment names passed to a command runner on top of PATH, HOME, LANG, TERM,
    #: TMPDIR (the environment is never inherited wholesale).
    pass_env: tuple[str, ...] = ()
    #: Exit codes of a command runner that are worth one retry (EX_TEMPFAIL, timeout(1));
    #: any other non-zero exit is fatal.
    retryable_exit_codes: tuple[int, ...] = (75, 124)
    #: Seconds between SIGTERM and SIGKILL when a command times out.
    kill_grace_s: float = 1.0
    #: Next-best skills tried before the no-skill path (001 §10 fallback order).
    max_fallback_skills: int = 2
    #: Keep the patches of a repair that did not end in success (default: revert them).
    repair_keep_failed_patches: bool = False


@dataclass(frozen=True)
class OrchestrationConfig:
    """Composite-skill runs (seed 002). See docs/orchestration.md."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    #: Memory files of every run; the default means ``<state_dir>/memory``.
    memory_dir: ConfigPath = Path(".skillrt/memory")
    #: ``<domain>.md`` learnings files; the default means ``<state_dir>/learnings``.
    learnings_dir: ConfigPath = Path(".skillrt/learnings")
    #: Domain name -> short description (comma-separated kinds of work); empty = the
    #: four defaults of seed 002 (technical, personal, creative, professional).
    domains: Mapping[str, str] = field(default_factory=dict)
    #: Embedding backend for domain classification; None = ``routing.embedding_backend``
    #: (and "hashing" when that is "none").
    embedding_backend: str | None = None
    #: Softmax temperature over domain similarities, and the score thresholds of the
    #: CERTAIN / PROBABLE labels (below ``domain_probable``: UNCERTAIN).
    domain_temperature: float = 0.05
    domain_certain: float = 0.80
    domain_probable: float = 0.55
    #: Which workflow transitions fsync the WAL at commit (all survive a killed process):
    #: "results" those recording work done (run created, step output, phase verified),
    #: "full" every one, "normal" none. See docs/orchestration.md, Durability.
    synchronous: Literal["full", "results", "normal"] = "results"
    #: A memory file over this size fails verification (reason ``too_large``).
    max_memory_file_bytes: int = 1_000_000
    #: Per context file, the characters a phase prompt includes.
    max_context_file_chars: int = 40_000
    #: Characters of domain learnings injected into a phase prompt (newest kept).
    max_learnings_chars: int = 12_000
    #: Append each phase's ``## Learnings`` to ``<domain>.md`` when a run completes.
    merge_learnings: bool = True
    #: Seconds a worker's claim on a run lasts without renewal; the worker renews it
    #: every third of that while it drives the run. A worker that dies (on any host)
    #: frees its runs when the lease runs out. See docs/state.md.
    lease_s: float = 30.0
    #: This process's name as a run's owner (must be unique per process); None means
    #: ``host:pid:start``, with which a dead owner on the same host is seen at once.
    worker_id: str | None = None
    #: Seconds ``resume`` waits for a phase agent that a killed worker left running (an
    #: agent that writes its memory file itself) before it ends the agent's process group;
    #: an agent that only returns text is ended at once (its reply has no reader left).
    orphan_wait_s: float = 10.0


@dataclass(frozen=True)
class TelemetryConfig:
    """Route events, metrics and gray release (seed 001 §14-15)."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    enabled: bool = True
    #: Routing overrides (keys of ``routing``) tried on a share of routes (gray release).
    candidate_config: Mapping[str, Any] | None = None
    #: Share of routes, 0..1, served by ``candidate_config`` (chosen by route id hash).
    candidate_share: float = 0.0
    #: Label of the candidate in stats; default ``candidate-<hash of the overrides>``.
    candidate_id: str | None = None
    otel: bool = True
    #: Longest a telemetry write may wait on a locked store before it is dropped with a
    #: warning: a route never waits longer than this for its event to be written.
    write_timeout_ms: int = 100
    #: Trigger pruning report (seed 001 §15): a trigger is listed when it fired on at
    #: least ``prune_min_fires`` routes and either their success rate is below
    #: ``prune_max_success_rate`` or the share corrected by feedback is above
    #: ``prune_min_correction_rate``.
    prune_min_fires: int = 20
    prune_max_success_rate: float = 0.5
    prune_min_correction_rate: float = 0.3


@dataclass(frozen=True)
class McpConfig:
    """The MCP server (``skillrt mcp``)."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    #: Character budget of the Level-1 catalogue sent as the server's instructions.
    instructions_budget: int = 8000
    #: Seconds between checks of the skill roots for added/changed/removed skills;
    #: 0 turns hot reload off.
    poll_interval_s: float = 2.0
    #: Publish each skill's files as ``skill://`` resources (and ``skills/list``).
    resources: bool = True
    #: Most files published per skill (SEP-2640 limit).
    max_resources_per_skill: int = 512
    #: A prompt hook already routes each message for the client (``install --mcp``
    #: writes ``mcp --with-hook``): the instructions then say to follow the skill the
    #: hook injected instead of routing again.
    with_hook: bool = False


@dataclass(frozen=True)
class HookConfig:
    """The prompt hook (``skillrt hook <client>``), a new process per prompt."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    #: Seconds the hook may take all told, well under the client's own timeout (10 s as
    #: ``skillrt install`` writes it): past it, the hook answers nothing, exits 0 and
    #: logs what it could not do to ``<state_dir>/hook.log``.
    deadline_s: float = hook_budget.DEADLINE_S
    #: Seconds it waits for the daemon's answer (within the deadline) before it skips
    #: the daemon and works in-process; None: a third of ``deadline_s``.
    daemon_timeout_s: float | None = None
    #: Seconds its in-process work waits on a shared state store, all told (enable
    #: state, stats, writing its route event): past it, it goes on without the store,
    #: logs so, and its event goes to the outbox.
    store_wait_s: float = hook_budget.STORE_WAIT_S
    #: When no daemon answers, start one in the background for the next prompts (one
    #: per state folder, detached, logged to ``<state_dir>/daemon.log``).
    daemon_autostart: bool = True
    #: Seconds without a request after which a daemon the hook started stops.
    daemon_idle_s: float = hook_budget.DAEMON_IDLE_S
    #: Seconds a daemon the hook started may take to load the skills and the index
    #: before it gives up.
    daemon_start_timeout_s: float = hook_budget.DAEMON_START_TIMEOUT_S
    #: Seconds a daemon the hook started waits (holding its lock) before it loads the
    #: skills and the index: the client's turn in progress keeps the cores.
    daemon_start_delay_s: float = hook_budget.DAEMON_START_DELAY_S


@dataclass(frozen=True)
class StateConfig:
    """Where the shared state lives (``state:`` in skillrt.yaml). See docs/state.md.

    With no ``url`` the state is the SQLite file ``<state_dir>/state.db``. With a
    ``postgresql://`` URL, enable state, stats, route events and workflow runs live in
    that database, and this machine's derived caches (parsed skills, vectors) in
    ``<state_dir>/cache.db``.
    """

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    #: ``postgresql://user@host:5432/db`` (a password may come from PGPASSWORD or
    #: ~/.pgpass instead); None keeps the state in ``<state_dir>/state.db``.
    url: str | None = None
    #: PostgreSQL schema holding skillrt's tables (created on first use); None: the
    #: database's default (``public``).
    schema: str | None = None
    #: Most connections one process opens to the server.
    pool_size: int = 4
    #: Seconds a transaction keeps retrying while a server it reached before cannot be
    #: reached (a restart); a server never reached fails at once.
    retry_s: float = 30.0
    #: Longest one connection attempt waits for the server to answer (libpq counts
    #: whole seconds, at least 2): a server that does not answer is E_STORE_UNAVAILABLE
    #: after this long.
    connect_timeout_s: float = 3.0
    #: Longest a route (and the prompt hook's in-process work) waits on the server: past
    #: it, routing goes on with the per-skill stats it last read (or none).
    route_wait_s: float = 0.3


@dataclass(frozen=True)
class RuntimeConfig:
    """Everything the runtime needs; every field has a working default."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT

    project_dir: Path = Path(".")
    state_dir: ConfigPath = Path(".skillrt")
    #: Where this machine's derived caches live (parsed skills, vectors, the saved
    #: routing index): ``<cache_dir>/cache.db``. None: in the state (``state.db``; a
    #: server store's in ``<state_dir>/cache.db``). The prompt hook, ``install`` and the
    #: daemon a hook starts use the user's cache folder, which every project shares.
    cache_dir: ConfigPath | None = None
    state: StateConfig = field(default_factory=StateConfig)
    discovery: DiscoveryConfig = field(default_factory=DiscoveryConfig)
    limits: LoaderLimits = field(default_factory=LoaderLimits)
    routing: RoutingConfig = field(default_factory=RoutingConfig)
    dispatch: DispatchConfig = field(default_factory=DispatchConfig)
    execution: ExecutionConfig = field(default_factory=ExecutionConfig)
    orchestration: OrchestrationConfig = field(default_factory=OrchestrationConfig)
    telemetry: TelemetryConfig = field(default_factory=TelemetryConfig)
    mcp: McpConfig = field(default_factory=McpConfig)
    hook: HookConfig = field(default_factory=HookConfig)

    @property
    def state_db(self) -> Path:
        return self.state_dir / "state.db"

    @property
    def cache_db(self) -> Path:
        """This machine's derived caches when they are not in ``state.db``."""
        return (self.cache_dir or self.state_dir) / "cache.db"

    @property
    def state_location(self) -> str:
        """The state's URL, or its SQLite file."""
        return self.state.url or str(self.state_db)

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
        namespaces_raw = data.pop("namespaces", None)
        discovery_section = data.pop("discovery", {}) or {}
        if not isinstance(discovery_section, Mapping):
            raise ConfigError("'discovery' must be a mapping", section="discovery")
        discovery_raw = dict(discovery_section)
        for key, value in (("roots", roots_raw), ("namespaces", namespaces_raw)):
            if value is not None:
                if key in discovery_raw:
                    raise ConfigError(
                        f"'{key}' is given both at top level and under 'discovery'", key=key
                    )
                discovery_raw[key] = value
        values: dict[str, Any] = {"project_dir": base, "state_dir": base / ".skillrt"}
        if "state_dir" in data:
            values["state_dir"] = validate(ConfigPath, data.pop("state_dir"), "state_dir", base)
        if data.get("cache_dir") is not None:
            values["cache_dir"] = validate(ConfigPath, data.pop("cache_dir"), "cache_dir", base)
        data.pop("cache_dir", None)
        values["discovery"] = _discovery(discovery_raw, base)
        section_types: dict[str, type[Any]] = {
            "state": StateConfig,
            "limits": LoaderLimits,
            "routing": RoutingConfig,
            "dispatch": DispatchConfig,
            "execution": ExecutionConfig,
            "orchestration": OrchestrationConfig,
            "telemetry": TelemetryConfig,
            "mcp": McpConfig,
            "hook": HookConfig,
        }
        for key, section_type in section_types.items():
            if key in data:
                values[key] = build_dataclass(section_type, data.pop(key) or {}, key, base)
        if "state" in values:
            check_state(values["state"])
        if "hook" in values:
            check_hook(values["hook"])
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


def check_hook(hook: HookConfig) -> None:
    """Every bound is positive."""
    names = ("deadline_s", "daemon_timeout_s", "store_wait_s", "daemon_idle_s",
             "daemon_start_timeout_s")  # fmt: skip
    for name in names:
        value = getattr(hook, name)
        if value is not None and not value > 0:
            raise ConfigError(f"'hook.{name}' must be positive", field=f"hook.{name}")
    if not 0 <= hook.daemon_start_delay_s <= hook_budget.MAX_START_DELAY_S:
        raise ConfigError(f"'hook.daemon_start_delay_s' must be 0 to "
                          f"{hook_budget.MAX_START_DELAY_S:g} seconds",
                          field="hook.daemon_start_delay_s")  # fmt: skip


def check_state(state: StateConfig) -> None:
    """A state URL must name a server store; a pool needs a connection."""
    from skillrt.store.backends import is_store_url, url_examples

    if state.url is not None and not is_store_url(state.url):
        raise ConfigError(
            f"'state.url' must be a {url_examples()} URL (a SQLite store is chosen with "
            "state_dir or --state DIR)",
            field="state.url",
        )
    if state.pool_size < 1:
        raise ConfigError("'state.pool_size' must be at least 1", field="state.pool_size")
    if not state.connect_timeout_s > 0:
        raise ConfigError(
            "'state.connect_timeout_s' must be positive", field="state.connect_timeout_s"
        )
    if not state.route_wait_s >= 0:
        raise ConfigError("'state.route_wait_s' must be >= 0", field="state.route_wait_s")
    if not state.retry_s >= 0:
        raise ConfigError("'state.retry_s' must be >= 0", field="state.retry_s")
    if state.schema is not None and not state.schema.strip():
        raise ConfigError("'state.schema' must not be empty", field="state.schema")


@dataclass(frozen=True)
class _RootEntry:
    """A ``roots`` item written as a mapping."""

    __pydantic_config__: ClassVar[dict[str, Any]] = _STRICT
    path: ConfigPath
    namespace: str | None = None
    scope: Literal["project", "user", "system"] = "project"


def _namespace(value: str, where: str) -> str:
    if not is_valid_namespace(value):
        raise ConfigError(
            f"'{where}' must be a namespace of 1-64 characters without spaces, ':' or '/', "
            f"got {value!r}",
            field=where,
        )
    return value


def _discovery(raw: dict[str, Any], base: Path) -> DiscoveryConfig:
    roots_raw = raw.pop("roots", None)
    if isinstance(roots_raw, str):
        roots_raw = [roots_raw]
    if isinstance(roots_raw, list):  # a bare path is short for {path: ...}
        roots_raw = [{"path": r} if isinstance(r, str) else r for r in roots_raw]
    entries: list[_RootEntry] = validate(list[_RootEntry], roots_raw or [], "roots", base)
    roots = tuple(
        RootConfig(
            path=e.path,
            namespace=None if e.namespace is None else _namespace(e.namespace, "roots.namespace"),
            scope=e.scope,
        )
        for e in entries
    )
    ns_raw = raw.pop("namespaces", None) or {}
    if not isinstance(ns_raw, Mapping):
        raise ConfigError("'namespaces' must map folders to namespaces, e.g. {vendor/acme: acme}")
    pairs: list[tuple[Path, str]] = validate(
        list[tuple[ConfigPath, str]], list(ns_raw.items()), "namespaces", base
    )
    namespaces = tuple((folder, _namespace(ns, f"namespaces.{folder}")) for folder, ns in pairs)
    disc = build_dataclass(DiscoveryConfig, raw, "discovery", base)
    for key in ("max_dirs_per_root", "max_skill_file_bytes", "max_frontmatter_bytes"):
        if getattr(disc, key) < 1:
            raise ConfigError(f"'discovery.{key}' must be at least 1", field=f"discovery.{key}")
    if disc.max_depth < 0:
        raise ConfigError("'discovery.max_depth' must be 0 or more", field="discovery.max_depth")
    return dataclasses.replace(disc, roots=roots, namespaces=namespaces)


def build_dataclass(cls: type[T], raw: Any, where: str, base: Path) -> T:
    """A config section from a mapping, validated strictly (see the module docstring)."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"'{where}' must be a mapping", section=where)
    result: T = validate(cls, raw, where, base)
    return result


def validate(kind: Any, raw: Any, where: str, base: Path) -> Any:
    """``raw`` (plain data, as YAML or JSON gives it) validated as ``kind`` by pydantic;
    a :class:`ConfigError` listing every problem when it does not fit."""
    import json

    from pydantic import ValidationError

    try:
        text = json.dumps(raw)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"'{where}' holds a value that is not plain data: {exc}") from None
    try:
        return _adapter(kind).validate_json(text, context={"base": base})
    except ValidationError as exc:
        problems = [
            {
                "where": ".".join([where, *(str(part) for part in e["loc"])]),
                "message": "unknown key"
                if e["type"] == "unexpected_keyword_argument"
                else e["msg"],
            }
            for e in exc.errors(include_url=False)
        ]
        first = problems[0]
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise ConfigError(
            f"'{first['where']}': {first['message']}{more}",
            section=where,
            field=first["where"],
            problems=problems,
        ) from None


@functools.cache
def _adapter(kind: Any) -> Any:
    import os

    from pydantic import TypeAdapter

    # pydantic looks for plugins in every installed distribution's entry points the
    # first time it builds a validator (~50 ms); none has business with skillrt's own
    # config schema, so that search is skipped unless the caller set the variable.
    if "PYDANTIC_DISABLE_PLUGINS" in os.environ:
        return TypeAdapter(kind)
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
    try:
        return TypeAdapter(kind)
    finally:
        del os.environ["PYDANTIC_DISABLE_PLUGINS"]
