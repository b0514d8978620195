"""The turn context: budget fitting and which skills a plan may inject."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillrt.config import RoutingConfig, RuntimeConfig
from skillrt.runtime import SkillRuntime
from skillrt.turns import TurnContext, _shares


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
    ctx = _assemble(rt, ["first-skill", "second-skill"], budget, "route", primary="second-skill")
    assert ctx.skills == ("first-skill", "second-skill")  # shown in plan order
    assert whole in ctx.text and len(ctx.text) <= budget and ctx.truncated
    # Without a primary the two bodies share the budget: neither is whole.
    shared = _assemble(rt, ["first-skill", "second-skill"], budget, "route")
    assert whole not in shared.text and len(shared.text) <= budget


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
