"""X3 patches: only the skill's own folder, checked by the loader's path jail; atomic
apply, list, revert; hostile proposals."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from skillrt.errors import PatchConflict, PatchNotFound, PatchRejected
from skillrt.execution.patches import (
    FileChange,
    PatchBudget,
    PatchProposal,
    apply_patch,
    apply_unified_diff,
    list_patches,
    parse_proposal,
    plan_patch,
    revert_patch,
)
from skillrt.store import open_location

from .support import make_runtime

SKILL_MD = (
    "---\nname: fixme-x\ndescription: A skill to repair.\nallowed-tools: Read\n---\n"
    "# Fix me\n\nStep one.\n"
)


@pytest.fixture
def skill(make_skill, tmp_path: Path):
    make_skill(
        "fixme-x",
        raw=SKILL_MD,
        files={"scripts/run.py": "print('v1')\n", "references/notes.md": "# Notes\nold\n"},
    )
    os.chmod(tmp_path / "skills" / "fixme-x" / "scripts" / "run.py", 0o755)
    (tmp_path / "outside.txt").write_text("precious\n")
    rt = make_runtime(tmp_path / "skills", tmp=tmp_path)
    yield rt.get("fixme-x")
    rt.close()


def proposal(*changes: FileChange) -> PatchProposal:
    return PatchProposal("sig", "cause", "effect", tuple(changes))


BUDGET = PatchBudget()


# -- parsing ---------------------------------------------------------------------------
def test_parse_json_block() -> None:
    record = '"error_signature": "E", "root_cause": "R", "expected_effect": "X"'
    files = '"files": [{"path": "scripts/run.py", "content": "print(2)\\n"}]'
    text = "Here:\n```json\n{" + record + ",\n " + files + "}\n```\n"
    p = parse_proposal(text)
    assert (p.error_signature, p.root_cause, p.expected_effect) == ("E", "R", "X")
    assert p.changes == (FileChange("scripts/run.py", "print(2)\n", None),)


def test_parse_record_plus_diff_block() -> None:
    text = (
        '{"error_signature": "E", "root_cause": "R", "expected_effect": "X"}\n'
        "```diff\n--- a/scripts/run.py\n+++ b/scripts/run.py\n"
        "@@ -1 +1 @@\n-print('v1')\n+print('v2')\n```\n"
    )
    p = parse_proposal(text)
    assert p.changes[0].path == "scripts/run.py"
    assert apply_unified_diff("print('v1')\n", p.changes[0].diff, path="x") == "print('v2')\n"


@pytest.mark.parametrize(
    "text",
    [
        "no json at all",
        '{"error_signature": "E", "root_cause": "R", "files": []}',
        '{"error_signature": "E", "root_cause": "R", "expected_effect": "X"}',
        '{"error_signature": "E", "root_cause": "R", "expected_effect": "X", "files": "a"}',
        '{"error_signature": "E", "root_cause": "R", "expected_effect": "X",'
        ' "files": [{"path": "a"}]}',
    ],
)
def test_unusable_proposals_are_rejected(text: str) -> None:
    with pytest.raises(PatchRejected):
        parse_proposal(text)


def test_diff_that_does_not_match_is_rejected() -> None:
    diff = "@@ -1 +1 @@\n-something else\n+x\n"
    with pytest.raises(PatchRejected) as info:
        apply_unified_diff("print('v1')\n", diff, path="scripts/run.py")
    assert info.value.context["reason"] == "diff_mismatch"


def test_diff_applies_several_hunks_with_offsets() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 21))
    diff = (
        "@@ -3,3 +3,3 @@\n line 3\n-line 4\n+LINE 4\n line 5\n"
        "@@ -16,3 +16,4 @@\n line 16\n+inserted\n line 17\n line 18\n"
    )
    new = apply_unified_diff(old, diff, path="f")
    assert "LINE 4\n" in new and "line 16\ninserted\nline 17\n" in new
    assert new.count("\n") == 21


# -- the path jail -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        "../outside.txt",
        "../../outside.txt",
        "scripts/../../outside.txt",
        "/etc/passwd",
        "~/x",
        "C:\\x",
        "scripts/a\x00b",
        "references/%2e%2e/%2e%2e/outside.txt",
        "assets/new.txt",
        ".git/config",
        "scripts",
        "README.md",
        "SKILL.md/x",
    ],
)
def test_hostile_paths_are_refused(skill, tmp_path: Path, path: str) -> None:
    with pytest.raises(PatchRejected) as info:
        plan_patch(skill, proposal(FileChange(path, "pwned")), BUDGET)
    assert info.value.code == "E_PATCH_REJECTED"
    assert (tmp_path / "outside.txt").read_text() == "precious\n"


def test_symlinked_folder_out_of_the_skill_is_refused(skill, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (skill.path / "references").rename(tmp_path / "refs-moved")
    (skill.path / "references").symlink_to(outside)
    with pytest.raises(PatchRejected) as info:
        plan_patch(skill, proposal(FileChange("references/evil.md", "x")), BUDGET)
    assert info.value.context["reason"] == "path_unsafe"
    assert list(outside.iterdir()) == []


def test_symlinked_file_is_never_written_through(skill, tmp_path: Path) -> None:
    (skill.path / "scripts" / "link.py").symlink_to(tmp_path / "outside.txt")
    (skill.path / "references" / "alias.md").symlink_to(skill.path / "references" / "notes.md")
    for path in ("scripts/link.py", "references/alias.md"):
        with pytest.raises(PatchRejected):
            plan_patch(skill, proposal(FileChange(path, "x")), BUDGET)
    assert (tmp_path / "outside.txt").read_text() == "precious\n"


def test_in_jail_folder_link_to_a_disallowed_area_is_refused(skill) -> None:
    (skill.path / "assets").mkdir()
    (skill.path / "scripts" / "assets-link").symlink_to(skill.path / "assets")
    with pytest.raises(PatchRejected):
        plan_patch(skill, proposal(FileChange("scripts/assets-link/x.txt", "x")), BUDGET)


# -- budgets and protected fields ------------------------------------------------------
def test_file_budget(skill) -> None:
    changes = [FileChange(f"references/r{i}.md", "x\n") for i in range(4)]
    with pytest.raises(PatchRejected) as info:
        plan_patch(skill, proposal(*changes), BUDGET)
    assert info.value.context["reason"] == "budget_files"


def test_hunk_budget(skill) -> None:
    old = "".join(f"line {i}\n" for i in range(100))
    (skill.path / "references" / "long.md").write_text(old)
    new = "".join(f"line {i}{'!' if i % 10 == 0 else ''}\n" for i in range(100))
    with pytest.raises(PatchRejected) as info:
        plan_patch(skill, proposal(FileChange("references/long.md", new)), BUDGET)
    assert info.value.context["reason"] == "budget_hunks"
    assert info.value.context["hunks"] == 10


def test_added_token_budget_in_skill_md(skill) -> None:
    bloat = SKILL_MD + "word " * 301 + "\n"
    with pytest.raises(PatchRejected) as info:
        plan_patch(skill, proposal(FileChange("SKILL.md", bloat)), BUDGET)
    assert info.value.context["reason"] == "budget_tokens"
    ok = SKILL_MD + "word " * 250 + "\n"
    assert plan_patch(skill, proposal(FileChange("SKILL.md", ok)), BUDGET)[0].added_tokens == 250


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("allowed-tools: Read", "allowed-tools: Read Bash"),
        ("name: fixme-x", "name: other-x"),
        ("allowed-tools: Read", "allowed-tools: Read\ndisable-model-invocation: true"),
        ("allowed-tools: Read", "allowed-tools: Read\nprerequisites:\n  bins: [sudo]"),
    ],
)
def test_protected_frontmatter_fields(skill, old: str, new: str) -> None:
    with pytest.raises(PatchRejected) as info:
        plan_patch(skill, proposal(FileChange("SKILL.md", SKILL_MD.replace(old, new))), BUDGET)
    assert info.value.context["reason"] == "protected_field"


def test_description_and_body_may_change(skill) -> None:
    text = SKILL_MD.replace("A skill to repair.", "A repaired skill.") + "Step two.\n"
    (planned,) = plan_patch(skill, proposal(FileChange("SKILL.md", text)), BUDGET)
    assert planned.hunks == 1  # the two changes are within one context window


def test_unchanged_content_is_no_patch(skill) -> None:
    with pytest.raises(PatchRejected):
        plan_patch(skill, proposal(FileChange("scripts/run.py", "print('v1')\n")), BUDGET)


# -- apply / list / revert -------------------------------------------------------------
def test_apply_list_revert(skill, tmp_path: Path) -> None:
    store = open_location(":memory:")
    planned = plan_patch(
        skill,
        proposal(
            FileChange("scripts/run.py", "print('v2')\n"),
            FileChange("references/new.md", "# New\n"),
        ),
        BUDGET,
    )
    record = apply_patch(store, tmp_path / "repairs", skill, planned, attempt_id="rep-1")
    run_py = skill.path / "scripts" / "run.py"
    assert run_py.read_text() == "print('v2')\n"
    assert stat.S_IMODE(run_py.stat().st_mode) == 0o755  # mode kept
    assert (skill.path / "references" / "new.md").read_text() == "# New\n"
    backup = Path(record.backup_dir)
    assert (backup / "files" / "scripts" / "run.py").read_text() == "print('v1')\n"
    manifest = json.loads((backup / "manifest.json").read_text())
    assert [f["path"] for f in manifest["files"]] == ["scripts/run.py", "references/new.md"]
    assert [(p.patch_id, p.status) for p in list_patches(store)] == [(record.patch_id, "applied")]
    reverted = revert_patch(store, "rep-1")  # by attempt id
    assert reverted.status == "reverted"
    assert run_py.read_text() == "print('v1')\n"
    assert not (skill.path / "references" / "new.md").exists()
    assert list_patches(store)[0].status == "reverted"
    assert revert_patch(store, record.patch_id).status == "reverted"  # idempotent
    with pytest.raises(PatchNotFound):
        revert_patch(store, "nope")


def test_revert_refuses_to_lose_later_edits(skill, tmp_path: Path) -> None:
    store = open_location(":memory:")
    planned = plan_patch(skill, proposal(FileChange("scripts/run.py", "print('v2')\n")), BUDGET)
    record = apply_patch(store, tmp_path / "repairs", skill, planned)
    (skill.path / "scripts" / "run.py").write_text("print('hand edit')\n")
    with pytest.raises(PatchConflict):
        revert_patch(store, record.patch_id)
    assert (skill.path / "scripts" / "run.py").read_text() == "print('hand edit')\n"
    revert_patch(store, record.patch_id, force=True)
    assert (skill.path / "scripts" / "run.py").read_text() == "print('v1')\n"


def test_apply_is_all_or_nothing(skill, tmp_path: Path, monkeypatch) -> None:
    store = open_location(":memory:")
    planned = plan_patch(
        skill,
        proposal(
            FileChange("scripts/run.py", "print('v2')\n"),
            FileChange("references/notes.md", "# Notes\nnew\n"),
        ),
        BUDGET,
    )
    real_replace = os.replace

    def flaky_replace(src, dst, *args, **kwargs):
        if str(dst).endswith("notes.md") and "repairs" not in str(dst):
            raise OSError("disk full")
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", flaky_replace)
    with pytest.raises(OSError):
        apply_patch(store, tmp_path / "repairs", skill, planned)
    monkeypatch.setattr(os, "replace", real_replace)
    assert (skill.path / "scripts" / "run.py").read_text() == "print('v1')\n"
    assert (skill.path / "references" / "notes.md").read_text() == "# Notes\nold\n"
    assert list_patches(store)[0].status == "failed"
    leftovers = [p.name for p in skill.path.rglob(".skillrt-*")]
    assert leftovers == []
