"""Assemble a phase agent's task (seed 002 step 5 + the agent protocol's step 0).

The task carries, in order: the phase identity line, the domain learnings (step 0:
learning injection), the phase instructions with ``{task_id}`` substituted (or, for a
phase without any, a pointer to the role guide and the composite skill), the memory
files its ``context`` patterns matched, why the previous attempt was not accepted (when
it was not), and the output contract naming the exact memory file. The ``Memory file:``
line is machine-readable so a runner script can find the path. The dispatcher
(``agents.py``) wraps the task with the runtime header, the role guide and the
composite skill.

The output contract depends on who delivers the file (:data:`Delivery`): ``reply`` — a
runner that returns text answers with the file's content and skillrt writes it;
``file`` — an agent that writes files writes it (its reply is the fallback); ``manual``
— an outside agent writes it, then ``workflow advance``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from skillrt.orchestration.learnings import LearningsText
from skillrt.orchestration.memory import COMPLETION_LINE, ContextFile
from skillrt.orchestration.spec import PhaseSpec

__all__ = ["Delivery", "PhasePrompt", "build_phase_prompt", "runtime_header"]

_BACKTICKS = re.compile(r"`+")

MEMORY_FILE_LABEL = "Memory file:"
#: Who puts the memory file in place (see the module docstring).
Delivery = Literal["reply", "file", "manual"]


@dataclass(frozen=True)
class PhasePrompt:
    """Everything a phase prompt is made of (kept for status and the dry run)."""

    skill: str
    run_id: str
    task_id: str
    phase: PhaseSpec
    index: int
    total: int
    domain: str
    confidence: str
    learnings: LearningsText
    context: tuple[ContextFile, ...]
    memory_file: str
    #: The role the agent runs as (the dispatcher's choice, see agents.py).
    role: str
    delivery: Delivery = "file"
    #: Why the phase's previous attempt was not accepted (its prompt says so).
    previous_failure: str | None = None


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks inside ``text``."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def runtime_header(skill: str, role: str, run_id: str, phase_id: str) -> str:
    """The seed 000 §2 header for a phase agent: delegated, depth 1 under the composite.

    Uses the dispatcher's header type so every agent run carries the same header as a
    dispatched sub-skill.
    """
    from skillrt.dispatch.header import Identity, Policy, RuntimeHeader, Trace

    header = RuntimeHeader(
        execution_mode="delegated",
        identity=Identity(
            role=role, current_skill=f"{skill}#{phase_id}", origin_skill=skill, root_loaded=True
        ),
        policy=Policy(),
        trace=Trace(
            request_id=run_id,
            depth=1,
            skill_stack=(skill, f"{skill}#{phase_id}"),
            visited_skills=(skill,),
        ),
    )
    return header.to_yaml()


def build_phase_prompt(p: PhasePrompt) -> str:
    """The phase task (the dispatcher adds the header, role guide and skill)."""
    phase = p.phase
    out: list[str] = []
    out.append(
        f"[Workflow: {p.skill} | phase {p.index + 1}/{p.total}: {phase.id} | "
        f"agent: {phase.agent} | role: {p.role} | task_id: {p.task_id}]"
    )
    out.append("")
    out.append(f"You are the `{phase.agent}` agent of the composite skill `{p.skill}`.")
    out.append(
        "Agents do not share a conversation: you receive the memory files of earlier "
        "phases below and hand your results on through your own memory file."
    )
    out.append("")
    out.append(f"## Domain learnings ({p.domain}, confidence {p.confidence})")
    out.append("")
    if p.learnings.text:
        if p.learnings.truncated:
            out.append("(older learnings omitted; the most recent follow)")
        out.append(p.learnings.text)
    else:
        out.append(f"(no learnings recorded for the {p.domain} domain yet)")
    out.append("")
    out.append("## Phase instructions")
    out.append("")
    if phase.instructions is not None:
        out.append(phase.instructions.replace("{task_id}", p.task_id).rstrip("\n"))
    else:
        out.append(
            f"`config.yaml` gives this phase no instructions of its own: do the `{phase.agent}` "
            f"part of `{p.skill}` as your role guide and the composite skill's instructions "
            "(both above) describe it, with the context below."
        )
    out.append("")
    out.append("## Context: memory files")
    out.append("")
    if p.context:
        for cf in p.context:
            fence = _fence(cf.text)
            out.append(f"### {cf.name}")
            out.append(f"{fence}markdown")
            out.append(cf.text.rstrip("\n"))
            out.append(fence)
            if cf.truncated:
                out.append(f"(truncated; read the whole file at {cf.path})")
            out.append("")
    else:
        out.append("(no memory files matched this phase's context patterns)")
        out.append("")
    if p.previous_failure:
        out.append("## Previous attempt")
        out.append("")
        out.append(
            "The previous attempt at this phase was not accepted: "
            f"{p.previous_failure.rstrip('.')}. Do the phase again and meet the output "
            "contract below exactly."
        )
        out.append("")
    out.append("## Output contract")
    out.append("")
    out.append(f"{MEMORY_FILE_LABEL} {p.memory_file}")
    out.append("")
    content = (
        "Begin it with a one-line summary of what this phase concluded. Put durable lessons "
        "for future runs under a `## Learnings` heading as bullet points."
    )
    if p.delivery == "reply":
        out.append(
            "Reply with the complete content of that file and nothing else: skillrt writes "
            f"your reply to it. {content}"
        )
    else:
        out.append(f"Write that file (and no other file in the memory folder). {content}")
    what = "your reply" if p.delivery == "reply" else "the file"
    out.append(
        f"End {what} with the exact line `{COMPLETION_LINE}` when the phase is done, or "
        "with `Status: BLOCKED` followed by the question that blocks it. The workflow does "
        "not advance until this file is verified."
    )
    if p.delivery == "file":
        out.append(
            "If you cannot write files, reply with the file's complete content instead: "
            "skillrt writes your reply to it when you have not written the file."
        )
    return "\n".join(out) + "\n"


def context_names(files: Sequence[ContextFile]) -> list[str]:
    return [f.name for f in files]
