"""What agent clients cut from the skill listing they put in the model's context.

Clients list each skill's name and description for the model; past a budget they cut
descriptions, and a skill whose description is gone is one the model cannot choose.
The budgets (the clients' documented behaviour, approximated; docs/doctor.md), from
each client's module in :mod:`skillrt.clients`:

* **Claude Code**: each description cut at 1,536 characters; the listing takes about 1%
  of the context window (4 characters a token: 8,000 characters of a 200,000-token
  window).
* **Codex**: about 2% of the context window, or 8,000 characters when the window is not
  known; no per-description cap.

Skills are listed in name order, each as its name, ``": "`` and its description; once
the budget is spent the rest are listed by name only (``dropped``). Disabled and
manual-only (``disable-model-invocation``) skills are not listed.
"""

from __future__ import annotations

from collections.abc import Sequence

from skillrt.clients import CLIENTS
from skillrt.doctor.model import ListingClient, ListingReport
from skillrt.skills.model import Skill

__all__ = ["CHARS_PER_TOKEN", "DEFAULT_CONTEXT_WINDOW", "listing_report"]

DEFAULT_CONTEXT_WINDOW = 200_000
CHARS_PER_TOKEN = 4


def _client(
    client: str,
    skills: Sequence[Skill],
    budget: int,
    cap: int | None,
    assumptions: str,
) -> ListingClient:
    ordered = sorted(skills, key=lambda s: s.qualified_name)
    used = 0
    needed = 0
    truncated: list[str] = []
    dropped: list[str] = []
    for skill in ordered:
        description = " ".join(skill.description.split())
        if cap is not None and len(description) > cap:
            truncated.append(skill.qualified_name)
            description = description[:cap]
        name_cost = len(skill.qualified_name) + 1
        full_cost = name_cost + 2 + len(description)
        needed += full_cost
        if used + full_cost <= budget:
            used += full_cost
        else:
            dropped.append(skill.qualified_name)
            used += name_cost
    if dropped:
        longest = sorted(ordered, key=lambda s: -len(s.description))[:3]
        action = (
            f"{len(dropped)} descriptions do not fit ({needed:,} characters needed, "
            f"{budget:,} allowed): shorten the longest ("
            + ", ".join(f"{s.qualified_name} {len(s.description)}" for s in longest)
            + "), disable skills that are never used, or route with skillrt's hook "
            "instead of the listing"
        )
    elif truncated:
        action = f"shorten {len(truncated)} descriptions to at most {cap} characters"
    else:
        action = f"fits: {needed:,} of {budget:,} characters"
    return ListingClient(
        client=client,
        budget_chars=budget,
        description_cap=cap,
        listed_chars=needed,
        truncated=tuple(truncated),
        dropped=tuple(dropped),
        assumptions=assumptions,
        action=action,
    )


def listing_report(
    skills: Sequence[Skill],
    enabled: Sequence[bool],
    *,
    context_window: int | None = None,
) -> ListingReport:
    """Both clients' listings of the enabled, model-invocable ``skills``."""
    listed = [
        s for s, on in zip(skills, enabled, strict=True) if on and not s.disable_model_invocation
    ]
    window = context_window or DEFAULT_CONTEXT_WINDOW
    reports = []
    for spec in CLIENTS.values():
        if spec.listing_share is None:
            continue
        cap = spec.description_cap
        capped = f"; descriptions cut at {cap:,} characters" if cap else ""
        if context_window or spec.listing_fallback_chars is None:
            budget = int(window * spec.listing_share * CHARS_PER_TOKEN)
            note = (f"{spec.listing_share:.0%} of a {window:,}-token window at "
                    f"{CHARS_PER_TOKEN} chars/token{capped}")  # fmt: skip
        else:
            budget = spec.listing_fallback_chars
            note = (f"{budget:,} characters (the window is not known; pass "
                    f"--context-window){capped}")  # fmt: skip
        reports.append(_client(spec.name, listed, budget, cap, note))
    return ListingReport(context_window_tokens=window, clients=tuple(reports))
