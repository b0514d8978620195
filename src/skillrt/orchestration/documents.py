"""The Markdown the orchestrator itself writes: the workflow context and the summary.

Both are deterministic for a given task (no timestamps, no run id), so an interrupted
and resumed run leaves byte-identical files to an uninterrupted one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from skillrt.orchestration.memory import COMPLETION_LINE
from skillrt.orchestration.spec import WorkflowSpec

__all__ = [
    "PhaseOutcome",
    "first_line",
    "render_summary",
    "render_summary_document",
    "render_workflow_context",
]

_BACKTICKS = re.compile(r"`+")

MAX_SUMMARY_LINE = 300


def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks inside ``text``."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(3, longest + 1)


def render_workflow_context(
    *,
    task_id: str,
    query: str,
    skill: str,
    domain: Mapping[str, Any],
    spec: WorkflowSpec,
    memory_files: Mapping[str, str],
) -> str:
    """Step 4's ``{task_id}-workflow-context.md``: user query, domain, skill config."""
    fence = _fence(query)
    config = {
        "name": spec.name,
        **({"description": spec.description} if spec.description else {}),
        "phases": [
            {
                "id": p.id,
                "agent": p.agent,
                "role": p.dispatch_role,
                "context": [c.replace("{task_id}", task_id) for c in p.context],
            }
            for p in spec.phases
        ],
    }
    lines = [
        f"# Workflow context: {skill}",
        "",
        "## User query",
        "",
        f"{fence}text",
        query.rstrip("\n"),
        fence,
        "",
        "## Task",
        "",
        f"- task_id: {task_id}",
        f"- skill: {skill}",
        f"- domain: {domain['domain']} (confidence {domain['confidence']})",
        "",
        "## Skill configuration",
        "",
        "```yaml",
        yaml.safe_dump(config, sort_keys=False, allow_unicode=True, width=100).rstrip("\n"),
        "```",
        "",
        "## Memory files",
        "",
        *(f"- {phase_id}: {name}" for phase_id, name in memory_files.items()),
        "",
    ]
    return "\n".join(lines)


def first_line(text: str) -> str:
    """A memory file's one-line summary: its first non-blank line, headings unmarked."""
    for line in text.splitlines():
        stripped = line.strip().lstrip("#").strip()
        if stripped and stripped != COMPLETION_LINE:
            return stripped[:MAX_SUMMARY_LINE]
    return ""


@dataclass(frozen=True)
class PhaseOutcome:
    """One verified phase as step 6 aggregates it."""

    phase_id: str
    agent: str
    memory_file: str
    text: str
    sha256: str

    @property
    def headline(self) -> str:
        return first_line(self.text)


def render_summary(
    *, skill: str, task_id: str, domain: str, confidence: str, outcomes: Sequence[PhaseOutcome]
) -> str:
    """The step-6 ``summary``: one line per phase under a headline."""
    head = (
        f"Workflow {skill} completed successfully: {len(outcomes)} phase(s) verified "
        f"for task {task_id} (domain {domain}, {confidence})."
    )
    rows = [f"- {o.phase_id} ({o.agent}): {o.headline or '(no summary line)'}" for o in outcomes]
    return "\n".join([head, *rows])


def render_summary_document(
    *, skill: str, task_id: str, query: str, summary: str, outcomes: Sequence[PhaseOutcome]
) -> str:
    """``{task_id}-workflow-summary.md``: the summary, then every phase's memory file."""
    fence = _fence(query)
    lines = [
        f"# Workflow summary: {skill}",
        "",
        f"{fence}text",
        query.rstrip("\n"),
        fence,
        "",
        summary,
        "",
    ]
    for o in outcomes:
        body = o.text.rstrip().splitlines()
        if body and body[-1].strip() == COMPLETION_LINE:
            body = body[:-1]
        lines += [
            f"## {o.phase_id} (agent {o.agent})",
            "",
            f"Memory file: {o.memory_file}",
            "",
            # Demote the file's headings two levels so they nest under this phase.
            *(("##" + ln) if ln.startswith("#") else ln for ln in body),
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"
