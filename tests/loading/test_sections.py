"""Headings (ATX, setext, fences), section hints, excerpts, JSON/YAML keys (L2)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from skillrt.config import LoaderLimits
from skillrt.errors import SectionNotFound
from skillrt.loading import load_resource, scan_headings
from skillrt.loading.sections import find_heading, parse_hint
from skillrt.skills.model import Skill
from skillrt.skills.reader import read_skill

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples" / "skills"


def heads(text: str) -> list[tuple[int, str]]:
    return [(h.level, h.text) for h in scan_headings(text)]


def test_atx_levels_indent_and_closing_hashes() -> None:
    text = (
        "# One\n## Two ##\n### Three ###   \n#### Four\n##### Five\n###### Six\n"
        "####### Seven is text\n   ## Indented three\n    ## Indented four is code\n"
        "#NoSpace\n#\n## Trailing#hash\n## Tab\there\n"
    )
    assert heads(text) == [
        (1, "One"),
        (2, "Two"),
        (3, "Three"),
        (4, "Four"),
        (5, "Five"),
        (6, "Six"),
        (2, "Indented three"),
        (1, ""),
        (2, "Trailing#hash"),
        (2, "Tab\there"),
    ]


def test_headings_inside_fences_are_not_headings() -> None:
    text = (
        "# Real\n"
        "```markdown\n# fake one\n## fake two\n```\n"
        "~~~\n# fake tilde\n~~~\n"
        "````\n```\n# still fenced: a shorter fence does not close\n```\n````\n"
        "~~~~ info string\n# fenced\n~~~\n# fenced: ~~~ is shorter\n~~~~~\n"
        "``` python {.class}\n# comment\n```\n"
        "## After\n"
        "   ```\n# indented fence still fences\n   ```\n"
        "## End\n"
    )
    assert heads(text) == [(1, "Real"), (2, "After"), (2, "End")]


def test_fence_of_other_char_does_not_close() -> None:
    assert heads("```\n~~~\n# in\n```\n# out\n") == [(1, "out")]


def test_backtick_info_with_backtick_is_not_a_fence() -> None:
    assert heads("``` a`b\n# Heading\n") == [(1, "Heading")]


def test_unclosed_fence_runs_to_the_end() -> None:
    assert heads("# A\n```\n# B\n## C\n") == [(1, "A")]


def test_setext_headings_and_thematic_breaks() -> None:
    text = (
        "Title\n=====\n\n"
        "Sub title\n---\n\n"
        "A paragraph\nover two lines\n---\n\n"
        "---\n\n"  # after a blank line: a thematic break
        "- list item\n---\n\n"  # under a list item: a thematic break
        "> quote\n---\n\n"
        "    indented code\n---\n\n"
        "text\n\n===\n\n"  # '===' after a blank line is just text
        "# ATX\n---\n"  # under an ATX heading: a break, not a setext heading
    )
    assert heads(text) == [
        (1, "Title"),
        (2, "Sub title"),
        (2, "A paragraph over two lines"),
        (1, "ATX"),
    ]


def test_front_matter_is_not_a_setext_heading() -> None:
    assert heads("---\ntitle: x\n---\n# Doc\n") == [(1, "Doc")]


def test_offsets_cover_the_heading_lines() -> None:
    text = "intro\n\n# A\ntext\nB\n---\nmore"
    got = scan_headings(text)
    # "text" and "B" are one paragraph, so the setext heading spans both lines.
    assert [text[h.start : h.end] for h in got] == ["# A\n", "text\nB\n---\n"]
    assert got[1].text == "text B"


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        ("## Security", (2, "Security")),
        ("Security", (None, "Security")),
        ("  ###   Injection  ", (3, "Injection")),
        ("##Security", (2, "Security")),
        ("`## Security`", (2, "Security")),
        ('"Security"', (None, "Security")),
        ("## Security ##", (2, "Security")),
        ("C# tips", (None, "C# tips")),
    ],
)
def test_parse_hint(hint: str, expected: tuple[int | None, str]) -> None:
    assert parse_hint(hint) == expected


def test_matching_is_level_aware_case_and_space_insensitive() -> None:
    text = "# Doc\n## Security\n### Injection\n## 2. Data  Model:\n### `load()` API\n"
    hs = scan_headings(text)
    assert find_heading(hs, "## Security") == 1
    assert find_heading(hs, "### Security") is None  # exact level when #'s are given
    assert find_heading(hs, "security") == 1
    assert find_heading(hs, "  INJECTION ") == 2
    assert find_heading(hs, "Data Model") == 3  # numbering, colon and spaces ignored
    assert find_heading(hs, "load() api") == 4  # inline code marks ignored
    assert find_heading(hs, "## Injection") is None


@pytest.fixture
def doc_skill(make_skill: Callable[..., Path]) -> Callable[[str | bytes, str], Skill]:
    def build(content: str | bytes, name: str = "doc.md") -> Skill:
        folder = make_skill("doc", files={f"references/{name}": content})
        skill = read_skill(folder)
        assert isinstance(skill, Skill)
        return skill

    return build


GUIDE = """# Guide

Intro.

## Setup

Install.

### Linux

apt install.

## Security

Careful.

### Injection

Escape input.

```sh
# not a heading
## nor this
```

## Appendix

End.
"""


def test_section_runs_to_the_next_heading_of_same_or_higher_level(doc_skill: Callable) -> None:
    skill = doc_skill(GUIDE)
    r = load_resource(skill, "references/doc.md", "## Security")
    assert r.text.startswith("## Security\n\nCareful.\n\n### Injection\n")
    assert "## nor this" in r.text  # fenced lines are content, not a section end
    assert r.text.endswith("```\n")
    assert "Appendix" not in r.text
    assert r.report.section == "## Security"
    assert r.report.mode == "section"
    assert r.report.truncated is False
    sub = load_resource(skill, "references/doc.md", "Injection")
    assert sub.text.startswith("### Injection") and "Appendix" not in sub.text
    last = load_resource(skill, "references/doc.md", "appendix")
    assert last.text == "## Appendix\n\nEnd.\n"


def test_crlf_file_sections(doc_skill: Callable) -> None:
    skill = doc_skill(GUIDE.replace("\n", "\r\n").encode("utf-8"))
    r = load_resource(skill, "references/doc.md", "## Setup")
    assert r.text == "## Setup\n\nInstall.\n\n### Linux\n\napt install.\n"
    assert "\r" not in r.text
    assert r.report.bytes_read == len(GUIDE.replace("\n", "\r\n").encode("utf-8"))


def test_bom_is_dropped(doc_skill: Callable) -> None:
    skill = doc_skill(b"\xef\xbb\xbf# Title\n\nText.\n")
    r = load_resource(skill, "references/doc.md", "Title")
    assert r.text == "# Title\n\nText.\n"


def test_setext_section(doc_skill: Callable) -> None:
    skill = doc_skill("Guide\n=====\n\nIntro\n\nUsage\n-----\n\nRun it.\n\nOther\n-----\n\nx\n")
    r = load_resource(skill, "references/doc.md", "## Usage")
    assert r.text == "Usage\n-----\n\nRun it.\n"


def test_section_not_found_degrades_to_the_head(doc_skill: Callable) -> None:
    skill = doc_skill(GUIDE)
    r = load_resource(skill, "references/doc.md", "## Securty")
    assert r.text == GUIDE  # the head (the whole file: it fits)
    assert r.report.section is None
    [err] = r.report.errors
    assert err["code"] == "SectionNotFound"
    assert err["section_hint"] == "## Securty"
    assert "## Security" in err["available"]
    assert err["suggestions"][0] == "## Security"
    with pytest.raises(SectionNotFound) as info:
        load_resource(skill, "references/doc.md", "## Securty", strict=True)
    assert info.value.context["skill"] == "doc"


def test_fenced_heading_is_not_found(doc_skill: Callable) -> None:
    skill = doc_skill(GUIDE)
    r = load_resource(skill, "references/doc.md", "## nor this")
    assert r.report.errors and r.report.errors[0]["code"] == "SectionNotFound"


def _big_doc(sections: int = 40, para: int = 30) -> str:
    parts = ["# Big reference\n\nOverview paragraph.\n\n"]
    for i in range(sections):
        parts.append(f"## Part {i}\n\n")
        for j in range(para):
            parts.append(
                f"Paragraph {j} of part {i}: " + "lorem ipsum dolor sit amet. " * 4 + "\n\n"
            )
    return "".join(parts)


def test_head_excerpt_is_capped_cut_at_a_boundary_with_an_outline(doc_skill: Callable) -> None:
    text = _big_doc()
    skill = doc_skill(text)
    r = load_resource(skill, "references/doc.md")
    cap = 12_000
    assert len(r.text) <= cap
    assert r.report.chars_returned == len(r.text)
    assert r.report.chars_total == len(text)
    assert r.report.truncated is True and r.report.mode == "head"
    body, note = r.text.rsplit("\n\n", 1)
    assert text.startswith(body)
    # Cut at a heading or a paragraph end, never mid-line.
    assert text[len(body) : len(body) + 2] in ("\n\n", "\n#")
    assert note.startswith("[skillrt: excerpt of references/doc.md")
    assert "## Part 39" in note or "more)" in note
    assert "section_hint" in note


def test_long_section_is_capped_and_lists_its_subsections(doc_skill: Callable) -> None:
    sub = "".join(f"### Sub {i}\n\n" + "words " * 300 + "\n\n" for i in range(20))
    skill = doc_skill("# Doc\n\n## Big\n\n" + sub + "## Next\n\nx\n")
    limits = LoaderLimits(max_resource_excerpt_chars=5000)
    r = load_resource(skill, "references/doc.md", "## Big", limits)
    assert len(r.text) <= 5000 and r.report.truncated
    assert r.text.startswith("## Big")
    assert "## Next" not in r.text.split("[skillrt:")[0]
    assert "### Sub 19" in r.text.split("[skillrt:")[1]


@pytest.mark.parametrize("cap", [50, 200, 1000, 3000])
def test_excerpt_never_exceeds_the_cap(doc_skill: Callable, cap: int) -> None:
    skill = doc_skill(_big_doc(5, 5))
    limits = LoaderLimits(max_resource_excerpt_chars=cap)
    for hint in (None, "## Part 2", "missing"):
        r = load_resource(skill, "references/doc.md", hint, limits)
        assert len(r.text) <= cap
        assert r.report.truncated == (r.report.chars_total > cap)


def test_json_top_level_key(make_skill: Callable[..., Path]) -> None:
    folder = make_skill(
        "data", files={"references/map.json": '{"alpha": [1, 2], "Beta": {"x": "é"}}'}
    )
    skill = read_skill(folder)
    assert isinstance(skill, Skill)
    r = load_resource(skill, "references/map.json", "alpha")
    assert r.text == '{\n  "alpha": [\n    1,\n    2\n  ]\n}\n'
    assert r.report.mode == "key" and r.report.section == "alpha"
    assert load_resource(skill, "references/map.json", "beta").report.section == "Beta"
    missing = load_resource(skill, "references/map.json", "gamma")
    assert missing.report.errors[0]["code"] == "SectionNotFound"
    assert missing.report.errors[0]["available"] == ["alpha", "Beta"]
    assert missing.text.startswith('{"alpha"')


def test_yaml_top_level_key(make_skill: Callable[..., Path]) -> None:
    yaml_text = (
        "# comment\nfirst:\n  a: 1\n  b: |\n    text: not a key\nsecond: 2\n"
        '"quoted key": [1]\n---\nthird: doc two\n'
    )
    folder = make_skill("data", files={"references/conf.yaml": yaml_text})
    skill = read_skill(folder)
    assert isinstance(skill, Skill)
    assert (
        load_resource(skill, "references/conf.yaml", "first").text
        == "first:\n  a: 1\n  b: |\n    text: not a key\n"
    )
    assert load_resource(skill, "references/conf.yaml", "second").text == "second: 2\n"
    assert load_resource(skill, "references/conf.yaml", "quoted key").text == '"quoted key": [1]\n'
    assert load_resource(skill, "references/conf.yaml", "third").text == "third: doc two\n"
    r = load_resource(skill, "references/conf.yaml", "text")
    assert r.report.errors[0]["code"] == "SectionNotFound"
    assert r.report.errors[0]["available"] == ["first", "second", "quoted key", "third"]


def test_examples_checklist_sections() -> None:
    skill = read_skill(EXAMPLES_DIR / "code-review")
    assert isinstance(skill, Skill)
    r = load_resource(skill, "references/checklist.md", "## Security")
    assert r.text.startswith("## Security\n\n### Injection")
    assert "### Secrets and credentials" in r.text and "## Performance" not in r.text
    r = load_resource(skill, "references/checklist.md", "Secrets and credentials")
    assert r.text.startswith("### Secrets and credentials") and "Authorisation" not in r.text
    templates = read_skill(EXAMPLES_DIR / "meeting-notes")
    assert isinstance(templates, Skill)
    # "## Decisions" only appears inside a fenced template: not a section of the file.
    r = load_resource(templates, "references/templates.md", "## Decisions")
    assert r.report.errors[0]["code"] == "SectionNotFound"
    r = load_resource(templates, "references/templates.md", "## Standup")
    assert "## Blockers" in r.text and "## One-on-one" not in r.text


def test_outline_lists_shallow_headings_first_in_document_order() -> None:
    from skillrt.loading.sections import outline

    text = "".join(f"## Topic {i}\n\n### Detail {i}\n\nx\n\n" for i in range(50))
    listed, left = outline(scan_headings(text), 200)
    assert listed.startswith("## Topic 0; ## Topic 1; ")
    assert "###" not in listed
    assert left == 100 - listed.count(";") - 1
    small, _ = outline(scan_headings("## A\n### a1\n## B\n"), 1000)
    assert small == "## A; ### a1; ## B"  # room for all: document order
