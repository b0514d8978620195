"""``stats --html``: time buckets and the page (the browser test renders it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrt.cli.app import main
from skillrt.telemetry.html import buckets, render_stats_html
from skillrt.telemetry.metrics import Latency, Metrics, RouteRecord, StatsReport

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
HOUR, DAY = 3600.0, 86400.0


def route(ts: float, selected: tuple[str, ...] = ("a",), ms: float = 5.0) -> RouteRecord:
    return RouteRecord(route_id=f"r{ts}", ts=ts, selected=selected, latency_ms=ms)


@pytest.mark.parametrize(
    ("span", "count", "label"),
    [
        (90.0, 10, "%H:%M:%S"),  # 10 s
        (40 * 60.0, 41, "%m-%d %H:%M"),  # a minute
        (5 * HOUR, 21, "%m-%d %H:%M"),  # 15 minutes
        (10 * DAY, 41, "%m-%d %H:00"),  # 6 hours
        (40 * DAY, 41, "%Y-%m-%d"),  # a day
        (200 * DAY, 29, "%Y-%m-%d"),  # a week
    ],
)
def test_the_bucket_follows_the_span(span: float, count: int, label: str) -> None:
    start = 1_700_000_000.0 - 1_700_000_000.0 % (7 * DAY)
    routes = [route(start), route(start + span / 2), route(start + span)]
    labels, groups = buckets(routes)
    assert len(labels) == len(groups) == count
    assert sum(len(g) for g in groups) == 3 and groups[0] and groups[-1]
    assert buckets([]) == ([], [])
    fmt = {"%H:%M:%S": 8, "%m-%d %H:%M": 11, "%m-%d %H:00": 11, "%Y-%m-%d": 10}[label]
    assert all(len(x) == fmt for x in labels)


def test_two_dozen_routes_in_a_minute_are_a_line_not_a_dot() -> None:
    """Issue 30.7: 24 routes drew one dot in one hourly bucket."""
    start = 1_700_000_000.0
    labels, groups = buckets([route(start + 2.5 * k) for k in range(24)])
    assert len(groups) >= 5 and all(groups)


def test_the_page_holds_every_chart() -> None:
    m = Metrics(3, 2 / 3, None, None, None, Latency(5.0, 9.0), None)
    report = StatsReport(since=None, overall=m, skills=())
    page = render_stats_html(report, [route(0.0), route(HOUR, ()), route(2 * HOUR, ms=9.0)])
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    for title in ("Routes over time", "Trigger rate over time", "Latency percentiles over time"):
        assert title in page
    assert page.count("<svg") == 3  # no skill rows: the per-skill charts say so
    assert "nothing to show" in page


def test_stats_html_from_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    state = str(tmp_path / "state")
    assert main(["route", "write a commit message", "--root", str(EXAMPLES), "--backend",
                 "hashing", "--state", state, "--no-daemon"]) == 0  # fmt: skip
    page = tmp_path / "out" / "stats.html"
    assert main(["stats", "--state", state, "--html", str(page), "--json"]) == 0
    data = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert data["overall"]["routes"] == 1
    assert page.read_text(encoding="utf-8").count("<svg") >= 4
    blocked = tmp_path / "file"
    blocked.write_text("", encoding="utf-8")
    code = main(["stats", "--state", state, "--html", str(blocked / "x.html"), "--json"])
    error = json.loads(capsys.readouterr().out)
    assert code == 2 and error["error"]["code"] == "E_USAGE"
