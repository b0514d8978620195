"""The user's explicit words: a skill's name of two words or more is a hard trigger
without the word "skill" (seed 001 §6.1), and its negation excludes it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skillrt.routing.directives import find_directives, name_key, variant_key

NAMES = [
    "systematic-debugging",
    "test-driven-development",
    "writing-plans",
    "docker",
    "acme:release-notes",
    "AWS Penetration Testing",
]
KEYS = {name_key(n): n for n in NAMES} | {name_key(n.split(":")[-1]): n for n in NAMES}
VARIANTS = {variant_key(n): n for n in NAMES if variant_key(n)}
VARIANTS |= {variant_key(n.split(":")[-1]): n for n in NAMES if variant_key(n.split(":")[-1])}


def directives(text: str, *, variants: bool = True):  # type: ignore[no-untyped-def]
    return find_directives(
        text, KEYS.get, mentions=lambda q: [], resolve_variant=VARIANTS.get if variants else None
    )


def test_a_name_of_two_words_after_a_verb_forces_its_skill() -> None:
    d = directives("use systematic debugging to find why the login test fails")
    assert d.forced == {"systematic-debugging": "use systematic debugging"}
    assert directives("do test driven development on the new date parser").forced == {
        "test-driven-development": "do test driven development"
    }
    # A close variant (the router's stemmer) and a namespaced name's bare words.
    assert "writing-plans" in directives("apply the writing plan process to the spec").forced
    assert "acme:release-notes" in directives("then run release notes for v2").forced
    assert "AWS Penetration Testing" in directives("use aws penetration testing here").forced
    # The old form still works, and only when a resolver of variants is given.
    assert not directives("use systematic debugging now", variants=False).forced
    assert "systematic-debugging" in directives("use the systematic debugging skill").forced


def test_one_word_names_questions_and_mere_mentions_force_nothing() -> None:
    assert not directives("use docker to run the tests").forced
    assert not directives("should I use test driven development here?").forced
    assert not directives("is systematic debugging worth it for flaky tests?").forced
    assert not directives("systematic debugging found nothing, fix the parser").forced
    assert not directives("use systematic tools to debug it").forced
    # A long document's "use X" is content, not the user's instruction.
    assert not directives("use systematic debugging. " + "log line\n" * 300).forced
    # "do" with an article is the everyday noun, not the process's name.
    assert not directives("do a test driven development pass").forced
    # The question is read on the sentence that names the skill, not the message's end.
    asked = "Use systematic debugging on this:\nTimeoutError at db.py:42\nwhich driver is it?"
    assert "systematic-debugging" in directives(asked).forced
    told = directives("use systematic debugging. why does it hang?")
    assert "systematic-debugging" in told.forced
    assert not directives("the login test fails. should we use systematic debugging?").forced
    assert not directives("should we use systematic debugging? the login test fails.").forced


def test_a_negated_name_is_excluded_not_forced() -> None:
    d = directives("don't use systematic debugging, just patch the parser")
    assert d.excluded == {"systematic-debugging": "use systematic debugging"}
    assert not d.forced
    both = directives("use test driven development but do not use writing plans")
    assert both.forced == {"test-driven-development": "use test driven development"}
    assert set(both.excluded) == {"writing-plans"}


def test_variant_keys() -> None:
    assert variant_key("Writing Plans") == variant_key("writing_plan") == "writ-plan"
    assert variant_key("docker") == ""
    assert variant_key("ns:PdfTool") == variant_key("ns pdf tools")


@given(st.text(max_size=300))
def test_any_text_gives_known_names_only(text: str) -> None:
    d = directives(text)
    assert set(d.forced) <= set(NAMES) and set(d.excluded) <= set(NAMES)
    assert not set(d.forced) & set(d.excluded)
