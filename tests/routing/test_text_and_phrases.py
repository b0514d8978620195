"""Tokens, stemming, clause splitting, and word-boundary phrase matching."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skillrt.routing.phrases import PhraseIndex
from skillrt.routing.text import clause_spans, identifier_words, split_clauses, stem, terms


def owners(index: PhraseIndex, text: str) -> set[int]:
    return {m.owner for m in index.match(text)}


def test_trigger_git_does_not_fire_on_digital() -> None:
    index = PhraseIndex()
    index.add("git", 0)
    assert owners(index, "sign this digital document") == set()
    assert owners(index, "legit request") == set()
    assert owners(index, "run git rebase") == {0}
    assert owners(index, "use git-flow please") == {0}
    assert owners(index, "GIT status") == {0}


def test_multiword_trigger_matches_as_a_phrase_only() -> None:
    index = PhraseIndex()
    index.add("code review", 1)
    assert owners(index, "I need a Code  Review today") == {1}
    assert owners(index, "code reviews for my branch") == {1}  # light stemming
    assert owners(index, "review the code") == set()  # order matters
    assert owners(index, "code, then a review") == set()  # adjacency matters


def test_cjk_trigger_matches_as_substring() -> None:
    index = PhraseIndex()
    index.add("发票", 2)
    index.add("invoice", 3)
    assert owners(index, "帮我整理这些发票文件") == {2}
    assert owners(index, "整理发 票") == {2}  # spaces inside CJK text are ignored
    assert owners(index, "用invoice工具") == {3}  # latin word glued to CJK text
    assert owners(index, "票据") == set()


def test_symbol_triggers_keep_boundaries() -> None:
    index = PhraseIndex()
    index.add("c++", 4)
    assert owners(index, "write c++ code") == {4}
    assert owners(index, "c++x is not c plus plus") == set()


def test_light_stemmer_merges_inflections_consistently() -> None:
    for group in (
        ("review", "reviews", "reviewing", "reviewed"),
        ("invoice", "invoices"),
        ("translate", "translation", "translating"),
        ("order", "orders", "ordered"),
        ("apply", "applied", "applies", "applying"),
    ):
        assert len({stem(w) for w in group}) == 1, group
    assert stem("digital") != stem("git")
    assert stem("status") == "status"


def test_terms_drop_stopwords_and_split_cjk_into_bigrams() -> None:
    assert terms("Can you please review my pull requests?") == ["review", "pull", "request"]
    assert terms("处理系统") == ["处理", "理系", "系统"]


def test_identifier_words() -> None:
    assert identifier_words("pdf-url_tool") == "pdf url tool"
    assert identifier_words("acme:PdfURLTool") == "acme pdf url tool"


def test_split_clauses_on_conjunctions_keeps_short_pieces_together() -> None:
    assert split_clauses("Review the PR and then write a commit message") == [
        "Review the PR",
        "write a commit message",
    ]
    assert split_clauses("book a flight and a hotel") == ["book a flight and a hotel"]
    assert split_clauses("先审查代码然后部署到生产环境") == ["先审查代码", "部署到生产环境"]
    assert split_clauses("") == []


@given(st.text(max_size=200))
def test_phrase_matching_never_crashes_and_is_deterministic(text: str) -> None:
    index = PhraseIndex()
    for n, phrase in enumerate(["git", "code review", "发票", "c++", "a.b"]):
        index.add(phrase, n)
    assert index.match(text) == index.match(text)
    clauses = split_clauses(text)
    assert all(c and c in text for c in clauses)
    spans = clause_spans(text)
    # Spans are where the clauses are: in order, not overlapping, trimmed.
    assert [text[a:b] for a, b in spans] == clauses
    assert all(0 <= a < b <= len(text) for a, b in spans)
    assert all(spans[n][1] <= spans[n + 1][0] for n in range(len(spans) - 1))
    assert all(text[a:b] == text[a:b].strip() for a, b in spans)


def test_bm25f_field_lengths_are_averaged_over_documents_that_have_the_field() -> None:
    # Skills without a body (a JSONL catalogue, generated skills) must not make every
    # body look long: the scores of two skills with bodies keep their ratio.
    import pytest

    from skillrt.routing.lexical import LexicalIndex

    with_body = [
        [["deploy"], ["ship", "it"], [], ["rollback", "steps", "canary", "rollback"]],
        [["audit"], ["check", "it"], [], ["rollback", "notes"] + ["filler"] * 30],
    ]
    without = [[[f"tool{n}"], ["rollback", "a", "thing"], [], []] for n in range(200)]
    weights = (2.0, 1.0, 1.0, 0.5)
    small = LexicalIndex(with_body, weights=weights).score(["rollback"]).raw
    large = LexicalIndex([*with_body, *without], weights=weights).score(["rollback"]).raw
    assert small[0] > small[1] > 0
    assert large[0] / large[1] == pytest.approx(small[0] / small[1], rel=1e-6)
