"""Cutting activated mentions and command lines out of the task text."""

from __future__ import annotations

import pytest

from skillrt.invocation.tidy import remove_spans


def cut(text: str, *words: str) -> str:
    spans = []
    for w in words:
        i = text.index(w)
        spans.append((i, i + len(w)))
    return remove_spans(text, spans)


@pytest.mark.parametrize(
    ("text", "words", "expected"),
    [
        ("$a fix it", ["$a"], "fix it"),
        ("fix it $a", ["$a"], "fix it"),
        ("fix $a it", ["$a"], "fix it"),
        ("fix\t$a\tit", ["$a"], "fix it"),
        ("fix $a, then", ["$a"], "fix, then"),
        ("fix $a! now", ["$a"], "fix! now"),
        ("x\n  $a do\ny", ["$a"], "x\n  do\ny"),
        ("x $a\r\ny", ["$a"], "x\r\ny"),
        ("$a $b go", ["$a", "$b"], "go"),
        ("nothing", [], "nothing"),
    ],
)
def test_seams(text: str, words: list[str], expected: str) -> None:
    assert cut(text, *words) == expected


def test_overlapping_and_unsorted_spans() -> None:
    assert remove_spans("abc def ghi", [(4, 7), (0, 3), (1, 2)]) == "ghi"


def test_whole_line_cut_keeps_the_next_indent() -> None:
    text = "/skill list\n    indented code\n"
    assert remove_spans(text, [(0, 12)]) == "indented code"
    text = "intro\n/skill list\n    indented\n"
    assert remove_spans(text, [(6, 18)]) == "intro\n    indented"


def test_code_elsewhere_is_byte_identical() -> None:
    code = "```\n  a  =  $x   \n\tb\n```"
    assert remove_spans(f"$tdd go\n{code}", [(0, 4)]) == f"go\n{code}"
