"""Pseudo-requests and the leave-out views they are routed against."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from skillrt.doctor.folds import held_out, section_terms
from skillrt.doctor.pseudo import (
    DESCRIPTION_FOLD,
    FOLDS,
    description_clauses,
    per_skill_limit,
    pseudo_requests,
    section_sentences,
)
from skillrt.routing.fields import BodySection, skill_fields
from skillrt.skills.model import RoutingMeta, Skill


def skill(
    description: str, *, examples: tuple[str, ...] = (), triggers: tuple[str, ...] = ()
) -> Skill:
    return Skill(
        name="demo",
        description=description,
        path=Path("/nowhere/demo"),
        skill_file=None,
        routing=RoutingMeta(examples=examples, triggers=triggers),
    )


SECTIONS = (
    BodySection(
        "", "Opening words about invoices and receipts here. Second sentence is about the totals."
    ),
    BodySection("Export", "Export the ledger to a CSV file for the accountant. Then email it."),
    BodySection("Pitfalls", "Never round the VAT before summing the lines of the invoice."),
)


def test_every_source_gives_requests_with_its_fold() -> None:
    s = skill(
        "Organise invoices and receipts. Use when a user asks to file expenses.",
        examples=("file this receipt for me please",),
        triggers=("expense report",),
    )
    requests = pseudo_requests(0, s, skill_fields(s, SECTIONS), limit=50)
    by_source = {(r.source, r.text): r.fold for r in requests}
    assert by_source[("description", "Organise invoices and receipts.")] == DESCRIPTION_FOLD
    assert (
        by_source[("description", "Use when a user asks to file expenses.")] == DESCRIPTION_FOLD + 1
    )
    assert by_source[("example", "file this receipt for me please")] == DESCRIPTION_FOLD
    assert by_source[("trigger", "expense report")] == DESCRIPTION_FOLD
    # Section j gives its first sentence, the first two together and the second one.
    assert (
        by_source[("section: (opening text)", "Opening words about invoices and receipts here.")]
        == 0
    )
    both = " ".join(x.text for x in SECTIONS[:1])
    assert by_source[("section: (opening text)", both)] == 0
    assert (
        by_source[("section: Export", "Export the ledger to a CSV file for the accountant.")] == 1
    )
    assert (
        by_source[
            ("section: Pitfalls", "Never round the VAT before summing the lines of the invoice.")
        ]
        == 0
    )
    assert all(0 <= r.fold < FOLDS for r in requests)
    assert len({r.text for r in requests}) == len(requests)


def test_a_small_limit_still_samples_every_source() -> None:
    s = skill("Organise invoices and receipts. Use when a user asks to file expenses.")
    requests = pseudo_requests(3, s, skill_fields(s, SECTIONS), limit=4)
    assert len(requests) == 4 and {r.skill for r in requests} == {3}
    assert {r.source for r in requests} == {
        "description",
        "section: (opening text)",
        "section: Export",
        "section: Pitfalls",
    }


def test_headings_alone_and_short_fragments_are_not_requests() -> None:
    s = skill("Tiny.")  # under three words: not a clause
    fields = skill_fields(s, (BodySection("Overview of everything", "ok then"),))
    assert pseudo_requests(0, s, fields, limit=10) == []
    assert description_clauses("One two. Three four five; six seven eight!") == [
        "Three four five;",
        "six seven eight!",
    ]
    assert section_sentences("Short. This one has five words.") == ["This one has five words."]


def test_per_skill_limit_spreads_a_budget() -> None:
    assert per_skill_limit(100, None) == 12
    assert per_skill_limit(1_000, None) == 6
    assert per_skill_limit(100_000, None) == 4
    assert per_skill_limit(10, 3) == 3 and per_skill_limit(10, 0) == 1


def test_section_folds_hold_out_sections_and_keep_the_description() -> None:
    s = skill("Organise invoices. Use when filing expenses.", examples=("a", "b"))
    fields = skill_fields(s, (*SECTIONS, BodySection("Copy", SECTIONS[1].text)))
    view, kept = held_out(s, fields, 1)
    assert view is s
    assert [x.heading for x in kept.sections] == ["", "Pitfalls"]
    assert "export" not in kept.field_terms[3] and "ledger" not in kept.field_terms[3]


def test_description_folds_hold_out_clauses_examples_and_triggers() -> None:
    s = skill(
        "Organise invoices. Use when filing expenses.",
        examples=("first example here", "second example here"),
        triggers=("alpha phrase", "beta phrase"),
    )
    fields = skill_fields(s, SECTIONS)
    view, kept = held_out(s, fields, DESCRIPTION_FOLD)
    # "Organise invoices." is too short to be a clause: it stays in every fold.
    assert view.description == "Organise invoices."
    assert view.routing.examples == ("second example here",)
    assert view.routing.triggers == ("beta phrase",)
    assert kept.sections == fields.sections
    view, _ = held_out(s, fields, DESCRIPTION_FOLD + 1)
    assert view.description == "Organise invoices. Use when filing expenses."


WORDS = st.text(alphabet="abcdefghij", min_size=3, max_size=8)
SENTENCE = st.lists(WORDS, min_size=5, max_size=9).map(lambda ws: " ".join(ws) + ".")


@settings(max_examples=60, deadline=None)
@given(
    clauses=st.lists(
        st.lists(WORDS, min_size=3, max_size=6).map(lambda ws: " ".join(ws) + "."),
        min_size=1,
        max_size=5,
    ),
    sections=st.lists(st.lists(SENTENCE, min_size=1, max_size=3), min_size=0, max_size=6),
)
def test_a_request_never_finds_its_own_text_in_its_fold(
    clauses: list[str], sections: list[list[str]]
) -> None:
    """Whatever the skill, each pseudo-request's source text is absent from the index
    view of its fold: the leave-out holds."""
    s = skill(" ".join(clauses))
    fields = skill_fields(
        s, tuple(BodySection(f"H{k}", " ".join(ss)) for k, ss in enumerate(sections))
    )
    for r in pseudo_requests(0, s, fields, limit=100):
        view, kept = held_out(s, fields, r.fold)
        if r.source == "description":
            assert r.text not in description_clauses(view.description)
        else:
            heading = r.source.removeprefix("section: ")
            assert all(x.heading != heading for x in kept.sections)


@settings(max_examples=60, deadline=None)
@given(
    description=st.lists(SENTENCE, min_size=1, max_size=4).map(" ".join),
    sections=st.lists(st.lists(SENTENCE, min_size=1, max_size=3), min_size=0, max_size=6),
    examples=st.lists(SENTENCE, max_size=3),
    fold=st.integers(min_value=0, max_value=FOLDS - 1),
)
def test_a_fold_view_has_the_fields_the_router_derives(
    description: str, sections: list[list[str]], examples: list[str], fold: int
) -> None:
    """The fast fold fields (terms reused per section) equal what ``skill_fields``
    derives from the view: the fold router indexes exactly the held-out skill."""
    s = skill(description, examples=tuple(examples))
    body = tuple(BodySection(f"H{k % 2}", " ".join(ss)) for k, ss in enumerate(sections))
    fields = skill_fields(s, body)
    view, kept = held_out(s, fields, fold, section_terms([fields])[0])
    assert kept == skill_fields(view, kept.sections)
