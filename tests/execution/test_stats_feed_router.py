"""T2: executions feed the per-skill stats the router's success_rate term reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from .support import ENV, EXAMPLES, make_runtime, scripted

pytest.importorskip("skillrt.routing.router")

QUERY = "write a conventional commit message for the staged changes"


def success_rate(rt, name: str) -> float:
    (cand,) = [c for c in rt.route(QUERY).candidates if c.name == name]
    return cand.score.success_rate


def test_failures_and_successes_move_the_routers_success_rate(tmp_path: Path) -> None:
    rt = make_runtime(EXAMPLES, tmp=tmp_path, routing={"embedding_backend": "none"})
    rt.env = ENV
    before = success_rate(rt, "commit-messages")
    failing = scripted(
        tmp_path,
        [{"match": "current_skill: commit-messages", "exit": 1}, {"stdout": "fallback"}],
        name="bad",
    )
    for _ in range(3):
        rt.run("$commit-messages write one", runner=failing.runner())
    after_failures = success_rate(rt, "commit-messages")
    assert after_failures < before
    good = scripted(tmp_path, [{"stdout": "feat: x"}], name="good")
    for _ in range(8):
        rt.run("$commit-messages write one", runner=good.runner())
    assert success_rate(rt, "commit-messages") > after_failures
    rt.close()
