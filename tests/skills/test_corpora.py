"""Every SKILL.md of the real catalogues in ../shared/corpora reads without a crash, and the
known-invalid ones are reported with the right reason."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from skillrt.config import DiscoveryConfig, RootConfig
from skillrt.skills.checks import validate_paths
from skillrt.skills.model import Skill
from skillrt.skills.reader import read_skill
from skillrt.skills.registry import SkillRegistry

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"

needs_corpora = pytest.mark.skipif(
    not CORPORA.is_dir(), reason=f"{CORPORA} is absent (the shared corpora are optional)"
)


def _all_skill_mds() -> list[Path]:
    return sorted(p for p in CORPORA.rglob("*") if p.name.lower() == "skill.md")


def corpus_files() -> list[Path]:
    """Every SKILL.md that makes a skill. The one SKILL.md nested in another skill's
    folder (app-builder/templates/SKILL.md) has a valid name of its own, ``templates``:
    a skill of its own too (S3), while app-builder keeps it as one of its files."""
    return _all_skill_mds()


@pytest.fixture(scope="module")
def corpus_registry() -> SkillRegistry:
    cfg = DiscoveryConfig(conventional_roots=False)
    return SkillRegistry.discover(
        cfg, project_dir=CORPORA, explicit_roots=(RootConfig(CORPORA, scope="project"),)
    )


@needs_corpora
def test_every_skill_md_reads_without_a_crash() -> None:
    files = corpus_files()
    assert len(files) >= 40
    for path in files:
        item = read_skill(path.parent, skill_file=path)
        assert item.diagnostics or isinstance(item, Skill), path


@needs_corpora
def test_the_registry_finds_every_skill_md(corpus_registry: SkillRegistry) -> None:
    listed = {s.skill_file for s in corpus_registry.skills()}
    listed |= {s.skill.skill_file for s in corpus_registry.shadowed}
    listed |= {b.skill_file for b in corpus_registry.broken}
    assert listed == set(corpus_files())
    assert corpus_registry.broken == ()
    assert [d.code for d in corpus_registry.diagnostics] == []


@needs_corpora
def test_a_skill_md_inside_a_skill_with_its_own_name_is_listed_and_stays_a_file(
    corpus_registry: SkillRegistry,
) -> None:
    from skillrt.loading import load_resource

    files = _all_skill_mds()
    folders = {p.parent for p in files}
    nested = [p for p in files if any(a in folders for a in p.parent.parents)]
    assert nested, "the corpora hold a SKILL.md nested in a skill (app-builder/templates)"
    parent = corpus_registry.get("app-builder")
    for path in nested:
        assert path.is_relative_to(parent.path)
        relative = str(path.relative_to(parent.path))
        assert load_resource(parent, relative).report.relative_path == relative
    templates = corpus_registry.get("templates")
    assert templates.skill_file == parent.path / "templates" / "SKILL.md"


@needs_corpora
def test_claude_api_description_is_too_long(corpus_registry: SkillRegistry) -> None:
    skill = corpus_registry.get("claude-api")
    assert [d.code for d in skill.diagnostics] == ["DESCRIPTION_TOO_LONG"]
    assert not skill.valid
    assert "1024" in skill.diagnostics[0].message


@needs_corpora
@pytest.mark.parametrize(
    ("folder", "name"),
    [
        ("composition-patterns", "vercel-composition-patterns"),
        ("react-best-practices", "vercel-react-best-practices"),
        ("react-native-skills", "vercel-react-native-skills"),
        ("react-view-transitions", "vercel-react-view-transitions"),
    ],
)
def test_vercel_folder_names_differ_from_skill_names(
    corpus_registry: SkillRegistry, folder: str, name: str
) -> None:
    skill = corpus_registry.get(name)
    assert skill.path.name == folder
    [diag] = skill.diagnostics
    assert (diag.code, diag.severity) == ("NAME_DIR_MISMATCH", "warning")
    assert skill.valid  # S4: a mismatch is reported, the skill still loads


@needs_corpora
def test_openai_dot_folders_are_searched(corpus_registry: SkillRegistry) -> None:
    dot_folders = {
        s.path.parent.name
        for s in [*corpus_registry.skills(), *(sh.skill for sh in corpus_registry.shadowed)]
        if "openai-skills" in s.path.parts
    }
    assert dot_folders == {".curated", ".experimental", ".system"}
    assert corpus_registry.get("skill-installer").path.parent.name == ".system"
    assert corpus_registry.get("linear").path.parent.name == ".experimental"


@needs_corpora
def test_duplicate_skill_creator_is_shadowed_not_dropped(corpus_registry: SkillRegistry) -> None:
    winner = corpus_registry.get("skill-creator")
    [shadow] = corpus_registry.shadowed
    assert shadow.skill.name == "skill-creator"
    assert {winner.path.parts[-3], shadow.skill.path.parts[-3]} == {"anthropics-skills", "skills"}
    assert shadow.shadowed_by == winner.path
    assert str(winner.path) in shadow.reason


@needs_corpora
def test_validate_walks_the_whole_tree(corpus_registry: SkillRegistry) -> None:
    results = validate_paths([CORPORA])
    by_name = {r.name: r for r in results if r.name}
    problems = {
        name: sorted(d.code for d in r.diagnostics) for name, r in by_name.items() if r.diagnostics
    }
    original = {
        n: c for n, c in problems.items() if "antigravity-skills" not in by_name[n].path.parts
    }
    assert original == {
        "claude-api": ["DESCRIPTION_TOO_LONG"],
        "vercel-composition-patterns": ["NAME_DIR_MISMATCH"],
        "vercel-react-best-practices": ["NAME_DIR_MISMATCH"],
        "vercel-react-native-skills": ["NAME_DIR_MISMATCH"],
        "vercel-react-view-transitions": ["NAME_DIR_MISMATCH"],
        "skill-creator": ["SHADOWED"],
    }
    assert len(results) == len(corpus_files())
    assert not by_name["claude-api"].valid
    # A folder named otherwise than the skill fails validate (an error there, as in
    # skills-ref); the skill still loads and is listed (S4: a warning in discovery).
    mismatched = {n for n, c in problems.items() if "NAME_DIR_MISMATCH" in c}
    assert {n for n, r in by_name.items() if not r.valid} == {"claude-api"} | mismatched
    assert all(corpus_registry.find(n) for n in mismatched)
    # antigravity-skills: extra frontmatter fields are warnings; a title-cased name with
    # spaces ("AWS Penetration Testing") is an error, reported with all three reasons.
    antigravity = {n: r for n, r in by_name.items() if "antigravity-skills" in r.path.parts}
    assert len(antigravity) >= 160
    invalid = {n for n, r in antigravity.items() if not r.valid}
    assert invalid == {n for n in antigravity if "NAME_DIR_MISMATCH" in problems.get(n, [])}
    title_cased = {n for n in antigravity if n != n.lower() or " " in n}
    assert title_cased and title_cased <= invalid
    for name in title_cased:
        assert problems[name] == ["NAME_DIR_MISMATCH", "NAME_INVALID_CHARS", "NAME_NOT_LOWERCASE"]
    codes = {c for n in antigravity for c in problems.get(n, [])}
    assert codes <= {
        "UNEXPECTED_FIELDS",
        "NAME_DIR_MISMATCH",
        "NAME_INVALID_CHARS",
        "NAME_NOT_LOWERCASE",
    }
    assert all(r.valid for n, r in by_name.items() if n not in mismatched | {"claude-api"})


@needs_corpora
def test_corpora_through_the_index_cache_match_a_fresh_parse(tmp_path: Path) -> None:
    from skillrt.store import open_location

    cfg = DiscoveryConfig(conventional_roots=False)
    roots = (RootConfig(CORPORA),)
    store = open_location(tmp_path / "state.db")
    cold = SkillRegistry.discover(cfg, project_dir=CORPORA, store=store, explicit_roots=roots)
    warm = SkillRegistry.discover(cfg, project_dir=CORPORA, store=store, explicit_roots=roots)
    assert warm.cache_misses == 0 and warm.cache_hits == len(corpus_files())
    assert warm.skills() == cold.skills()
    assert [s.skill for s in warm.shadowed] == [s.skill for s in cold.shadowed]


# The anthropics/skills repository ships a template/ folder whose SKILL.md says
# `name: template-skill`; it is not in this snapshot, so it is rebuilt here.
TEMPLATE = """---
name: template-skill
description: Replace with description of the skill and when Claude should use it.
---

# Insert instructions below
"""


def test_anthropics_template_folder_name_mismatch(
    skills_root: Path, make_skill: Callable[..., Path]
) -> None:
    make_skill("template", root=skills_root, raw=TEMPLATE)
    make_skill("pdf", root=skills_root)
    [pdf, template] = validate_paths([skills_root])  # sorted by folder
    assert template.name == "template-skill"
    assert [(d.code, d.severity) for d in template.diagnostics] == [
        ("NAME_DIR_MISMATCH", "error")  # validate fails on it; discovery only warns
    ]
    assert "Directory name 'template' must match skill name 'template-skill'" in (
        template.diagnostics[0].message
    )
    assert pdf.diagnostics == ()
