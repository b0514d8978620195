"""The whole path with the real router: text -> route -> plan -> dispatch -> outcome."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.execution.runners import DryRunRunner

from .support import ENV, EXAMPLES, make_runtime, scripted

pytest.importorskip("skillrt.routing.router")


@pytest.fixture
def routed(tmp_path: Path):
    rt = make_runtime(EXAMPLES, tmp=tmp_path, routing={"embedding_backend": "none"})
    rt.env = ENV
    yield rt
    rt.close()


QUERY = "write a conventional commit message for the staged changes"


def test_router_plan_is_dispatched_and_the_outcome_recorded(routed, tmp_path: Path) -> None:
    from skillrt.telemetry.events import list_route_events

    model = scripted(
        tmp_path, [{"match": "current_skill: commit-messages", "stdout": "feat: add x"}]
    )
    result = routed.run(QUERY, runner=model.runner())
    assert result.source == "router" and result.route_id
    assert result.plan.names == ("commit-messages",)
    assert result.status == "success" and result.output == "feat: add x"
    (event,) = [e for e in list_route_events(routed.store) if e.route_id == result.route_id]
    assert event.execution_result == "success"
    assert event.fallback_used is False


def test_routed_failure_records_the_fallback(routed, tmp_path: Path) -> None:
    from skillrt.telemetry.events import list_route_events

    model = scripted(
        tmp_path, [{"match": "current_skill: commit-messages", "exit": 1}, {"stdout": "plain"}]
    )
    result = routed.run(QUERY, runner=model.runner())
    assert result.steps[0].path == "no-skill" and result.steps[0].fallback_used
    (event,) = [e for e in list_route_events(routed.store) if e.route_id == result.route_id]
    assert (event.execution_result, event.fallback_used) == ("success", True)


def test_dry_runs_leave_the_route_outcome_pending(routed) -> None:
    from skillrt.telemetry.events import list_route_events

    result = routed.run(QUERY, runner=DryRunRunner())
    (event,) = [e for e in list_route_events(routed.store) if e.route_id == result.route_id]
    assert event.execution_result == "pending"


def test_orchestrate_falls_back_to_the_real_router(routed) -> None:
    from skillrt.dispatch.rules import RoutingRules

    out = routed.orchestrate(QUERY, RoutingRules(rules=()), runner=DryRunRunner())
    assert (out.source, out.skill) == ("router", "commit-messages")
    assert out.route_id
