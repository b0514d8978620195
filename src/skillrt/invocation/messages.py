"""The words people and models see (seed 004 §4, §7; SPEC I3, I6).

Every message of 004 §7's table lives here, with the table's wording; each diagnostic
has a stable code next to it. Messages always name the id to type next.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

# Stable diagnostic codes (never renamed; clients switch on them).
NO_MATCH: Final = "NO_MATCH"
AMBIGUOUS: Final = "AMBIGUOUS"
FUZZY_SUGGESTION: Final = "FUZZY_SUGGESTION"
DISABLED: Final = "DISABLED"
MULTIPLE_MENTIONS: Final = "MULTIPLE_MENTIONS"
GLOB_NOT_SUPPORTED: Final = "GLOB_NOT_SUPPORTED"
MODEL_INVOCATION_DISABLED: Final = "MODEL_INVOCATION_DISABLED"
LOAD_FAILED: Final = "LOAD_FAILED"
INVALID_COMMAND: Final = "INVALID_COMMAND"
COMMAND_NOT_ALLOWED: Final = "COMMAND_NOT_ALLOWED"
TOO_MANY_MENTIONS: Final = "TOO_MANY_MENTIONS"

DIAGNOSTIC_CODES: Final = (
    NO_MATCH,
    AMBIGUOUS,
    FUZZY_SUGGESTION,
    DISABLED,
    MULTIPLE_MENTIONS,
    GLOB_NOT_SUPPORTED,
    MODEL_INVOCATION_DISABLED,
    LOAD_FAILED,
    INVALID_COMMAND,
    COMMAND_NOT_ALLOWED,
    TOO_MANY_MENTIONS,
)

#: How many candidates an ambiguity message lists by name before "and N more".
MAX_LISTED = 6


def or_join(items: Sequence[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} or {items[-1]}"


def using_skill(name: str) -> str:
    """The visible activation line (004 §4)."""
    return f"Using skill: {name}"


def allowed_tools(tools: Sequence[str]) -> str:
    """How a declared ``allowed-tools`` list is shown until enforcement exists (004 §4)."""
    shown = ", ".join(tools) if tools else "(none declared)"
    return f"Allowed tools: {shown} (parsed, not enforced)"


def no_match(ident: str) -> str:
    return f"No skill named '{ident}'. Run /skill list to see available skills."


def fuzzy_suggestion(ident: str, suggestion: str) -> str:
    return f"No exact skill '{ident}'. Did you mean ${suggestion}?"


def ambiguous(ident: str, candidates: Sequence[str], *, more: bool = False) -> str:
    """``$debugging matched 3 skills: a, b, ns:c — use $a, $b or $ns:c.``

    ``candidates`` are qualified ids, best first; ``more`` says the search stopped
    collecting before it ran out of matches.
    """
    shown = list(candidates[:MAX_LISTED])
    listed = ", ".join(shown)
    count = f"more than {len(candidates)}" if more else str(len(candidates))
    if more or len(candidates) > len(shown):
        rest = "more" if more else f"{len(candidates) - len(shown)} more"
        return (
            f"${ident} matched {count} skills: {listed} and {rest} "
            f"— use a longer id such as ${shown[0]}, or run /skill list."
        )
    return f"${ident} matched {count} skills: {listed} — use {or_join(['$' + c for c in shown])}."


def disabled(ident: str) -> str:
    return f"Skill '{ident}' is disabled. Enable it with /skill enable {ident}."


def choose_one(idents: Sequence[str]) -> str:
    """Several skills named in one turn (004 §4, until composition rules exist)."""
    return f"Choose one skill to lead this turn: {or_join(['$' + i for i in idents])}."


def glob_not_supported(ident: str, example: str | None) -> str:
    tail = f"e.g. ${example}" if example else "run /skill list to see them"
    return f"Namespace wildcards such as ${ident} are not supported; name one skill ({tail})."


def model_invocation_disabled(ident: str) -> str:
    return (
        f"Skill '{ident}' has disable-model-invocation: true, so model planning text cannot "
        f"activate it; a person must type ${ident}."
    )


def load_failed(ident: str, code: str, detail: str) -> str:
    return f"Skill '{ident}' could not be loaded ({code}): {detail}"


def invalid_command(line: str) -> str:
    return (
        f"Unknown /skill command '{line}'. "
        "Use /skill list, /skill enable <id> or /skill disable <id>."
    )


def command_not_allowed(action: str) -> str:
    return (
        f"/skill {action} from model planning text is not applied; "
        "only a person can enable or disable skills."
    )


def too_many_mentions(limit: int, skipped: int) -> str:
    return (
        f"Only the first {limit} distinct $mentions were resolved; "
        f"{skipped} more were left as ordinary text."
    )


#: The ``/skill`` command forms a message names, and the shell command a person runs
#: instead where there is no ``/skill`` palette (a coding agent's prompt: the hook).
_SHELL_FORMS = (
    ("Run /skill list", "Run `skillrt list`"),
    ("run /skill list", "run `skillrt list`"),
    ("/skill enable ", "skillrt enable "),
)


def for_shell(message: str) -> str:
    """``message`` naming the shell commands that exist where a coding agent's user
    reads it (``skillrt list``, ``skillrt enable <id>``) instead of the ``/skill``
    palette commands, which no coding agent has."""
    for palette, shell in _SHELL_FORMS:
        message = message.replace(palette, shell)
    if "skillrt enable " in message and message.endswith("."):
        head, _, ident = message[:-1].rpartition("skillrt enable ")
        message = f"{head}`skillrt enable {ident}`."
    return message
