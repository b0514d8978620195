"""The HTML reports in a real headless Chromium: they render, log no error, fetch
nothing, and the screenshot is not blank (``doctor --html``, ``stats --html``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.chromium import Chromium, chromium_path

from skillrt.cli.app import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    executable = chromium_path()
    if executable is None:
        reason = "no Chromium on PATH (`.ci/run` installs the distribution's `chromium`)"
        if os.environ.get("SKILLRT_BROWSER_REQUIRED"):
            pytest.fail(reason)
        pytest.skip(reason)
    with Chromium(executable, timeout=90) as b:
        yield b


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


SECTIONS = (
    "document.querySelectorAll('section').length",
    "document.querySelectorAll('svg').length",
    "document.title",
    "document.body.innerText.length",
)


def check_page(browser: Chromium, page: Path, title: str, min_svgs: int) -> None:
    report = browser.load(
        page.as_uri(), dict(zip(("sections", "svgs", "title", "text"), SECTIONS, strict=True))
    )
    assert report.console_errors == [] and report.exceptions == [] and report.log_errors == []
    assert report.requests == [page.as_uri()]  # the page itself, nothing else
    assert report.evaluated["title"] == title
    assert report.evaluated["svgs"] >= min_svgs and report.evaluated["sections"] >= 4
    assert report.evaluated["text"] > 500
    assert browser.ink(report.screenshot) > 0.05


def test_doctor_report_renders(
    browser: Chromium, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = project / "doctor.html"
    queries = project / "q.jsonl"
    queries.write_text(
        '{"query": "write a commit message for my changes", "expected": ["commit-messages"]}\n'
        '{"query": "review this sql query for injection", "expected": ["sql-query-review"]}\n',
        encoding="utf-8",
    )
    state = str(project / "state")
    code = main(["doctor", "--root", str(EXAMPLES), "--backend", "hashing", "--state", state,
                 "--queries", str(queries), "--html", str(page)])  # fmt: skip
    capsys.readouterr()
    assert code == 0
    check_page(browser, page, "skillrt doctor", min_svgs=3)


def test_stats_report_renders(
    browser: Chromium, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = str(project / "state")
    for query in ("write a commit message", "review my sql query", "organise my invoices"):
        assert main(["route", query, "--root", str(EXAMPLES), "--backend", "hashing",
                     "--state", state, "--no-daemon"]) == 0  # fmt: skip
    page = project / "stats.html"
    assert main(["stats", "--state", state, "--root", str(EXAMPLES), "--html", str(page)]) == 0
    capsys.readouterr()
    check_page(browser, page, "skillrt stats", min_svgs=4)


def test_the_checks_catch_errors_and_blank_pages(browser: Chromium, tmp_path: Path) -> None:
    """The harness itself can fail: a logged error, a thrown exception, a fetch and a blank
    screenshot are all seen."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html><head><title>bad</title>"
        '<link rel="stylesheet" href="missing.css"></head><body><p>x</p>'
        "<script>console.error('broken'); throw new Error('boom');</script></body></html>",
        encoding="utf-8",
    )
    report = browser.load(bad.as_uri())
    assert report.console_errors and report.exceptions
    assert any(url.endswith("missing.css") for url in report.requests)
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>", encoding="utf-8")
    assert browser.ink(browser.load(blank.as_uri()).screenshot) < 0.001
