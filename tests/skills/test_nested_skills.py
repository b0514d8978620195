"""A SKILL.md nested in another skill's folder (issue 22, S3).

With a valid name of its own it is a skill of its own (awesome-copilot's
``qdrant-scaling/scaling-qps/SKILL.md`` is ``qdrant-scaling-qps``, and its parent's body
routes to it); without one, or with its parent's name, it stays one of the parent's
files. Either way the parent keeps the file as a resource.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillrt.config import DiscoveryConfig, RootConfig
from skillrt.loading import load_resource
from skillrt.skills.checks import validate_paths
from skillrt.skills.registry import SkillRegistry

Make = Callable[..., Path]


def discover(root: Path, **config: object) -> SkillRegistry:
    cfg = DiscoveryConfig(conventional_roots=False, **config)  # type: ignore[arg-type]
    return SkillRegistry.discover(
        cfg, project_dir=Path("/nonexistent"), explicit_roots=(RootConfig(root),)
    )


def names(registry: SkillRegistry) -> list[str]:
    return sorted(s.name for s in registry.skills())


def test_the_qdrant_layout(skills_root: Path, make_skill: Make) -> None:
    parent = make_skill(
        "qdrant-scaling",
        root=skills_root,
        body="# Scaling\n\nFor QPS read scaling-qps/SKILL.md.\n",
    )
    make_skill("qdrant-scaling-qps", root=parent, folder="scaling-qps")
    make_skill("qdrant-vertical-scaling", root=parent / "scaling-data-volume",
               folder="vertical-scaling")  # fmt: skip
    make_skill("qdrant-minimize-latency", root=parent, folder="minimize-latency",
               files={"references/notes.md": "# Notes\n"})  # fmt: skip
    registry = discover(skills_root)
    assert names(registry) == [
        "qdrant-minimize-latency",
        "qdrant-scaling",
        "qdrant-scaling-qps",
        "qdrant-vertical-scaling",
    ]
    assert registry.broken == () and registry.diagnostics == ()
    nested = registry.get("qdrant-scaling-qps")
    assert nested.path == parent / "scaling-qps"
    # the parent keeps the file as one of its resources
    loaded = load_resource(registry.get("qdrant-scaling"), "scaling-qps/SKILL.md")
    assert "qdrant-scaling-qps" in loaded.text


def test_a_nested_file_without_a_name_of_its_own_stays_a_file(
    skills_root: Path, make_skill: Make
) -> None:
    parent = make_skill("app-builder", root=skills_root)
    make_skill("x", root=parent, folder="no-frontmatter", raw="# Templates\n\nJust text.\n")
    make_skill("x", root=parent, folder="no-name", raw="---\ndescription: d\n---\nbody\n")
    make_skill("app-builder", root=parent, folder="same-name")  # the parent's own name
    make_skill("Bad Name", root=parent, folder="bad-name")  # not a valid name
    make_skill("x", root=parent, folder="broken-yaml", raw="---\nname: [oops\n---\n")
    registry = discover(skills_root)
    assert names(registry) == ["app-builder"]
    assert registry.broken == () and registry.shadowed == ()
    skill = registry.get("app-builder")
    for folder in ("no-frontmatter", "same-name", "bad-name"):
        assert load_resource(skill, f"{folder}/SKILL.md").text


def test_a_nested_skill_under_a_nested_file_is_compared_with_the_listed_parent(
    skills_root: Path, make_skill: Make
) -> None:
    outer = make_skill("outer", root=skills_root)
    middle = make_skill("x", root=outer, folder="middle", raw="no frontmatter\n")
    make_skill("outer", root=middle, folder="again")  # the listed parent's name: a file
    make_skill("inner", root=middle, folder="deep")  # a name of its own: a skill
    assert names(discover(skills_root)) == ["inner", "outer"]


def test_looking_inside_skills_is_bounded_and_said(skills_root: Path, make_skill: Make) -> None:
    """Folders inside skills have their own budget (max_dirs_per_root again): a skill
    with a huge tree cannot stall the walk, and the other skills are all still listed."""
    big = make_skill("big", root=skills_root)
    for i in range(30):
        (big / "assets" / f"d{i:02d}").mkdir(parents=True)
    for i in range(5):
        make_skill(f"plain-{i}", root=skills_root)
    registry = discover(skills_root, max_dirs_per_root=10)
    assert names(registry) == ["big", *(f"plain-{i}" for i in range(5))]
    [diag] = registry.diagnostics
    assert diag.code == "ROOT_DIR_LIMIT" and "inside skill folders" in diag.message


def test_validate_of_a_root_checks_nested_skills_and_skips_their_files(
    skills_root: Path, make_skill: Make
) -> None:
    parent = make_skill("qdrant-scaling", root=skills_root)
    make_skill("qdrant-scaling-qps", root=parent, folder="scaling-qps")
    make_skill("x", root=parent, folder="notes", raw="# Notes\n")
    results = validate_paths([skills_root])
    assert sorted(r.name or "" for r in results) == ["qdrant-scaling", "qdrant-scaling-qps"]
    by_name = {r.name: r for r in results}
    assert by_name["qdrant-scaling"].valid
    # the nested skill's folder is not its name: validate fails on it (skills-ref does)
    assert [d.code for d in by_name["qdrant-scaling-qps"].diagnostics] == ["NAME_DIR_MISMATCH"]


# -- any nesting: the listing follows the rule ---------------------------------------

KINDS = st.sampled_from(["own", "parent", "none", "invalid", "no-file"])
TREES = st.recursive(
    st.tuples(KINDS, st.just(())),
    lambda children: st.tuples(KINDS, st.lists(children, max_size=3).map(tuple)),
    max_leaves=10,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(forest=st.lists(TREES, min_size=1, max_size=3))
def test_listing_follows_the_rule_for_any_nesting(
    tmp_path_factory: pytest.TempPathFactory, forest: list[tuple[str, tuple[object, ...]]]
) -> None:
    root = tmp_path_factory.mktemp("nest")
    counter = iter(range(10_000))
    expected: set[str] = set()
    expected_broken: set[Path] = set()

    def build(folder: Path, node: tuple[str, tuple[object, ...]], parent: str | None,
              enclosed: bool) -> None:  # fmt: skip
        kind, children = node
        folder.mkdir(parents=True)
        listed = parent
        if kind != "no-file":
            own = f"skill-{next(counter)}"
            name = {"own": own, "parent": parent or own, "invalid": "Not Valid"}.get(kind)
            if name is None:
                (folder / "SKILL.md").write_text("no frontmatter\n")
            else:
                (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\n")
            if not enclosed:  # a top-level skill folder: listed, or reported as broken
                if kind == "none":
                    expected_broken.add(folder)
                else:
                    expected.add(name)  # type: ignore[arg-type]
                    listed = name
            elif kind == "own" or (kind == "parent" and parent is None):
                expected.add(name)  # type: ignore[arg-type]
                listed = name
            enclosed = True
        for i, child in enumerate(children):
            build(folder / f"c{i}", child, listed, enclosed)  # type: ignore[arg-type]

    for i, tree in enumerate(forest):
        build(root / f"t{i}", tree, None, False)
    registry = discover(root, max_depth=12)
    listed = {s.name for s in registry.skills()} | {s.skill.name for s in registry.shadowed}
    assert listed == expected
    assert {b.path for b in registry.broken} == expected_broken
