"""``/skill list|enable|disable`` from the same text as ``$`` mentions (seed 004 §4, §7)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from skillrt.errors import UsageError
from skillrt.invocation import parse_commands
from skillrt.runtime import SkillRuntime

from .conftest import make_resolver, skill

Build = Callable[..., SkillRuntime]


def actions(text: str) -> list[tuple[str, str | None]]:
    cmds, _ = parse_commands(text)
    return [(c.action, c.target) for c in cmds]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/skill list", [("list", None)]),
        ("/skill", [("list", None)]),
        ("/skill ls", [("list", None)]),
        ("/skill list debug", [("list", "debug")]),
        ("/skill enable aleph", [("enable", "aleph")]),
        ("/skill enable $aleph", [("enable", "aleph")]),
        ("/skill disable acme:gh-fix-ci", [("disable", "acme:gh-fix-ci")]),
        ("/skill disable a b", [("disable", "a"), ("disable", "b")]),
        ("  /skill ENABLE x\r\n", [("enable", "x")]),
        ("hello\n/skill list\n$tdd go", [("list", None)]),
        ("/skill enable a\n/skill disable b", [("enable", "a"), ("disable", "b")]),
    ],
)
def test_parse(text: str, expected: list[tuple[str, str | None]]) -> None:
    assert actions(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "use /skill list to see them",  # not at the start of a line
        "/skills list",
        "/skill-creator make one",
        "/run_skill tdd: fix it",  # issue 6's syntax, left alone
        "```\n/skill enable aleph\n```",
        "`/skill enable aleph`",
    ],
)
def test_not_commands(text: str) -> None:
    cmds, problems = parse_commands(text)
    assert cmds == [] and problems == []


@pytest.mark.parametrize("text", ["/skill frobnicate x", "/skill enable", "/skill disable  "])
def test_invalid_commands_are_diagnostics(text: str) -> None:
    cmds, problems = parse_commands(text)
    assert cmds == []
    (d,) = problems
    assert d.code == "INVALID_COMMAND"
    assert "/skill list, /skill enable <id> or /skill disable <id>" in d.message


def test_resolve_returns_commands_and_strips_them_from_the_task() -> None:
    r = make_resolver([skill("tdd")])
    res = r.resolve("/skill list\n$tdd write the test")
    assert [c.action for c in res.commands] == ["list"]
    assert res.activated_names == ("tdd",)
    assert res.task_text == "write the test"
    assert res.command_results == ()  # not applied unless asked


def test_apply_enable_then_mention_in_one_message(table_runtime: Build) -> None:
    with table_runtime() as rt:
        res = rt.resolve("/skill enable aleph\n$aleph search the doc", apply_commands=True)
        assert [o.message for o in res.command_results] == ["Skill 'aleph' enabled."]
        assert res.activated_names == ("aleph",)
        assert res.task_text == "search the doc"


def test_enable_disable_persist(table_runtime: Build, tmp_path: Path) -> None:
    with table_runtime(disabled=()) as rt:
        res = rt.resolve("/skill disable root-cause-debugging", apply_commands=True)
        (o,) = res.command_results
        assert o.ok and o.applied
        assert o.message == "Skill 'root-cause-debugging' disabled."
    with table_runtime(disabled=()) as rt:  # a new process: state comes from the SQLite file
        assert not rt.registry.is_enabled("root-cause-debugging")
        res = rt.resolve("$root-cause-debugging go")
        assert [d.code for d in res.diagnostics] == ["DISABLED"]
        (o,) = rt.skill_command("enable root-cause-debugging")
        assert o.ok
    with table_runtime(disabled=()) as rt:
        assert rt.resolve("$root-cause-debugging go").activated_names == ("root-cause-debugging",)


def test_already_in_state(table_runtime: Build) -> None:
    with table_runtime() as rt:
        (o,) = rt.skill_command("/skill disable aleph")
        assert o.ok and not o.applied and o.message == "Skill 'aleph' is already disabled."


def test_list_shows_state_and_filters(table_runtime: Build) -> None:
    with table_runtime() as rt:
        (o,) = rt.skill_command("/skill list")
        rows = {s.id: s.enabled for s in o.skills}
        assert rows["aleph"] is False and rows["github:gh-fix-ci"] is True
        assert o.message == f"{len(rows)} skills ({len(rows) - 1} enabled, 1 disabled)"
        (o,) = rt.skill_command("list DEBUG")
        assert {s.id for s in o.skills} == {
            "systematic-debugging",
            "root-cause-debugging",
            "superpowers:systematic-debugging",
        }


def test_unknown_and_ambiguous_targets(table_runtime: Build) -> None:
    with table_runtime() as rt:
        (o,) = rt.skill_command("enable nope")
        assert not o.ok
        assert o.message == "No skill named 'nope'. Run /skill list to see available skills."
        (o,) = rt.skill_command("disable systematic-debugging")  # exact un-namespaced wins
        assert o.ok
        rt.skill_command("enable systematic-debugging")


def test_ambiguous_target_names_the_ids() -> None:
    r = make_resolver([skill("x", "a"), skill("x", "b")])
    res = r.resolve("/skill disable x", apply_commands=True)
    (o,) = res.command_results
    assert not o.ok
    assert o.message == "$x matched 2 skills: a:x, b:x — use $a:x or $b:x."


def test_model_surface_cannot_change_state() -> None:
    r = make_resolver([skill("x")])
    res = r.resolve("/skill disable x\n/skill list", surface="model", apply_commands=True)
    disable, listing = res.command_results
    assert not disable.ok and not disable.applied
    assert "not applied" in disable.message
    assert listing.ok and [s.id for s in listing.skills] == ["x"]
    assert r.registry.is_enabled("x")


def test_skill_command_rejects_garbage(table_runtime: Build) -> None:
    with table_runtime() as rt, pytest.raises(UsageError):
        rt.skill_command("/skill explode")
