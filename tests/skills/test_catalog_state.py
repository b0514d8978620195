"""Enable/disable state (S6) and the Level-1 catalogue (S7)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from skillrt.config import RuntimeConfig
from skillrt.errors import AmbiguousSkill, SkillNotFound
from skillrt.runtime import SkillRuntime
from skillrt.skills.catalog import CLOSE, OPEN, render_skills
from skillrt.skills.model import Skill

Make = Callable[..., Path]


def skill(name: str, description: str = "d", namespace: str | None = None) -> Skill:
    return Skill(
        name=name,
        description=description,
        path=Path("/s") / name,
        skill_file=Path("/s") / name / "SKILL.md",
        namespace=namespace,
    )


def runtime(tmp_path: Path, root: Path) -> SkillRuntime:
    config = RuntimeConfig(project_dir=tmp_path, state_dir=tmp_path / ".skillrt")
    return SkillRuntime(config, roots=[root])


# -- enable / disable ---------------------------------------------------------------------


def test_disable_is_persisted_and_listed(
    tmp_path: Path, skills_root: Path, make_skill: Make
) -> None:
    make_skill("alpha", root=skills_root)
    make_skill("beta", root=skills_root)
    with runtime(tmp_path, skills_root) as rt:
        assert rt.disable("beta").qualified_name == "beta"
    with runtime(tmp_path, skills_root) as rt:  # a new process: state from the store
        states = {e.skill.name: e.enabled for e in rt.list()}
        assert states == {"alpha": True, "beta": False}
        assert [e.skill.name for e in rt.list(include_disabled=False)] == ["alpha"]
        assert rt.registry.is_enabled("alpha") and not rt.registry.is_enabled("beta")
        assert [s.name for s in rt.registry.enabled_skills()] == ["alpha"]
        assert rt.get("beta").name == "beta"  # disabled skills stay known
        rt.enable("beta")
    with runtime(tmp_path, skills_root) as rt:
        assert all(e.enabled for e in rt.list())


def test_disabled_skills_are_left_out_of_the_catalogue(
    tmp_path: Path, skills_root: Path, make_skill: Make
) -> None:
    make_skill("alpha", root=skills_root)
    make_skill("beta", root=skills_root)
    with runtime(tmp_path, skills_root) as rt:
        rt.disable("alpha")
        cat = rt.catalog()
    assert cat.names == ("beta",)
    assert "alpha" not in cat.text


def test_enable_unknown_or_ambiguous_name(
    tmp_path: Path, skills_root: Path, make_skill: Make
) -> None:
    make_skill("dup", root=skills_root / "a")
    make_skill("dup", root=skills_root / "b")
    config = RuntimeConfig(project_dir=tmp_path, state_dir=tmp_path / ".skillrt")
    from skillrt.config import DiscoveryConfig, RootConfig

    config = config.replace_section(
        discovery=DiscoveryConfig(
            conventional_roots=False,
            roots=(RootConfig(skills_root),),
            namespaces=((skills_root / "a", "a"), (skills_root / "b", "b")),
        )
    )
    with SkillRuntime(config) as rt:
        with pytest.raises(SkillNotFound):
            rt.disable("nope")
        with pytest.raises(AmbiguousSkill):
            rt.disable("dup")
        rt.disable("a:dup")
        assert {e.skill.qualified_name: e.enabled for e in rt.list()} == {
            "a:dup": False,
            "b:dup": True,
        }


def test_disable_model_invocation_is_listed_but_not_catalogued(
    tmp_path: Path, skills_root: Path, make_skill: Make
) -> None:
    make_skill("manual", root=skills_root, disable__model__invocation=True)
    make_skill("auto", root=skills_root)
    with runtime(tmp_path, skills_root) as rt:
        assert {e.skill.name for e in rt.list()} == {"manual", "auto"}
        assert rt.get("manual").disable_model_invocation
        assert rt.catalog().names == ("auto",)


# -- the catalogue ------------------------------------------------------------------------


def test_catalogue_shape_matches_skills_ref() -> None:
    text = render_skills([skill("pdf", "Read PDFs")]).text
    assert text == (
        "<available_skills>\n<skill>\n<name>\npdf\n</name>\n<description>\nRead PDFs\n"
        "</description>\n<location>\n/s/pdf/SKILL.md\n</location>\n</skill>\n"
        "</available_skills>"
    )
    assert render_skills([]).text == "<available_skills>\n</available_skills>"


def test_catalogue_escapes_xml() -> None:
    s = skill("x", 'Use <tags> & "quotes" </available_skills>', namespace="n")
    text = render_skills([s]).text
    assert "&lt;tags&gt; &amp; &quot;quotes&quot; &lt;/available_skills&gt;" in text
    assert text.count(CLOSE) == 1
    inner = text[len(OPEN) : -len(CLOSE)]
    assert "<tags>" not in inner
    assert html.unescape(re.findall(r"<description>\n(.*)\n</description>", text)[0]) == (
        s.description
    )


def test_catalogue_order_is_stable_by_qualified_name() -> None:
    skills = [skill("b"), skill("a", namespace="z"), skill("c"), skill("a")]
    one = render_skills(skills)
    two = render_skills(list(reversed(skills)))
    assert one.text == two.text
    assert one.names == ("a", "b", "c", "z:a")


def test_budget_drops_descriptions_never_names() -> None:
    skills = [skill(f"s{i}", "word " * 40) for i in range(10)]
    full = render_skills(skills)
    cat = render_skills(skills, budget=full.chars // 2)
    assert cat.chars <= cat.budget  # type: ignore[operator]
    assert not cat.over_budget
    assert cat.names == full.names
    assert all(f"<name>\n{n}\n</name>" in cat.text for n in cat.names)
    assert 0 < len(cat.descriptions_dropped) < 10
    kept = cat.text.count("<description>")
    assert kept == 10 - len(cat.descriptions_dropped)


def test_budget_drops_the_least_used_first() -> None:
    skills = [skill(n, "same length text " * 5) for n in ("a", "b", "c", "d")]
    full = render_skills(skills).chars
    per_description = len("<description>\n" + "same length text " * 5 + "\n</description>\n")
    usage = {"a": 50, "b": 1, "c": 20, "d": 0}
    cat = render_skills(skills, budget=full - per_description - 1, usage=usage)
    assert cat.descriptions_dropped == ("b", "d")
    cat = render_skills(skills, budget=full - 1, usage=usage)
    assert cat.descriptions_dropped == ("d",)


def test_ties_drop_the_longest_description_first() -> None:
    skills = [skill("short", "x"), skill("long", "y" * 300)]
    cat = render_skills(skills, budget=render_skills(skills).chars - 10)
    assert cat.descriptions_dropped == ("long",)
    assert "<description>\nx\n</description>" in cat.text


def test_budget_smaller_than_the_names_keeps_every_name() -> None:
    skills = [skill(f"name-{i}") for i in range(5)]
    cat = render_skills(skills, budget=10)
    assert cat.over_budget
    assert cat.names == tuple(f"name-{i}" for i in range(5))
    assert all(f"name-{i}" in cat.text for i in range(5))
    assert "<description>" not in cat.text


def test_budget_exactly_met_drops_nothing() -> None:
    skills = [skill("a", "alpha"), skill("b", "beta")]
    full = render_skills(skills)
    cat = render_skills(skills, budget=full.chars)
    assert cat.text == full.text and cat.descriptions_dropped == ()
    assert render_skills(skills, budget=full.chars - 1).descriptions_dropped


def test_registry_catalog_text(tmp_path: Path, skills_root: Path, make_skill: Make) -> None:
    make_skill("one", description="First <one>", root=skills_root)
    with runtime(tmp_path, skills_root) as rt:
        text = rt.registry.catalog(budget=10_000)
    assert "First &lt;one&gt;" in text
