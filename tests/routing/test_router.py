"""The router end to end on a small catalogue (hashing backend: fast, deterministic)."""

from __future__ import annotations

import dataclasses
import os
import stat
from pathlib import Path

import pytest

from skillrt.config import RoutingConfig
from skillrt.routing.router import Router
from skillrt.store import MEMORY, open_location

from .conftest import RecordingRouter, SkillMaker, catalogue, make

CFG = RoutingConfig(use_stats=False)


def router(skills=None, config: RoutingConfig = CFG, **kwargs) -> Router:  # type: ignore[no-untyped-def]
    return Router.from_skills(skills or catalogue(), config, backend="hashing", **kwargs)


def cand(result, name: str):  # type: ignore[no-untyped-def]
    return next(c for c in result.candidates if c.name == name)


def test_clear_request_selects_one_skill_with_sources_and_six_terms() -> None:
    result = router().route("please do a code review of my pull request", explain=True)
    assert result.plan.names == ("code-review",)
    c = cand(result, "code-review")
    assert c.status == "selected"
    assert "rule" in c.sources and "lexical" in c.sources
    assert c.score.trigger_match == 1.0
    assert c.score.total >= 0.65
    assert {"fused", "bm25", "weighted_sum", "p_scope"} <= set(c.score.signals)
    assert result.routing_reason.startswith("selected code-review")


def test_no_skill_is_a_plan_with_its_reason() -> None:
    result = router().route("tell me a joke about penguins")
    assert result.plan.no_skill
    assert result.plan.groups == ()
    assert result.plan.estimated_cost == "none"
    assert result.plan.fallback_path == ("ask-user",)
    assert result.routing_reason.startswith("no skill")


def test_anti_trigger_is_a_strong_penalty() -> None:
    # One clause naming both: the anti-trigger "release notes" hits code-review.
    query = "review the code in this pull request for release notes"
    plain = [make(s.name, s.description) for s in catalogue()]  # no (anti-)triggers
    base = cand(router(plain).route(query), "code-review")
    hit = cand(router().route(query), "code-review")
    assert hit.score.conflict_penalty == 0.0 and base.score.conflict_penalty == 1.0
    assert hit.score.total <= 0.25 * base.score.total + 1e-3
    assert hit.status == "anti_trigger" and "release notes" in hit.reason


def test_unavailable_prerequisites_are_listed_and_never_selected(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool = bindir / "pdftotext"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    skills = [
        make(
            "invoice-organizer",
            "Organize invoice PDF files into folders by vendor and month.",
            triggers=["invoice"],
            prerequisites={"bins": ["pdftotext"], "env": ["INVOICE_TOKEN"]},
        ),
        *catalogue()[:2],
    ]
    query = "organize my invoice files"
    missing_all = router(skills, env={}, path=str(tmp_path / "empty")).route(query)
    c = cand(missing_all, "invoice-organizer")
    assert c.status == "unavailable"
    assert c.missing == ("bin:pdftotext", "env:INVOICE_TOKEN")
    assert c.score.context_readiness == 0.0
    assert "invoice-organizer" not in missing_all.plan.names
    assert "unavailable" in missing_all.routing_reason

    ok = router(skills, env={"INVOICE_TOKEN": "x"}, path=str(bindir)).route(query)
    assert ok.plan.names == ("invoice-organizer",)
    # env=None: env prerequisites cannot be judged and are not checked.
    unknown_env = router(skills, env=None, path=str(bindir)).route(query)
    assert cand(unknown_env, "invoice-organizer").missing == ()


def test_forced_skips_the_threshold() -> None:
    query = "use the weather-report skill to summarise my notes"
    result = router().route(query)
    assert "weather-report" in result.plan.names
    c = cand(result, "weather-report")
    assert c.forced and c.sources[0] == "forced"
    assert result.plan.skills[0].forced
    assert "forced" in c.reason


def test_dollar_mention_forces() -> None:
    result = router().route("$git-helper squash my last three commits")
    assert result.plan.names[0] == "git-helper"
    assert cand(result, "git-helper").forced


def test_forced_does_not_skip_safety(skill: SkillMaker) -> None:
    skills = [
        skill("deploy", "Deploy the service to production.", **{"disable-model-invocation": True}),
        skill("needs-bin", "Needs a tool.", prerequisites={"bins": ["no-such-bin-xyz"]}),
        skill("off", "A disabled skill."),
    ]
    r = router(skills, is_enabled=lambda s: s.name != "off", path=os.defpath)
    cli = r.route("use the deploy skill now", surface="cli")
    assert cli.plan.names == ("deploy",)  # the user named it on a user surface
    mcp = r.route("use the deploy skill now", surface="mcp")
    assert mcp.plan.no_skill
    assert cand(mcp, "deploy").status == "manual_only"
    assert cand(r.route("use the needs-bin skill"), "needs-bin").status == "unavailable"
    off = r.route("$off do it")
    assert off.plan.no_skill and cand(off, "off").status == "disabled"
    assert "skillrt enable off" in cand(off, "off").reason


def test_model_invocation_disabled_skill_is_never_auto_selected(skill: SkillMaker) -> None:
    skills = [
        skill(
            "deploy-production",
            "Deploy the service to production with a rollback plan.",
            triggers=["deploy to production"],
            **{"disable-model-invocation": True},
        )
    ]
    result = router(skills).route("deploy to production now")
    assert result.plan.no_skill
    assert cand(result, "deploy-production").status == "manual_only"


def test_user_exclusion_beats_everything() -> None:
    result = router().route("don't use git-helper, do a code review of the PR")
    assert cand(result, "git-helper").status == "excluded"
    assert "git-helper" not in result.plan.names
    forced_then_excluded = router().route("use the git-helper skill... no, do not use git-helper")
    assert cand(forced_then_excluded, "git-helper").status == "excluded"


def test_minimal_cover_set_two_clauses() -> None:
    result = router().route("do a code review of this PR and then write the release notes")
    assert result.plan.names == ("code-review", "release-notes")
    # code-review's anti-trigger names release-notes: they conflict, so not parallel.
    assert result.plan.groups == (("code-review",), ("release-notes",))
    assert result.plan.estimated_cost == "medium"
    assert result.plan.fallback_path[-2:] == ("no-skill", "ask-user")


def test_single_clause_selects_one_of_overlapping_skills(skill: SkillMaker) -> None:
    skills = [
        skill("review-a", "Review pull requests for bugs and security issues."),
        skill("review-b", "Review pull requests for bugs and security issues.", cost_hint="low"),
    ]
    result = router(skills).route("review my pull request for bugs and security issues")
    assert len(result.plan.names) == 1
    (chosen,) = result.plan.names
    other = "review-a" if chosen == "review-b" else "review-b"
    assert cand(result, other).status == "covered"
    assert result.plan.fallback_path[0] == other


def test_per_query_candidates_restrict_routing() -> None:
    result = router().route(
        "do a code review of my pull request", candidates=["weather-report", "git-helper"]
    )
    assert {c.name for c in result.candidates} <= {"weather-report", "git-helper"}
    assert "code-review" not in result.plan.names


def test_unknown_candidate_names_are_reported() -> None:
    result = router().route("code review please", candidates=["code-review", "nope"])
    assert "unknown candidates ignored: nope" in result.routing_reason


def test_follow_up_uses_history() -> None:
    history = [
        {"role": "user", "content": "sort these receipts"},
        {"role": "assistant", "content": "Using skill: invoice-organizer\nDone."},
    ]
    result = router().route("do that again for march", history=history)
    c = cand(result, "invoice-organizer")
    assert "rule" in c.sources
    assert c.score.context_readiness == 1.0
    without = router().route("do that again for march")
    assert all(c.name != "invoice-organizer" or "rule" not in c.sources for c in without.candidates)


def test_lexical_only_mode_routes() -> None:
    r = Router.from_skills(catalogue(), CFG, backend=None)
    result = r.route("rebase my branch with git and fix merge conflicts")
    assert result.plan.names == ("git-helper",)
    assert r.index.semantic is None


def test_weights_are_configurable() -> None:
    heavy = dataclasses.replace(CFG, weights=dataclasses.replace(CFG.weights, trigger_match=0.0))
    q = "git"
    with_trigger = cand(router().route(q), "git-helper").score.total
    without = cand(router(config=heavy).route(q), "git-helper").score.total
    assert with_trigger > without


def test_route_records_nothing_without_store() -> None:
    result = RecordingRouter(Router.from_skills(catalogue(), CFG, backend="hashing")).route(
        "code review"
    )
    assert result.events and result.events[0]["recorded"] is False


def test_the_router_itself_never_records() -> None:
    store = open_location(MEMORY)
    result = router(store=store).route("code review my PR")
    assert result.events == ()
    assert store.connection().execute("SELECT COUNT(*) FROM route_events").fetchone()[0] == 0
    result = RecordingRouter(router(store=store)).route("code review my PR")
    assert result.events[0]["recorded"] is True
    store.close()


#: Two skills fit "rebase my git branch" without a trigger; branch-sync ranks second.
_REBASE = [
    make("rebase-helper", "Rebase a git branch onto main and resolve rebase conflicts."),
    make("branch-sync", "Sync a git branch with upstream by rebase or merge."),
]


@pytest.mark.parametrize(
    ("config_k", "top_k", "outside"),
    [(3, 1, True), (1, 2, False), (1, None, True), (3, None, False), (3, 10, False)],
)
def test_top_k_bounds_selection_not_ranking(
    config_k: int, top_k: int | None, outside: bool
) -> None:
    # A trigger selects whatever top_k is.
    assert router().route("git rebase", top_k=top_k).plan.names == ("git-helper",)
    # Without one, only the semantic top-k may be selected: branch-sync passes the
    # threshold but is second, so top_k (else the config's semantic_top_k) decides.
    cfg = dataclasses.replace(CFG, selection_threshold=0.3, semantic_top_k=config_k)
    r = router(catalogue() + _REBASE, cfg)
    result = r.route("rebase my git branch", top_k=top_k)
    second = cand(result, "branch-sync")
    assert (second.reason == "outside the semantic top-k") is outside, second
    assert second.status == ("below_threshold" if outside else "covered")
    assert result.plan.names == ("rebase-helper",)
    # The ranking and the scores never depend on it.
    widest = r.route("rebase my git branch", top_k=len(_REBASE) + 5)
    assert [(c.name, c.score.total) for c in result.candidates] == [
        (c.name, c.score.total) for c in widest.candidates
    ]


@pytest.mark.parametrize(
    "query",
    ["", "   ", "the and of", "\x00\x01", "$", "use the  skill", "x" * 100_000, "发票" * 500],
)
def test_odd_queries_route_without_error(query: str) -> None:
    result = router().route(query)
    assert result.query == query
    assert result.routing_reason
    assert all(0.0 <= c.score.total <= 1.0 for c in result.candidates)


def test_empty_catalogue_gives_no_skill() -> None:
    for backend in ("hashing", None):
        r = Router.from_skills([], CFG, backend=backend)
        result = r.route("code review")
        assert result.plan.no_skill and result.candidates == ()
        assert "no candidate was recalled" in result.routing_reason


def test_stats_a_store_cannot_give_are_skipped_but_a_bug_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import skillrt.store.counters as stats
    from skillrt.errors import StoreUnavailable
    from skillrt.telemetry.events import TelemetryWarning

    r = router(config=RoutingConfig(use_stats=True), store=open_location(MEMORY))

    def unreachable(*_: object) -> object:
        raise StoreUnavailable("the server went away", retryable=True)

    monkeypatch.setattr(stats, "skill_stats", unreachable)
    with pytest.warns(TelemetryWarning, match="skill stats unavailable"):
        assert r.route("please do a code review").plan.names == ("code-review",)

    def bug(*_: object) -> object:
        raise TypeError("a bug in the stats code")

    monkeypatch.setattr(stats, "skill_stats", bug)
    with pytest.raises(TypeError, match="a bug"):
        r.route("please do a code review")
