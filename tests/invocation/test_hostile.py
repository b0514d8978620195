"""Hostile messages: huge, repetitive, or built to make a naive scanner quadratic.

No wall-clock limits: a quadratic regression shows up as a test that takes minutes.
"""

from __future__ import annotations

from skillrt.invocation import code_mask, scan_mentions
from skillrt.invocation.resolver import MAX_DISTINCT_MENTIONS

from .conftest import RecordingLoader, make_resolver, skill


def test_one_huge_line_of_fence_markers() -> None:
    text = "``` " * 250_000 + "$tdd"
    # The first ``` opens an inline span that the next run closes, and so on: the
    # trailing $tdd is outside code.
    assert [m.id for m in scan_mentions(text)] == ["tdd"]


def test_one_huge_line_of_mentions() -> None:
    text = " ".join(f"$s{i}" for i in range(50_000))
    mentions = scan_mentions(text)
    assert len(mentions) == 50_000
    assert all(text[m.start] == "$" for m in mentions[::997])


def test_backtick_runs_of_many_lengths_across_a_blank_line() -> None:
    openers = " ".join("`" * n for n in range(1, 700))
    closers = " ".join("`" * n for n in range(1, 700))
    text = f"{openers} $in\n\n{closers} $out"
    mask = code_mask(text)
    assert not mask.covers(text.index("$in"))  # no span crosses the blank line
    assert [m.id for m in scan_mentions(text)] == ["in", "out"]


def test_many_distinct_unknown_mentions_are_capped() -> None:
    loader = RecordingLoader()
    r = make_resolver([skill("tdd")], loader=loader)
    text = "$tdd " + " ".join(f"$unknown-{i}" for i in range(5_000))
    res = r.resolve(text)
    assert res.activated_names == ("tdd",)
    assert len(res.mentions) == 5_001
    no_match = [d for d in res.diagnostics if d.code == "NO_MATCH"]
    assert len(no_match) == MAX_DISTINCT_MENTIONS - 1
    assert res.diagnostics[-1].code == "TOO_MANY_MENTIONS"
    assert res.diagnostics[-1].message == (
        f"Only the first {MAX_DISTINCT_MENTIONS} distinct $mentions were resolved; "
        f"{5_001 - MAX_DISTINCT_MENTIONS} more were left as ordinary text."
    )


def test_repeated_mention_is_resolved_once_but_reported_each_time() -> None:
    r = make_resolver([skill("tdd")])
    text = " ".join(["$nope"] * 1_000)
    res = r.resolve(text)
    assert len(res.diagnostics) == 1_000
    assert {d.message for d in res.diagnostics} == {
        "No skill named 'nope'. Run /skill list to see available skills."
    }
    assert [d.start for d in res.diagnostics[:3]] == [0, 6, 12]


def test_control_and_surrogate_characters() -> None:
    # Only whitespace or punctuation may end an id: NUL, a lone surrogate or a bidi
    # control glued to it make the token something else, never a mention.
    text = "\x00$tdd\x00 $a\ud800b \u202e$evil\u202c"
    assert scan_mentions(text) == []
    assert [m.id for m in scan_mentions("\x00 $tdd \u202e")] == ["tdd"]
