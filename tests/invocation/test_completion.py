"""Completions for a partial ``$tok`` under the cursor (seed 004 §6 slice 2; SPEC I5)."""

from __future__ import annotations

import pytest

from skillrt.errors import UsageError
from skillrt.invocation import InvocationResolver

from .conftest import make_resolver, skill

SKILLS = [
    skill("systematic-debugging", description="Find the root cause.\nSecond line."),
    skill("system-design"),
    skill("test-driven-development"),
    skill("sql-query-review"),
    skill("gh-fix-ci", "github"),
    skill("gh-fix-ci", "gitlab"),
    skill("release-notes", "acme"),
    skill("systematic-debugging", "superpowers"),
    skill("sys-disabled"),
    skill("sys-hidden", user_invocable=False),
]


def resolver() -> InvocationResolver:
    return make_resolver(SKILLS, disabled=["sys-disabled"])


def shown(text: str, cursor: int | None = None, **kw: int) -> list[str]:
    return [c.display for c in resolver().complete(text, cursor, **kw)]


def test_prefix_first_shorter_first() -> None:
    out = shown("fix it with $sys")
    assert out[:2] == ["$system-design", "$systematic-debugging"]
    assert "$sys-disabled" not in out and "$sys-hidden" not in out  # disabled, menu-hidden


def test_replacement_span_and_insert() -> None:
    text = "please $syst now"
    c = resolver().complete(text, text.index(" now"))[0]
    assert (c.replace_start, c.replace_end) == (7, 12)
    assert text[c.replace_start : c.replace_end] == "$syst"
    assert c.insert == c.display == "$system-design"
    assert c.match == "prefix"


def test_cursor_inside_a_token_replaces_the_whole_token() -> None:
    text = "$systematic-debugging go"
    (first, *_) = resolver().complete(text, 4)
    assert (first.replace_start, first.replace_end) == (0, len("$systematic-debugging"))


def test_then_substring_initials_subsequence() -> None:
    out = resolver().complete("$debug")
    assert [c.display for c in out][:2] == [
        "$systematic-debugging",
        "$superpowers:systematic-debugging",
    ]
    assert {c.match for c in out} == {"substring"}
    (c,) = [c for c in resolver().complete("$tdd") if c.id == "test-driven-development"]
    assert c.match == "initials"
    ids = [c.id for c in resolver().complete("$sqlrv")]
    assert ids == ["sql-query-review"]


def test_namespaced_ids_only_when_needed() -> None:
    ids = [c.id for c in resolver().complete("$gh")]
    assert ids == ["github:gh-fix-ci", "gitlab:gh-fix-ci"]  # bare gh-fix-ci is ambiguous
    ids = [c.id for c in resolver().complete("$rel")]
    assert ids[0] == "release-notes"  # unique bare name: no namespace needed
    ids = [c.id for c in resolver().complete("$acme:")]
    assert ids == ["release-notes"]


def test_qualified_prefix() -> None:
    ids = [c.qualified_name for c in resolver().complete("$superpowers:sys")]
    assert ids == ["superpowers:systematic-debugging"]


def test_empty_partial_lists_everything_enabled() -> None:
    out = shown("$")
    assert len(out) == 8 and "$sys-disabled" not in out
    assert shown("$", limit=3) == out[:3]


def test_description_first_line_only() -> None:
    (c, *_) = resolver().complete("$systematic")
    assert c.description == "Find the root cause."


@pytest.mark.parametrize(
    "text",
    [
        "`$sys`",
        "```\n$sys",
        "echo $sys",
        "costs $5",
        "a$sys",
        "$PA",
        "plain text",
        "price: $",  # no partial after a bare $? still offered: see below
    ][:-1],
)
def test_no_completion_contexts(text: str) -> None:
    assert resolver().complete(text) == []


def test_bare_dollar_mid_text() -> None:
    assert resolver().complete("use $")  # a lone $ at the cursor offers every skill


def test_crlf_and_unicode() -> None:
    text = "日本語\r\nuse $sys"
    out = resolver().complete(text)
    assert out and all(text[c.replace_start] == "$" for c in out)


def test_cursor_bounds() -> None:
    with pytest.raises(UsageError):
        resolver().complete("abc", 10)
    assert resolver().complete("$sys", 0) == []
    assert resolver().complete("$sys", limit=0) == []


def test_enable_state_is_live() -> None:
    r = resolver()
    r.registry.set_enabled("sys-disabled", True)
    assert "$sys-disabled" in [c.display for c in r.complete("$sys")]


# -- /skill lines -----------------------------------------------------------------------
def test_subcommands() -> None:
    assert [c.id for c in resolver().complete("/skill ")] == ["list", "enable", "disable"]
    (c,) = resolver().complete("/skill dis")
    assert (c.id, c.insert, c.match, c.replace_start, c.replace_end) == (
        "disable",
        "disable",
        "command",
        7,
        10,
    )


def test_enable_offers_disabled_skills_disable_offers_enabled() -> None:
    assert [c.id for c in resolver().complete("/skill enable sys")] == ["sys-disabled"]
    out = [c.id for c in resolver().complete("/skill disable sys")]
    assert "sys-disabled" not in out and "system-design" in out
    (c,) = resolver().complete("/skill enable sys-d")
    assert c.insert == "sys-disabled" and c.replace_start == len("/skill enable ")


def test_skill_line_in_code_is_not_completed() -> None:
    assert resolver().complete("```\n/skill enable sys") == []
