"""``skillrt doctor`` end to end: the JSON contract, the cache, nothing recorded."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from skillrt.cli.app import main

PDF_BODY = """# PDF forms

Fill the fields of a PDF form from a CSV file of answers. Use pypdf to read the form.

## Merging

Merge several PDF files into one in the order given. Keep the bookmarks of each file.

## Flattening

Flatten a filled PDF form so nobody can change the answers later on.
"""
SKILLS: dict[str, dict[str, Any]] = {
    "pdf-forms": {"description": "Fill, merge and flatten PDF forms.", "body": PDF_BODY},
    "pdf-forms-copy": {
        "description": "Fill, merge and flatten PDF forms quickly.",
        "body": PDF_BODY,
    },
    "invoice-organizer": {
        "description": "Organise invoices and receipts into folders by vendor and month.",
        "body": "# Invoices\n\nRename each receipt with its date, vendor and amount in euros.\n\n"
        "## Tax\n\nSum the VAT of every invoice of the quarter before filing the return.\n",
    },
    "meeting-notes": {
        "description": "Turn a meeting transcript into notes with decisions and action items.",
        "body": "# Notes\n\nList each decision with its owner and a due date for the team.\n",
    },
    "deploy-production": {
        "description": "Deploy the service to production with the release checklist.",
        "body": "# Deploy\n\nRun the release checklist, tag the commit and watch the error rate.\n",
        "disable-model-invocation": True,
    },
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_skill: Any) -> Path:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SKILLRT_SOCKET", raising=False)
    monkeypatch.delenv("SKILLRT_DEBUG", raising=False)
    for name, spec in SKILLS.items():
        extra = {
            k.replace("-", "__"): v for k, v in spec.items() if k not in ("description", "body")
        }
        make_skill(
            name,
            description=spec["description"],
            body=spec["body"],
            root=project / "skills",
            **extra,
        )
    # A Claude Code skill folder that is not searched by default.
    make_skill("claude-only", root=project / ".claude" / "skills")
    return project


def doctor(capsys: pytest.CaptureFixture[str], project: Path, *extra: str) -> tuple[int, Any]:
    code = main(
        [
            "doctor",
            "--root",
            str(project / "skills"),
            "--backend",
            "hashing",
            "--state",
            str(project / ".skillrt"),
            "--json",
            *extra,
        ]  # fmt: skip
    )
    out, _ = capsys.readouterr()
    return code, json.loads(out)


def test_json_contract_and_findings(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = project / "q.jsonl"
    queries.write_text(
        json.dumps({"query": "merge these two pdf files", "expected": ["pdf-forms"],
                    "also_ok": ["pdf-forms-copy"]}) + "\n"
        + json.dumps({"query": "sum the vat of my invoices", "expected": ["invoice-organizer"]})
        + "\n",
        encoding="utf-8",
    )  # fmt: skip
    html = project / "out" / "report.html"
    code, data = doctor(capsys, project, "--queries", str(queries), "--html", str(html))
    assert code == 0
    assert set(data) >= {"environment", "shadowing", "unreachable", "risk", "listing", "triggers"}
    assert set(data) >= {"findings", "stubs", "duplicates", "collisions", "disabled"}
    # The copied body is one finding, "copy of", first: not a shadowing pair.
    [copy] = data["duplicates"]
    assert (copy["skill"], copy["copy_of"]) == ("pdf-forms-copy", "pdf-forms")
    assert not copy["identical"] and 0 < copy["diff_lines"] < copy["lines"]
    assert data["findings"][0]["kind"] == "duplicate"
    assert data["findings"][0]["summary"].startswith("copy of pdf-forms")
    assert "skillrt disable pdf-forms-copy --root" in copy["action"]
    assert not any(
        {p["skill"], p["shadowed_by"]} == {"pdf-forms", "pdf-forms-copy"} for p in data["shadowing"]
    )
    risk = data["risk"]
    assert {r["skill"] for r in risk} == set(SKILLS)
    assert all(set(r) >= {"skill", "score", "reasons", "action"} for r in risk)
    assert [r["score"] for r in risk] == sorted((r["score"] for r in risk), reverse=True)
    unreachable = {u["skill"]: u for u in data["unreachable"]}
    assert "manual only" in unreachable["deploy-production"]["reason"]
    listing = {c["client"]: c for c in data["listing"]["clients"]}
    assert set(listing) == {"claude-code", "codex"}
    assert "deploy-production" not in listing["codex"]["dropped"]
    triggers = data["triggers"]
    assert triggers["count"] == 2 and {s["skill"] for s in triggers["skills"]} >= {"pdf-forms"}
    env = data["environment"]
    roots = {r["path"]: r for r in env["roots"]}
    assert (
        roots[str(project / "skills")]["searched"] and roots[str(project / "skills")]["skills"] == 5
    )
    hidden = roots[str(project / ".claude" / "skills")]
    assert not hidden["searched"] and hidden["skills"] == 1 and "claude_roots" in hidden["note"]
    assert env["daemon"]["running"] is False
    assert set(env["hooks"]) == {"claude-code", "codex", "gemini"}
    assert not env["hooks"]["claude-code"]["installed"]
    assert html.read_text(encoding="utf-8").count("<svg") >= 2
    # Doctor records nothing: no route event, no stats.
    db = sqlite3.connect(project / ".skillrt" / "state.db")
    assert db.execute("SELECT COUNT(*) FROM route_events").fetchone()[0] == 0
    db.close()


def test_the_index_cache_is_reused_and_only_changes_cost(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, first = doctor(capsys, project)
    assert first["analysis"]["texts_embedded"] > 0 and first["analysis"]["encodings_computed"] > 0
    _, second = doctor(capsys, project)
    assert second["analysis"]["texts_embedded"] == 0
    assert second["analysis"]["encodings_computed"] == 0
    assert second["shadowing"] == first["shadowing"] and second["risk"] == first["risk"]
    skill_md = project / "skills" / "meeting-notes" / "SKILL.md"
    skill_md.write_text(
        skill_md.read_text(encoding="utf-8") + "\n## Follow-up\n\nEmail the summary to every "
        "attendee within the hour after the meeting ends.\n",
        encoding="utf-8",
    )
    _, third = doctor(capsys, project)
    changed = third["analysis"]
    assert 0 < changed["texts_embedded"] < first["analysis"]["texts_embedded"]
    assert 0 < changed["encodings_computed"] < first["analysis"]["encodings_computed"]


def test_an_installed_hook_is_reported(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "claude-code", "--project", "--command", "skillrt"]) == 0
    capsys.readouterr()
    _, data = doctor(capsys, project)
    hook = data["environment"]["hooks"]["claude-code"]
    assert hook["installed"] and hook["where"] == [str(project / ".claude" / "settings.json")]


def test_catalogue_inputs_like_eval(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {"name": "ledger", "description": "Keep the ledger.", "path": "ledger/SKILL.md"},
        {"name": "notes", "description": "Take notes of meetings."},
    ]
    base = project / "catalogue-base"
    (base / "ledger").mkdir(parents=True)
    (base / "ledger" / "SKILL.md").write_text(
        "---\nname: ledger\ndescription: Keep the ledger.\n---\n# Ledger\n\nBalance the "
        "accounts of the month and post every journal entry before closing.\n",
        encoding="utf-8",
    )
    cat = project / "cat.jsonl"
    cat.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code = main(["doctor", "--catalog", str(cat), "--base", str(base), "--backend", "hashing",
                 "--state", str(project / ".skillrt"), "--json"])  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    # Only the catalogue: no conventional folders, so the project's skills are not in it.
    assert {r["skill"] for r in data["risk"]} == {"ledger", "notes"}
    ledger = next(r for r in data["risk"] if r["skill"] == "ledger")
    assert ledger["requests"] > 0  # its body was read through --base


@pytest.mark.parametrize(
    "args",
    [("--samples", "0"), ("--context-window", "-5"), ("--top", "-1"), ("--html", ".")],
)
def test_bad_options_are_usage_errors(
    project: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    code = main(["doctor", "--root", str(project / "skills"), "--json", *args])
    data = json.loads(capsys.readouterr().out)
    assert code == 2 and data["error"]["code"] == "E_USAGE"


def test_a_missing_query_file_is_a_structured_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data = doctor(capsys, project, "--queries", str(project / "nope.jsonl"))
    assert code == 1 and data["error"]["code"] == "E_CATALOG"


def test_human_output_names_every_section(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["doctor", "--root", str(project / "skills"), "--backend", "hashing",
                 "--state", str(project / ".skillrt")])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0
    for title in ("Environment", "Shadowing", "Unreachable", "Risk", "Listing budget"):
        assert title in out
    assert "[" not in err  # no progress bar when stderr is not a terminal


def test_unwritable_html_and_missing_roots_are_reported(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = project / "file"
    blocker.write_text("", encoding="utf-8")
    code, data = doctor(capsys, project, "--html", str(blocker / "report.html"))
    assert code == 2 and data["error"]["code"] == "E_USAGE"
    assert data["error"]["path"] == str(blocker / "report.html")
    code = main(["doctor", "--root", str(project / "missing"), "--backend", "hashing",
                 "--state", str(project / ".skillrt"), "--json"])  # fmt: skip
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["risk"] == [] and data["shadowing"] == []
    assert f"{project / 'missing'}: the root does not exist" in data["environment"]["problems"]


def test_progress_shows_on_a_terminal(project: Path) -> None:
    """On a terminal (a real pty as stderr) the doctor draws its progress bar; stdout
    keeps the one JSON document."""
    import os
    import pty
    import subprocess
    import sys

    master, slave = pty.openpty()
    proc = subprocess.run(
        [sys.executable, "-m", "skillrt", "doctor", "--root", str(project / "skills"),
         "--backend", "hashing", "--state", str(project / ".skillrt"), "--json"],
        stdout=subprocess.PIPE,
        stderr=slave,
        timeout=120,
        check=False,
    )  # fmt: skip
    os.close(slave)
    drawn = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the pty is drained
            break
        if not chunk:
            break
        drawn += chunk
    os.close(master)
    assert proc.returncode == 0 and json.loads(proc.stdout)["risk"]
    assert b"routing pseudo-requests [" in drawn
