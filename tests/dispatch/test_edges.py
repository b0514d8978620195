"""D3: edge classification, pinned over the bundled catalogue and the superpowers corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrt.config import RootConfig
from skillrt.dispatch.edges import EdgeIndex, NameIndex, extract_edges, mask_code
from skillrt.skills.model import Skill

from .support import SHARED, make_runtime

FIXTURES = Path(__file__).parent / "fixtures"
SUPERPOWERS = SHARED / "corpora" / "obra-superpowers" / "skills"

# The catalogue author's table (examples/README.md), every row.
EXAMPLE_EDGES = {
    ("executing-plans", "systematic-debugging", "requires_now"),
    ("systematic-debugging", "test-driven-development", "requires_now"),
    ("acme:release-notes", "acme:gh-fix-ci", "requires_now"),
    ("executing-plans", "test-driven-development", "reference_only"),
    ("develop-feature", "test-driven-development", "reference_only"),
    ("writing-plans", "executing-plans", "requires_later"),
    ("executing-plans", "finishing-work", "requires_later"),
    ("develop-feature", "finishing-work", "requires_later"),
    ("finishing-work", "acme:release-notes", "requires_later"),
    ("writing-plans", "systematic-debugging", "reference_only"),
    ("executing-plans", "writing-plans", "reference_only"),
    ("test-driven-development", "systematic-debugging", "reference_only"),
    ("develop-feature", "systematic-debugging", "reference_only"),
    ("develop-feature", "executing-plans", "reference_only"),
    ("finishing-work", "commit-messages", "reference_only"),
    ("code-review", "sql-query-review", "reference_only"),
    ("sql-query-review", "code-review", "reference_only"),
    ("commit-messages", "acme:release-notes", "reference_only"),
    ("deploy-production", "acme:gh-fix-ci", "reference_only"),
    ("acme:gh-fix-ci", "systematic-debugging", "reference_only"),
    ("acme:release-notes", "commit-messages", "reference_only"),
}


def test_example_catalogue_edges_match_the_authors_table(examples_rt) -> None:
    got = {(e.source, e.target, e.type) for e in examples_rt.edges()}
    assert got == EXAMPLE_EDGES


def test_example_markers_and_lines(examples_rt) -> None:
    by = {(e.source, e.target): e for e in examples_rt.edges()}
    assert by["executing-plans", "systematic-debugging"].marker == "required-sub-skill"
    assert by["executing-plans", "test-driven-development"].marker == "required-background"
    assert by["finishing-work", "acme:release-notes"].marker == "then-use"
    assert by["writing-plans", "executing-plans"].marker == "after-completes"
    edge = by["acme:release-notes", "acme:gh-fix-ci"]
    path = examples_rt.get("acme:release-notes").skill_file
    line = path.read_text().splitlines()[edge.line - 1]
    assert "**REQUIRED SUB-SKILL:** Use acme:gh-fix-ci" in line


@pytest.fixture(scope="module")
def superpowers_index(tmp_path_factory: pytest.TempPathFactory) -> EdgeIndex:
    if not SUPERPOWERS.is_dir():
        pytest.skip("superpowers corpus not present")
    tmp = tmp_path_factory.mktemp("sp")
    rt = make_runtime(RootConfig(SUPERPOWERS, namespace="superpowers"), tmp=tmp)
    return EdgeIndex(rt.registry.skills())


def test_superpowers_edges_are_pinned(superpowers_index: EdgeIndex) -> None:
    """The corpus' edge list, generated once, reviewed line by line, then frozen."""
    frozen = json.loads((FIXTURES / "superpowers_edges.json").read_text())["edges"]
    got = sorted(
        (
            {
                "source": e.source,
                "target": e.target,
                "type": e.type,
                "marker": e.marker,
                "line": e.line,
            }
            for e in superpowers_index.all_edges()
        ),
        key=lambda d: (d["source"], d["target"]),
    )
    assert got == [{k: v for k, v in d.items() if k != "context"} for d in frozen]


def test_superpowers_every_required_sub_skill_marker_is_requires_now(
    superpowers_index: EdgeIndex,
) -> None:
    # Every **REQUIRED SUB-SKILL:** line in prose (not in a fence, not inline code).
    now = {(e.source, e.target) for e in superpowers_index.all_edges() if e.type == "requires_now"}
    assert now == {
        ("superpowers:executing-plans", "superpowers:finishing-a-development-branch"),
        ("superpowers:writing-plans", "superpowers:subagent-driven-development"),
        ("superpowers:writing-plans", "superpowers:executing-plans"),
    }
    # writing-skills shows the marker syntax as an example in inline code: not an edge.
    ws = {e.target: e for e in superpowers_index.edges("superpowers:writing-skills")}
    assert ws["superpowers:test-driven-development"].type == "reference_only"
    assert ws["superpowers:test-driven-development"].marker == "required-background"


def test_superpowers_namespace_resolves_to_bare_skills(tmp_path: Path) -> None:
    """``superpowers:x`` resolves to an un-namespaced ``x`` when that is what exists."""
    if not SUPERPOWERS.is_dir():
        pytest.skip("superpowers corpus not present")
    rt = make_runtime(SUPERPOWERS, tmp=tmp_path)
    edges = {(e.source, e.target, e.type) for e in rt.edges("executing-plans")}
    assert ("executing-plans", "finishing-a-development-branch", "requires_now") in edges


# -- unit cases ----------------------------------------------------------------------
def _skills(*names: str) -> NameIndex:
    out = []
    for n in names:
        ns, _, name = n.rpartition(":")
        out.append(
            Skill(
                name=name,
                description="d",
                path=Path("/x") / name,
                skill_file=None,
                namespace=ns or None,
            )
        )
    return NameIndex(out)


def edges_of(body: str, *names: str, source: str = "me") -> dict[str, tuple[str, str]]:
    index = _skills(source, *names)
    return {
        e.target: (e.type, e.marker)
        for e in extract_edges(source, body, lambda t: index.resolve(t, None))
    }


def test_unlabelled_mentions_are_reference_only() -> None:
    assert edges_of("See code-review for more.", "code-review") == {
        "code-review": ("reference_only", "mention")
    }


@pytest.mark.parametrize(
    "line",
    [
        "**REQUIRED SUB-SKILL:** Use code-review",
        "REQUIRED SUB-SKILL: Use code-review",
        "Required sub-skill: code-review",
        "**REQUIRED SUBSKILL:** code-review",
        "- **REQUIRED SUB SKILL:** Invoke `code-review`",
        "REQUIRED SKILL: code-review",
    ],
)
def test_required_sub_skill_variants(line: str) -> None:
    assert edges_of(line, "code-review")["code-review"][0] == "requires_now"


@pytest.mark.parametrize(
    ("text", "marker"),
    [
        ("After this skill completes, use code-review.", "after-completes"),
        ("After this completes, invoke code-review.", "after-completes"),
        ("If it passes, then use code-review to check it.", "then-use"),
        ("Once complete, use code-review.", "once-complete"),
        ("Once the plan is done, run code-review.", "once-complete"),
        ("Next, use code-review.", "next-use"),
        ("When this skill finishes, hand off to code-review.", "when-completes"),
        ("完成后使用 code-review 检查。", "zh-after"),
        ("Stop here. code-review is the next step.", "next-step"),
    ],
)
def test_requires_later_phrases(text: str, marker: str) -> None:
    assert edges_of(text, "code-review")["code-review"] == ("requires_later", marker)


def test_required_background_is_reference_only() -> None:
    got = edges_of("**REQUIRED BACKGROUND:** code-review. Read it.", "code-review")
    assert got["code-review"] == ("reference_only", "required-background")


def test_marker_scope_ends_at_the_sentence() -> None:
    body = "**REQUIRED SUB-SKILL:** Use alpha-one. Unrelated: beta-two helps.\n"
    got = edges_of(body, "alpha-one", "beta-two")
    assert got == {
        "alpha-one": ("requires_now", "required-sub-skill"),
        "beta-two": ("reference_only", "mention"),
    }


def test_marker_scope_ends_at_a_list_item() -> None:
    body = "- **REQUIRED SUB-SKILL:** Use alpha-one\n- Then look at beta-two notes\n"
    assert edges_of(body, "alpha-one", "beta-two")["beta-two"][0] == "reference_only"


def test_fenced_code_is_ignored_and_inline_code_markers_label_nothing() -> None:
    body = (
        "```markdown\n**REQUIRED SUB-SKILL:** Use alpha-one\n```\n"
        "~~~\nthen use beta-two\n~~~\n"
        "- Good: `**REQUIRED SUB-SKILL:** Use gamma-three`\n"
        "Use the `delta-four` skill when stuck.\n"
    )
    got = edges_of(body, "alpha-one", "beta-two", "gamma-three", "delta-four")
    assert got == {
        "gamma-three": ("reference_only", "mention"),
        "delta-four": ("reference_only", "mention"),
    }


def test_mask_code_keeps_offsets_and_handles_unclosed_fence() -> None:
    body = "a\n```\nx\ny\n"
    masked = mask_code(body)
    assert len(masked) == len(body)
    assert masked.count("\n") == body.count("\n")
    assert "x" not in masked


def test_paths_and_file_names_are_not_mentions() -> None:
    body = (
        "See ../code-review/checklist.md and skills/code-review and code-review.md "
        "and https://example.com/code-review or user@code-review.org.\n"
    )
    assert edges_of(body, "code-review") == {}


def test_single_word_names_need_context() -> None:
    body = "During brainstorming we talk. Use the brainstorming skill. Also `tidy`.\n"
    got = edges_of(body, "brainstorming", "tidy")
    assert got == {
        "brainstorming": ("reference_only", "mention"),
        "tidy": ("reference_only", "mention"),
    }
    assert edges_of("We were brainstorming all day.\n", "brainstorming") == {}
    assert edges_of("**REQUIRED SUB-SKILL:** Use brainstorming\n", "brainstorming") == {
        "brainstorming": ("requires_now", "required-sub-skill")
    }


def test_strongest_type_wins_and_keeps_its_line() -> None:
    body = "Mention alpha-one here.\n\nLater:\n\n**REQUIRED SUB-SKILL:** Use alpha-one\n"
    index = _skills("me", "alpha-one")
    (edge,) = extract_edges("me", body, lambda t: index.resolve(t, None), body_line=5)
    assert edge.type == "requires_now"
    assert edge.line == 5 + 4


def test_self_mentions_are_dropped_unless_labelled() -> None:
    assert edges_of("I am using the me-too skill.", source="me-too") == {}
    got = edges_of("**REQUIRED SUB-SKILL:** Use me-too", source="me-too")
    assert got == {"me-too": ("requires_now", "required-sub-skill")}


def test_or_alternatives_are_grouped() -> None:
    body = "**REQUIRED SUB-SKILL:** Use ns:alpha-one (recommended) or ns:beta-two to go on.\n"
    index = _skills("me", "ns:alpha-one", "ns:beta-two")
    edges = extract_edges("me", body, lambda t: index.resolve(t, None))
    assert [(e.target, e.alternatives) for e in edges] == [
        ("ns:alpha-one", ("ns:beta-two",)),
        ("ns:beta-two", ("ns:alpha-one",)),
    ]


def test_namespace_resolution_rules() -> None:
    index = _skills("plain-one", "acme:plain-one", "acme:only-acme", "x:dup-two", "y:dup-two")
    assert index.resolve("acme:plain-one") == "acme:plain-one"
    assert index.resolve("other:plain-one") == "plain-one"  # falls back to the bare skill
    assert index.resolve("other:only-acme") == "acme:only-acme"  # the only one there is
    assert index.resolve("plain-one", "acme") == "acme:plain-one"  # own namespace first
    assert index.resolve("plain-one", None) == "plain-one"
    assert index.resolve("dup-two") is None  # ambiguous: no guess
    assert index.resolve("dup-two", "y") == "y:dup-two"
    assert index.resolve("nope") is None


def test_catalogue_skill_has_no_edges() -> None:
    skill = Skill(name="a-b", description="d", path=Path("/nowhere"), skill_file=None)
    assert EdgeIndex([skill]).edges(skill) == ()


def test_edges_cached_by_content(make_skill, tmp_path: Path) -> None:
    make_skill("alpha-one", body="**REQUIRED SUB-SKILL:** Use beta-two\n")
    make_skill("beta-two")
    rt = make_runtime(tmp_path / "skills", tmp=tmp_path)
    index = rt.dispatch_service().edge_index()
    first = index.edges("alpha-one")
    assert index.edges("alpha-one") is first
