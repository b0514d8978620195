"""D5: routing rules for orchestrate (000 §8 skill-routing.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.dispatch.rules import RoutingRules
from skillrt.errors import ConfigError
from skillrt.execution.runners import DryRunRunner
from skillrt.routing.plan import ActivationPlan, PlannedSkill, RouteResult

from .support import REPO

RULES = {
    "version": 1,
    "default": {"role": "explorer", "skill": None},
    "rules": [
        {"id": "low", "priority": 1, "role": "oracle", "keywords": ["bug"]},
        {
            "id": "debug",
            "priority": 10,
            "role": "fixer",
            "skill": "systematic-debugging",
            "keywords": ["bug", "stack trace"],
            "patterns": [r"\bregress(ed|ion)\b"],
        },
        {
            "id": "both",
            "priority": 5,
            "role": "designer",
            "skill": "code-review",
            "keywords": ["review", "ui"],
            "match": "all",
        },
    ],
}


def test_priority_order_and_match_details() -> None:
    rules = RoutingRules.from_mapping(RULES)
    assert [r.id for r in rules.rules] == ["debug", "both", "low"]
    m = rules.match("I hit a BUG after the regression in 2.0")
    assert (m.rule_id, m.role, m.skill) == ("debug", "fixer", "systematic-debugging")
    assert set(m.matched) == {"bug", r"\bregress(ed|ion)\b"}


def test_keywords_are_whole_words_and_all_means_all() -> None:
    rules = RoutingRules.from_mapping(RULES)
    assert rules.match("debugging is fun") is None  # "bug" inside a word
    assert rules.match("please review this") is None  # "all" needs "ui" too
    assert rules.match("please review the ui").rule_id == "both"
    assert rules.match("a stack   trace here").rule_id == "debug"


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"rules": [{"id": "x", "role": "fixer"}]},  # no keywords or patterns
        {"rules": [{"id": "x", "role": "fixer", "patterns": ["("]}]},
        {"rules": [{"id": "x", "keywords": ["a"]}]},  # neither role nor skill
        {"rules": [{"id": "x", "role": "fixer", "keywords": ["a"], "colour": "red"}]},
        {
            "rules": [
                {"id": "x", "role": "f", "keywords": ["a"]},
                {"id": "x", "role": "f", "keywords": ["b"]},
            ]
        },
        {"rules": [{"id": "x", "role": "f", "keywords": ["a"], "priority": "high"}]},
        {"rules": [{"id": "x", "role": "f", "keywords": ["a"], "match": "some"}]},
        {"version": 2},
        {"default": {"role": "fixer", "mode": "x"}},
        {"extra": 1},
    ],
)
def test_bad_rules_are_config_errors(bad: object) -> None:
    with pytest.raises(ConfigError):
        RoutingRules.from_mapping(bad)


def test_rules_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        RoutingRules.from_file(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules: [unclosed\n")
    with pytest.raises(ConfigError):
        RoutingRules.from_file(bad)


def test_example_rules_file_loads() -> None:
    rules = RoutingRules.from_file(REPO / "examples" / "skill-routing.yaml")
    assert rules.default_role
    m = rules.match("the tests fail with a stack trace since yesterday")
    assert m is not None and m.skill == "systematic-debugging"


def test_orchestrate_uses_a_rule(examples_rt) -> None:
    out = examples_rt.orchestrate(
        "there is a bug, see the stack trace",
        RoutingRules.from_mapping(RULES),
        runner=DryRunRunner(),
    )
    assert (out.source, out.role, out.skill) == ("rule", "fixer", "systematic-debugging")
    assert out.dispatch.ok and out.dispatch.execution_mode == "root"
    assert "role: fixer" in out.dispatch.prompt


def _route(skill: str | None):
    def route(text: str, **_: object) -> RouteResult:
        skills = (PlannedSkill(skill, False, 0.9, "low", False),) if skill else ()
        plan = ActivationPlan(skills, ((skill,),) if skill else (), "low", ("ask-user",))
        return RouteResult("rt-1", text, plan, f"picked {skill}", ())

    return route


def test_orchestrate_falls_back_to_the_router_then_the_default(examples_rt, monkeypatch) -> None:
    rules = RoutingRules.from_mapping(
        {**RULES, "default": {"role": "explorer", "skill": "meeting-notes"}}
    )
    monkeypatch.setattr(examples_rt.router, "route", _route("commit-messages"))
    out = examples_rt.orchestrate("write something", rules, runner=DryRunRunner())
    assert (out.source, out.role, out.skill, out.route_id) == (
        "router",
        "explorer",
        "commit-messages",
        "rt-1",
    )
    monkeypatch.setattr(examples_rt.router, "route", _route(None))
    out = examples_rt.orchestrate("write something", rules, runner=DryRunRunner())
    assert (out.source, out.skill) == ("default", "meeting-notes")


def test_rule_without_skill_asks_the_router_for_one(examples_rt, monkeypatch) -> None:
    monkeypatch.setattr(examples_rt.router, "route", _route("code-review"))
    out = examples_rt.orchestrate(
        "a bug",
        RoutingRules.from_mapping({"rules": [{"id": "r", "role": "oracle", "keywords": ["bug"]}]}),
        runner=DryRunRunner(),
    )
    assert (out.source, out.role, out.skill) == ("rule", "oracle", "code-review")


def test_orchestrate_with_nothing_dispatches_no_skill(examples_rt, monkeypatch) -> None:
    monkeypatch.setattr(examples_rt.router, "route", _route(None))
    out = examples_rt.orchestrate("hello", RoutingRules(rules=()), runner=DryRunRunner())
    assert (out.source, out.skill) == ("none", None)
    assert out.dispatch.path == "no-skill"
