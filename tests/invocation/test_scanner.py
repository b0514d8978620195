"""The ``$id`` scanner (seed 004 §2, §6; SPEC I1)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillrt.invocation import code_mask, is_command_line, scan_mentions


def ids(text: str) -> list[str]:
    return [m.id for m in scan_mentions(text)]


# -- what is a mention --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$tdd", ["tdd"]),  # whole text
        ("$tdd fix it", ["tdd"]),  # start of text
        ("fix it with $tdd", ["tdd"]),  # end of text
        ("use $tdd, then test", ["tdd"]),
        ("use $tdd.", ["tdd"]),
        ("use $tdd...", ["tdd"]),
        ("really $tdd!", ["tdd"]),
        ("is it $tdd?", ["tdd"]),
        ("$tdd: write the test first", ["tdd"]),
        ("($tdd)", ["tdd"]),
        ("[$tdd]", ["tdd"]),
        ('"$tdd"', ["tdd"]),
        ("'$tdd'", ["tdd"]),
        ("$tdd's steps", ["tdd"]),
        ("**$tdd** and *$sys* and _$x_", ["tdd", "sys", "x"]),
        ("~~$old~~", ["old"]),
        ("$tdd—then ship", ["tdd"]),
        ("«$tdd»", ["tdd"]),
        ("please use $tdd to fix the echo bug", ["tdd"]),
        ("make sure $tdd runs before make", ["tdd"]),
        ("set $tdd as the default", ["tdd"]),
        ("go fix it with $tdd", ["tdd"]),
        ("Echo $tdd back to me", ["tdd"]),  # capitalised: a sentence, not a command
        ("$a and $b", ["a", "b"]),
        ("$my.skill.v2 now", ["my.skill.v2"]),
        ("$snake_case_skill", ["snake_case_skill"]),
        ("$3d-modeling", ["3d-modeling"]),
        ("$Systematic-Debugging", ["Systematic-Debugging"]),  # mixed case: resolver decides
        ("$acme:gh-fix-ci inspect", ["acme:gh-fix-ci"]),
        ("$acme:gh-fix-ci.", ["acme:gh-fix-ci"]),
        ("- $tdd in a list item", ["tdd"]),
        ("> $tdd quoted", ["tdd"]),
        ("# $tdd heading", ["tdd"]),
    ],
)
def test_mentions(text: str, expected: list[str]) -> None:
    assert ids(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # money
        "it costs $5",
        "it costs $3.50.",
        "about $1,000 a month",
        "a $5k budget",
        "$20M raised",
        "$100s of dollars",
        "$1.5M",
        # shell parameters and expansions
        "${VAR}",
        "${tdd}",
        "$(cmd)",
        "$(tdd)",
        "$1 and $9",
        "$@ $# $? $! $* $- $_ $0",
        "$$",
        "$$tdd",
        # environment variables and paths
        "echo $PATH",
        "export X=$HOME/y",
        "X=$tdd make",
        "cd $HOME/projects",
        "$HOME/x",
        "$tdd/sub",
        "see $PATH and $OPENAI_API_KEY",
        "$X",
        '"$VAR"',
        # escaped, glued, url-ish
        "\\$tdd",
        "US$5",
        "a$tdd",
        "https://example.com/$tdd",
        "user@$tdd",
        "$a$b",
        "$tdd(x)",
        "$tdd[0]",
        "$this->value",
        "$.ajax",
        "$('#id')",
        # bad id shapes
        "$a:b:c",
        "$:tdd",
        "$tdd:",  # trailing colon stripped, tdd remains -> see test below
    ][:-1],
)
def test_not_mentions(text: str) -> None:
    assert ids(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "echo $tdd",
        "$ echo $tdd",
        "% ls $tdd",
        "user@host:~/src$ git checkout $branch",
        "PS C:\\> echo $tdd",
        ">>> print($tdd)",
        "  sudo systemctl restart $service",
        "export SKILL=$tdd",
        "FOO=bar python run.py $tdd",
        "./build.sh $target",
        "/usr/bin/env $tdd",
        "git commit -m $msg",
        "kubectl get pods $ns",
        "make -C build $target",
        "find . -name $pattern",
        'for f in "$files"; do echo "$f"; done',
        "test -f $file && cat $file",
        "- npm run $script",
        "1. docker run $image",
        "> echo $tdd",
        "source ~/.venv/bin/activate $tdd",
    ],
)
def test_shell_lines_are_not_mentions(text: str) -> None:
    assert is_command_line(text)
    assert ids(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "please use $tdd to fix the echo bug",
        "make sure $tdd runs",
        "find the bug with $systematic-debugging",
        "test it with $tdd first",
        "git: use $tdd",
        "gitlab docs say $tdd",
        "Run $tdd now",
    ],
)
def test_prose_lines_keep_mentions(text: str) -> None:
    assert not is_command_line(text)
    assert len(ids(text)) == 1


def test_shell_rule_is_per_line() -> None:
    text = "echo $PATH\nnow use $tdd\n$ export X=$y\n$sys too"
    assert ids(text) == ["tdd", "sys"]


# -- code -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "```\n$tdd\n```",
        "```python\nx = '$tdd'\n```",
        "````\n```\n$tdd\n```\n````",  # longer outer fence; inner ``` does not close it
        "~~~\n$tdd\n~~~",
        "~~~~~\n$tdd\n~~~\n$tdd\n~~~~~",
        "```\n$tdd",  # unterminated: runs to the end
        "text\n```\nunterminated $tdd\nmore $sys",
        "  ```\n  $tdd\n  ```",  # indented fence (inside a list item)
        "> ```\n> $tdd\n> ```",  # fence in a quote
        "`$tdd`",
        "a `$tdd` b",
        "``$tdd``",
        "`` `$tdd` ``",
        "```$tdd```",  # one line: an inline span, not a fence
        "`x\n$tdd`",  # inline spans may cross a line (same paragraph)
    ],
)
def test_code_is_skipped(text: str) -> None:
    assert ids(text) == []


def test_code_then_prose() -> None:
    text = "```\n$a\n```\nthen $b and `$c` and ``$d`` and $e"
    assert ids(text) == ["b", "e"]


def test_tilde_fence_not_closed_by_backticks() -> None:
    assert ids("~~~\n$a\n```\n$b\n~~~\n$c") == ["c"]


def test_unmatched_backtick_is_literal() -> None:
    assert ids("a ` stray backtick then $tdd") == ["tdd"]
    assert ids("``a` $tdd") == ["tdd"]


def test_inline_code_does_not_cross_a_blank_line() -> None:
    assert ids("a `stray\n\n$tdd and `x`") == ["tdd"]


def test_code_mask_spans() -> None:
    text = "a `b` c\n```\nd\n```\ne"
    mask = code_mask(text)
    assert mask.covers(text.index("b"))
    assert not mask.covers(text.index("c"))
    assert mask.covers(text.index("d"))
    assert not mask.covers(text.index("e"))


def test_many_backtick_runs_is_linear() -> None:
    # Hostile: thousands of unmatched runs of different lengths.
    text = " ".join("`" * (i % 50 + 1) for i in range(5000)) + " $tdd"
    assert ids(text) == ["tdd"]


# -- spans, unicode, CRLF ---------------------------------------------------------------
def test_span_points_at_the_mention() -> None:
    text = "Hi — please run $systematic-debugging, thanks."
    (m,) = scan_mentions(text)
    assert text[m.start] == "$"
    assert text[m.start : m.end] == m.raw == "$systematic-debugging"
    assert (m.namespace, m.name) == (None, "systematic-debugging")


def test_namespaced_mention_fields() -> None:
    (m,) = scan_mentions("try $superpowers:systematic-debugging now")
    assert (m.id, m.namespace, m.name, m.glob) == (
        "superpowers:systematic-debugging",
        "superpowers",
        "systematic-debugging",
        False,
    )


@pytest.mark.parametrize("text", ["$acme:*", "load $acme:* please", "$acme:gh-*,"])
def test_glob_is_flagged(text: str) -> None:
    (m,) = scan_mentions(text)
    assert m.glob and m.namespace == "acme"
    assert text[m.start : m.end] == m.raw


def test_unicode_around_and_in_ids() -> None:
    text = "日本語のテキスト $日本語-スキル を使う。Ünïcödé $café-notes… ok"
    assert ids(text) == ["日本語-スキル", "café-notes"]
    for m in scan_mentions(text):
        assert text[m.start : m.end] == m.raw


def test_combining_marks_are_normalised() -> None:
    text = "use $cafe\u0301-notes now"  # decomposed é
    (m,) = scan_mentions(text)
    assert m.id == "café-notes"  # NFKC
    assert m.raw == "$cafe\u0301-notes"
    assert text[m.start : m.end] == m.raw


def test_devanagari_marks_stay_in_the_id() -> None:
    (m,) = scan_mentions("$नमस्ते-skill go")
    assert m.id == "नमस्ते-skill"


def test_crlf() -> None:
    text = "first line\r\n$tdd fix it\r\n```\r\n$x\r\n```\r\nthen $sys.\r\n"
    assert ids(text) == ["tdd", "sys"]
    for m in scan_mentions(text):
        assert text[m.start : m.end] == m.raw
    assert ids("echo $PATH\r\nuse $tdd\r\n") == ["tdd"]


def test_skill_command_lines_are_not_mentions() -> None:
    assert ids("/skill enable $tdd\n$sys go") == ["sys"]


def test_no_dollar_fast_path() -> None:
    assert scan_mentions("") == [] and scan_mentions("no sigil here") == []


# -- properties -------------------------------------------------------------------------
_ALPHABET = st.characters(
    codec="utf-8", categories=("L", "N", "P", "S", "Zs", "M"), exclude_characters="$`~"
)
_PROSE = st.text(alphabet=st.one_of(_ALPHABET, st.sampled_from(" \n\r\t")), max_size=80)
_CODE_BODY = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="`~"), max_size=40)


@st.composite
def text_with_dollars_only_in_code(draw: st.DrawFn) -> str:
    parts: list[str] = []
    for _ in range(draw(st.integers(0, 5))):
        parts.append(draw(_PROSE))
        kind = draw(st.sampled_from(["inline", "double", "fence", "tilde"]))
        body = (
            draw(_CODE_BODY).replace("\n", " ")
            + " $"
            + draw(st.from_regex(r"[a-z]{1,8}", fullmatch=True))
        )
        if kind == "inline":
            parts.append(f" `{body}` ")
        elif kind == "double":
            parts.append(f" ``{body}`` ")
        elif kind == "fence":
            parts.append(f"\n```\n{body}\n```\n")
        else:
            parts.append(f"\n~~~\n{body}\n~~~\n")
    parts.append(draw(_PROSE))
    return "".join(parts)


@settings(max_examples=300)
@given(text_with_dollars_only_in_code())
def test_property_no_dollar_outside_code_no_mention(text: str) -> None:
    assert scan_mentions(text) == []


@settings(max_examples=300)
@given(st.text(max_size=200))
def test_property_text_without_dollar_has_no_mention(text: str) -> None:
    text = text.replace("$", "")
    assert scan_mentions(text) == []


@settings(max_examples=500)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=6),
            st.sampled_from(["$", "$tdd", "$a:b", "$x:*", "`", "```\n", "~~~\n", "\r\n", " "]),
        ),
        max_size=30,
    ).map("".join)
)
def test_property_spans_point_at_a_real_dollar(text: str) -> None:
    mentions = scan_mentions(text)
    last_end = -1
    for m in mentions:
        assert text[m.start] == "$"
        assert text[m.start : m.end] == m.raw
        assert m.id and m.name
        assert m.start >= last_end  # ordered, non-overlapping
        last_end = m.end


@settings(max_examples=200)
@given(
    prefix=_PROSE,
    name=st.from_regex(r"[a-z][a-z0-9]{0,6}(-[a-z0-9]{1,6}){0,3}", fullmatch=True),
    punct=st.sampled_from(["", ",", ".", "!", "?", ")", ":", "'s", "…"]),
    suffix=_PROSE,
)
def test_property_mention_in_prose_is_found(
    prefix: str, name: str, punct: str, suffix: str
) -> None:
    # A mention on its own line, between spaces, is always found with the right span.
    text = f"{prefix}\nplease use ${name}{punct} now\n{suffix}"
    found = [m for m in scan_mentions(text) if m.id == name]
    assert found
    m = found[0]
    assert text[m.start : m.end] == f"${name}"
