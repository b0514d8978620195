"""``skillrt route`` and ``skillrt eval``: JSON shapes, human output, errors."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from skillrt.cli.app import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
HASHING = "hashing"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if "--json" in args else out), err


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_route_json_shape_and_event(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _ = run(
        capsys,
        "route",
        "please write a commit message for my staged changes",
        "--root",
        str(EXAMPLES),
        "--backend",
        HASHING,
        "--explain",
        "--json",
    )
    assert code == 0
    assert set(data) >= {
        "route_id",
        "query",
        "plan",
        "routing_reason",
        "candidates",
        "events",
        "latency_ms",
        "config_id",
    }
    assert set(data["plan"]) >= {"skills", "groups", "estimated_cost", "fallback_path"}
    assert data["plan"]["skills"][0]["name"] == "commit-messages"
    top = data["candidates"][0]
    assert set(top) >= {"name", "sources", "forced", "score", "status", "reason", "missing"}
    assert set(top["score"]) >= {
        "intent_match",
        "trigger_match",
        "success_rate",
        "context_readiness",
        "cost_penalty",
        "conflict_penalty",
        "total",
        "signals",
    }
    assert top["score"]["signals"]  # --explain
    (event,) = data["events"]
    assert event["recorded"] is True and event["route_id"] == data["route_id"]
    db = project / ".skillrt" / "state.db"
    conn = sqlite3.connect(db)
    (n,) = conn.execute(
        "SELECT count(*) FROM route_events WHERE route_id = ?", (data["route_id"],)
    ).fetchone()
    conn.close()
    assert n == 1


def test_route_human_output_and_no_skill(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "route", "what is the capital of peru", "--root", str(EXAMPLES), "--backend", "none"
    )
    assert code == 0
    assert "Plan: no skill" in out
    assert "Reason: no skill" in out
    assert "event: route" in out and "recorded in route_events" in out


def test_route_with_catalog_history_and_candidates(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cat = write_jsonl(
        tmp_path / "skills.jsonl",
        [
            {
                "name": "pto-request",
                "description": "Request paid time off.",
                "examples": ["i want friday off"],
            },
            {"name": "weather", "description": "Weather forecast for a city."},
        ],
    )
    hist = tmp_path / "history.json"
    hist.write_text(json.dumps([{"role": "assistant", "content": "Using skill: weather"}]))
    code, data, _ = run(
        capsys,
        "route",
        "do that again for berlin",
        "--catalog",
        str(cat),
        "--root",
        str(tmp_path / "no-skills"),
        "--history",
        str(hist),
        "--backend",
        HASHING,
        "--candidates",
        "weather,pto-request",
        "--json",
    )
    assert code == 0
    weather = next(c for c in data["candidates"] if c["name"] == "weather")
    assert "rule" in weather["sources"]
    assert weather["score"]["context_readiness"] == 1.0


def test_route_bad_history_is_a_usage_error(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "h.json"
    bad.write_text("[not json")
    code, data, _ = run(capsys, "route", "x", "--history", str(bad), "--backend", "none", "--json")
    assert code == 2 and data["error"]["code"] == "E_USAGE"
    code, data, _ = run(capsys, "route", "x", "--top-k", "0", "--json")
    assert code == 2


def test_eval_json_contract(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cat = write_jsonl(
        tmp_path / "skills.jsonl",
        [
            {"name": "git-helper", "description": "Run git commands: rebase, merge, bisect."},
            {
                "name": "weather",
                "description": "Weather forecast, temperature and rain for a city.",
            },
            {"name": "invoices", "description": "Organize invoice PDF files by vendor."},
        ],
    )
    queries = write_jsonl(
        tmp_path / "queries.jsonl",
        [
            {"query": "rebase my branch with git", "expected": ["git-helper"]},
            {"query": "will it rain in paris tomorrow", "expected": ["weather"]},
            {
                "query": "sort my invoice pdfs",
                "expected": ["invoices"],
                "candidates": ["invoices", "weather"],
            },
            {"query": "write a haiku about autumn", "expected": []},
        ],
    )
    code, data, err = run(
        capsys,
        "eval",
        "--catalog",
        str(cat),
        "--queries",
        str(queries),
        "--backend",
        HASHING,
        "--json",
    )
    assert code == 0
    for key in (
        "top1",
        "recall_at_1",
        "recall_at_3",
        "recall_at_5",
        "no_skill_precision",
        "no_skill_recall",
        "no_skill_f1",
    ):
        assert data[key] is None or 0.0 <= data[key] <= 1.0, key
    assert set(data["latency_ms"]) >= {"p50", "p95"}
    assert data["counts"]["queries"] == 4 and data["counts"]["with_candidates"] == 1
    assert data["top1"] == 1.0
    assert "[" not in err  # no progress bar when stderr is not a terminal
    # Nothing was written to the project's store.
    assert not (project / ".skillrt" / "state.db").exists()

    code, out, _ = run(
        capsys,
        "eval",
        "--catalog",
        str(cat),
        "--queries",
        str(queries),
        "--backend",
        HASHING,
        "--limit",
        "2",
    )
    assert code == 0 and "top-1 (ranking)" in out and "2 queries" in out


def test_eval_over_root_folders_with_per_query_lines(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "skills"
    for name, description, body in (
        ("git-helper", "Version control help.", "## Rebasing\nInteractive rebase, bisect.\n"),
        ("weather", "Forecasts for a city.", "## Rain\nPrecipitation and temperature.\n"),
    ):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\n{body}"
        )
    queries = write_jsonl(
        tmp_path / "queries.jsonl",
        [
            {"query": "forecast for paris", "expected": ["weather"], "also_ok": ["git-helper"]},
            {"query": "write a haiku", "expected": []},
        ],
    )
    per_query = tmp_path / "out" / "per-query.jsonl"
    code, data, _ = run(
        capsys,
        "eval",
        "--root",
        str(root),
        "--queries",
        str(queries),
        "--backend",
        HASHING,
        "--per-query",
        str(per_query),
        "--json",
    )
    assert code == 0 and data["catalog_size"] == 2
    assert data["hit_at_1"] == 1.0 and data["counts"]["queries"] == 2
    lines = [json.loads(line) for line in per_query.read_text().splitlines()]
    assert [line["query"] for line in lines] == ["forecast for paris", "write a haiku"]
    assert lines[0]["also_ok"] == ["git-helper"] and lines[0]["hit_at_1"] is True
    assert lines[1]["hit_at_1"] is None and isinstance(lines[1]["latency_ms"], float)

    code, data, _ = run(capsys, "eval", "--queries", str(queries), "--json")
    assert code == 2 and data["error"]["code"] == "E_USAGE"


def test_eval_missing_file_is_an_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data, _ = run(
        capsys, "eval", "--catalog", "nope.jsonl", "--queries", "nope.jsonl", "--json"
    )
    assert code == 1 and data["error"]["code"] == "E_CATALOG"
