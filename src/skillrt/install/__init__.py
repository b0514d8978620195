"""``skillrt install <client>``: wire skillrt into a coding agent's config files (the
prompt hook and/or the MCP server), idempotently, with a backup, a dry run and an exact
uninstall. :mod:`skillrt.install.targets` says what goes where."""

from skillrt.errors import InstallError
from skillrt.install.files import Applied, FileEdit, apply
from skillrt.install.targets import CLIENTS, Target, plan

__all__ = ["CLIENTS", "Applied", "FileEdit", "InstallError", "Target", "apply", "plan"]
