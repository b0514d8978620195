"""T2: executions feed the per-skill stats the router's success_rate term reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from execution.support import ENV, scripted

QUERY = "write a conventional commit message for the staged changes"


def success_rate(rt, name: str) -> float:
    router_mod = pytest.importorskip("skillrt.routing.router")
    router = router_mod.Router.from_skills(
        rt.registry.skills(), store=rt.store, backend=None, env=ENV, record=False
    )
    result = router.route(QUERY)
    (cand,) = [c for c in result.candidates if c.name == name]
    return cand.score.success_rate


def test_failures_and_successes_move_the_routers_success_rate(examples_rt, tmp_path: Path) -> None:
    before = success_rate(examples_rt, "commit-messages")
    failing = scripted(
        tmp_path,
        [{"match": "current_skill: commit-messages", "exit": 1}, {"stdout": "fallback"}],
        name="bad",
    )
    for _ in range(3):
        examples_rt.run("$commit-messages write one", runner=failing.runner(), environ=ENV)
    after_failures = success_rate(examples_rt, "commit-messages")
    assert after_failures < before
    good = scripted(tmp_path, [{"stdout": "feat: x"}], name="good")
    for _ in range(8):
        examples_rt.run("$commit-messages write one", runner=good.runner(), environ=ENV)
    assert success_rate(examples_rt, "commit-messages") > after_failures
