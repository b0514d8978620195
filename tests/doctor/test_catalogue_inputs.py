"""``route``, ``eval`` and ``doctor`` take the same catalogue inputs: --root, --catalog
(repeatable) and --base for a catalogue's relative ``path``s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillrt.cli.app import main


@pytest.fixture
def catalogue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    base = tmp_path / "bodies"
    (base / "ledger").mkdir(parents=True)
    (base / "ledger" / "SKILL.md").write_text(
        "---\nname: ledger\ndescription: Keep the books.\n---\n# Ledger\n\nPost every journal "
        "entry and reconcile the trial balance before the month closes.\n",
        encoding="utf-8",
    )
    first = tmp_path / "a.jsonl"
    first.write_text(
        json.dumps({"name": "ledger", "description": "Keep the books.", "path": "ledger/SKILL.md"})
        + "\n",
        encoding="utf-8",
    )
    second = tmp_path / "b.jsonl"
    second.write_text(
        json.dumps({"name": "travel", "description": "Book flights and hotels for a trip."}) + "\n",
        encoding="utf-8",
    )
    return base, first, second


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main([*args, "--backend", "hashing", "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_route_reads_bodies_through_base(
    catalogue: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base, first, second = catalogue
    query = "reconcile the trial balance and post the journal entry"
    args = ("route", query, "--catalog", str(first), "--catalog", str(second), "--root", "none")
    code, data = run(capsys, *args, "--base", str(base), "--explain")
    assert code == 0
    ledger = next(c for c in data["candidates"] if c["name"] == "ledger")
    assert ledger["score"]["matched"].startswith("section")  # the body was read
    assert data["candidates"][0]["name"] == "ledger"
    # Without --base the path is relative to the catalogue's folder: no body there.
    with pytest.warns(RuntimeWarning, match="no such file"):
        code, data = run(capsys, *args, "--explain")
    ledger = next((c for c in data["candidates"] if c["name"] == "ledger"), None)
    assert code == 0 and (ledger is None or not ledger["score"]["matched"].startswith("section"))


def test_eval_takes_several_catalogues_and_base(
    catalogue: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base, first, second = catalogue
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"query": "post the journal entry for march", "expected": ["ledger"]})
        + "\n"
        + json.dumps({"query": "book me a flight and a hotel in Oslo", "expected": ["travel"]})
        + "\n",
        encoding="utf-8",
    )
    code, data = run(
        capsys, "eval", "--catalog", str(first), "--catalog", str(second), "--base", str(base),
        "--queries", str(queries),
    )  # fmt: skip
    assert code == 0 and data["catalog_size"] == 2 and data["counts"]["queries"] == 2
