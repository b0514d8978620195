"""Every row of seed 004 §7's "Error / ambiguity UX examples" table (SPEC I6).

Real SKILL.md files, the real loader, a real state database; the expected messages are
the table's text.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from skillrt.runtime import SkillRuntime

Build = Callable[..., SkillRuntime]


def test_row_exact_hit(table_runtime: Build) -> None:
    # "$systematic-debugging fix the auth bug" -> Exact hit. Using skill:
    # systematic-debugging, body loaded, task = "fix the auth bug".
    with table_runtime() as rt:
        res = rt.resolve("$systematic-debugging fix the auth bug")
    assert res.activated_names == ("systematic-debugging",)
    (act,) = res.activated
    assert act.line == "Using skill: systematic-debugging"
    assert "Guidance of systematic-debugging." in act.body
    assert act.load_report.sha256 and not act.load_report.truncated
    assert res.task_text == "fix the auth bug"
    assert res.diagnostics == ()


def test_row_namespaced_exact_hit(table_runtime: Build) -> None:
    # "$github:gh-fix-ci inspect failing checks" -> Using skill: github:gh-fix-ci.
    with table_runtime() as rt:
        res = rt.resolve("$github:gh-fix-ci inspect failing checks")
    (act,) = res.activated
    assert act.line == "Using skill: github:gh-fix-ci"
    assert "Read the failing log." in act.body
    assert res.task_text == "inspect failing checks"


def test_row_no_match(table_runtime: Build) -> None:
    # "$nope do a thing" -> "No skill named 'nope'. Run /skill list to see available
    # skills." No activation; the line is sent as ordinary text.
    with table_runtime() as rt:
        res = rt.resolve("$nope do a thing")
    assert res.activated == ()
    (diag,) = res.diagnostics
    assert diag.code == "NO_MATCH"
    assert diag.message == "No skill named 'nope'. Run /skill list to see available skills."
    assert res.task_text == "$nope do a thing"


def test_row_ambiguous_three_candidates(table_runtime: Build) -> None:
    # "$debugging ..." (3 candidates) -> "$debugging matched 3 skills: systematic-debugging,
    # root-cause-debugging, superpowers:systematic-debugging — use
    # $superpowers:systematic-debugging." No auto-pick.
    with table_runtime() as rt:
        res = rt.resolve("$debugging why does login fail")
    assert res.activated == ()
    (diag,) = res.diagnostics
    assert diag.code == "AMBIGUOUS"
    assert diag.message.startswith("$debugging matched 3 skills: ")
    listed = diag.message.split(": ", 1)[1].split(" — ")[0].split(", ")
    assert sorted(listed) == [
        "root-cause-debugging",
        "superpowers:systematic-debugging",
        "systematic-debugging",
    ]
    assert "use " in diag.message and "$superpowers:systematic-debugging" in diag.message
    assert set(diag.suggestions) == set(listed)
    assert res.task_text == "$debugging why does login fail"


def test_row_one_fuzzy_candidate(table_runtime: Build) -> None:
    # "$systematic-debug ..." (1 fuzzy candidate) -> suggest only: "No exact skill
    # 'systematic-debug'. Did you mean $systematic-debugging?" No silent activation.
    with table_runtime(plugins=False) as rt:
        res = rt.resolve("$systematic-debug the flaky test")
    assert res.activated == ()
    (diag,) = res.diagnostics
    assert diag.code == "FUZZY_SUGGESTION"
    assert diag.message == "No exact skill 'systematic-debug'. Did you mean $systematic-debugging?"
    assert diag.suggestions == ("systematic-debugging",)


def test_row_disabled(table_runtime: Build) -> None:
    # "$aleph ..." but aleph disabled -> "Skill 'aleph' is disabled. Enable it with
    # /skill enable aleph." No activation.
    with table_runtime() as rt:
        res = rt.resolve("$aleph search the planning doc")
    assert res.activated == ()
    (diag,) = res.diagnostics
    assert diag.code == "DISABLED"
    assert diag.message == "Skill 'aleph' is disabled. Enable it with /skill enable aleph."


def test_row_two_mentions(table_runtime: Build) -> None:
    # "$tdd $systematic-debugging ..." (2 mentions) -> "Choose one skill to lead this turn:
    # $test-driven-development or $systematic-debugging."
    with table_runtime() as rt:
        res = rt.resolve("$tdd $systematic-debugging fix the parser")
    assert res.activated == ()
    choose = [d for d in res.diagnostics if d.code == "MULTIPLE_MENTIONS"]
    assert [d.message for d in choose] == [
        "Choose one skill to lead this turn: $test-driven-development or $systematic-debugging."
    ]
    assert res.task_text == "$tdd $systematic-debugging fix the parser"


@pytest.mark.parametrize(
    "text",
    [
        "```sh\necho $PATH\n```",
        "~~~\necho $systematic-debugging\n~~~",
        "run `echo $systematic-debugging` first",
        "echo $PATH",
        "echo $systematic-debugging",
    ],
)
def test_row_dollar_in_code_or_command(table_runtime: Build, text: str) -> None:
    # "echo $PATH inside a code fence / command string" -> not a mention.
    with table_runtime() as rt:
        res = rt.resolve(text)
    assert res.mentions == () and res.activated == () and res.diagnostics == ()
    assert res.task_text == text
