"""What to act on first: the doctor's findings in the order a maintainer fixes them.

1. **collisions**: two skills under one name, one of them hidden (nothing else about
   the hidden one can be true until it has a name of its own);
2. **stubs**: empty or placeholder skills (fill in or remove);
3. **duplicates**: copies of another skill under a new name (keep one);
4. **shadowing** pairs, worst first (each rests on several requests the rival takes).

Each skill or pair is listed once; every command in an action runs as printed where
the doctor ran (:class:`~skillrt.doctor.commands.CommandLine`).
"""

from __future__ import annotations

from collections.abc import Sequence

from skillrt.doctor.commands import CommandLine
from skillrt.doctor.copies import Copy as FoundCopy
from skillrt.doctor.model import Collision, Copy, Finding, ShadowPair, StubSkill
from skillrt.doctor.stubs import Stub
from skillrt.skills.model import Skill

__all__ = ["copy_entries", "findings", "stub_entries"]


def stub_entries(
    skills: Sequence[Skill], stubs: Sequence[Stub], commands: CommandLine
) -> list[StubSkill]:
    out = []
    for stub in stubs:
        skill = skills[stub.position]
        name = skill.qualified_name
        where = f" ({skill.skill_file})" if skill.skill_file is not None else ""
        out.append(
            StubSkill(
                skill=name,
                reason=stub.reason,
                description=" ".join(skill.description.split()),
                body_words=stub.body_words,
                action=(
                    f"write what it does and when to use it{where}, or switch it off: "
                    f"`{commands('disable', name)}`"
                ),
            )
        )
    return out


def copy_entries(
    skills: Sequence[Skill], copies: Sequence[FoundCopy], commands: CommandLine
) -> list[Copy]:
    out = []
    for c in copies:
        name, original = skills[c.position].qualified_name, skills[c.original].qualified_name
        out.append(
            Copy(
                skill=name,
                copy_of=original,
                identical=c.identical,
                diff_lines=c.diff_lines,
                lines=c.lines,
                action=f"keep one: `{commands('disable', name)}` (or remove its folder)",
            )
        )
    return out


def _diff(c: Copy) -> str:
    if c.identical:
        return f"identical but for the name ({c.lines:,} lines)"
    return f"{c.diff_lines:,} of {c.lines:,} lines differ"


def findings(
    collisions: Sequence[Collision],
    stubs: Sequence[StubSkill],
    copies: Sequence[Copy],
    pairs: Sequence[ShadowPair],
) -> list[Finding]:
    """Every finding, in the order of the module docstring."""
    out = [
        Finding(
            "collision",
            c.name,
            "",
            f"{len(c.hidden) + 1} skills are named {c.name}: {c.used} is used, "
            + ", ".join(c.hidden)
            + " hidden",
            c.action,
        )
        for c in collisions
    ]
    out += [Finding("stub", s.skill, "", f"a stub: {s.reason}", s.action) for s in stubs]
    out += [
        Finding("duplicate", c.skill, c.copy_of, f"copy of {c.copy_of}: {_diff(c)}", c.action)
        for c in copies
    ]
    for p in pairs:
        summary = (
            f"{p.shadowed_by} would be selected for {p.over_threshold} of {p.requests} "
            f"requests drawn from {p.skill}'s text, and is among the strongest skills on "
            f"{p.taken:.0%} of them"
        )
        out.append(Finding("shadowing", p.skill, p.shadowed_by, summary, p.action))
    return out
