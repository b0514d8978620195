"""Load reports (L4), spilling to observations, and the injection block (L5)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from skillrt.config import LoaderLimits
from skillrt.errors import UsageError
from skillrt.loading import (
    injection_block,
    load_resource,
    load_skill_body,
    new_run_id,
    observations_dir,
)
from skillrt.loading.report import spill_name
from skillrt.skills.model import Skill
from skillrt.skills.reader import read_skill


def _skill(make_skill: Callable[..., Path], **files: str) -> Skill:
    folder = make_skill("rep", body="# Rep\n\nBody.\n", files=files)
    skill = read_skill(folder)
    assert isinstance(skill, Skill)
    return skill


def _big(n_sections: int = 30) -> str:
    return "# Big\n\nIntro.\n\n" + "".join(
        f"## S{i}\n\n" + ("text " * 100 + "\n\n") * 5 for i in range(n_sections)
    )


def test_report_fields_for_a_resource(make_skill: Callable[..., Path]) -> None:
    content = "# Doc\n\n## A\n\nalpha\n\n## B\n\nbeta\n"
    skill = _skill(make_skill, **{"references/doc.md": content})
    r = load_resource(skill, "references/doc.md", "## A")
    rep = r.report
    assert rep.sha256 == hashlib.sha256(content.encode()).hexdigest()
    assert rep.bytes_read == len(content.encode())
    assert rep.chars_returned == len(r.text) == len("## A\n\nalpha\n")
    assert rep.chars_total == rep.chars_returned
    assert rep.truncated is False and rep.storage_ref is None
    assert rep.kind == "resource" and rep.section == "## A" and rep.section_hint == "## A"
    assert rep.errors == []


def test_injection_block_is_exact(make_skill: Callable[..., Path]) -> None:
    skill = _skill(make_skill)
    r = load_skill_body(skill)
    block = injection_block(skill, r)
    assert block == (
        f"[Skill: rep | source=project]\n"
        f"[Skill Path: {r.report.path}]\n"
        f"[Load Report: sha256={r.report.sha256} truncated=false "
        f"bytes_read={r.report.bytes_read}]\n"
        "# Rep\n\nBody.\n"
    )
    assert injection_block(None, r) == block  # identity from the report


def test_injection_block_truncated_true(make_skill: Callable[..., Path]) -> None:
    skill = _skill(make_skill, **{"references/big.md": _big()})
    r = load_resource(skill, "references/big.md")
    lines = injection_block(skill, r).split("\n")
    assert lines[2].startswith("[Load Report: sha256=") and " truncated=true " in lines[2]
    assert "\n".join(lines[3:]) == r.text


def test_spill_over_threshold(make_skill: Callable[..., Path], tmp_path: Path) -> None:
    content = _big()
    skill = _skill(make_skill, **{"references/big.md": content})
    spill_dir = tmp_path / "obs"
    r = load_resource(skill, "references/big.md", spill_dir=spill_dir)
    assert r.report.truncated and r.report.storage_ref
    stored = Path(r.report.storage_ref)
    assert stored.name == f"rep-{r.report.sha256[:8]}-big.md.txt"
    assert stored.read_text(encoding="utf-8") == content
    assert f"Full text: {stored}" in r.text
    assert len(r.text) <= 12_000
    assert sorted(p.name for p in spill_dir.iterdir()) == [stored.name]


def test_section_spill_holds_the_whole_section(
    make_skill: Callable[..., Path], tmp_path: Path
) -> None:
    content = "# Doc\n\n## Long\n\n" + ("para " * 200 + "\n\n") * 20 + "## Short\n\nx\n"
    skill = _skill(make_skill, **{"references/doc.md": content})
    limits = LoaderLimits(max_resource_excerpt_chars=2000, spill_threshold_chars=2000)
    r = load_resource(skill, "references/doc.md", "Long", limits, spill_dir=tmp_path)
    assert r.report.storage_ref and r.report.storage_ref.endswith("-doc.md-_Long.txt")
    stored = Path(r.report.storage_ref).read_text(encoding="utf-8")
    assert stored.startswith("## Long") and "## Short" not in stored
    assert r.report.chars_total == len(stored)


def test_no_spill_without_a_folder_or_under_threshold(
    make_skill: Callable[..., Path], tmp_path: Path
) -> None:
    skill = _skill(make_skill, **{"references/big.md": _big(), "references/small.md": "# s\n"})
    assert load_resource(skill, "references/big.md").report.storage_ref is None
    small = load_resource(skill, "references/small.md", spill_dir=tmp_path / "o")
    assert small.report.storage_ref is None and not (tmp_path / "o").exists()


def test_full_spills_when_over_the_cap_even_under_threshold(
    make_skill: Callable[..., Path], tmp_path: Path
) -> None:
    content = _big(5)
    skill = _skill(make_skill, **{"references/big.md": content})
    limits = LoaderLimits(max_resource_excerpt_chars=3000, spill_threshold_chars=100_000)
    plain = load_resource(skill, "references/big.md", None, limits, spill_dir=tmp_path)
    assert plain.report.truncated and plain.report.storage_ref is None
    full = load_resource(skill, "references/big.md", None, limits, spill_dir=tmp_path, full=True)
    assert full.report.storage_ref
    assert Path(full.report.storage_ref).read_text(encoding="utf-8") == content
    assert len(full.text) <= 3000


def test_threshold_below_cap_bounds_what_is_returned(
    make_skill: Callable[..., Path], tmp_path: Path
) -> None:
    content = _big(3)
    skill = _skill(make_skill, **{"references/big.md": content})
    limits = LoaderLimits(spill_threshold_chars=1000)
    r = load_resource(skill, "references/big.md", None, limits, spill_dir=tmp_path)
    assert r.report.storage_ref and len(r.text) <= 1000


@pytest.mark.parametrize("bad", ["", "../x", "a/b", ".hidden", "a..b", "x" * 200, "a b"])
def test_run_id_is_checked(tmp_path: Path, bad: str) -> None:
    with pytest.raises(UsageError):
        observations_dir(tmp_path, bad)


def test_observations_dir_and_run_ids(tmp_path: Path) -> None:
    rid = new_run_id()
    assert observations_dir(tmp_path, rid) == tmp_path / ".agent" / "runs" / rid / "observations"
    assert new_run_id() != rid


def test_spill_name_is_safe() -> None:
    name = spill_name("acme:release-notes", "abcdef0123", "../../etc/passwd ## Sec")
    assert "/" not in name and ":" not in name and " " not in name
    assert name.startswith("acme_release-notes-abcdef01-")
    assert name.endswith(".txt")
