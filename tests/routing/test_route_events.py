"""T1: every route records its event; recording failures never fail a route."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import warnings
from pathlib import Path

import pytest

from skillrt.config import RoutingConfig
from skillrt.routing.router import Router
from skillrt.store import Store, open_location
from skillrt.store.counters import skill_stats
from skillrt.telemetry.events import (
    TelemetryWarning,
    list_route_events,
    query_type,
    record_route_outcome,
)

from .conftest import RecordingRouter, catalogue

T1_COLUMNS = {
    "route_id",
    "ts",
    "surface",
    "config_id",
    "query_hash",
    "query_chars",
    "query_text",
    "query_type",
    "candidate_count",
    "selected_skills",
    "score_breakdown",
    "routing_reason",
    "latency_ms",
    "tokens_in",
    "tokens_out",
    "execution_result",
    "fallback_used",
    "model_id",
}


def make_router(store: Store, **changes: object) -> RecordingRouter:
    import dataclasses

    cfg = dataclasses.replace(RoutingConfig(), **changes)  # type: ignore[arg-type]
    return RecordingRouter(
        Router.from_skills(catalogue(), cfg, store=store, backend="hashing", surface="cli")
    )


def test_every_route_writes_all_t1_fields(tmp_path: Path) -> None:
    store = open_location(tmp_path / "state.db")
    r = make_router(store)
    queries = ["do a code review of my PR", "tell me a joke", "$git-helper rebase"]
    results = [r.route(q) for q in queries]
    conn = sqlite3.connect(tmp_path / "state.db")
    conn.row_factory = sqlite3.Row
    rows = {row["route_id"]: dict(row) for row in conn.execute("SELECT * FROM route_events")}
    assert set(rows) == {res.route_id for res in results}
    for res in results:
        row = rows[res.route_id]
        assert set(row) >= T1_COLUMNS
        assert row["query_hash"] == hashlib.sha256(res.query.encode()).hexdigest()
        assert row["query_text"] is None  # privacy default: no raw text
        assert row["query_chars"] == len(res.query)
        assert row["surface"] == "cli" and row["config_id"] == "default"
        assert row["query_type"] == query_type(res)
        assert row["candidate_count"] == len(res.candidates)
        assert json.loads(row["selected_skills"]) == list(res.plan.names)
        breakdown = json.loads(row["score_breakdown"])
        top = res.candidates[0]
        assert breakdown[top.name]["total"] == round(top.score.total, 4)
        assert set(breakdown[top.name]) >= {
            "intent_match",
            "trigger_match",
            "success_rate",
            "context_readiness",
            "cost_penalty",
            "conflict_penalty",
        }
        assert row["latency_ms"] >= 0
        assert row["execution_result"] == "pending" and row["fallback_used"] == 0
        assert row["model_id"].startswith("hashing")
        assert res.events[0]["recorded"] is True and res.events[0]["route_id"] == res.route_id
    assert [rows[r.route_id]["query_type"] for r in results] == ["single", "none", "explicit"]
    conn.close()
    # Per-skill route counters were updated in the same transaction.
    stats = skill_stats(store)
    assert stats["code-review"].routes >= 1 and stats["code-review"].selections == 1
    # The outcome is filled in later by dispatch.
    assert record_route_outcome(
        store, results[0].route_id, execution_result="success", tokens_in=10, tokens_out=3
    )
    event = next(e for e in list_route_events(store) if e.route_id == results[0].route_id)
    assert (event.execution_result, event.tokens_in, event.tokens_out) == ("success", 10, 3)
    assert not record_route_outcome(store, "nope", execution_result="exit")
    with pytest.raises(ValueError):
        record_route_outcome(store, results[0].route_id, execution_result="bogus")
    store.close()


def test_query_text_kept_only_when_configured(tmp_path: Path) -> None:
    store = open_location(tmp_path / "state.db")
    make_router(store, record_query_text=True).route("do a code review of my PR")
    (event,) = list_route_events(store)
    assert event.query_text == "do a code review of my PR"
    store.close()


def test_read_only_store_does_not_fail_the_route(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    open_location(path).connection()  # create and migrate
    ro = open_location(path, read_only=True)
    r = make_router(ro)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = r.route("do a code review of my PR")
    assert result.plan.names == ("code-review",)
    assert result.events[0]["recorded"] is False
    assert any(issubclass(w.category, TelemetryWarning) for w in caught)
    ro.close()


def test_broken_store_does_not_fail_the_route(tmp_path: Path) -> None:
    store = open_location(tmp_path / "state.db")
    r = make_router(store)
    store.connection().execute("DROP TABLE route_events")
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        result = r.route("do a code review of my PR")
    assert result.plan.names == ("code-review",)
    assert result.events[0]["recorded"] is False
    store.close()
