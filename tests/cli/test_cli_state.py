"""``--state postgresql://...`` and ``skillrt state``: the CLI on a shared store."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from skillrt.cli import main
from skillrt.config import RoutingConfig, RuntimeConfig
from skillrt.runtime import SkillRuntime

Make = Callable[..., Path]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(list(args))
    out, _ = capsys.readouterr()
    return code, json.loads(out)


@pytest.fixture
def project(tmp_path: Path, make_skill: Make, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "skills"
    make_skill("alpha", description="Write release notes from a changelog.", root=root)
    make_skill("beta", description="Review a pull request for bugs.", root=root)
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (folder / "skillrt.yaml").write_text(
        f"roots: [{root}]\ndiscovery:\n  conventional_roots: false\n"
        "routing:\n  embedding_backend: hashing\n",
        encoding="utf-8",
    )
    return folder


def with_search_path(url: str, schema: str) -> str:
    """``url`` with libpq options selecting ``schema`` (a plain --state URL)."""
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options={quote(f'-csearch_path={schema}')}"


def test_state_url_in_config_is_used_by_every_command(
    capsys: pytest.CaptureFixture[str], project: Path, postgres_url: str, pg_schema: str
) -> None:
    with (project / "skillrt.yaml").open("a", encoding="utf-8") as fh:
        fh.write(f"state:\n  url: '{postgres_url}'\n  schema: {pg_schema}\n")
    assert run(capsys, "disable", "alpha", "--json")[0] == 0
    code, info = run(capsys, "state", "info", "--json")
    assert code == 0
    assert info["backend"] == "postgresql" and info["shared"] is True
    assert info["tables"]["skill_state"] == 1
    assert pg_schema in info["location"]
    assert info["cache"] == str(project / ".skillrt" / "cache.db")
    code, listed = run(capsys, "list", "--json")
    enabled = {s["name"]: s["enabled"] for s in listed["skills"]}
    assert enabled == {"alpha": False, "beta": True}
    code, routed = run(capsys, "route", "review my pull request", "--json")
    assert code == 0
    code, info = run(capsys, "state", "info", "--json")
    assert info["tables"]["route_events"] == 1  # written before the process ended


def test_migrate_a_sqlite_state_then_use_it_with_state_url(
    capsys: pytest.CaptureFixture[str],
    project: Path,
    postgres_url: str,
    pg_schema: str,
    tmp_path: Path,
) -> None:
    # A single user's state: enable state, routes (events and stats), learnings.
    assert run(capsys, "disable", "beta", "--json")[0] == 0
    for query in ("write release notes", "review this pull request", "something else"):
        assert run(capsys, "route", query, "--json")[0] == 0
    learnings = project / ".skillrt" / "learnings"
    learnings.mkdir(parents=True)
    (learnings / "technical.md").write_text(
        "# Technical domain learnings\n\n- Pin versions _(task 0123456789ab, phase a)_\n"
        "- Test the edge cases _(task 0123456789ab, phase b)_\n",
        encoding="utf-8",
    )
    code, report = run(
        capsys,
        "state", "migrate", "--from", ".skillrt", "--to", postgres_url,
        "--schema", pg_schema, "--json",
    )  # fmt: skip
    assert code == 0, report
    assert report["ok"] is True
    counts = {t["table"]: (t["source_rows"], t["target_rows"]) for t in report["tables"]}
    assert counts["skill_state"] == (1, 1)
    assert counts["route_events"] == (3, 3)
    assert counts["skill_stats"][0] == counts["skill_stats"][1] > 0
    assert counts["learnings"] == (2, 2)
    # The copy is the state now: --state URL (schema chosen by libpq options).
    url = with_search_path(postgres_url, pg_schema)
    code, listed = run(capsys, "list", "--state", url, "--json")
    assert {s["name"]: s["enabled"] for s in listed["skills"]}["beta"] is False
    code, stats = run(capsys, "stats", "--state", url, "--json")
    assert code == 0 and stats["overall"]["routes"] == 3
    # A second migration is refused: the target is no longer empty.
    code, again = run(
        capsys,
        "state", "migrate", "--from", ".skillrt", "--to", postgres_url,
        "--schema", pg_schema, "--json",
    )  # fmt: skip
    assert code == 1 and again["error"]["code"] == "E_STORE_NOT_EMPTY"


def test_learnings_from_the_store_reach_the_next_run(
    postgres_url: str, pg_schema: str, tmp_path: Path, make_skill: Make
) -> None:
    from skillrt.orchestration.learnings import Learning
    from skillrt.orchestration.learnings_store import StoreLearnings
    from skillrt.store.postgres import PostgresStore

    store = PostgresStore(postgres_url, schema=pg_schema)
    book = StoreLearnings(store)
    first = book.merge("technical", [Learning("Pin versions.", "0123456789ab", "a")])
    again = book.merge("technical", [Learning("pin   VERSIONS", "ba9876543210", "b")])
    assert len(first.added) == 1 and again.added == () and again.duplicates == ("pin   VERSIONS",)
    text = book.read("technical")
    assert text.text == (
        "# Technical domain learnings\n\n- Pin versions. _(task 0123456789ab, phase a)_"
    )
    assert text.path is None
    store.close()


def test_bad_state_url_in_config_is_a_config_error(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    with (project / "skillrt.yaml").open("a", encoding="utf-8") as fh:
        fh.write("state:\n  url: mysql://nope\n")
    code, out = run(capsys, "list", "--json")
    assert code == 1 and out["error"]["code"] == "E_CONFIG"


def test_runtime_takes_a_state_url(postgres_url: str, pg_schema: str, tmp_path: Path) -> None:
    config = RuntimeConfig.from_mapping(
        {"state": {"url": postgres_url, "schema": pg_schema}, "routing": {}},
        base_dir=tmp_path,
    )
    assert config.state_location == postgres_url
    rt = SkillRuntime(config, roots=[])
    try:
        assert rt.store.shared and rt.store.local.location == str(tmp_path / ".skillrt/cache.db")
        assert isinstance(config.routing, RoutingConfig)
    finally:
        rt.close()
