"""JSONL catalogues and query sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrt.eval.datasets import CatalogError, load_catalog_report, load_queries


def write(path: Path, rows: list[object]) -> Path:
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n",
        encoding="utf-8",
    )
    return path


def test_catalogue_lines_become_skills_with_routing_fields(tmp_path: Path) -> None:
    path = write(
        tmp_path / "skills.jsonl",
        [
            {
                "name": "pdf-tool",
                "description": "Read PDF files.",
                "examples": ["open this pdf"],
                "triggers": ["pdf"],
                "anti_triggers": ["weather"],
                "cost_hint": "low",
                "prerequisites": {"bins": ["pdftotext"]},
                "parallel_safe": True,
                "domain": "docs",
            },
            {"name": "acme:deploy", "description": "Deploy."},
            "not json",
            {"name": "no-desc"},
            {"description": "no name"},
            {"name": "pdf-tool", "description": "dup"},
            [1, 2],
        ],
    )
    report = load_catalog_report(path)
    pdf, deploy = report.skills
    assert pdf.source == "catalog" and pdf.skill_file is None
    assert pdf.routing.examples == ("open this pdf",)
    assert pdf.routing.triggers == ("pdf",) and pdf.routing.anti_triggers == ("weather",)
    assert pdf.routing.cost_hint == "low" and pdf.routing.parallel_safe
    assert pdf.routing.prerequisites.bins == ("pdftotext",)
    assert pdf.extra.get("domain") == "docs"
    assert pdf.content_hash and pdf.content_hash != deploy.content_hash
    assert deploy.namespace == "acme" and deploy.qualified_name == "acme:deploy"
    codes = [d.code for d in report.problems]
    assert codes == [
        "CATALOG_BAD_JSON",
        "CATALOG_NO_DESCRIPTION",
        "CATALOG_NO_NAME",
        "CATALOG_DUPLICATE",
        "CATALOG_NOT_OBJECT",
    ]
    assert "line 3" in report.problems[0].message


def test_missing_catalogue_is_a_structured_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError) as err:
        load_catalog_report(tmp_path / "nope.jsonl")
    assert err.value.code == "E_CATALOG"


def test_queries_load_with_candidates_and_meta(tmp_path: Path) -> None:
    path = write(
        tmp_path / "q.jsonl",
        [
            {"query": "a", "expected": ["x"], "split": "dev"},
            {"query": "b", "expected": [], "candidates": ["x", "y"]},
            "",
        ],
    )
    a, b = load_queries(path)
    assert a.expected == ("x",) and a.candidates is None and a.meta == {"split": "dev"}
    assert b.no_skill and b.candidates == ("x", "y")
    assert len(load_queries(path, limit=1)) == 1
    bad = write(tmp_path / "bad.jsonl", [{"query": "a", "expected": "x"}])
    with pytest.raises(CatalogError, match="expected"):
        load_queries(bad)


def test_catalogue_path_gives_a_body_inside_the_base_only(tmp_path: Path) -> None:
    base = tmp_path / "corpora"
    (base / "pack" / "pdf").mkdir(parents=True)
    (base / "pack" / "pdf" / "SKILL.md").write_text("---\nname: pdf\n---\n# PDF\n")
    (tmp_path / "secret.md").write_text("outside")
    catalogue = tmp_path / "data" / "skills.jsonl"
    catalogue.parent.mkdir()
    write(
        catalogue,
        [
            {"name": "pdf", "description": "Read PDFs.", "path": "pack/pdf/SKILL.md"},
            {"name": "escape", "description": "x", "path": "../secret.md"},
            {"name": "gone", "description": "x", "path": "pack/none/SKILL.md"},
            {"name": "odd", "description": "x", "path": 7},
        ],
    )
    report = load_catalog_report(catalogue, base=base)
    pdf, escape, gone, odd = report.skills
    assert pdf.skill_file == (base / "pack" / "pdf" / "SKILL.md").resolve()
    assert pdf.path == pdf.skill_file.parent
    # A bad path is reported; the line still loads, without a body.
    assert escape.skill_file is None and gone.skill_file is None and odd.skill_file is None
    codes = [d.code for d in report.problems]
    assert codes == ["CATALOG_PATH_OUTSIDE_BASE", "CATALOG_PATH_MISSING", "CATALOG_BAD_PATH"]
    # Without a base, paths are relative to the catalogue's own folder.
    assert load_catalog_report(catalogue).skills[0].skill_file is None


def test_queries_carry_also_ok(tmp_path: Path) -> None:
    path = write(
        tmp_path / "q.jsonl",
        [{"query": "a", "expected": ["x"], "also_ok": ["y", "z"], "style": "short"}],
    )
    (q,) = load_queries(path)
    assert q.also_ok == ("y", "z") and q.meta == {"style": "short"}
    bad = write(tmp_path / "bad.jsonl", [{"query": "a", "expected": ["x"], "also_ok": "y"}])
    with pytest.raises(CatalogError, match="also_ok"):
        load_queries(bad)
