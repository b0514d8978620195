"""``$skill`` inline invocation (seed 004): scan, resolve, activate, complete.

>>> from skillrt.invocation import scan_mentions
>>> [m.id for m in scan_mentions("use $tdd, not `$tdd` or $HOME/x")]
['tdd']

The router calls :func:`scan_mentions` for hard triggers; :class:`InvocationResolver`
does the rest (004 §3 resolution order, §4 activation, §7 messages).
"""

from skillrt.invocation.codespans import CodeMask, code_mask
from skillrt.invocation.commands import apply_commands, list_skills, parse_commands
from skillrt.invocation.completion import Completer
from skillrt.invocation.index import SkillIndex
from skillrt.invocation.resolver import BodyLoader, InvocationResolver, LoadedBody
from skillrt.invocation.results import (
    SURFACES,
    Activation,
    CommandOutcome,
    Completion,
    InvocationDiagnostic,
    Resolution,
    SkillCommand,
    SkillListing,
    Surface,
)
from skillrt.invocation.scanner import Mention, scan_mentions
from skillrt.invocation.shell import is_command_line

__all__ = [
    "SURFACES",
    "Activation",
    "BodyLoader",
    "CodeMask",
    "CommandOutcome",
    "Completer",
    "Completion",
    "InvocationDiagnostic",
    "InvocationResolver",
    "LoadedBody",
    "Mention",
    "Resolution",
    "SkillCommand",
    "SkillIndex",
    "SkillListing",
    "Surface",
    "apply_commands",
    "code_mask",
    "is_command_line",
    "list_skills",
    "parse_commands",
    "scan_mentions",
]
