"""The turn context: budget fitting and which skills a plan may inject."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillrt.config import RoutingConfig, RuntimeConfig
from skillrt.runtime import SkillRuntime
from skillrt.serialize import to_jsonable
from skillrt.turns import POINTER_HEAD_ALONE, TurnContext, _shares


@given(
    st.dictionaries(st.text(min_size=1, max_size=4), st.integers(0, 50_000), max_size=5),
    st.integers(0, 60_000),
)
def test_shares_never_exceed_what_is_available_or_needed(sizes: dict[str, int], avail: int) -> None:
    shares = _shares(sizes, avail)
    assert set(shares) == set(sizes)
    assert sum(shares.values()) <= max(0, avail)
    assert all(0 <= shares[n] <= sizes[n] for n in sizes)


@pytest.fixture
def runtime(skills: Path) -> SkillRuntime:
    config = RuntimeConfig(routing=RoutingConfig(embedding_backend="none"))
    return SkillRuntime(config, roots=[skills], persist=False)


@pytest.mark.parametrize("budget", [1000, 1500, 4000, 9500])
def test_every_budget_is_kept(runtime: SkillRuntime, budget: int) -> None:
    ctx = runtime.turn_context("$big-skill plan it", budget=budget)
    assert ctx.skills == ("big-skill",)
    assert len(ctx.text) <= budget and ctx.truncated


def test_too_small_a_budget_injects_nothing_rather_than_a_stub(runtime: SkillRuntime) -> None:
    ctx = runtime.turn_context("$big-skill plan it", budget=200)
    assert ctx.skills == () and ctx.text == ""


def test_round_trips_through_json(runtime: SkillRuntime) -> None:
    from skillrt.serialize import to_jsonable

    ctx = runtime.turn_context("$code-review now")
    data = to_jsonable(ctx)
    assert "_route" not in data
    assert TurnContext.from_dict(data) == ctx


def test_the_primary_keeps_its_whole_body_before_the_plan_shares_the_rest(
    tmp_path: Path, make_skill: object
) -> None:
    from skillrt.turns import _assemble

    root = tmp_path / "two"
    for name in ("first-skill", "second-skill"):
        make_skill(  # type: ignore[operator]
            name,
            description=f"The {name} procedure.",
            body="# Steps\n\n" + "".join(f"{n}. step {n} of {name}\n" for n in range(300)),
            root=root,
        )
    rt = SkillRuntime(
        RuntimeConfig(routing=RoutingConfig(embedding_backend="none")), roots=[root], persist=False
    )
    whole = rt.load_body("second-skill", spill=False).text.rstrip()
    assert len(whole) > 5000
    budget = len(whole) + 2000
    sources = rt._turn_sources()
    ctx = _assemble(
        sources, ["first-skill", "second-skill"], budget, "route", primary="second-skill"
    )
    assert ctx.skills == ("first-skill", "second-skill")  # shown in plan order
    assert whole in ctx.text and len(ctx.text) <= budget and ctx.truncated
    # Without a primary the two bodies share the budget: neither is whole.
    shared = _assemble(sources, ["first-skill", "second-skill"], budget, "route")
    assert whole not in shared.text and len(shared.text) <= budget


def test_pointers_reach_the_turn_context_as_lines_never_bodies(
    tmp_path: Path, make_skill: object
) -> None:
    root = tmp_path / "near"
    make_skill(  # type: ignore[operator]
        "invoice-parser",
        description="Parse PDF invoices into line items, totals and tax.",
        body="# Steps\n\nRead the invoice PDF and extract its line items.\n",
        root=root,
    )
    make_skill(  # type: ignore[operator]
        "receipt-parser",
        description="Parse PDF receipts and invoices into totals and tax lines.",
        body="# Steps\n\nRead the receipt PDF and extract totals.\n",
        root=root,
    )
    loose = RoutingConfig(embedding_backend="none", pointer_runner_up=0.0, pointer_floor=0.0)
    rt = SkillRuntime(RuntimeConfig(routing=loose), roots=[root], persist=False)
    ctx = rt.turn_context("parse the PDF invoices from march into line items and tax totals")
    assert len(ctx.skills) == 1
    other = ({"invoice-parser", "receipt-parser"} - set(ctx.skills)).pop()
    assert [p["name"] for p in ctx.pointers] == [other]
    assert ctx.pointers[0]["load"] == f"skillrt show {other}"
    assert f"- {other}: close runner-up" in ctx.text
    assert f"Using skill: {other}" not in ctx.text
    assert TurnContext.from_dict(to_jsonable(ctx)) == ctx
    off = dataclasses.replace(loose, pointers=False)
    quiet = SkillRuntime(RuntimeConfig(routing=off), roots=[root], persist=False)
    ctx = quiet.turn_context("parse the PDF invoices from march into line items and tax totals")
    assert ctx.pointers == () and "may also apply" not in ctx.text
    # A skill already loaded in the conversation is not pointed to.
    again = rt.turn_context(
        "parse the PDF invoices from march into line items and tax totals", loaded=[other]
    )
    assert again.pointers == ()
    # With point_quick_facts, a quick question of fact about a paste gets the skill
    # named, not injected.
    paste = "$ pdftotext march-invoice.pdf -\nInvoice 2291  line items: 14  tax: 19%\n\n"
    facts = dataclasses.replace(loose, point_quick_facts=True)
    rt = SkillRuntime(RuntimeConfig(routing=facts), roots=[root], persist=False)
    asked = rt.turn_context(paste + "which pdftotext version keeps invoice line items in order?")
    assert asked.skills == () and asked.text.startswith(POINTER_HEAD_ALONE)
    assert {p["name"] for p in asked.pointers} <= {"invoice-parser", "receipt-parser"}
    assert asked.pointers and "quick question of fact" in asked.pointers[0]["why"]
    assert "# Steps" not in asked.text
    work = rt.turn_context(paste + "parse the invoice PDFs from march into line items and tax")
    assert len(work.skills) == 1


# -- each skill once per conversation (issue 27) --------------------------------------
def test_a_skill_already_loaded_gets_a_reminder_not_its_body(runtime: SkillRuntime) -> None:
    first = runtime.turn_context("please do a code review of my pr")
    assert first.skills == ("code-review",) and "[Skill: code-review |" in first.text
    again = runtime.turn_context("please do a code review of my pr", loaded=["code-review"])
    assert again.skills == () and again.reminded == ("code-review",)
    assert "[Skill: code-review |" not in again.text
    assert again.text.count("\n") == 0 and "code-review" in again.text  # one line
    other = runtime.turn_context("$sql-review check this", loaded=["code-review"])
    assert other.skills == ("sql-review",) and other.reminded == ()  # others as usual
    named = runtime.turn_context("$code-review again please", loaded=["code-review"])
    assert named.reminded == ("code-review",) and "[Skill:" not in named.text


def test_a_skill_that_fails_validation_is_not_injected(tmp_path: Path, make_skill: object) -> None:
    from typing import Any, cast

    make = cast(Any, make_skill)
    root = tmp_path / "vskills"
    # its name is not its folder's: NAME_DIR_MISMATCH, which `validate` fails
    make("code-review", description="Review a pull request for bugs.", root=root,
         triggers=["review my pr"], folder="review")  # fmt: skip
    config = RuntimeConfig(routing=RoutingConfig(embedding_backend="none"))
    rt = SkillRuntime(config, roots=[root], persist=False)
    ctx = rt.turn_context("please review my pr")
    assert ctx.text == "" and ctx.skills == ()
    assert [e["code"] for e in ctx.errors] == ["NAME_DIR_MISMATCH"]


def test_mention_messages_name_commands_that_exist_in_a_coding_agent() -> None:
    from skillrt.invocation.messages import disabled, for_shell, no_match

    assert (
        for_shell(no_match("x"))
        == "No skill named 'x'. Run `skillrt list` to see available skills."
    )
    assert for_shell(disabled("a")) == "Skill 'a' is disabled. Enable it with `skillrt enable a`."


def test_a_pointer_says_how_this_client_loads_the_skill(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from skillrt.turns import _load

    def skill(folder: str) -> SimpleNamespace:
        path = tmp_path / folder / "x"
        return SimpleNamespace(name="x", path=path, skill_file=path / "SKILL.md")

    assert (
        _load(skill(".claude/skills"), "claude-code", "skillrt show x") == "the Skill tool with x"
    )
    assert _load(skill(".agents/skills"), "gemini", "skillrt show x") == "activate_skill x"
    other = skill("team/skills")
    assert _load(other, "claude-code", "skillrt show x") == f"read {other.skill_file}"
    assert (
        _load(skill(".claude/skills"), "codex", "d") == f"read {tmp_path}/.claude/skills/x/SKILL.md"
    )
    assert _load(other, None, "skillrt show x") == "skillrt show x"  # off a coding agent
