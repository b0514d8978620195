"""Domain learnings: extraction from memory files, deduplicated atomic merging, reading."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from skillrt.errors import MemoryPathEscape
from skillrt.orchestration.learnings import (
    Learning,
    extract_learnings,
    learnings_path,
    merge_learnings,
    read_learnings,
)

T1 = "0123456789ab"
T2 = "ba9876543210"


def test_extract_bullets_numbers_paragraphs_and_continuations() -> None:
    text = """Summary line.

## Approach
- not a lesson

## Learnings
- First lesson
  continues here.
* Second lesson
1. Third lesson

A paragraph lesson
over two lines.

- none

```
- inside a fence is ignored
```
### Sub heading stays inside
- Fourth lesson

## Verdict
- after the section

Status: COMPLETED
"""
    assert extract_learnings(text) == [
        "First lesson continues here.",
        "Second lesson",
        "Third lesson",
        "A paragraph lesson over two lines.",
        "Fourth lesson",
    ]


def test_extract_stops_at_status_and_handles_missing_section() -> None:
    assert extract_learnings("## Learnings:\n- only one\nStatus: COMPLETED\n- no\n") == ["only one"]
    assert extract_learnings("# Title\nno section\nStatus: COMPLETED\n") == []
    assert extract_learnings("## LEARNINGS\n\n- n/a\n") == []


def test_merge_appends_attributed_and_deduplicated(tmp_path: Path) -> None:
    first = merge_learnings(
        tmp_path,
        "technical",
        [
            Learning("Run the tests as CI does.", T1, "research"),
            Learning("run the tests   as CI does", T1, "verification"),  # same lesson
            Learning("Pin tool versions.", T1, "implementation"),
        ],
    )
    assert len(first.added) == 2 and len(first.duplicates) == 1
    text = (tmp_path / "technical.md").read_text(encoding="utf-8")
    assert text.startswith("# Technical domain learnings\n")
    assert f"- Run the tests as CI does. _(task {T1}, phase research)_" in text
    again = merge_learnings(tmp_path, "technical", [Learning("Pin tool versions", T2, "x")])
    assert again.added == () and len(again.duplicates) == 1
    assert (tmp_path / "technical.md").read_text(encoding="utf-8") == text


def test_merge_keeps_existing_hand_written_notes(tmp_path: Path) -> None:
    path = tmp_path / "creative.md"
    path.write_text("# Notes\n\n- Keep drafts short.\n", encoding="utf-8")
    merge_learnings(
        tmp_path,
        "creative",
        [Learning("keep drafts short", T1, "p"), Learning("Read it aloud.", T1, "p")],
    )
    assert path.read_text(encoding="utf-8") == (
        f"# Notes\n\n- Keep drafts short.\n- Read it aloud. _(task {T1}, phase p)_\n"
    )


def test_concurrent_merges_all_land(tmp_path: Path) -> None:
    def worker(i: int) -> None:
        merge_learnings(
            tmp_path, "technical", [Learning(f"lesson {i}-{j}", T1, "p") for j in range(5)]
        )

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    text = (tmp_path / "technical.md").read_text(encoding="utf-8")
    assert sum(line.startswith("- lesson ") for line in text.splitlines()) == 40


def test_read_learnings_keeps_the_newest(tmp_path: Path) -> None:
    assert read_learnings(tmp_path, "personal").text == ""
    lines = [f"- lesson {i:03d}" for i in range(200)]
    (tmp_path / "personal.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = read_learnings(tmp_path, "personal", max_chars=100)
    assert got.truncated and len(got.text) <= 100
    assert got.text.splitlines()[-1] == "- lesson 199"
    assert got.text.splitlines()[0].startswith("- lesson ")  # cut at a line boundary


@pytest.mark.parametrize("domain", ["../x", "a/b", "", "UPPER"])
def test_domain_names_cannot_escape(tmp_path: Path, domain: str) -> None:
    with pytest.raises(MemoryPathEscape):
        learnings_path(tmp_path, domain)
