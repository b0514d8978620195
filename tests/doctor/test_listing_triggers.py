"""The listing budget of agent clients, and per-skill trigger precision and recall."""

from __future__ import annotations

from pathlib import Path

from skillrt.clients import CLIENTS
from skillrt.doctor.listing import listing_report
from skillrt.doctor.triggers import NO_SKILL, trigger_eval
from skillrt.eval.harness import QueryOutcome
from skillrt.skills.model import Skill


def make(name: str, description: str, manual: bool = False) -> Skill:
    return Skill(
        name=name,
        description=description,
        path=Path(f"/x/{name}"),
        skill_file=None,
        disable_model_invocation=manual,
    )


def test_a_small_catalogue_fits_both_listings() -> None:
    skills = [make("a", "Does a."), make("b", "Does b.")]
    report = listing_report(skills, [True, True])
    for client in report.clients:
        assert not client.dropped and not client.truncated
        assert client.listed_chars == len("a") + 1 + 2 + len("Does a.") + len("b") + 1 + 2 + 7
        assert client.action.startswith("fits")


def test_long_descriptions_are_cut_and_the_rest_dropped_past_the_budget() -> None:
    cap = CLIENTS["claude-code"].description_cap
    assert cap is not None
    long = "x" * (cap + 100)
    skills = [make(f"s{k:03d}", long if k == 0 else "y" * 900) for k in range(30)]
    report = listing_report(skills, [True] * 30, context_window=200_000)
    claude = next(c for c in report.clients if c.client == "claude-code")
    assert claude.budget_chars == 8_000 and claude.description_cap == cap
    assert claude.truncated == ("s000",)
    # 8,000 characters hold the cut first description (1,543) and seven of 907: the rest go.
    assert claude.dropped[0] == "s008" and len(claude.dropped) == 22
    codex = next(c for c in report.clients if c.client == "codex")
    assert codex.budget_chars == 16_000 and codex.description_cap is None
    assert not codex.truncated and len(codex.dropped) < len(claude.dropped)
    assert "do not fit" in codex.action
    unknown = listing_report(skills, [True] * 30)
    assert next(c for c in unknown.clients if c.client == "codex").budget_chars == 8_000


def test_disabled_and_manual_only_skills_are_not_listed() -> None:
    skills = [make("a", "A" * 9000), make("b", "B" * 9000, manual=True), make("c", "C")]
    report = listing_report(skills, [False, True, True])
    for client in report.clients:
        assert client.listed_chars == len("c") + 1 + 2 + 1 and not client.dropped


def outcome(
    expected: tuple[str, ...], selected: tuple[str, ...], also_ok: tuple[str, ...] = ()
) -> QueryOutcome:
    return QueryOutcome("q", expected, selected, selected, 1.0, also_ok)


def test_trigger_precision_and_recall_per_skill() -> None:
    outcomes = [
        outcome(("a",), ("a",)),
        outcome(("a",), ("b",)),
        outcome(("a",), ()),
        outcome(("b",), ("b",)),
        outcome(("c",), ("b",), also_ok=("b",)),  # b is equally right there
        outcome((), ("a",)),  # a triggered on a no-skill request
    ]
    report = trigger_eval(outcomes, "q.jsonl")
    by = {s.skill: s for s in report.skills}
    assert by["a"].recall == round(1 / 3, 4) and by["a"].precision == 0.5
    assert by["a"].missed_to == ("b", NO_SKILL) or by["a"].missed_to == (NO_SKILL, "b")
    assert by["b"].recall == 1.0 and by["b"].precision == round(2 / 3, 4)
    assert by["c"].recall == 0.0 and by["c"].triggered == 0 and by["c"].precision is None
    assert "go to b" in by["c"].action
    assert report.count == 6 and report.recall == 0.4 and report.precision == 0.6
    assert [s.skill for s in report.skills][0] == "c"  # lowest recall first
