"""Level 2: the SKILL.md body, its limits and the reject / truncate policies (L1)."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillrt.config import LoaderLimits
from skillrt.errors import (
    BodyTooLarge,
    DisallowedFileType,
    FileTooLarge,
    InvalidFrontmatter,
    SkillNotFound,
)
from skillrt.loading import load_skill_body
from skillrt.loading.body import classify, count_lines, fit_body
from skillrt.skills.model import Skill
from skillrt.skills.reader import read_skill


def skill_at(folder: Path) -> Skill:
    skill = read_skill(folder)
    assert isinstance(skill, Skill), skill
    return skill


def test_frontmatter_is_stripped_and_report_filled(make_skill: Callable[..., Path]) -> None:
    folder = make_skill("plain", body="\n# Plain\n\nDo the thing.\n\n\n")
    skill = skill_at(folder)
    r = load_skill_body(skill)
    assert r.text == "# Plain\n\nDo the thing.\n"
    raw = (folder / "SKILL.md").read_bytes()
    rep = r.report
    assert rep.kind == "body" and rep.relative_path == "SKILL.md"
    assert rep.sha256 == hashlib.sha256(raw).hexdigest()
    assert rep.bytes_read == len(raw)
    assert rep.chars_returned == len(r.text) == rep.chars_total
    assert rep.truncated is False and rep.mode == "full" and rep.storage_ref is None
    assert rep.path == str((folder / "SKILL.md").resolve())
    assert rep.skill == "plain" and rep.source == "project"


def test_bom_and_crlf(make_skill: Callable[..., Path]) -> None:
    raw = "\ufeff---\r\nname: crlf\r\ndescription: Use for CRLF.\r\n---\r\n# Title\r\n\r\nText\r\n"
    folder = make_skill("crlf", raw=raw.encode("utf-8"))
    r = load_skill_body(skill_at(folder))
    assert r.text == "# Title\n\nText\n"


def test_a_skill_ref_works_too(make_skill: Callable[..., Path]) -> None:
    skill = skill_at(make_skill("byref", body="# By ref\n"))
    assert load_skill_body(skill.ref).text == "# By ref\n"


LONG_BODY = """# Deploy

Ships a service to production safely.

## Overview

What this skill does, in short.

## Background

{background}

## When to use

- a deploy is requested

## Examples

{examples}

## Steps

1. build
2. ship

## Acceptance

- health checks green

## Resources

- references/runbook.md
"""


def _long_body(n: int = 400) -> str:
    return LONG_BODY.format(
        background="\n".join(f"History line {i}." for i in range(n)),
        examples="\n".join(f"Example {i}: deploy service-{i}." for i in range(n)),
    )


def test_reject_policy_raises_with_advice(make_skill: Callable[..., Path]) -> None:
    skill = skill_at(make_skill("deploy", body=_long_body()))
    limits = LoaderLimits(body_policy="reject")
    with pytest.raises(BodyTooLarge) as info:
        load_skill_body(skill, limits)
    err = info.value
    assert err.code == "BodyTooLarge"
    assert "references/" in err.message
    assert err.context["limit_lines"] == 500 and err.context["lines"] > 500
    assert err.context["skill"] == "deploy"
    assert "references/" in err.context["advice"]


def test_truncate_keeps_key_sections_and_drops_the_rest(make_skill: Callable[..., Path]) -> None:
    skill = skill_at(make_skill("deploy", body=_long_body()))
    r = load_skill_body(skill)
    text = r.text
    assert r.report.truncated is True and r.report.mode == "fitted"
    assert count_lines(text) <= 500 and len(text) <= 40_000
    for kept in ("# Deploy", "## Overview", "## When to use", "## Steps", "## Acceptance",
                 "## Resources", "Ships a service", "health checks green"):  # fmt: skip
        assert kept in text, kept
    assert "History line" not in text and "Example 3" not in text
    assert r.report.dropped_sections == ("## Background", "## Examples")
    note = text.rstrip().splitlines()[-1]
    assert "2 sections left out (## Background, ## Examples)" in note
    assert note.endswith(f"The whole text: {skill.skill_file}]")  # where to read the rest
    # Document order is kept.
    assert text.index("## Overview") < text.index("## When to use") < text.index("## Steps")
    assert r.report.chars_total == len(skill_at_body(skill))


def skill_at_body(skill: Skill) -> str:
    assert skill.skill_file is not None
    raw = skill.skill_file.read_text(encoding="utf-8")
    return raw.split("---\n", 2)[2].strip("\n").rstrip() + "\n"


def test_truncate_by_chars(make_skill: Callable[..., Path]) -> None:
    body = _long_body(20).replace("History line", "History line " + "x" * 300)
    skill = skill_at(make_skill("deploy", body=body))
    limits = LoaderLimits(max_skill_body_chars=3000)
    r = load_skill_body(skill, limits)
    assert r.report.truncated and len(r.text) <= 3000
    assert "## Steps" in r.text and "History line" not in r.text


def test_chinese_headings(make_skill: Callable[..., Path]) -> None:
    body = (
        "# 部署\n\n概述文字。\n\n## 背景\n\n" + "很长的背景。\n" * 600
        + "## 触发条件\n\n- 用户要求部署\n\n## 操作步骤\n\n1. 构建\n\n"
        "## 验收标准\n\n- 健康检查通过\n\n## 资源索引\n\n- references/runbook.md\n"
    )  # fmt: skip
    r = load_skill_body(skill_at(make_skill("zh", body=body)))
    for kept in ("## 触发条件", "## 操作步骤", "## 验收标准", "## 资源索引", "概述文字"):
        assert kept in r.text
    assert "很长的背景" not in r.text
    assert r.report.dropped_sections == ("## 背景",)


def test_a_key_subsection_of_a_dropped_section_is_kept(make_skill: Callable[..., Path]) -> None:
    body = (
        "# Skill\n\nIntro.\n\n## Details\n\n" + "detail\n" * 600
        + "### Self-check\n\n- did it work?\n\n## Notes\n\nnote\n"
    )  # fmt: skip
    r = load_skill_body(skill_at(make_skill("nested", body=body)))
    assert "## Details\n### Self-check" in r.text.replace("\n\n", "\n")
    assert "detail\n" not in r.text
    assert "did it work?" in r.text


def test_oversized_key_sections_still_fit(make_skill: Callable[..., Path]) -> None:
    body = "# Huge\n\nIntro.\n\n## Steps\n\n" + "".join(f"{i}. step\n" for i in range(2000))
    body += "## Acceptance\n\n" + "- check\n" * 2000
    r = load_skill_body(skill_at(make_skill("huge", body=body)))
    assert count_lines(r.text) <= 500 and len(r.text) <= 40_000
    assert "## Steps" in r.text and "1999. step" not in r.text
    assert "…" in r.text


def test_no_headings_at_all(make_skill: Callable[..., Path]) -> None:
    body = "".join(f"line {i}\n" for i in range(3000))
    r = load_skill_body(skill_at(make_skill("flat", body=body)))
    assert r.report.truncated
    assert count_lines(r.text) <= 500
    assert r.text.startswith("line 0\nline 1\n")


def test_spill_of_the_full_body(make_skill: Callable[..., Path], tmp_path: Path) -> None:
    skill = skill_at(make_skill("deploy", body=_long_body()))
    spill_dir = tmp_path / ".agent" / "runs" / "r1" / "observations"
    r = load_skill_body(skill, spill_dir=spill_dir)
    assert r.report.storage_ref is not None
    stored = Path(r.report.storage_ref)
    assert stored.parent == spill_dir
    assert stored.name == f"deploy-{r.report.sha256[:8]}-SKILL.md.txt"
    assert stored.read_text(encoding="utf-8") == skill_at_body(skill)
    assert str(stored) in r.text
    assert count_lines(r.text) <= 500
    assert [p.name for p in spill_dir.iterdir()] == [stored.name]  # no temp file left
    # A body within the limits never spills.
    small = skill_at(make_skill("small", body="# Small\n"))
    assert load_skill_body(small, spill_dir=spill_dir).report.storage_ref is None


def test_skill_file_size_cap(make_skill: Callable[..., Path]) -> None:
    skill = skill_at(make_skill("big", body="x" * 5000))
    with pytest.raises(FileTooLarge) as info:
        load_skill_body(skill, LoaderLimits(max_skill_file_bytes=1000))
    assert info.value.context["limit"] == 1000
    assert info.value.context["skill"] == "big"


def test_catalogue_entry_has_no_body(make_skill: Callable[..., Path]) -> None:
    skill = dataclasses.replace(skill_at(make_skill("cat")), skill_file=None, source="catalog")
    with pytest.raises(SkillNotFound):
        load_skill_body(skill)
    # Nor resources: its "folder" is the catalogue's, not a skill's.
    from skillrt.loading import load_resource

    with pytest.raises(SkillNotFound):
        load_resource(skill, "SKILL.md")


def test_missing_skill_file_and_folder(make_skill: Callable[..., Path]) -> None:
    folder = make_skill("gone")
    skill = skill_at(folder)
    (folder / "SKILL.md").unlink()
    with pytest.raises(SkillNotFound) as info:
        load_skill_body(skill)
    assert info.value.context["skill"] == "gone"
    folder.rmdir()
    with pytest.raises(SkillNotFound):
        load_skill_body(skill)


def test_frontmatter_broken_after_discovery(make_skill: Callable[..., Path]) -> None:
    folder = make_skill("broken")
    skill = skill_at(folder)
    (folder / "SKILL.md").write_text("no frontmatter here\n", encoding="utf-8")
    with pytest.raises(InvalidFrontmatter) as info:
        load_skill_body(skill)
    assert info.value.context["skill"] == "broken"


def test_binary_skill_file(make_skill: Callable[..., Path]) -> None:
    folder = make_skill("bin")
    skill = skill_at(folder)
    (folder / "SKILL.md").write_bytes(b"---\nname: bin\n---\n\x00\x01")
    with pytest.raises(DisallowedFileType):
        load_skill_body(skill)


@pytest.mark.parametrize(
    ("heading", "kind"),
    [
        ("When to use", "triggers"),
        ("Triggers", "triggers"),
        ("Workflow", "steps"),
        ("Instructions", "steps"),
        ("Self-check", "acceptance"),
        ("Verification", "acceptance"),
        ("Reference index", "resources"),
        ("步骤", "steps"),
        ("验收", "acceptance"),
        ("触发", "triggers"),
        ("资源", "resources"),
        ("Background", None),
        ("Examples", None),
    ],
)
def test_classify(heading: str, kind: str | None) -> None:
    assert classify(heading) == kind


section = st.tuples(
    st.sampled_from(["#", "##", "###"]),
    st.sampled_from(["Steps", "Background", "Examples", "When to use", "Acceptance", "Notes"]),
    st.integers(0, 400),
    st.integers(1, 200),
)


@settings(max_examples=150, deadline=None)
@given(
    sections=st.lists(section, min_size=0, max_size=12),
    preamble=st.integers(0, 300),
    max_lines=st.integers(5, 600),
    max_chars=st.integers(300, 20_000),
)
def test_fitted_body_always_fits(
    sections: list[tuple[str, str, int, int]], preamble: int, max_lines: int, max_chars: int
) -> None:
    body = "".join(f"intro {i}\n" for i in range(preamble))
    for hashes, title, lines, width in sections:
        body += f"{hashes} {title}\n\n" + ("w" * width + "\n") * lines
    fitted = fit_body(body, max_lines, max_chars)
    assert count_lines(fitted.text) <= max_lines
    assert len(fitted.text) <= max_chars
    if count_lines(body) <= max_lines and len(body) <= max_chars:
        assert fitted.text == body and not fitted.truncated
    else:
        assert fitted.truncated


def test_a_cut_says_what_it_left_out_in_a_line_or_two(make_skill: Callable[..., Path]) -> None:
    """A 400-section skill: the note counts what went, names two, and says where the
    whole text is; it is never a list longer than what was kept (issue 27)."""
    body = "# Big\n\n## Overview\n\nWhat it is.\n\n" + "".join(
        f"## Section {i}\n\n" + "detail " * 40 + "\n\n" for i in range(400)
    )
    skill = skill_at(make_skill("big", body=body))
    limits = LoaderLimits(max_skill_body_chars=6_000, body_policy="truncate")
    text = load_skill_body(skill, limits).text
    note = text.rstrip().splitlines()[-1]
    assert note.startswith("[skillrt: body cut") and len(note) < 300
    assert "left out (## Section" in note and ", …)" in note
