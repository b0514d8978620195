"""Every error skillrt raises, each with a stable ``code``.

The tree::

    SkillrtError
    ├── ConfigError                  E_CONFIG
    ├── StoreError                   E_STORE
    │   ├── StoreUnavailable         E_STORE_UNAVAILABLE (the server or file cannot be reached)
    │   ├── StoreConflict            E_STORE_CONFLICT (a unique key is taken)
    │   ├── StoreSchemaTooNew        E_STORE_SCHEMA_TOO_NEW (written by a newer skillrt)
    │   └── StoreDriverMissing       E_STORE_DRIVER_MISSING (pip install skillrt[postgres])
    ├── SkillNotFound                SkillNotFound
    ├── AmbiguousSkill               AmbiguousSkill
    ├── SkillDisabled                SkillDisabled
    ├── InvalidFrontmatter           InvalidFrontmatter
    ├── LoadError (loader, seed 003)
    │   ├── PathTraversalBlocked     PathTraversalBlocked
    │   ├── FileTooLarge             FileTooLarge
    │   ├── DisallowedFileType       DisallowedFileType
    │   ├── SectionNotFound          SectionNotFound
    │   ├── BodyTooLarge             BodyTooLarge
    │   └── SkillIOError             IOError
    ├── DispatchError (seed 000)
    │   ├── RootReloadBlocked        E_ROOT_RELOAD_BLOCKED
    │   ├── SkillReentryBlocked      E_SKILL_REENTRY_BLOCKED
    │   ├── DepthLimitExceeded       E_DEPTH_LIMIT
    │   └── EdgeNotExecutable        E_EDGE_NOT_EXECUTABLE
    ├── RunnerError                  E_RUNNER (retryable or fatal)
    └── WorkflowError                E_WORKFLOW (subclasses add their own codes)

Surfaces turn any of these into ``{"error": {"code", "message", ...context}}``.
"""

from __future__ import annotations

from typing import Any, ClassVar


class SkillrtError(Exception):
    """Root of every skillrt error; ``code`` is stable, ``context`` holds typed fields."""

    code: ClassVar[str] = "E_SKILLRT"

    def __init__(self, message: str, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.context: dict[str, Any] = context

    def to_dict(self) -> dict[str, Any]:
        """The JSON form surfaces print: code, message, then the context fields."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        for key, value in self.context.items():
            out[key] = _jsonable(value)
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), self.message, self.context))


def _rebuild(cls: type[SkillrtError], message: str, context: dict[str, Any]) -> SkillrtError:
    err = cls.__new__(cls)
    SkillrtError.__init__(err, message, **context)
    return err


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    return str(value)


class ConfigError(SkillrtError):
    """A config file or option is invalid."""

    code = "E_CONFIG"


class UsageError(SkillrtError):
    """The caller asked for something that makes no sense (bad arguments)."""

    code = "E_USAGE"


class StoreError(SkillrtError):
    """The state store (SQLite or PostgreSQL) cannot be opened, migrated or written."""

    code = "E_STORE"


class StoreUnavailable(StoreError):
    """The store cannot be reached (server down, connection dropped); worth a retry."""

    code = "E_STORE_UNAVAILABLE"


class StoreConflict(StoreError):
    """A write broke a unique or foreign key (another writer got there first)."""

    code = "E_STORE_CONFLICT"


class StoreSchemaTooNew(StoreError):
    """The store was migrated by a newer skillrt; this one refuses to read or write it."""

    code = "E_STORE_SCHEMA_TOO_NEW"


class StoreDriverMissing(StoreError):
    """A PostgreSQL URL was given but the driver is not installed."""

    code = "E_STORE_DRIVER_MISSING"


class SkillNotFound(SkillrtError):
    """No skill with that name (or the skill folder / SKILL.md is gone)."""

    code = "SkillNotFound"


class AmbiguousSkill(SkillrtError):
    """A bare name matches skills in several namespaces; ``candidates`` lists the ids."""

    code = "AmbiguousSkill"


class SkillDisabled(SkillrtError):
    """The skill exists but is disabled."""

    code = "SkillDisabled"


class InvalidFrontmatter(SkillrtError):
    """SKILL.md frontmatter cannot be parsed into a mapping."""

    code = "InvalidFrontmatter"


class LoadError(SkillrtError):
    """Base of the loader's errors (seed 003 §8)."""

    code = "E_LOAD"


class PathTraversalBlocked(LoadError):
    """A resource path would leave the skill's real folder."""

    code = "PathTraversalBlocked"


class FileTooLarge(LoadError):
    """A file is over the configured byte limit."""

    code = "FileTooLarge"


class DisallowedFileType(LoadError):
    """A resource's extension is not in the allowlist, or it is binary / not a regular file."""

    code = "DisallowedFileType"


class SectionNotFound(LoadError):
    """The requested heading does not exist in the resource."""

    code = "SectionNotFound"


class BodyTooLarge(LoadError):
    """A SKILL.md body is over the line/char limits and the policy is to reject."""

    code = "BodyTooLarge"


class SkillIOError(LoadError):
    """Reading failed: permissions, vanished file, bad encoding."""

    code = "IOError"


class DispatchError(SkillrtError):
    """Base of the dispatcher's guard errors (seed 000 §6)."""

    code = "E_DISPATCH"


class RootReloadBlocked(DispatchError):
    code = "E_ROOT_RELOAD_BLOCKED"


class SkillReentryBlocked(DispatchError):
    code = "E_SKILL_REENTRY_BLOCKED"


class DepthLimitExceeded(DispatchError):
    code = "E_DEPTH_LIMIT"


class EdgeNotExecutable(DispatchError):
    code = "E_EDGE_NOT_EXECUTABLE"


class RunnerError(SkillrtError):
    """A runner failed; ``retryable`` says whether the fallback FSM may retry it."""

    code = "E_RUNNER"

    def __init__(self, message: str, *, retryable: bool, **context: Any) -> None:
        super().__init__(message, retryable=retryable, **context)

    @property
    def retryable(self) -> bool:
        return bool(self.context.get("retryable"))


class WorkflowError(SkillrtError):
    """Base of the composite-skill orchestration errors (seed 002)."""

    code = "E_WORKFLOW"
