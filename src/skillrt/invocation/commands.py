"""``/skill list``, ``/skill enable <id>``, ``/skill disable <id>`` (seed 004 §4, §7).

The slash commands stay supported next to ``$`` mentions, and a chat front end gets both
from one call: a line that starts with ``/skill`` (outside code) is a command. ``/skill``
alone lists; ``/skill list <filter>`` filters by a case-insensitive substring;
``/skill enable a b`` enables both. ``/run_skill`` lines belong to the dispatcher and are
left alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from skillrt.errors import AmbiguousSkill, SkillNotFound
from skillrt.invocation import messages
from skillrt.invocation.codespans import CodeMask, code_mask
from skillrt.invocation.results import (
    CommandAction,
    CommandOutcome,
    InvocationDiagnostic,
    SkillCommand,
    SkillListing,
)
from skillrt.skills.registry import SkillRegistry

_COMMAND_LINE = re.compile(r"^[ \t]*(?:>[ \t]*)*/skill(?=[ \t\r]|$)([^\n]*)", re.MULTILINE)
_ACTIONS: dict[str, CommandAction] = {
    "list": "list",
    "ls": "list",
    "enable": "enable",
    "on": "enable",
    "disable": "disable",
    "off": "disable",
}


def parse_commands(
    text: str, mask: CodeMask | None = None
) -> tuple[list[SkillCommand], list[InvocationDiagnostic]]:
    """Every ``/skill`` command line of ``text`` outside code, and a diagnostic per bad one.

    Each command's span covers its whole line, newline included, so removing it from
    the task text leaves no blank line behind.
    """
    if "/skill" not in text:
        return [], []
    if mask is None:
        mask = code_mask(text)
    commands: list[SkillCommand] = []
    diagnostics: list[InvocationDiagnostic] = []
    for m in _COMMAND_LINE.finditer(text):
        if mask.covers(m.start()) or mask.covers(m.end(0) - 1):
            continue
        start = m.start()
        end = m.end()
        if end < len(text) and text[end] == "\n":
            end += 1
        raw = text[m.start() : m.end()].strip()
        words = m.group(1).split()
        action = _ACTIONS.get(words[0].lower()) if words else "list"
        targets = [w.lstrip("$") for w in words[1:]]
        if action is None or (action != "list" and not [t for t in targets if t]):
            diagnostics.append(
                InvocationDiagnostic(
                    messages.INVALID_COMMAND,
                    messages.invalid_command(raw),
                    start=start,
                    end=end,
                )
            )
            continue
        if action == "list":
            filt = " ".join(targets) or None
            commands.append(SkillCommand("list", filt, raw, start, end))
        else:
            for target in targets:
                if target:
                    commands.append(SkillCommand(action, target, raw, start, end))
    return commands, diagnostics


def list_skills(registry: SkillRegistry, needle: str | None = None) -> tuple[SkillListing, ...]:
    """The ``/skill list`` rows, optionally filtered by a case-insensitive substring."""
    low = needle.lower() if needle else None
    rows = []
    for entry in registry.list():
        skill = entry.skill
        qn = skill.qualified_name
        if low and low not in qn.lower() and low not in skill.description.lower():
            continue
        rows.append(SkillListing(qn, skill.description, entry.enabled, skill.namespace))
    return tuple(rows)


def apply_commands(
    registry: SkillRegistry, commands: Sequence[SkillCommand], *, surface: str = "user"
) -> tuple[CommandOutcome, ...]:
    """Run the commands in order; enable/disable persist through the registry's store.

    Enable and disable are not applied from the ``model`` surface: a model's planning
    text must not be able to turn on a skill a person turned off.
    """
    return tuple(apply_command(registry, c, surface=surface) for c in commands)


def apply_command(
    registry: SkillRegistry, command: SkillCommand, *, surface: str = "user"
) -> CommandOutcome:
    if command.action == "list":
        rows = list_skills(registry, command.target)
        n_on = sum(r.enabled for r in rows)
        msg = f"{len(rows)} skills ({n_on} enabled, {len(rows) - n_on} disabled)"
        return CommandOutcome(command, True, msg, rows, applied=True)
    target = command.target or ""
    if surface == "model":
        return CommandOutcome(command, False, messages.command_not_allowed(command.action))
    want = command.action == "enable"
    try:
        skill = registry.get(target)
    except AmbiguousSkill as exc:
        ids = [str(c) for c in exc.candidates or ()]
        return CommandOutcome(command, False, messages.ambiguous(target, ids))
    except SkillNotFound:
        return CommandOutcome(command, False, messages.no_match(target))
    qn = skill.qualified_name
    if registry.is_enabled(skill) == want:
        return CommandOutcome(command, True, f"Skill '{qn}' is already {command.action}d.")
    registry.set_enabled(qn, want)
    return CommandOutcome(command, True, f"Skill '{qn}' {command.action}d.", applied=True)
