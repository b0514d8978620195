"""The ``skillrt`` command line: a thin surface over :class:`skillrt.runtime.SkillRuntime`."""

from skillrt.cli.app import main

__all__ = ["main"]
