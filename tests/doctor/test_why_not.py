"""``skillrt route "..." --why-not SKILL``: rank, terms, threshold and failed gates."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from skillrt.cli.app import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("SKILLRT_DEBUG", raising=False)
    return project


def why_not(
    capsys: pytest.CaptureFixture[str], query: str, skill: str, *extra: str
) -> tuple[int, Any]:
    code = main(
        [
            "route",
            query,
            "--why-not",
            skill,
            "--root",
            str(EXAMPLES),
            "--backend",
            "hashing",
            "--json",
            *extra,
        ]  # fmt: skip
    )
    out, _ = capsys.readouterr()
    return code, json.loads(out)


def codes(data: Any) -> list[str]:
    return [r["code"] for r in data["why_not"]["reasons"]]


def test_json_contract_and_the_winner(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, data = why_not(capsys, "write a commit message for my staged changes", "code-review")
    assert code == 0
    w = data["why_not"]
    assert set(w) >= {"skill", "rank", "score", "winner", "reasons", "threshold", "terms"}
    assert w["skill"] == "code-review" and w["winner"] == "commit-messages"
    assert w["threshold"] == pytest.approx(0.65)
    # code-review's anti-triggers name commit messages: that, the winner and what
    # decided, and the words (issue 30).
    assert codes(data) == ["anti_trigger", "winner", "missing_words", "winner_words"]
    assert w["decided_by"] in w["terms"]["winner"]
    assert w["missing_words"] == ["commit", "message"] == w["winner_words"]
    assert w["rank"] > 1 and list(w["terms"]) == ["skill", "winner"]
    assert set(w["terms"]["skill"]) >= {"intent_match", "trigger_match", "total"}
    assert w["score"] == w["terms"]["skill"]["total"] < w["threshold"]
    assert w["terms"]["winner"]["trigger_match"] == 1.0


def test_a_selected_skill_says_so_and_cold_start_is_no_reason(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    query = "write a commit message for my staged changes"
    _, data = why_not(capsys, query, "commit-messages")
    # A new installation has routed nothing yet: every skill is damped (cold start),
    # which decided nothing here: it is said with the selection, not as a reason.
    assert data["why_not"]["rank"] == 1 and codes(data) == ["selected"]
    assert "damped" in data["why_not"]["reasons"][0]["message"]
    _, data = why_not(capsys, query, "commit-messages", "--no-cold-start")
    assert codes(data) == ["selected"] and "damped" not in data["why_not"]["reasons"][0]["message"]


def test_manual_only_and_anti_trigger_gates(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, data = why_not(capsys, "deploy the api service to production now", "deploy-production")
    assert "manual_only" in codes(data)
    _, data = why_not(capsys, "write the release notes and changelog", "commit-messages")
    assert "anti_trigger" in codes(data)


def test_missing_prerequisites_are_a_gate(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(project))  # no git on PATH
    _, data = why_not(capsys, "write a commit message for my staged changes", "commit-messages")
    assert "unavailable" in codes(data)
    assert any("git" in r["message"] for r in data["why_not"]["reasons"])


def test_a_disabled_skill_is_a_gate(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = str(project / ".skillrt")
    assert main(["disable", "commit-messages", "--root", str(EXAMPLES), "--state", state]) == 0
    capsys.readouterr()
    _, data = why_not(
        capsys, "write a commit message for my staged changes", "commit-messages", "--state", state
    )
    assert "disabled" in codes(data)
    # Explaining a route records nothing.
    db = sqlite3.connect(project / ".skillrt" / "state.db")
    assert db.execute("SELECT COUNT(*) FROM route_events").fetchone()[0] == 0
    db.close()


def test_a_skill_never_recalled_gets_its_evidence_rank(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, data = why_not(capsys, "write a commit message for my staged changes", "invoice-organizer")
    w = data["why_not"]
    assert w["rank"] is None and w["score"] is None and w["status"] == "not_recalled"
    recalled = next(r for r in w["reasons"] if r["code"] == "not_recalled")
    assert "by word match" in recalled["message"] and "#" in recalled["message"]


def test_an_unknown_skill_is_a_structured_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, data = why_not(capsys, "anything", "no-such-skill")
    assert code == 1 and data["error"]["code"] == "SkillNotFound"


def test_human_output(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["route", "write a commit message", "--why-not", "code-review", "--root",
                 str(EXAMPLES), "--backend", "hashing"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and "Why not code-review?" in out and "threshold 0.65" in out


def test_a_skill_the_primary_covers_or_overlaps_says_which(
    project: Path, capsys: pytest.CaptureFixture[str], make_skill: Any
) -> None:
    root = project / "skills"
    text = "Review a pull request diff for bugs, security issues and style problems."
    make_skill("pr-review", description=text, root=root)
    make_skill("pull-request-review", description=text, root=root)
    make_skill(
        "review-security",
        description="Review a pull request diff for security issues: injection, secrets.",
        root=root,
    )
    query = "review my pull request diff for bugs, security issues and style problems"

    def ask(skill: str) -> tuple[str, dict[str, Any]]:
        args = ["route", query, "--why-not", skill, "--root", str(root)]
        assert main([*args, "--backend", "hashing", "--no-cold-start", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)["why_not"]
        return data["winner"], {r["code"]: r["message"] for r in data["reasons"]}

    winner, _ = ask("review-security")
    twin = "pull-request-review" if winner == "pr-review" else "pr-review"
    assert winner in ("pr-review", "pull-request-review")
    _, reasons = ask(twin)  # the same description: it overlaps the primary
    assert "overlaps" in reasons and winner in reasons["overlaps"]
    _, reasons = ask("review-security")  # a different skill the request does not need
    assert reasons.keys() & {"covered_by_primary", "below_threshold", "overlaps"}
