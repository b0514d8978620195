"""Memory files: verification (the completion marker), confinement, context matching."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillrt.atomic import atomic_write_text
from skillrt.errors import MemoryPathEscape, MemoryVerificationFailed
from skillrt.orchestration.memory import COMPLETION_LINE, MemoryFolder

TASK = "0123456789ab"


@pytest.fixture
def folder(tmp_path: Path) -> MemoryFolder:
    f = MemoryFolder(tmp_path / "memory", max_file_bytes=10_000)
    f.ensure()
    return f


def reason(folder: MemoryFolder, name: str) -> str:
    with pytest.raises(MemoryVerificationFailed) as exc:
        folder.verify(name, phase_id="p")
    assert exc.value.code == "E_MEMORY_VERIFICATION_FAILED"
    assert exc.value.context["phase_id"] == "p"
    return str(exc.value.context["reason"])


def test_completed_file_verifies(folder: MemoryFolder) -> None:
    folder.write("m.md", f"Summary.\n\n## Learnings\n- x\n\n{COMPLETION_LINE}\n")
    v = folder.verify("m.md")
    assert v.bytes > 0 and len(v.sha256) == 64 and v.path == folder.root / "m.md"


@pytest.mark.parametrize(
    "text",
    [
        f"ok\r\n{COMPLETION_LINE}\r\n",  # CRLF
        f"\ufeffok\n{COMPLETION_LINE}",  # BOM, no trailing newline
        f"ok\n   {COMPLETION_LINE}   \n\n\n  \n",  # surrounding whitespace, blank tail
    ],
)
def test_marker_variants_that_count(folder: MemoryFolder, text: str) -> None:
    (folder.root / "m.md").write_text(text, encoding="utf-8", newline="")
    folder.verify("m.md")


def test_missing_empty_and_whitespace(folder: MemoryFolder) -> None:
    assert reason(folder, "absent.md") == "missing"
    (folder.root / "empty.md").write_bytes(b"")
    assert reason(folder, "empty.md") == "empty"
    (folder.root / "blank.md").write_text(" \n\t\n", encoding="utf-8")
    assert reason(folder, "blank.md") == "empty"


@pytest.mark.parametrize(
    "text",
    [
        "work in progress\n",
        f"{COMPLETION_LINE}\nmore text after the marker\n",  # marker must be last
        "Status: completed\n",  # case-sensitive
        "**Status: COMPLETED**\n",  # no emphasis
        "Status:COMPLETED\n",
        f"text {COMPLETION_LINE}\n",  # not a line of its own
    ],
)
def test_not_completed(folder: MemoryFolder, text: str) -> None:
    (folder.root / "m.md").write_text(text, encoding="utf-8")
    assert reason(folder, "m.md") == "not_completed"


def test_blocked_reports_the_question(folder: MemoryFolder) -> None:
    (folder.root / "m.md").write_text(
        "Summary\nStatus: BLOCKED\nWhich database should we use?\n", encoding="utf-8"
    )
    with pytest.raises(MemoryVerificationFailed) as exc:
        folder.verify("m.md")
    assert exc.value.context["reason"] == "blocked"
    assert "Which database" in exc.value.context["blocked"]


def test_too_large_binary_and_directory(folder: MemoryFolder) -> None:
    (folder.root / "big.md").write_text("x" * 10_001 + f"\n{COMPLETION_LINE}\n", encoding="utf-8")
    assert reason(folder, "big.md") == "too_large"
    (folder.root / "bin.md").write_bytes(b"\xff\xfe\xfa\x00" * 10)
    assert reason(folder, "bin.md") == "unreadable"
    (folder.root / "dir.md").mkdir()
    assert reason(folder, "dir.md") == "not_a_file"


@pytest.mark.parametrize("name", ["../x.md", "/etc/passwd", "a/b.md", "..", ".", "", "a\\b", "x\0"])
def test_names_that_leave_the_folder(folder: MemoryFolder, name: str) -> None:
    with pytest.raises(MemoryPathEscape) as exc:
        folder.verify(name)
    assert exc.value.code == "E_MEMORY_PATH_ESCAPE"
    with pytest.raises(MemoryPathEscape):
        folder.write(name, "x")


def test_symlink_pointing_outside_is_an_escape(folder: MemoryFolder, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text(f"secret\n{COMPLETION_LINE}\n", encoding="utf-8")
    (folder.root / "link.md").symlink_to(secret)
    with pytest.raises(MemoryPathEscape):
        folder.verify("link.md")
    with pytest.raises(MemoryPathEscape):
        folder.write("link.md", "overwrite?")
    assert secret.read_text(encoding="utf-8").startswith("secret")  # untouched
    with pytest.raises(MemoryPathEscape):
        folder.match(["*.md"], TASK)  # never read into a prompt either


def test_symlink_inside_the_folder_is_fine(folder: MemoryFolder) -> None:
    (folder.root / "real.md").write_text(f"r\n{COMPLETION_LINE}\n", encoding="utf-8")
    (folder.root / "alias.md").symlink_to(folder.root / "real.md")
    folder.verify("alias.md")


def test_memory_folder_behind_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real-memory"
    real.mkdir()
    (tmp_path / "mem").symlink_to(real)
    f = MemoryFolder(tmp_path / "mem")
    f.write("a.md", f"a\n{COMPLETION_LINE}\n")
    f.verify("a.md")


def test_match_substitutes_task_id_and_keeps_pattern_order(folder: MemoryFolder) -> None:
    for name in [
        f"{TASK}-workflow-context.md",
        f"{TASK}-a-memory.md",
        f"{TASK}-b-memory.md",
        "ffffffffffff-a-memory.md",  # another task
        f".{TASK}-a-memory.md.123.tmp",  # an atomic write in progress
        "notes.txt",
    ]:
        (folder.root / name).write_text(name, encoding="utf-8")
    (folder.root / f"{TASK}-dir.md").mkdir()
    got = folder.match(
        ["{task_id}-workflow-context.md", "{task_id}-*.md"],
        TASK,
        exclude={f"{TASK}-b-memory.md"},
    )
    assert [c.name for c in got] == [f"{TASK}-workflow-context.md", f"{TASK}-a-memory.md"]
    assert got[0].text == f"{TASK}-workflow-context.md"


def test_match_truncates_to_the_budget(tmp_path: Path) -> None:
    f = MemoryFolder(tmp_path, max_context_file_chars=10)
    (tmp_path / f"{TASK}-x.md").write_text("y" * 50, encoding="utf-8")
    [cf] = f.match(["{task_id}-*.md"], TASK)
    assert cf.truncated and cf.text == "y" * 10


def test_match_on_missing_folder(tmp_path: Path) -> None:
    assert MemoryFolder(tmp_path / "nope").match(["*"], TASK) == []


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "d" / "f.md"
    atomic_write_text(target, "one")
    atomic_write_text(target, "two")
    assert target.read_text(encoding="utf-8") == "two"
    assert sorted(os.listdir(target.parent)) == ["f.md"]


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(min_size=1, max_size=40))
def test_no_name_resolves_outside(tmp_path: Path, name: str) -> None:
    f = MemoryFolder(tmp_path / "m")
    try:
        path = f.path_for(name)
    except MemoryPathEscape:
        return
    real_root = os.path.realpath(f.root)
    assert os.path.commonpath([real_root, os.path.realpath(path)]) == real_root
