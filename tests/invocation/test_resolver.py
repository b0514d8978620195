"""Resolution order, activation and the several-mentions rule (seed 004 §3, §4; I2-I5)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from skillrt.config import DiscoveryConfig, LoaderLimits, RootConfig, RuntimeConfig
from skillrt.errors import BodyTooLarge, UsageError
from skillrt.invocation import InvocationResolver
from skillrt.runtime import SkillRuntime
from skillrt.skills.model import Skill

from .conftest import RecordingLoader, make_resolver, skill

CATALOGUE = [
    skill("systematic-debugging"),
    skill("root-cause-debugging"),
    skill("test-driven-development", allowed_tools=("Read", "Bash(pytest:*)")),
    skill("systematic-debugging", "superpowers"),
    skill("gh-fix-ci", "github"),
    skill("gh-fix-ci", "gitlab"),
    skill("release-notes", "acme"),
    skill("tdd"),
    skill("tdd-extra"),
    skill("deploy", disable_model_invocation=True),
    skill("aleph"),
    skill("hidden", "acme"),
]


def resolver(disabled: tuple[str, ...] = ("aleph", "acme:hidden")) -> InvocationResolver:
    return make_resolver(CATALOGUE, disabled=disabled)


def codes(res: object) -> list[str]:
    return [d.code for d in res.diagnostics]  # type: ignore[attr-defined]


# -- §3 resolution order ----------------------------------------------------------------
def test_exact_name_wins_over_fuzzy() -> None:
    res = resolver().resolve("$tdd now")
    assert res.activated_names == ("tdd",) and res.diagnostics == ()


def test_unnamespaced_exact_wins_over_namespaced_same_name() -> None:
    res = resolver().resolve("$systematic-debugging go")
    assert res.activated_names == ("systematic-debugging",)


def test_bare_name_unique_in_one_namespace_is_exact() -> None:
    res = resolver().resolve("$release-notes for 2.0")
    assert res.activated_names == ("acme:release-notes",)
    assert res.activated[0].line == "Using skill: acme:release-notes"


def test_namespaced_exact() -> None:
    res = resolver().resolve("$superpowers:systematic-debugging go")
    assert res.activated_names == ("superpowers:systematic-debugging",)


def test_bare_name_in_two_namespaces_is_ambiguous_and_names_the_ids() -> None:
    r = resolver()
    res = r.resolve("$gh-fix-ci please")
    assert res.activated == ()
    (d,) = res.diagnostics
    assert d.code == "AMBIGUOUS"
    assert d.message == (
        "$gh-fix-ci matched 2 skills: github:gh-fix-ci, gitlab:gh-fix-ci "
        "— use $github:gh-fix-ci or $gitlab:gh-fix-ci."
    )
    assert d.suggestions == ("github:gh-fix-ci", "gitlab:gh-fix-ci")
    assert r.resolve("$gitlab:gh-fix-ci please").activated_names == ("gitlab:gh-fix-ci",)


def test_unknown_namespace_suggests_the_real_one() -> None:
    res = resolver().resolve("$vendor:release-notes")
    (d,) = res.diagnostics
    assert d.code == "FUZZY_SUGGESTION"
    assert d.message == "No exact skill 'vendor:release-notes'. Did you mean $acme:release-notes?"


def test_exact_is_case_sensitive_fuzzy_is_not() -> None:
    res = resolver().resolve("$Root-Cause-Debugging")
    assert res.activated == ()
    (d,) = res.diagnostics
    assert d.code == "FUZZY_SUGGESTION" and d.suggestions == ("root-cause-debugging",)


def test_initials_suggest() -> None:
    r = make_resolver([skill("test-driven-development"), skill("writing-plans")])
    (d,) = r.resolve("$tdd").diagnostics
    assert d.message == "No exact skill 'tdd'. Did you mean $test-driven-development?"


def test_many_fuzzy_hits_are_capped_and_say_so() -> None:
    r = make_resolver([skill(f"data-skill-{i:03d}") for i in range(120)])
    (d,) = r.resolve("$data-skill").diagnostics
    assert d.code == "AMBIGUOUS"
    assert d.message.startswith("$data-skill matched more than 50 skills: data-skill-000, ")
    assert "use a longer id such as $data-skill-000" in d.message
    (d,) = make_resolver([skill(f"x-{i}") for i in range(8)]).resolve("$x").diagnostics
    assert "matched 8 skills" in d.message and "and 2 more" in d.message


# -- enabled check ----------------------------------------------------------------------
def test_disabled_never_activates() -> None:
    loader = RecordingLoader()
    r = make_resolver(CATALOGUE, disabled=["aleph"], loader=loader)
    res = r.resolve("$aleph and nothing else")
    assert res.activated == () and loader.loaded == []
    assert codes(res) == ["DISABLED"]


def test_disabled_namespaced_names_the_qualified_id() -> None:
    (d,) = resolver().resolve("$acme:hidden").diagnostics
    assert d.message == "Skill 'acme:hidden' is disabled. Enable it with /skill enable acme:hidden."


def test_enable_state_is_read_live() -> None:
    r = resolver()
    assert r.resolve("$aleph").activated == ()
    r.registry.set_enabled("aleph", True)
    assert r.resolve("$aleph").activated_names == ("aleph",)


# -- fuzzy and ambiguity never activate -------------------------------------------------
@pytest.mark.parametrize("text", ["$debugging", "$gh-fix-ci", "$root-cause-debug", "$TDD-extra"])
def test_fuzzy_and_ambiguous_never_activate(text: str) -> None:
    loader = RecordingLoader()
    res = make_resolver(CATALOGUE, loader=loader).resolve(text + " do it")
    assert res.activated == () and loader.loaded == []
    assert codes(res)[0] in ("AMBIGUOUS", "FUZZY_SUGGESTION")
    assert res.task_text == text + " do it"


# -- surfaces ---------------------------------------------------------------------------
@pytest.mark.parametrize("surface", ["user", "palette"])
def test_disable_model_invocation_activates_for_people(surface: str) -> None:
    res = resolver().resolve("$deploy v1.2", surface=surface)  # type: ignore[arg-type]
    assert res.activated_names == ("deploy",)
    assert res.event["surface"] == surface


def test_disable_model_invocation_refused_from_model_text() -> None:
    loader = RecordingLoader()
    res = make_resolver(CATALOGUE, loader=loader).resolve("$deploy v1.2", surface="model")
    assert res.activated == () and loader.loaded == []
    (d,) = res.diagnostics
    assert d.code == "MODEL_INVOCATION_DISABLED"
    assert "disable-model-invocation" in d.message and "$deploy" in d.message


@pytest.mark.parametrize("text", ["$tdd go", "$gh-fix-ci", "$nope", "$tdd $aleph"])
def test_surface_changes_only_the_event(text: str) -> None:
    results = [resolver().resolve(text, surface=s) for s in ("user", "palette", "model")]
    shapes = {
        (r.activated_names, tuple(codes(r)), r.task_text, tuple(d.message for d in r.diagnostics))
        for r in results
    }
    assert len(shapes) == 1
    assert [r.event["surface"] for r in results] == ["user", "palette", "model"]
    assert [r.surface for r in results] == ["user", "palette", "model"]


def test_unknown_surface_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        resolver().resolve("$tdd", surface="email")  # type: ignore[arg-type]


# -- several mentions -------------------------------------------------------------------
def test_same_skill_twice_is_one_activation() -> None:
    res = resolver().resolve("$tdd first, and $tdd again")
    assert res.activated_names == ("tdd",)
    assert res.task_text == "first, and again"
    assert "MULTIPLE_MENTIONS" not in codes(res)


def test_same_skill_by_two_ids_is_one_activation() -> None:
    res = resolver().resolve("$release-notes or $acme:release-notes")
    assert res.activated_names == ("acme:release-notes",)
    assert res.task_text == "or"


def test_three_skills_choose_one() -> None:
    loader = RecordingLoader()
    res = make_resolver(CATALOGUE, loader=loader).resolve("$tdd $root-cause-debugging $deploy")
    assert res.activated == () and loader.loaded == []
    (d,) = res.diagnostics
    assert d.message == (
        "Choose one skill to lead this turn: $tdd, $root-cause-debugging or $deploy."
    )
    assert d.suggestions == ("tdd", "root-cause-debugging", "deploy")


def test_exact_plus_unresolved_mentions_still_activates() -> None:
    res = resolver().resolve("$tdd with $nope and $gh-fix-ci and $aleph")
    assert res.activated_names == ("tdd",)
    assert codes(res) == ["NO_MATCH", "AMBIGUOUS", "DISABLED"]
    assert res.task_text == "with $nope and $gh-fix-ci and $aleph"


def test_exact_plus_one_fuzzy_suggestion_is_choose_one() -> None:
    res = resolver().resolve("$tdd then $root-cause-debug")
    assert res.activated == ()
    assert codes(res) == ["FUZZY_SUGGESTION", "MULTIPLE_MENTIONS"]
    assert res.diagnostics[-1].message == (
        "Choose one skill to lead this turn: $tdd or $root-cause-debugging."
    )


def test_model_refused_skill_does_not_count_as_a_lead() -> None:
    res = resolver().resolve("$deploy then $tdd", surface="model")
    assert res.activated_names == ("tdd",)
    assert codes(res) == ["MODEL_INVOCATION_DISABLED"]


# -- globs ------------------------------------------------------------------------------
def test_glob_refused() -> None:
    loader = RecordingLoader()
    r = make_resolver(CATALOGUE, loader=loader, disabled=["acme:hidden"])
    res = r.resolve("$acme:* everything")
    assert res.activated == () and loader.loaded == []
    (d,) = res.diagnostics
    assert d.code == "GLOB_NOT_SUPPORTED"
    assert d.message == (
        "Namespace wildcards such as $acme:* are not supported; "
        "name one skill (e.g. $acme:release-notes)."
    )


def test_glob_unknown_namespace() -> None:
    (d,) = resolver().resolve("$nowhere:*").diagnostics
    assert "not supported" in d.message and "/skill list" in d.message


# -- activation (I3) --------------------------------------------------------------------
def test_activation_carries_line_body_and_tools() -> None:
    res = resolver().resolve("$test-driven-development add coverage")
    (a,) = res.activated
    assert a.line == "Using skill: test-driven-development"
    assert a.body == "BODY OF test-driven-development"
    assert a.allowed_tools == ("Read", "Bash(pytest:*)")
    assert a.allowed_tools_enforced is False
    assert a.tools_line == "Allowed tools: Read, Bash(pytest:*) (parsed, not enforced)"
    assert a.mention.raw == "$test-driven-development"
    assert res.lines == ("Using skill: test-driven-development",)


def test_load_failure_is_a_diagnostic_not_a_crash() -> None:
    def broken(s: Skill) -> object:
        raise BodyTooLarge("too big", skill=s.qualified_name)

    res = make_resolver(CATALOGUE, loader=broken).resolve("$tdd go")
    assert res.activated == ()
    (d,) = res.diagnostics
    assert d.code == "LOAD_FAILED" and d.mention_id == "tdd"
    assert "BodyTooLarge" in d.message and "too big" in d.message
    assert res.task_text == "$tdd go"


def test_os_error_while_loading_is_a_diagnostic() -> None:
    def vanished(s: Skill) -> object:
        raise FileNotFoundError(2, "No such file", "SKILL.md")

    (d,) = make_resolver(CATALOGUE, loader=vanished).resolve("$tdd").diagnostics
    assert d.code == "LOAD_FAILED"


def test_real_loader_failures(tmp_path: Path, make_skill: Callable[..., Path]) -> None:
    root = tmp_path / "skills"
    make_skill("big", root=root, body="line\n" * 50)
    gone = make_skill("gone", root=root)
    config = RuntimeConfig(
        project_dir=tmp_path,
        state_dir=tmp_path / ".skillrt",
        discovery=DiscoveryConfig(conventional_roots=False),
        limits=dataclasses.replace(LoaderLimits(), max_skill_body_lines=10, body_policy="reject"),
    )
    with SkillRuntime(config, roots=[RootConfig(root)]) as rt:
        assert len(rt.registry) == 2  # discover before the file goes away
        (gone / "SKILL.md").unlink()
        res = rt.resolve("$gone now")
        assert codes(res) == ["LOAD_FAILED"] and "SkillNotFound" in res.diagnostics[0].message
        res = rt.resolve("$big now")
        assert codes(res) == ["LOAD_FAILED"] and "BodyTooLarge" in res.diagnostics[0].message


def test_real_loader_truncates_a_long_body(tmp_path: Path, make_skill: Callable[..., Path]) -> None:
    root = tmp_path / "skills"
    body = "# Big\n\n## Overview\n\nKeep me.\n\n## Details\n\n" + "filler line\n" * 600
    make_skill("big", root=root, body=body)
    config = RuntimeConfig(
        project_dir=tmp_path,
        state_dir=tmp_path / ".skillrt",
        discovery=DiscoveryConfig(conventional_roots=False),
    )
    with SkillRuntime(config, roots=[RootConfig(root)]) as rt:
        (a,) = rt.resolve("$big go").activated
    assert a.load_report.truncated
    assert "Keep me." in a.body
    assert a.injection.startswith("[Skill: big | source=project]\n[Skill Path: ")
    assert a.load_report.storage_ref  # the full body spilled to observations/


# -- task text --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "task"),
    [
        ("$tdd fix the bug", "fix the bug"),
        ("fix the bug with $tdd", "fix the bug with"),
        ("fix the bug with $tdd.", "fix the bug with."),
        ("please use $tdd, then ship", "please use, then ship"),
        ("a $tdd b", "a b"),
        ("line one\n$tdd\nline three", "line one\n\nline three"),
        ("$tdd\n```\n  keep   $tdd   spacing\n```", "```\n  keep   $tdd   spacing\n```"),
        ("$tdd", ""),
        ("(use $tdd)", "(use)"),
    ],
)
def test_task_text(text: str, task: str) -> None:
    assert resolver().resolve(text).task_text == task


def test_event_record() -> None:
    res = resolver().resolve("$tdd and $nope", surface="palette")
    ev = res.event
    assert ev["kind"] == "invocation" and ev["surface"] == "palette"
    assert ev["mentions"] == ["tdd", "nope"] and ev["activated"] == ["tdd"]
    assert ev["diagnostics"] == ["NO_MATCH"] and ev["latency_ms"] >= 0


def test_no_mentions_is_a_plain_result() -> None:
    res = resolver().resolve("just a question about $5 and `$x`")
    assert res.activated == () and res.diagnostics == () and res.mentions == ()
    assert res.task_text == "just a question about $5 and `$x`"
