"""Body sections and routing fields (issue: route real skills on the whole skill)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillrt.routing.fields import (
    FIELD_NAMES,
    BodySection,
    BodyWarning,
    SkillFields,
    fields_key,
    load_fields,
    read_sections,
    skill_fields,
    split_sections,
)
from skillrt.skills.registry import SkillRegistry
from skillrt.store import MEMORY, open_location

from .conftest import make


def test_sections_split_at_headings_and_keep_fenced_code() -> None:
    body = (
        "Intro words.\n\n# Title\n\n## When to use\nUse it for PDFs.\n\n"
        "## Steps\n```bash\n# not a heading\npdftotext in.pdf\n```\n### Detail\nmore\n"
        "#### deep\nstays inside\n"
    )
    sections = split_sections(body)
    assert [s.heading for s in sections] == ["", "Title", "When to use", "Steps", "Detail"]
    steps = sections[3]
    assert "# not a heading" in steps.text and "pdftotext in.pdf" in steps.text
    assert "deep stays inside" in sections[4].text  # level 4 stays in its level-3 section
    assert sections[2].embed_text == "When to use: Use it for PDFs."
    assert sections[1] == BodySection("Title", "")


def test_caps_bound_sections_and_characters() -> None:
    body = "".join(f"## Part {n}\n" + "word " * 500 + "\n" for n in range(40))
    sections = split_sections(body, max_sections=5, max_chars=100)
    assert len(sections) == 5
    assert all(len(s.text) <= 100 for s in sections)
    # A section is cut at a word boundary.
    assert all(s.text.endswith("word") for s in sections)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("#` \n\tab~-=*>1."), max_size=400))
def test_any_markdown_splits_within_the_caps(body: str) -> None:
    sections = split_sections(body, max_sections=4, max_chars=50)
    assert len(sections) <= 4
    for s in sections:
        assert len(s.text) <= 50 and "\n" not in s.text and s.text == s.text.strip()


def _skill_dir(root: Path, name: str, body: str | bytes) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    head = f"---\nname: {name}\ndescription: Does {name} things.\n---\n".encode()
    (folder / "SKILL.md").write_bytes(head + (body if isinstance(body, bytes) else body.encode()))
    return folder


def _skills(root: Path) -> list:  # type: ignore[type-arg]
    from skillrt.config import DiscoveryConfig, RootConfig

    registry = SkillRegistry.discover(
        DiscoveryConfig(conventional_roots=False),
        project_dir=root,
        store=None,
        explicit_roots=(RootConfig(root, scope="flag"),),
    )
    return sorted(registry.skills(), key=lambda s: s.name)


def test_unreadable_bodies_are_reported_and_routed_without(tmp_path: Path) -> None:
    _skill_dir(tmp_path, "good", "## Usage\nConvert invoices.\n")
    _skill_dir(tmp_path, "binary", b"## Bad\n\xff\xfe\x00\x00garbage")
    skills = _skills(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sections = read_sections(skills)
    by_name = dict(zip([s.name for s in skills], sections, strict=True))
    assert by_name["good"] == (BodySection("Usage", "Convert invoices."),)
    assert by_name["binary"] == ()
    assert any(issubclass(w.category, BodyWarning) and "binary" in str(w.message) for w in caught)
    # A catalogue skill without a SKILL.md has no body at all (and no warning).
    assert read_sections([make("x", "y")]) == [()]


def test_a_symlinked_skill_file_out_of_its_folder_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("---\nname: s\ndescription: d\n---\n## Secret\nTOKEN=hunter2\n")
    folder = _skill_dir(tmp_path / "root", "linked", "## Fine\nok\n")
    skill = _skills(tmp_path / "root")[0]
    (folder / "SKILL.md").unlink()
    (folder / "SKILL.md").symlink_to(secret)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (sections,) = read_sections([skill])
    assert all("hunter2" not in s.text for s in sections)


def test_fields_are_cached_by_content_and_rederived_when_the_file_changes(
    tmp_path: Path,
) -> None:
    _skill_dir(tmp_path, "alpha", "## Usage\nFirst version.\n")
    _skill_dir(tmp_path, "beta", "## Usage\nOther.\n")
    store = open_location(tmp_path / "state.db")
    skills = _skills(tmp_path)
    calls: list[tuple[int, int]] = []
    first = load_fields(skills, store, progress=lambda _w, d, t: calls.append((d, t)))
    assert calls[-1] == (2, 2)
    assert first[0].sections[0].text == "First version."
    calls.clear()
    again = load_fields(skills, store, progress=lambda _w, d, t: calls.append((d, t)))
    assert again == first and calls == []  # every skill from the cache
    (tmp_path / "alpha" / "SKILL.md").write_text(
        "---\nname: alpha\ndescription: Does alpha things.\n---\n## Usage\nSecond, longer.\n"
    )
    changed = load_fields(skills, store, progress=lambda _w, d, t: calls.append((d, t)))
    assert calls == [(1, 1)]  # only the changed skill was read again
    assert changed[0].sections[0].text == "Second, longer." and changed[1] == first[1]
    store.close()


def test_a_corrupt_cache_row_is_a_miss() -> None:
    store = open_location(MEMORY)
    skill = make("pdf", "Read PDF files.")
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO routing_fields(key, record, created_at) VALUES (?, ?, 0)",
            (fields_key(skill), '{"sections": 7}'),
        )
    (fields,) = load_fields([skill], store)
    assert fields == skill_fields(skill, ())
    assert SkillFields.from_json("not json") is None


def test_field_terms_are_name_description_examples_body() -> None:
    skill = make("pdf-tool", "Read PDF files.", examples=["open this pdf"], triggers=["scan"])
    fields = skill_fields(skill, (BodySection("Usage", "Extract tables"),))
    assert len(fields.field_terms) == len(FIELD_NAMES)
    name, description, examples, body = fields.field_terms
    assert "pdf" in name and "tool" in name
    assert "read" in description
    assert "open" in examples and "scan" in examples
    assert "extract" in body and "usag" in body  # stemmed
    assert SkillFields.from_json(fields.to_json()) == fields


@pytest.mark.parametrize("read_bodies", [True, False])
def test_the_router_reads_bodies_unless_told_not_to(tmp_path: Path, read_bodies: bool) -> None:
    from skillrt.config import RoutingConfig
    from skillrt.routing.router import Router

    _skill_dir(tmp_path, "ledger", "## Reconciling\nMatch bank statements to the ledger.\n")
    _skill_dir(tmp_path, "poetry", "## Writing\nCompose sonnets and haiku.\n")
    config = RoutingConfig(use_stats=False, read_bodies=read_bodies)
    router = Router.from_skills(_skills(tmp_path), config, backend=None)
    result = router.route("match my bank statements")
    top = result.candidates[0].name if result.candidates else None
    assert (top == "ledger") is read_bodies


def test_an_index_build_reports_progress_and_is_incremental(tmp_path: Path) -> None:
    from skillrt.config import RoutingConfig
    from skillrt.routing.router import Router

    for n in range(3):
        _skill_dir(tmp_path / "skills", f"s{n}", f"## Part\nText {n} about topic {n}.\n")
    store = open_location(tmp_path / "state.db")
    calls: list[tuple[str, int, int]] = []

    def build() -> Router:
        return Router.from_skills(
            _skills(tmp_path / "skills"),
            RoutingConfig(use_stats=False),
            store=store,
            backend="hashing",
            progress=lambda what, done, total: calls.append((what, done, total)),
        )

    build()
    phases = {what.split(" of ")[0] for what, _, _ in calls}
    assert phases == {"reading skills", "embedding vectors"}
    assert ("reading skills", 3, 3) in calls
    embedding = [c for c in calls if c[0].startswith("embedding vectors")]
    # From 0 to the whole, in characters (a long text weighs more than a short one).
    assert embedding[0][1] == 0 and embedding[-1][1] == embedding[-1][2] > 0
    assert [c[1] for c in embedding] == sorted(c[1] for c in embedding)
    calls.clear()
    build()
    assert calls == []  # nothing new: nothing read, nothing embedded
    (tmp_path / "skills" / "s1" / "SKILL.md").write_text(
        "---\nname: s1\ndescription: Does s1 things.\n---\n## Part\nA new text entirely.\n"
    )
    build()
    assert ("reading skills", 1, 1) in calls
    # One new section: "embedding vectors of 1 text", its characters the total.
    new = [c for c in calls if c[0].startswith("embedding vectors")]
    assert new[-1][0] == "embedding vectors of 1 text"
    assert new[-1][2] == len("Part: A new text entirely.")
    store.close()


def test_explain_names_the_body_section_that_matched(tmp_path: Path) -> None:
    from skillrt.config import RoutingConfig
    from skillrt.routing.router import Router

    _skill_dir(
        tmp_path,
        "ledger",
        "## Overview\nAccounting helpers.\n\n## Bank reconciliation\n"
        "Match every bank statement line to a ledger entry and flag the differences.\n",
    )
    _skill_dir(tmp_path, "poetry", "## Writing\nCompose sonnets and haiku.\n")
    router = Router.from_skills(
        _skills(tmp_path), RoutingConfig(use_stats=False), backend="hashing"
    )
    result = router.route("match bank statement lines to ledger entries", explain=True)
    best = result.candidates[0]
    assert best.name == "ledger"
    assert best.score.matched == "section: Bank reconciliation"
    assert result.candidates[-1].score.matched  # every candidate names its best part
