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


#: Every SVG label's box, as the browser lays it out (rotated labels as the quadrilateral
#: they cover): one cut by its chart, by its section or by the window, or two labels of
#: one chart that cover each other, is a problem. Returns the problems in words.
LABELS = r"""
(() => {
  const problems = [];
  const vw = document.documentElement.clientWidth;
  const corners = (t) => {
    const b = t.getBBox(), m = t.getScreenCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height],
            [b.x, b.y + b.height]].map(([x, y]) => [m.a * x + m.c * y + m.e,
                                                   m.b * x + m.d * y + m.f]);
  };
  const separated = (p, q) => {
    for (const poly of [p, q]) {
      for (let i = 0; i < 4; i++) {
        const [x1, y1] = poly[i], [x2, y2] = poly[(i + 1) % 4];
        const nx = y1 - y2, ny = x2 - x1;
        const pa = p.map(([x, y]) => x * nx + y * ny), qa = q.map(([x, y]) => x * nx + y * ny);
        const len = Math.hypot(nx, ny) || 1;
        if (Math.max(...pa) - Math.min(...qa) < len * 0.5 ||
            Math.max(...qa) - Math.min(...pa) < len * 0.5) return true;
      }
    }
    return false;
  };
  for (const svg of document.querySelectorAll('svg')) {
    const box = svg.getBoundingClientRect();
    const section = svg.closest('section').getBoundingClientRect();
    if (box.right > section.right + 0.5)
      problems.push(`chart wider than its section (${box.width} > ${section.width})`);
    const texts = [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim());
    const polys = texts.map(corners);
    polys.forEach((p, i) => {
      const out = p.some(([x, y]) => x < box.left - 0.5 || x > box.right + 0.5 ||
                                     y < box.top - 0.5 || y > box.bottom + 0.5);
      if (out) problems.push(`cut by its chart: ${texts[i].textContent}`);
      if (p.some(([x]) => x < -0.5 || x > vw + 0.5))
        problems.push(`off the window: ${texts[i].textContent}`);
    });
    for (let i = 0; i < polys.length; i++)
      for (let j = i + 1; j < polys.length; j++)
        if (!separated(polys[i], polys[j]))
          problems.push(`overlap: ${texts[i].textContent} / ${texts[j].textContent}`);
  }
  return problems;
})()
"""


def stress_page(path: Path) -> None:
    """Every chart with the longest labels and largest numbers the reports print."""
    from skillrt.webpage import svg
    from skillrt.webpage.page import document, section

    names = [f"accessibility-compliance-accessibility-audit-{k}" for k in range(20)]
    cells = {(i, (i + 1) % 20): 0.1 * (i % 10) for i in range(20)}
    charts = [
        section("heat", svg.heat_map(names, cells)),
        section(
            "bars",
            svg.bars([(n, 53_440.0 * (k + 1)) for k, n in enumerate(names[:6])], unit="characters"),
        ),  # fmt: skip
        section(
            "paired",
            svg.paired_bars(
                [(n, 0.5, 1.0) for n in names[:5]], ("selection precision", "success rate")
            ),
        ),  # fmt: skip
        section(
            "lines",
            svg.lines(
                [f"11-27 18:{m:02d}" for m in range(48)],
                [
                    ("routes that selected a skill", [float(k % 7) for k in range(48)]),
                    ("p95 over the previous bucket", [12_345.5] * 48),
                ],
                unit=" ms",
            ),  # fmt: skip
        ),
    ]
    path.write_text(document("stress", "every chart", "".join(charts)), encoding="utf-8")


@pytest.mark.parametrize("width", [1280, 800])
def test_no_label_is_cut_or_covered(
    browser: Chromium, project: Path, capsys: pytest.CaptureFixture[str], width: int
) -> None:
    """Issue 30.7 at 1280 and 800 px: the heat map's turned labels, the listing bars'
    numbers and the stats legends, measured as the browser lays them out."""
    corpora = Path(__file__).resolve().parents[3] / "shared" / "corpora"
    roots = [
        a for c in ("antigravity-skills", "openai-skills") for a in ("--root", str(corpora / c))
    ]
    state = str(project / "state")
    pages = [project / "stress.html", project / "stats.html"]
    stress_page(pages[0])
    if corpora.is_dir():
        pages.append(project / "doctor.html")
        assert main(["doctor", *roots, "--backend", "hashing", "--state", state, "--samples", "2",
                     "--html", str(pages[-1])]) == 0  # fmt: skip
    for k in range(24):
        assert main(["route", f"write a commit message {k}", "--root", str(EXAMPLES),
                     "--backend", "hashing", "--state", state, "--no-daemon"]) == 0  # fmt: skip
    assert main(["stats", "--state", state, "--root", str(EXAMPLES), "--html", str(pages[1])]) == 0
    capsys.readouterr()
    for page in pages:
        report = browser.load(page.as_uri(), {"problems": LABELS, "svgs": SECTIONS[1]}, width=width)
        assert report.exceptions == [], report.exceptions
        assert report.evaluated["svgs"] >= 3, page.name
        assert report.evaluated["problems"] == [], (page.name, report.evaluated["problems"][:10])


def test_the_label_check_sees_cut_and_covered_labels(browser: Chromium, tmp_path: Path) -> None:
    """The measurement itself can fail: a label past its chart and two labels drawn on
    each other are reported."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        "<!DOCTYPE html><html><body><section>"
        '<svg xmlns="http://www.w3.org/2000/svg" width="200" height="60" viewBox="0 0 200 60">'
        '<text x="150" y="20">a label far too long for this chart</text>'
        '<text x="10" y="50">overlapping</text><text x="14" y="52">overlapping</text>'
        "</svg></section></body></html>",
        encoding="utf-8",
    )
    problems = browser.load(bad.as_uri(), {"problems": LABELS}, width=800).evaluated["problems"]
    assert any(p.startswith("cut by its chart: a label far") for p in problems)
    assert any(p.startswith("overlap: overlapping") for p in problems)
