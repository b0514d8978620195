"""How a caller chooses a runner: :class:`RunnerOptions`, one field per runner setting.

Every entry point that runs a model (``run``, ``dispatch``, ``run-skill``,
``orchestrate``, ``workflow start|resume``, the MCP server's ``run_skill``) takes the
same options: each field overrides the ``execution`` config key of the same name, and
each field's metadata is its command-line flag (``skillrt.cli.runner_flags`` builds the
flags from them). The settings are declared once, as the fields of
:class:`~skillrt.runner_settings.RunnerSettings` (the runner keys of ``execution``): this module
makes :class:`RunnerOptions` from them, each field None for "not given", and
:func:`skillrt.execution.runners.build_runner` turns the merged config into a runner.

This module imports nothing heavy: the CLI reads it to build its parser.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from skillrt.runner_settings import RunnerSettings

if TYPE_CHECKING:
    from skillrt.config import ExecutionConfig

__all__ = ["RUNNER_NAMES", "SELECTED_BY", "RunnerOptions", "runner_settings"]

#: The runner kinds (``skillrt.execution.runners.RUNNERS``; a test keeps them equal).
RUNNER_NAMES = ("command", "openai", "dry-run")
#: An option that, given without ``runner``, chooses its runner kind.
SELECTED_BY: dict[str, str] = {
    f.name: f.metadata["selects"]
    for f in dataclasses.fields(RunnerSettings)
    if f.metadata.get("selects")
}

T = TypeVar("T")


def runner_settings(kind: str) -> tuple[str, ...]:
    """The settings runners of ``kind`` are built with (their fields' ``kinds``)."""
    return tuple(
        f.name for f in dataclasses.fields(RunnerSettings) if kind in f.metadata.get("kinds", ())
    )


def _optional_fields_of(settings: type[Any]) -> Callable[[type[T]], type[T]]:
    """Give the decorated class one field per field of ``settings``, of the same type or
    None (the default: not given), with the same metadata; then make it a frozen
    dataclass."""

    def decorate(cls: type[T]) -> type[T]:
        hints = typing.get_type_hints(settings)
        annotations = dict(cls.__dict__.get("__annotations__", {}))
        for f in dataclasses.fields(settings):
            annotations[f.name] = hints[f.name] | None
            setattr(cls, f.name, field(default=None, metadata=f.metadata))
        cls.__annotations__ = annotations
        return dataclass(frozen=True)(cls)

    return decorate


@_optional_fields_of(RunnerSettings)
class RunnerOptions:
    """A caller's runner choice: a field per :class:`~skillrt.runner_settings.RunnerSettings`
    field, None leaving the config's value.

    Secrets are never options: the OpenAI-compatible runner reads its key from the
    environment variable ``api_key_env`` names, when it is built.
    """

    if TYPE_CHECKING:  # the fields are RunnerSettings', made with the class
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

        def __init__(self, **given: Any) -> None: ...

        def __getattr__(self, name: str) -> Any: ...

    def given(self) -> dict[str, Any]:
        """The options that were set."""
        return {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if getattr(self, f.name) is not None
        }

    def kind(self) -> str | None:
        """The runner kind these options choose by themselves (None: the config's).
        Options of two kinds without ``runner`` (``--runner-cmd`` and ``--base-url``)
        are a :class:`~skillrt.errors.UsageError`: which one was meant is not known."""
        if self.runner is not None:
            return str(self.runner)
        chosen = {key: kind for key, kind in SELECTED_BY.items() if getattr(self, key) is not None}
        if len(set(chosen.values())) > 1:
            from skillrt.errors import UsageError

            flags = [f"--{key.replace('_', '-')}" for key in chosen]
            raise UsageError(
                f"{' and '.join(flags)} choose different runners "
                f"({', '.join(chosen.values())}): say which with --runner",
                arguments=flags,
            )
        return next(iter(chosen.values()), None)

    def over(self, base: RunnerOptions) -> RunnerOptions:
        """These options over ``base`` (a resumed run's saved runner): each one given
        replaces base's; options that choose another kind replace base altogether."""
        kind = self.kind()
        if kind is not None and base.runner is not None and kind != base.runner:
            return self
        return RunnerOptions(**{**base.given(), **self.given()})

    def apply(self, execution: ExecutionConfig) -> ExecutionConfig:
        """``execution`` with these options in it; without ``runner``, an option that
        belongs to one kind (:data:`SELECTED_BY`) chooses that kind."""
        changes = self.given()
        kind = self.kind()
        if kind is not None:
            changes["runner"] = kind
        return dataclasses.replace(execution, **changes) if changes else execution
