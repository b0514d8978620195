"""`skillrt stats` and `skillrt feedback` over real route events (router + events module)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillrt.config import RoutingConfig, TelemetryConfig
from skillrt.routing.router import Router
from skillrt.skills.reader import read_skill
from skillrt.store import open_location
from skillrt.telemetry.events import record_route, record_route_outcome
from skillrt.telemetry.tuning import GrayRelease

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path) -> tuple[int, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "skillrt", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    out = done.stdout
    try:
        data = json.loads(out) if "--json" in args else out
    except ValueError:
        data = out + done.stderr
    return done.returncode, data


@pytest.fixture
def recorded(tmp_path: Path, make_skill: Callable[..., Path]) -> dict[str, Any]:
    """Routes recorded through the real router, half under a candidate config."""
    root = tmp_path / "skills"
    dirs = [
        make_skill(
            "code-review", description="Review pull requests for bugs.", triggers=["review my pr"]
        ),
        make_skill(
            "commit-messages",
            description="Write commit messages from a diff.",
            triggers=["commit message"],
        ),
    ]
    state = tmp_path / "state"
    store = open_location(state / "state.db")
    telemetry = TelemetryConfig(candidate_config={"selection_threshold": 0.9}, candidate_share=0.5)
    gray = GrayRelease(telemetry, RoutingConfig(record_query_text=True))
    router = Router.from_skills(
        [read_skill(d) for d in dirs],
        gray.base,
        store=store,
        backend=None,
        routing_for=gray.routing_for,
    )
    ids: dict[str, list[str]] = {"review": [], "commit": [], "none": []}
    for i in range(12):
        for key, query in (
            ("review", f"please review my pr {i}"),
            ("commit", f"write a commit message {i}"),
            ("none", f"what is the weather in city {i}"),
        ):
            result = router.route(query)
            assert record_route(store, result, surface="cli", record_query_text=True)
            ids[key].append(result.route_id)
    for rid in ids["review"][:6]:
        record_route_outcome(store, rid, execution_result="exit", fallback_used=True)
    for rid in ids["commit"][:6]:
        record_route_outcome(store, rid, execution_result="success", tokens_in=100, tokens_out=20)
    store.close()
    (tmp_path / "skillrt.yaml").write_text("roots: [skills]\ntelemetry:\n  prune_min_fires: 5\n")
    return {"root": root, "state": state, "ids": ids, "cwd": tmp_path}


def test_stats_json(recorded: dict[str, Any]) -> None:
    rc, data = cli("stats", "--json", "--state", str(recorded["state"]), cwd=recorded["cwd"])
    assert rc == 0, data
    overall = data["overall"]
    assert overall["routes"] == 36
    assert 0.0 < overall["trigger_rate"] <= 1.0
    assert overall["success_rate"] == 0.5 and overall["executed"] == 12
    assert overall["fallback_rate"] == 0.5
    assert overall["avg_token_cost"] == 120.0
    assert overall["latency_ms"]["p50"] <= overall["latency_ms"]["p95"]
    assert overall["selection_precision"] is None  # no feedback yet
    names = {s["name"] for s in data["skills"]}
    assert names <= {"code-review", "commit-messages"} and names


def test_feedback_then_precision(recorded: dict[str, Any]) -> None:
    state, cwd, ids = str(recorded["state"]), recorded["cwd"], recorded["ids"]
    rc, data = cli(
        "feedback",
        ids["review"][0],
        "--correct",
        "code-review",
        "--json",
        "--state",
        state,
        cwd=cwd,
    )
    assert rc == 0 and data["correct"] == ["code-review"], data
    rc, data = cli("feedback", ids["none"][0], "--none", "--json", "--state", state, cwd=cwd)
    assert rc == 0 and data["none"] is True
    rc, data = cli("stats", "--json", "--state", state, cwd=cwd)
    assert data["overall"]["with_feedback"] == 2
    assert data["overall"]["selection_precision"] is not None
    # Validation: unknown route, unknown skill, both or neither flag.
    rc, data = cli("feedback", "no-such-route", "--none", "--json", "--state", state, cwd=cwd)
    assert rc == 1 and data["error"]["code"] == "RouteNotFound"
    rc, data = cli(
        "feedback", ids["review"][1], "--correct", "nope", "--json", "--state", state, cwd=cwd
    )
    assert rc == 1 and data["error"]["code"] == "SkillNotFound"
    rc, _ = cli(
        "feedback",
        ids["review"][1],
        "--correct",
        "code-review",
        "--none",
        "--state",
        state,
        cwd=cwd,
    )
    assert rc == 2


def test_by_config_and_since(recorded: dict[str, Any]) -> None:
    state, cwd = str(recorded["state"]), recorded["cwd"]
    rc, data = cli("stats", "--by-config", "--json", "--state", state, cwd=cwd)
    configs = data["by_config"]
    assert "default" in configs and any(c.startswith("candidate-") for c in configs)
    assert sum(m["routes"] for m in configs.values()) == 36
    rc, data = cli("stats", "--since", "1h", "--json", "--state", state, cwd=cwd)
    assert data["overall"]["routes"] == 36
    rc, data = cli("stats", "--since", "2999-01-01", "--json", "--state", state, cwd=cwd)
    assert data["overall"]["routes"] == 0
    rc, data = cli("stats", "--since", "yesterday-ish", "--json", "--state", state, cwd=cwd)
    assert rc == 2 and data["error"]["code"] == "E_USAGE"
    rc, text = cli("stats", "--by-config", "--triggers", "--state", state, cwd=cwd)
    assert rc == 0 and "By config" in text and "Per skill" in text


def test_triggers_report(recorded: dict[str, Any]) -> None:
    state, cwd = str(recorded["state"]), recorded["cwd"]
    rc, data = cli("stats", "--triggers", "--json", "--state", state, cwd=cwd)
    assert rc == 0
    by = {(t["skill"], t["trigger"]): t for t in data["triggers"]}
    review = by[("code-review", "review my pr")]  # phrase recovered from the query text
    assert review["fires"] == 12 and review["success_rate"] == 0.0
    assert review["prune"] is True and review["reasons"]
    commit = by[("commit-messages", "commit message")]
    assert commit["success_rate"] == 1.0 and commit["prune"] is False
    assert [t["prune"] for t in data["triggers"]][0] is True  # flagged first
