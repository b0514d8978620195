"""Discovery (S3), namespaces and collisions (S5): bounded, safe, never silent."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from skillrt.config import DiscoveryConfig, RootConfig
from skillrt.skills.discovery import Root, WalkReport, resolve_roots, walk_root
from skillrt.skills.registry import SkillRegistry

Make = Callable[..., Path]


def walk(root: Path, **config: object) -> tuple[list[str], WalkReport]:
    report = WalkReport(diagnostics=[])
    cfg = DiscoveryConfig(conventional_roots=False, **config)  # type: ignore[arg-type]
    found = [
        f.path.relative_to(root).as_posix()
        for f in walk_root(Root(root, None, "project"), cfg, report)
    ]
    return found, report


def registry(*roots: Path | RootConfig, **config: object) -> SkillRegistry:
    explicit = tuple(r if isinstance(r, RootConfig) else RootConfig(r) for r in roots)
    cfg = DiscoveryConfig(conventional_roots=False, **config)  # type: ignore[arg-type]
    return SkillRegistry.discover(cfg, project_dir=Path("/nonexistent"), explicit_roots=explicit)


def diag_codes(report: WalkReport) -> list[str]:
    return [d.code for d in report.diagnostics]


def nest(root: Path, depth: int, name: str, make_skill: Make) -> Path:
    """A skill whose folder is ``depth`` levels below ``root``."""
    parent = root
    for i in range(depth - 1):
        parent = parent / f"d{i}"
    return make_skill(name, root=parent)


def test_depth_six_is_found_and_depth_seven_is_not(skills_root: Path, make_skill: Make) -> None:
    nest(skills_root, 6, "six", make_skill)
    nest(skills_root / "other", 6, "seven", make_skill)  # 7 levels below the root
    found, _ = walk(skills_root)
    assert [Path(f).name for f in found] == ["six"]
    found, _ = walk(skills_root, max_depth=7)
    assert sorted(Path(f).name for f in found) == ["seven", "six"]


def test_root_directory_limit_stops_and_says_so(skills_root: Path, make_skill: Make) -> None:
    for i in range(30):
        (skills_root / f"empty-{i:02d}").mkdir()
    make_skill("zzz-last", root=skills_root)
    found, report = walk(skills_root, max_dirs_per_root=10)
    assert found == []
    assert diag_codes(report) == ["ROOT_DIR_LIMIT"]
    assert "max_dirs_per_root" in report.diagnostics[0].message


def test_default_limit_is_2000_directories(skills_root: Path) -> None:
    for i in range(2000):
        (skills_root / f"d{i:04d}").mkdir()
    _, report = walk(skills_root)
    assert diag_codes(report) == ["ROOT_DIR_LIMIT"]  # the root itself + 2000 > 2000
    _, report = walk(skills_root, max_dirs_per_root=2001)
    assert diag_codes(report) == []


def test_dot_folders_are_searched(skills_root: Path, make_skill: Make) -> None:
    make_skill("curated", root=skills_root / ".curated")
    make_skill("system", root=skills_root / ".system")
    found, _ = walk(skills_root)
    assert found == [".curated/curated", ".system/system"]


@pytest.mark.parametrize("skipped", [".git", "node_modules", "__pycache__", ".venv"])
def test_vcs_and_dependency_folders_are_skipped(
    skills_root: Path, make_skill: Make, skipped: str
) -> None:
    make_skill("hidden", root=skills_root / skipped)
    make_skill("visible", root=skills_root)
    found, _ = walk(skills_root)
    assert found == ["visible"]


def test_skill_folders_are_searched_for_nested_skill_files(
    skills_root: Path, make_skill: Make
) -> None:
    """The walk yields them marked as nested; the registry decides (test_nested_skills)."""
    outer = make_skill("outer", root=skills_root)
    make_skill("inner", root=outer / "references")
    report = WalkReport(diagnostics=[])
    cfg = DiscoveryConfig(conventional_roots=False)
    found = list(walk_root(Root(skills_root, None, "project"), cfg, report))
    assert [(f.path.name, f.enclosing) for f in found] == [("outer", ()), ("inner", (outer,))]
    assert report.dirs_visited == 2  # the root and outer: folders inside skills not counted


def test_lowercase_skill_md_is_found(skills_root: Path) -> None:
    d = skills_root / "lower"
    d.mkdir()
    (d / "skill.md").write_text("---\nname: lower\ndescription: d\n---\n")
    reg = registry(skills_root)
    assert reg.get("lower").skill_file == d / "skill.md"


def test_breadth_first_and_sorted(skills_root: Path, make_skill: Make) -> None:
    make_skill("b", root=skills_root)
    make_skill("a", root=skills_root / "deep")
    make_skill("c", root=skills_root)
    found, _ = walk(skills_root)
    assert found == ["b", "c", "deep/a"]


# -- symlinks -----------------------------------------------------------------------------


def test_symlink_loop_terminates(skills_root: Path, make_skill: Make) -> None:
    make_skill("real", root=skills_root / "a")
    (skills_root / "a" / "loop").symlink_to(skills_root)
    (skills_root / "a" / "self").symlink_to(skills_root / "a")
    found, report = walk(skills_root)
    assert found == ["a/real"]
    assert diag_codes(report) == []


def test_symlink_inside_the_root_is_followed_once(skills_root: Path, make_skill: Make) -> None:
    make_skill("target", root=skills_root / "store")
    (skills_root / "alias").symlink_to(skills_root / "store")
    found, _ = walk(skills_root)
    assert len(found) == 1


def test_symlink_escaping_the_root_is_not_followed(
    tmp_path: Path, skills_root: Path, make_skill: Make
) -> None:
    outside = tmp_path / "outside"
    make_skill("secret", root=outside)
    (skills_root / "escape").symlink_to(outside)
    found, report = walk(skills_root)
    assert found == []
    assert diag_codes(report) == ["SYMLINK_ESCAPE"]
    assert report.diagnostics[0].severity == "warning"


def test_skill_md_symlink_pointing_outside_is_refused(tmp_path: Path, skills_root: Path) -> None:
    (tmp_path / "elsewhere.md").write_text("---\nname: sneaky\ndescription: d\n---\n")
    d = skills_root / "sneaky"
    d.mkdir()
    (d / "SKILL.md").symlink_to(tmp_path / "elsewhere.md")
    reg = registry(skills_root)
    assert len(reg) == 0
    assert [d.code for d in reg.diagnostics] == ["SYMLINK_ESCAPE"]
    assert reg.diagnostics[0].severity == "error"


def test_skill_md_symlink_inside_the_root_is_read(skills_root: Path) -> None:
    shared = skills_root / "_shared"
    shared.mkdir()
    (shared / "linked.md").write_text("---\nname: linked\ndescription: d\n---\n")
    d = skills_root / "linked"
    d.mkdir()
    (d / "SKILL.md").symlink_to(shared / "linked.md")
    assert registry(skills_root).get("linked").description == "d"


def test_root_itself_may_be_a_symlink(tmp_path: Path, make_skill: Make) -> None:
    make_skill("via-link", root=tmp_path / "real-root")
    (tmp_path / "link-root").symlink_to(tmp_path / "real-root")
    assert registry(tmp_path / "link-root").get("via-link")


def test_missing_root_is_reported_but_conventional_ones_are_not(tmp_path: Path) -> None:
    reg = registry(tmp_path / "nope")
    assert [d.code for d in reg.diagnostics] == ["ROOT_NOT_FOUND"]
    cfg = DiscoveryConfig(home_dir=tmp_path / "home")
    reg = SkillRegistry.discover(cfg, project_dir=tmp_path)
    assert reg.diagnostics == ()


# -- namespaces ---------------------------------------------------------------------------


def test_namespace_from_root_config(skills_root: Path, make_skill: Make) -> None:
    make_skill("fix-ci", root=skills_root)
    reg = registry(RootConfig(skills_root, namespace="github"))
    skill = reg.get("github:fix-ci")
    assert skill.namespace == "github" and skill.qualified_name == "github:fix-ci"
    assert reg.get("fix-ci") is skill  # a unique bare name still resolves


def test_namespace_from_plugin_manifest(skills_root: Path, make_skill: Make) -> None:
    plugin = skills_root / "acme-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "acme"}))
    make_skill("deploy", root=plugin / "skills")
    make_skill("plain", root=skills_root)
    reg = registry(skills_root)
    assert reg.get("acme:deploy").namespace == "acme"
    assert reg.get("plain").namespace is None


def test_bad_plugin_manifest_is_reported_and_ignored(skills_root: Path, make_skill: Make) -> None:
    plugin = skills_root / "p"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "has space"}')
    make_skill("x", root=plugin)
    reg = registry(skills_root)
    assert reg.get("x").namespace is None
    assert [d.code for d in reg.diagnostics] == ["PLUGIN_MANIFEST_INVALID"]


def test_namespaces_map_applies_to_a_subfolder(skills_root: Path, make_skill: Make) -> None:
    make_skill("a", root=skills_root / "vendor" / "gh")
    make_skill("b", root=skills_root / "mine")
    reg = registry(skills_root, namespaces=((skills_root / "vendor" / "gh", "github"),))
    assert reg.get("github:a")
    assert reg.get("b").namespace is None


def test_same_name_in_two_namespaces_is_ambiguous_bare(skills_root: Path, make_skill: Make) -> None:
    from skillrt.errors import AmbiguousSkill

    make_skill("review", root=skills_root / "one")
    make_skill("review", root=skills_root / "two")
    reg = registry(
        skills_root,
        namespaces=((skills_root / "one", "one"), (skills_root / "two", "two")),
    )
    assert {s.qualified_name for s in reg.skills()} == {"one:review", "two:review"}
    with pytest.raises(AmbiguousSkill) as exc:
        reg.get("review")
    assert exc.value.context["candidates"] == ["one:review", "two:review"]


# -- collisions ---------------------------------------------------------------------------


def test_project_beats_user_and_the_loser_is_reported(tmp_path: Path, make_skill: Make) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    make_skill("deploy", description="project deploy", root=project / ".agents" / "skills")
    make_skill("deploy", description="user deploy", root=home / ".agents" / "skills")
    make_skill("only-user", root=home / ".agents" / "skills")
    cfg = DiscoveryConfig(home_dir=home)
    reg = SkillRegistry.discover(cfg, project_dir=project)
    assert reg.get("deploy").description == "project deploy"
    assert reg.get("deploy").source == "project"
    assert reg.get("only-user").source == "user"
    [shadow] = reg.shadowed
    assert shadow.skill.description == "user deploy"
    assert shadow.skill.source == "user"
    assert shadow.shadowed_by == project / ".agents" / "skills" / "deploy"
    assert "takes precedence" in shadow.reason
    entry = next(e for e in reg.list() if e.skill.name == "deploy")
    assert entry.shadowed == (shadow,)


def test_scope_order_wins_over_listing_order(tmp_path: Path, make_skill: Make) -> None:
    make_skill("x", description="user one", root=tmp_path / "u")
    make_skill("x", description="project one", root=tmp_path / "p")
    roots = (RootConfig(tmp_path / "u", scope="user"), RootConfig(tmp_path / "p"))
    ordered = resolve_roots(DiscoveryConfig(), tmp_path, roots)
    assert [r.scope for r in ordered] == ["project", "user"]
    reg = registry(*roots)
    assert reg.get("x").description == "project one"
    assert [s.skill.description for s in reg.shadowed] == ["user one"]


def test_duplicate_within_one_root_is_shadowed_not_dropped(
    skills_root: Path, make_skill: Make
) -> None:
    make_skill("dup", description="shallow", root=skills_root)
    make_skill("dup", description="deep", root=skills_root / "more")
    reg = registry(skills_root)
    assert reg.get("dup").description == "shallow"
    assert [s.skill.description for s in reg.shadowed] == ["deep"]


def test_overlapping_roots_do_not_report_a_file_against_itself(
    skills_root: Path, make_skill: Make
) -> None:
    make_skill("once", root=skills_root / "sub")
    reg = registry(skills_root, skills_root / "sub")
    assert len(reg) == 1 and reg.shadowed == ()


def test_the_same_root_listed_twice_is_walked_once(skills_root: Path, make_skill: Make) -> None:
    make_skill("x", root=skills_root)
    roots = resolve_roots(
        DiscoveryConfig(), skills_root, (RootConfig(skills_root), RootConfig(skills_root))
    )
    assert len(roots) == 1


def test_conventional_roots(tmp_path: Path, make_skill: Make) -> None:
    project, home = tmp_path / "p", tmp_path / "h"
    make_skill("a", root=project / ".agents" / "skills")
    make_skill("b", root=project / "skills")
    make_skill("c", root=project / ".claude" / "skills")
    make_skill("d", root=home / ".agents" / "skills")
    make_skill("e", root=home / ".gemini" / "skills")
    make_skill("f", root=tmp_path / "codex-home" / "skills")
    make_skill("g", root=home / ".codex" / "skills")  # stands for $CODEX_HOME/skills only
    config = DiscoveryConfig(home_dir=home, codex_home=tmp_path / "codex-home")
    reg = SkillRegistry.discover(config, project_dir=project)
    # the coding agents' own folders are searched by default (issue 27)
    assert sorted(s.name for s in reg.skills()) == ["a", "b", "c", "d", "e", "f"]
    reg = SkillRegistry.discover(replace(config, client_roots=False), project_dir=project)
    assert sorted(s.name for s in reg.skills()) == ["a", "b", "d"]
    reg = SkillRegistry.discover(
        replace(config, client_roots=False, claude_roots=True), project_dir=project
    )
    assert sorted(s.name for s in reg.skills()) == ["a", "b", "c", "d"]
    off = DiscoveryConfig(conventional_roots=False, client_roots=False)
    assert len(SkillRegistry.discover(off, project_dir=project)) == 0


# -- one bad skill fails alone --------------------------------------------------------


def test_broken_skills_are_reported_and_the_rest_loads(skills_root: Path, make_skill: Make) -> None:
    make_skill("good", root=skills_root)
    make_skill("binary", root=skills_root, raw=b"\x00\x01" * 100)
    make_skill("notutf8", root=skills_root, raw=b"---\nname: x\ndescription: \xff\n---\n")
    make_skill("nomap", root=skills_root, raw="---\n[1, 2]\n---\n")
    make_skill("nofence", root=skills_root, raw="# just markdown\n")
    make_skill(
        "huge", root=skills_root, raw="---\nname: huge\ndescription: '" + "x" * 70_000 + "'\n---\n"
    )
    (skills_root / "isdir" / "SKILL.md").mkdir(parents=True)
    reg = registry(skills_root)
    assert [s.name for s in reg.skills()] == ["good"]
    by_folder = {b.path.name: [d.code for d in b.diagnostics] for b in reg.broken}
    assert by_folder == {
        "binary": ["SKILL_FILE_BINARY"],
        "notutf8": ["SKILL_FILE_INVALID_UTF8"],
        "nomap": ["FRONTMATTER_NOT_MAPPING"],
        "nofence": ["FRONTMATTER_MISSING"],
        "huge": ["FRONTMATTER_TOO_LARGE"],
        "isdir": ["SKILL_FILE_NOT_REGULAR"],
    }
    assert all(not b.valid for b in reg.broken)


def test_unreadable_folder_is_reported(
    skills_root: Path, make_skill: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_skill("ok", root=skills_root / "fine")
    (skills_root / "locked").mkdir()
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr("skillrt.skills.discovery.os.scandir", scandir)
    found, report = walk(skills_root)
    assert found == ["fine/ok"]
    assert diag_codes(report) == ["DIR_UNREADABLE"]
