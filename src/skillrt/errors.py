"""Every error skillrt raises: one catalogue, each class with a stable ``code``.

The tree (class, then code; a test checks that every class is here and exported)::

    SkillrtError                         E_SKILLRT
    ├── ConfigError                      E_CONFIG
    │   └── EmbeddingModelError          E_EMBEDDING_MODEL
    │       └── EmbeddingBackendUnavailable  E_EMBEDDING_BACKEND_UNAVAILABLE
    ├── UsageError                       E_USAGE
    ├── StoreError                       E_STORE
    │   ├── StoreUnavailable             E_STORE_UNAVAILABLE (the server or file cannot be reached)
    │   ├── StoreMisconfigured           E_STORE_CONFIG (no such database or role, bad URL, auth)
    │   ├── StoreConflict                E_STORE_CONFLICT (a unique key is taken)
    │   ├── StoreSchemaTooNew            E_STORE_SCHEMA_TOO_NEW (written by a newer skillrt)
    │   ├── StoreDriverMissing           E_STORE_DRIVER_MISSING (pip install skillrt[postgres])
    │   └── StoreNotEmpty                E_STORE_NOT_EMPTY (a migration target holds state)
    ├── SkillNotFound                    SkillNotFound
    ├── AmbiguousSkill                   AmbiguousSkill
    ├── SkillDisabled                    SkillDisabled
    ├── InvalidFrontmatter               InvalidFrontmatter
    ├── LoadError                        E_LOAD (loader, seed 003)
    │   ├── PathTraversalBlocked         PathTraversalBlocked
    │   ├── FileTooLarge                 FileTooLarge
    │   ├── DisallowedFileType           DisallowedFileType
    │   ├── SectionNotFound              SectionNotFound
    │   ├── BodyTooLarge                 BodyTooLarge
    │   └── SkillIOError                 IOError
    ├── DispatchError                    E_DISPATCH (seed 000)
    │   ├── RootReloadBlocked            E_ROOT_RELOAD_BLOCKED
    │   ├── SkillReentryBlocked          E_SKILL_REENTRY_BLOCKED
    │   ├── DepthLimitExceeded           E_DEPTH_LIMIT
    │   ├── EdgeNotExecutable            E_EDGE_NOT_EXECUTABLE
    │   └── UnknownRole                  E_UNKNOWN_ROLE
    ├── RunnerError                      E_RUNNER (retryable or fatal)
    │   ├── RunnerTimeout                E_RUNNER_TIMEOUT (retryable)
    │   └── MissingPrerequisite          E_PREREQUISITE_MISSING (fatal, 001 §10)
    ├── IllegalTransition                E_ILLEGAL_TRANSITION (a path or repair machine)
    ├── PatchRejected                    E_PATCH_REJECTED (a repair proposal broke a rule)
    ├── PatchConflict                    E_PATCH_CONFLICT (a revert would lose later edits)
    ├── PatchNotFound                    E_PATCH_NOT_FOUND
    ├── WorkflowError                    E_WORKFLOW (seed 002)
    │   ├── WorkflowConfigError          E_WORKFLOW_CONFIG (config.yaml is missing/invalid)
    │   ├── WorkflowNotFound             E_WORKFLOW_NOT_FOUND
    │   ├── WorkflowIllegalTransition    E_WORKFLOW_ILLEGAL_TRANSITION
    │   ├── WorkflowBusy                 E_WORKFLOW_BUSY (another live process owns the run)
    │   │   ├── WorkflowLeaseLost        E_WORKFLOW_LEASE_LOST
    │   │   └── WorkflowAgentRunning     E_WORKFLOW_AGENT_RUNNING (an earlier phase agent lives)
    │   ├── WorkflowRunnerRequired       E_WORKFLOW_RUNNER_REQUIRED
    │   ├── PhaseRunFailed               E_WORKFLOW_PHASE_FAILED
    │   ├── MemoryVerificationFailed     E_MEMORY_VERIFICATION_FAILED
    │   └── MemoryPathEscape             E_MEMORY_PATH_ESCAPE
    ├── RouteNotFound                    RouteNotFound
    ├── CatalogError                     E_CATALOG
    ├── DerivationError                  E_MODEL_DERIVATION
    ├── IndexBuildBusy                   E_INDEX_BUILD_BUSY (another build still holds the lock)
    ├── InstallError                     E_INSTALL
    ├── MissingExtra                     E_MISSING_EXTRA
    ├── ModelInvocationDisabled          MODEL_INVOCATION_DISABLED
    ├── InternalError                    E_INTERNAL
    ├── Interrupted                      E_INTERRUPTED
    ├── ServeError                       E_SERVE
    ├── FeatureUnavailable               E_UNAVAILABLE
    ├── DaemonRequestError               E_BAD_REQUEST
    ├── DaemonBusy                       E_BUSY (too many connections at once)
    ├── UnknownOp                        E_UNKNOWN_OP
    ├── Unauthorized                     E_UNAUTHORIZED
    ├── RequestTooLarge                  E_TOO_LARGE
    ├── DaemonMismatch                   E_DAEMON_MISMATCH
    ├── DaemonNotRunning                 E_NO_DAEMON
    ├── DaemonStartError                 E_DAEMON_START
    └── RemoteError                      E_REMOTE (the daemon's error, with its own code)

Each class declares its fields as typed attributes (``None`` until set); the constructor
takes them as keywords and refuses a name the class does not declare, so a misspelt
field is a ``TypeError`` where it is raised, not a silently missing key. Surfaces turn
any error into ``{"error": {"code", "message", ...fields that were set}}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, TypeVar

__all__ = [
    "AmbiguousSkill",
    "BodyTooLarge",
    "CatalogError",
    "ConfigError",
    "DaemonBusy",
    "DaemonMismatch",
    "DaemonNotRunning",
    "DaemonRequestError",
    "DaemonStartError",
    "DepthLimitExceeded",
    "DerivationError",
    "DisallowedFileType",
    "DispatchError",
    "EdgeNotExecutable",
    "EmbeddingBackendUnavailable",
    "EmbeddingModelError",
    "FeatureUnavailable",
    "FileTooLarge",
    "IllegalTransition",
    "IndexBuildBusy",
    "InstallError",
    "InternalError",
    "Interrupted",
    "InvalidFrontmatter",
    "LoadError",
    "MemoryPathEscape",
    "MemoryVerificationFailed",
    "MissingExtra",
    "MissingPrerequisite",
    "ModelInvocationDisabled",
    "PatchConflict",
    "PatchNotFound",
    "PatchRejected",
    "PathTraversalBlocked",
    "PhaseRunFailed",
    "RemoteError",
    "RequestTooLarge",
    "RootReloadBlocked",
    "RouteNotFound",
    "RunnerError",
    "RunnerTimeout",
    "SectionNotFound",
    "ServeError",
    "SkillDisabled",
    "SkillIOError",
    "SkillNotFound",
    "SkillReentryBlocked",
    "SkillrtError",
    "StoreConflict",
    "StoreDriverMissing",
    "StoreError",
    "StoreMisconfigured",
    "StoreNotEmpty",
    "StoreSchemaTooNew",
    "StoreUnavailable",
    "Unauthorized",
    "UnknownOp",
    "UnknownRole",
    "UsageError",
    "WorkflowAgentRunning",
    "WorkflowBusy",
    "WorkflowConfigError",
    "WorkflowError",
    "WorkflowIllegalTransition",
    "WorkflowLeaseLost",
    "WorkflowNotFound",
    "WorkflowRunnerRequired",
]

E = TypeVar("E", bound="SkillrtError")


def _declared(cls: type) -> frozenset[str]:
    """The field names ``cls`` and its bases annotate (not ClassVars, not private)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        for name, hint in vars(klass).get("__annotations__", {}).items():
            text = hint if isinstance(hint, str) else repr(hint)
            if not name.startswith("_") and name != "message" and "ClassVar" not in text:
                names.add(name)
    return frozenset(names)


class SkillrtError(Exception):
    """Root of every skillrt error: a stable ``code``, a message and typed fields."""

    code: ClassVar[str] = "E_SKILLRT"
    #: The field names this class accepts (computed from the annotations).
    fields: ClassVar[frozenset[str]] = frozenset()
    message: str
    #: The workflow run this error stopped (any error that blocks a run carries it).
    run_id: str | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.fields = _declared(cls)

    def __init__(self, message: str, **fields: Any) -> None:
        unknown = set(fields) - type(self).fields
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        super().__init__(message)
        self.message = message
        self._set: dict[str, None] = {}
        for name, value in fields.items():
            setattr(self, name, value)
            self._set[name] = None

    @property
    def context(self) -> Mapping[str, Any]:
        """The fields that were set, in the order they were set (read-only)."""
        return MappingProxyType({name: getattr(self, name) for name in self._set})

    def fill(self: E, **fields: Any) -> E:
        """Set the fields that are not set yet (a caller adding what it knows)."""
        unknown = set(fields) - type(self).fields
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(sorted(unknown))}")
        for name, value in fields.items():
            if name not in self._set:
                setattr(self, name, value)
                self._set[name] = None
        return self

    def to_dict(self) -> dict[str, Any]:
        """The JSON form surfaces print: code, message, then the fields that were set."""
        from skillrt.serialize import to_jsonable

        out: dict[str, Any] = {"code": self.code, "message": self.message}
        for name in self._set:
            out[name] = to_jsonable(getattr(self, name))
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, dict(self.context)))


def _rebuild(cls: type[SkillrtError], message: str, fields: dict[str, Any]) -> SkillrtError:
    err = cls.__new__(cls)
    SkillrtError.__init__(err, message, **fields)
    return err


# -- configuration and usage ---------------------------------------------------------
class ConfigError(SkillrtError):
    """A config file or option is invalid."""

    code = "E_CONFIG"
    path: str | None = None
    section: str | None = None
    field: str | None = None
    key: str | None = None
    keys: Sequence[str] | None = None
    #: Every problem found, each ``{"where", "message"}`` (a file with several).
    problems: Sequence[Mapping[str, Any]] | None = None
    reason: str | None = None
    backend: str | None = None
    runner: str | None = None
    root_skill: str | None = None
    rule: str | None = None


class EmbeddingModelError(ConfigError):
    """The embedding model cannot be found, fails verification, or cannot be loaded."""

    code = "E_EMBEDDING_MODEL"
    model: str | None = None
    variant: str | None = None
    sha256: str | None = None
    expected_sha256: str | None = None
    size: int | None = None
    expected_size: int | None = None


class EmbeddingBackendUnavailable(EmbeddingModelError):
    """A backend's optional dependency is not installed; the message says what to install."""

    code = "E_EMBEDDING_BACKEND_UNAVAILABLE"
    package: str | None = None
    missing: str | None = None
    hint: str | None = None


class UsageError(SkillrtError):
    """The caller asked for something that makes no sense (bad arguments).

    The fields name the argument that was wrong and echo its value.
    """

    code = "E_USAGE"
    #: The argument (or field) at fault, and for tools the tool and its arguments.
    argument: str | None = None
    field: str | None = None
    tool: str | None = None
    arguments: Sequence[str] | None = None
    usage: str | None = None
    #: Echoed values of the options that were refused.
    command: str | None = None
    text: str | None = None
    path: str | None = None
    uri: str | None = None
    skill: str | None = None
    route_id: str | None = None
    mode: str | None = None
    surface: str | None = None
    execution_mode: str | None = None
    edge_type: str | None = None
    since: str | None = None
    socket: str | None = None
    depth: int | None = None
    cursor: int | None = None
    top_k: int | None = None
    limit: int | None = None
    budget: int | None = None
    port: int | None = None
    timeout: float | None = None
    poll: float | None = None
    threshold: float | None = None


# -- the state store --------------------------------------------------------------------
class StoreError(SkillrtError):
    """The state store (SQLite or PostgreSQL) cannot be opened, migrated or written."""

    code = "E_STORE"
    path: str | None = None
    url: str | None = None
    tables: Sequence[str] | None = None
    #: The skill whose row was being written or read, when there is one.
    skill: str | None = None
    retryable: bool | None = None
    #: The server's (or the driver's) own message, when it gave one.
    detail: str | None = None


class StoreUnavailable(StoreError):
    """The store cannot be reached (server down, connection dropped); worth a retry."""

    code = "E_STORE_UNAVAILABLE"


class StoreMisconfigured(StoreError):
    """The store refused this configuration: no such database or role, a malformed URL
    or option, failed authentication. Trying again changes nothing (``retryable`` is
    false); ``detail`` is the server's (or the driver's) own message."""

    code = "E_STORE_CONFIG"


class StoreConflict(StoreError):
    """A write broke a unique or foreign key (another writer got there first)."""

    code = "E_STORE_CONFLICT"


class StoreSchemaTooNew(StoreError):
    """The store was migrated by a newer skillrt; this one refuses to read or write it."""

    code = "E_STORE_SCHEMA_TOO_NEW"
    schema_version: int | None = None
    supported_version: int | None = None


class StoreDriverMissing(StoreError):
    """A PostgreSQL URL was given but the driver is not installed."""

    code = "E_STORE_DRIVER_MISSING"
    missing: str | None = None


class StoreNotEmpty(StoreError):
    """The migration target already holds state; copying into it would mix two states."""

    code = "E_STORE_NOT_EMPTY"
    target: str | None = None


# -- skills -----------------------------------------------------------------------------
class SkillNotFound(SkillrtError):
    """No skill with that name (or the skill folder / SKILL.md is gone)."""

    code = "SkillNotFound"
    name: str | None = None
    skill: str | None = None
    path: str | None = None


class AmbiguousSkill(SkillrtError):
    """A bare name matches skills in several namespaces; ``candidates`` lists the ids."""

    code = "AmbiguousSkill"
    name: str | None = None
    candidates: Sequence[str] | None = None


class SkillDisabled(SkillrtError):
    """The skill exists but is disabled."""

    code = "SkillDisabled"
    name: str | None = None


class InvalidFrontmatter(SkillrtError):
    """SKILL.md frontmatter cannot be parsed into a mapping."""

    code = "InvalidFrontmatter"
    #: ``FRONTMATTER_MISSING``, ``FRONTMATTER_INVALID``, ...
    reason: str | None = None
    skill: str | None = None
    path: str | None = None


# -- the loader (seed 003) ---------------------------------------------------------------
class LoadError(SkillrtError):
    """Base of the loader's errors (seed 003 §8)."""

    code = "E_LOAD"
    skill: str | None = None
    path: str | None = None
    reason: str | None = None


class PathTraversalBlocked(LoadError):
    """A resource path would leave the skill's real folder."""

    code = "PathTraversalBlocked"
    #: The symlink target that pointed outside.
    link: str | None = None


class FileTooLarge(LoadError):
    """A file is over the configured byte limit."""

    code = "FileTooLarge"
    size: int | None = None
    limit: int | None = None


class DisallowedFileType(LoadError):
    """A resource's extension is not in the allowlist, or it is binary / not a regular file."""

    code = "DisallowedFileType"
    extension: str | None = None
    allowed: Sequence[str] | None = None


class SectionNotFound(LoadError):
    """The requested heading does not exist in the resource."""

    code = "SectionNotFound"
    section_hint: str | None = None
    available: Sequence[str] | None = None
    suggestions: Sequence[str] | None = None


class BodyTooLarge(LoadError):
    """A SKILL.md body is over the line/char limits and the policy is to reject."""

    code = "BodyTooLarge"
    lines: int | None = None
    chars: int | None = None
    limit_lines: int | None = None
    limit_chars: int | None = None
    advice: str | None = None


class SkillIOError(LoadError):
    """Reading failed: permissions, vanished file, bad encoding."""

    code = "IOError"
    offset: int | None = None


# -- dispatch (seed 000) -------------------------------------------------------------------
class DispatchError(SkillrtError):
    """Base of the dispatcher's errors; the guards fill the 000 §6 fields."""

    code = "E_DISPATCH"
    request_id: str | None = None
    current_skill: str | None = None
    target_skill: str | None = None
    depth: int | None = None
    skill_stack: Sequence[str] | None = None
    #: Which guard refused (``root_reload``, ``reentry``, ``depth``, ``edge_type``,
    #: ``cycle`` for run_skill) and the values it compared.
    guard: str | None = None
    call_chain: Sequence[str] | None = None
    root_skill: str | None = None
    visited_skills: Sequence[str] | None = None
    max_depth: int | None = None
    edge_type: str | None = None


class RootReloadBlocked(DispatchError):
    """A delegated call would reload the root skill (``forbid_root_reload``)."""

    code = "E_ROOT_RELOAD_BLOCKED"


class SkillReentryBlocked(DispatchError):
    """The target already ran in this request, or is the current skill."""

    code = "E_SKILL_REENTRY_BLOCKED"


class DepthLimitExceeded(DispatchError):
    """The call would go deeper than ``max_depth``."""

    code = "E_DEPTH_LIMIT"


class EdgeNotExecutable(DispatchError):
    """Only ``requires_now`` edges run automatically."""

    code = "E_EDGE_NOT_EXECUTABLE"


class UnknownRole(DispatchError):
    """No role guide with that name (``available`` lists the known roles)."""

    code = "E_UNKNOWN_ROLE"
    role: str | None = None
    available: Sequence[str] | None = None


# -- execution: runners, state machines, repair --------------------------------------------
class RunnerError(SkillrtError):
    """A runner failed; ``retryable`` says whether the fallback FSM may retry it.

    ``scope``: ``runner`` (the runner itself cannot run: no command, bad key),
    ``transient`` (timeout, 429, 5xx) or ``skill`` (the run failed on its own terms).
    """

    code = "E_RUNNER"
    retryable: bool = False
    scope: str | None = None
    runner: str | None = None
    command: str | None = None
    url: str | None = None
    model: str | None = None
    latency_ms: float | None = None
    exit_code: int | None = None
    status: int | None = None
    retry_after: str | None = None
    stderr: str | None = None
    output_excerpt: str | None = None
    output_tail: str | None = None
    body_excerpt: str | None = None
    timeout_s: float | None = None
    attempts: int | None = None
    execution_id: str | None = None
    #: The error a wrapped failure came from (a code, or its JSON form).
    cause: Any = None

    def __init__(self, message: str, *, retryable: bool, **fields: Any) -> None:
        super().__init__(message, retryable=retryable, **fields)


class RunnerTimeout(RunnerError):
    """The runner did not answer within its timeout (always retryable)."""

    code = "E_RUNNER_TIMEOUT"

    def __init__(self, message: str, **fields: Any) -> None:
        fields.pop("retryable", None)
        super().__init__(message, retryable=True, **fields)


class MissingPrerequisite(RunnerError):
    """A skill's declared ``prerequisites`` (bins on PATH, env set) are not met."""

    code = "E_PREREQUISITE_MISSING"
    skill: str | None = None
    missing: Sequence[str] | None = None

    def __init__(self, message: str, **fields: Any) -> None:
        fields.pop("retryable", None)
        fields.setdefault("scope", "skill")
        super().__init__(message, retryable=False, **fields)


class IllegalTransition(SkillrtError):
    """A path or repair state machine was asked for a move its table does not allow."""

    code = "E_ILLEGAL_TRANSITION"
    machine: str | None = None
    path: str | None = None
    from_state: str | None = None
    to_state: str | None = None
    allowed: Sequence[str] | None = None


class PatchRejected(SkillrtError):
    """A repair patch proposal was refused (outside the skill folder, over budget...)."""

    code = "E_PATCH_REJECTED"
    reason: str | None = None
    path: str | None = None
    field: str | None = None
    detail: str | None = None
    files: int | None = None
    hunks: int | None = None
    tokens: int | None = None


class PatchConflict(SkillrtError):
    """A patched file changed after the patch; reverting would lose those edits."""

    code = "E_PATCH_CONFLICT"
    path: str | None = None
    patch_id: str | None = None


class PatchNotFound(SkillrtError):
    """No repair attempt or patch with that id."""

    code = "E_PATCH_NOT_FOUND"
    id: str | None = None


# -- orchestration of composite skills (seed 002) ----------------------------------------
class WorkflowError(SkillrtError):
    """Base of the composite-skill orchestration errors (seed 002)."""

    code = "E_WORKFLOW"
    path: str | None = None


class WorkflowConfigError(WorkflowError):
    """A composite skill's ``config.yaml`` is missing or invalid; ``problems`` lists each."""

    code = "E_WORKFLOW_CONFIG"
    skill: str | None = None
    problems: Sequence[Mapping[str, Any]] | None = None
    domain: str | None = None
    domains: Sequence[str] | None = None


class WorkflowNotFound(WorkflowError):
    """No workflow run has that id."""

    code = "E_WORKFLOW_NOT_FOUND"


class WorkflowIllegalTransition(WorkflowError):
    """The workflow FSM does not allow this move (a skipped or reordered step or phase)."""

    code = "E_WORKFLOW_ILLEGAL_TRANSITION"
    state: str | None = None
    step: int | None = None
    phase_id: str | None = None
    from_state: str | None = None
    to_state: str | None = None
    allowed: Sequence[str] | None = None
    missing: Sequence[Any] | None = None
    missing_steps: Sequence[int] | None = None
    blocking_phase: str | None = None
    phases: Sequence[str] | None = None


class WorkflowBusy(WorkflowError):
    """Another live process is driving this run right now."""

    code = "E_WORKFLOW_BUSY"
    owner: str | None = None
    lease_expires_in_s: float | None = None


class WorkflowLeaseLost(WorkflowBusy):
    """This process's lease on the run expired and another worker took the run over: it
    stops driving it (nothing it does after that is written)."""

    code = "E_WORKFLOW_LEASE_LOST"
    worker: str | None = None


class WorkflowAgentRunning(WorkflowBusy):
    """A phase's agent that a killed worker left running is still alive and cannot be
    ended from here (another host, another user): no second agent starts beside it."""

    code = "E_WORKFLOW_AGENT_RUNNING"
    phase_id: str | None = None
    host: str | None = None
    pgid: int | None = None


class WorkflowRunnerRequired(WorkflowError):
    """The run needs a runner to continue and none was given or saved."""

    code = "E_WORKFLOW_RUNNER_REQUIRED"
    skill: str | None = None
    runner: Mapping[str, Any] | None = None


class PhaseRunFailed(WorkflowError):
    """A phase's agent run failed (runner error); the run is blocked and can be resumed."""

    code = "E_WORKFLOW_PHASE_FAILED"
    phase_id: str | None = None
    retryable: bool | None = None
    runner_error: Mapping[str, Any] | None = None


class MemoryVerificationFailed(WorkflowError):
    """A phase's memory file is missing, empty, blocked or lacks the completion line.

    ``reason`` is one of: ``missing``, ``empty``, ``empty_reply`` (the agent wrote no
    file and its reply was blank), ``not_completed``, ``blocked``, ``too_large``,
    ``not_a_file``, ``unreadable``.
    """

    code = "E_MEMORY_VERIFICATION_FAILED"
    reason: str | None = None
    phase_id: str | None = None
    memory_file: str | None = None
    bytes: int | None = None
    blocked: str | None = None
    last_line: str | None = None


class MemoryPathEscape(WorkflowError):
    """A memory path (agent name, context pattern, symlink) would leave the memory folder."""

    code = "E_MEMORY_PATH_ESCAPE"
    name: str | None = None
    pattern: str | None = None
    domain: str | None = None
    memory_dir: str | None = None
    resolved: str | None = None
    problems: Sequence[Mapping[str, Any]] | None = None


# -- telemetry, evaluation, models -------------------------------------------------------------
class RouteNotFound(SkillrtError):
    """No route event with that id was recorded."""

    code = "RouteNotFound"
    route_id: str | None = None


class CatalogError(SkillrtError):
    """A catalogue or query file cannot be read at all (a bad line is only reported)."""

    code = "E_CATALOG"
    path: str | None = None
    line: int | None = None


class DerivationError(SkillrtError):
    """The fast model could not be derived or read (the original is used instead)."""

    code = "E_MODEL_DERIVATION"
    path: str | None = None
    missing: str | None = None


class IndexBuildBusy(SkillrtError):
    """``skillrt index`` waited its ``--wait`` seconds and another process still holds
    the cache's index build lock (the background build a first ``route`` starts, or
    another ``skillrt index``); ``log`` is where a background build writes."""

    code = "E_INDEX_BUILD_BUSY"
    folder: str | None = None
    log: str | None = None
    waited: float | None = None
    #: The pid of the process holding the lock, when it could be read.
    holder: int | None = None


# -- surfaces: install, integrations, MCP, the daemon -------------------------------------------
class InstallError(SkillrtError):
    """A client config file cannot be changed safely (unreadable, or in conflict)."""

    code = "E_INSTALL"
    path: str | None = None
    key: str | None = None


class MissingExtra(SkillrtError):
    """The framework this integration adapts to is not installed."""

    code = "E_MISSING_EXTRA"
    module: str | None = None
    extra: str | None = None


class ModelInvocationDisabled(SkillrtError):
    """The skill has ``disable-model-invocation: true``: a model may not activate it."""

    code = "MODEL_INVOCATION_DISABLED"
    name: str | None = None


class InternalError(SkillrtError):
    """A bug: an unexpected exception inside a tool (logged with its traceback)."""

    code = "E_INTERNAL"
    tool: str | None = None


class Interrupted(SkillrtError):
    """The user interrupted the command (Ctrl-C)."""

    code = "E_INTERRUPTED"


class ServeError(SkillrtError):
    """The server could not start (the port is taken, no permission, ...)."""

    code = "E_SERVE"
    port: int | None = None


class FeatureUnavailable(SkillrtError):
    """This build of skillrt has no implementation of the requested stage."""

    code = "E_UNAVAILABLE"
    method: str | None = None


# The daemon's codes are also in skillrt.daemon.protocol (which the prompt hook imports
# without this module); a test keeps the two equal.
class DaemonRequestError(SkillrtError):
    """A request the daemon cannot take (not JSON, unknown op, bad arguments)."""

    code = "E_BAD_REQUEST"
    field: str | None = None
    surface: str | None = None


class DaemonBusy(SkillrtError):
    """The daemon serves as many connections as it takes; try again later."""

    code = "E_BUSY"


class UnknownOp(SkillrtError):
    """A request naming an op the daemon does not have."""

    code = "E_UNKNOWN_OP"
    op: str | None = None


class Unauthorized(SkillrtError):
    """A TCP request without the daemon's token."""

    code = "E_UNAUTHORIZED"


class RequestTooLarge(SkillrtError):
    """A request line over :data:`~skillrt.daemon.protocol.MAX_LINE_BYTES`."""

    code = "E_TOO_LARGE"


class DaemonMismatch(SkillrtError):
    """The caller expects other skills (roots, config or project) than this daemon's."""

    code = "E_DAEMON_MISMATCH"
    field: str | None = None


class DaemonNotRunning(SkillrtError):
    """``serve --stop`` found no daemon to stop."""

    code = "E_NO_DAEMON"
    address: str | None = None


class DaemonStartError(SkillrtError):
    """The daemon cannot start: another one runs there, or the address is unusable."""

    code = "E_DAEMON_START"
    path: str | None = None
    host: str | None = None


class RemoteError(SkillrtError):
    """An error the daemon answered with, re-raised as it came: its code and fields."""

    code = "E_REMOTE"
    #: The daemon's ``{"code", "message", ...}``.
    payload: Mapping[str, Any] | None = None

    def __init__(self, data: Mapping[str, Any]) -> None:
        super().__init__(str(data.get("message", "daemon error")), payload=dict(data))

    @property
    def remote_code(self) -> str:
        return str((self.payload or {}).get("code", "E_DAEMON"))

    def to_dict(self) -> dict[str, Any]:
        from skillrt.serialize import to_jsonable

        data = dict(self.payload or {})
        return {"code": self.remote_code, "message": self.message, **to_jsonable(data)}

    def __reduce__(self) -> tuple[Any, ...]:
        return (RemoteError, (dict(self.payload or {}),))
