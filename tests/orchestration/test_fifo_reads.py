"""Files an agent or a skill author controls are never read with a blocking open (issue
22): a FIFO in place of a memory file, a workflow's config, a role guide or a file a
repair prompt quotes is refused at once instead of hanging the run for good."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillrt.dispatch.repair import _quote_file
from skillrt.dispatch.roles import RoleGuides
from skillrt.errors import ConfigError, MemoryVerificationFailed, WorkflowConfigError
from skillrt.fileopen import NotRegularFile, read_regular
from skillrt.orchestration import memory as memory_module
from skillrt.orchestration.memory import COMPLETION_LINE, MemoryFolder
from skillrt.orchestration.spec import load_workflow_spec

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

#: A guard against a hang, not a performance bound: a blocked open never returns.
GUARD_S = 20.0


def returns(fn: Callable[[], Any]) -> Any:
    """``fn()``'s result or exception, failing the test if it does not return."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(GUARD_S)
    if worker.is_alive():
        # Free the blocked reader so the thread (and the test run) can end.
        pytest.fail("the call blocked on a FIFO")
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.fixture
def fifo(tmp_path: Path) -> Callable[[Path], Path]:
    opened: list[Path] = []

    def make(path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(path)
        opened.append(path)
        return path

    yield make
    for path in opened:  # a reader left blocked by a regression gets its EOF
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            continue
        os.close(fd)


def test_read_regular_refuses_a_fifo_at_once(tmp_path: Path, fifo: Callable[[Path], Path]) -> None:
    with pytest.raises(NotRegularFile):
        returns(lambda: read_regular(fifo(tmp_path / "pipe")))
    (tmp_path / "f").write_bytes(b"abcdef")
    assert read_regular(tmp_path / "f", limit=4) == b"abcd"


def test_a_memory_file_swapped_for_a_fifo_after_its_stat_is_not_a_file(
    tmp_path: Path, fifo: Callable[[Path], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = MemoryFolder(tmp_path / "memory", max_file_bytes=10_000)
    folder.ensure()
    regular = tmp_path / "regular.md"
    regular.write_text(f"done\n{COMPLETION_LINE}\n", encoding="utf-8")
    pipe = fifo(folder.root / "m.md")
    real_stat = os.stat

    def stat_before_the_swap(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if Path(path) == pipe:  # the verifier's stat saw the agent's regular file
            return real_stat(regular)
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(memory_module.os, "stat", stat_before_the_swap)
    with pytest.raises(MemoryVerificationFailed) as exc:
        returns(lambda: folder.verify("m.md", phase_id="p"))
    assert exc.value.context["reason"] == "not_a_file"


def test_reading_a_memory_fifo_fails_instead_of_waiting(
    tmp_path: Path, fifo: Callable[[Path], Path]
) -> None:
    folder = MemoryFolder(tmp_path / "memory")
    folder.ensure()
    fifo(folder.root / "m.md")
    with pytest.raises(OSError):
        returns(lambda: folder.read_text("m.md"))


def test_a_workflow_config_that_is_a_fifo_is_a_config_error(
    tmp_path: Path, fifo: Callable[[Path], Path]
) -> None:
    pipe = fifo(tmp_path / "skill" / "config.yaml")
    with pytest.raises(WorkflowConfigError) as exc:
        returns(lambda: load_workflow_spec(pipe.parent))
    assert "regular file" in str(exc.value)


def test_a_role_guide_that_is_a_fifo_is_a_config_error(
    tmp_path: Path, fifo: Callable[[Path], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    roles = tmp_path / "roles"
    roles.mkdir()
    (roles / "reviewer.md").write_text("Review it.\n", encoding="utf-8")
    guides = RoleGuides(roles)
    files = guides._user_files()  # listed while still a regular file, then swapped
    os.unlink(roles / "reviewer.md")
    fifo(roles / "reviewer.md")
    monkeypatch.setattr(guides, "_user_files", lambda: files)
    with pytest.raises(ConfigError) as exc:
        returns(lambda: guides.get("reviewer"))
    assert "regular file" in str(exc.value)


def test_a_repair_prompt_quotes_a_fifo_as_unreadable(
    tmp_path: Path, fifo: Callable[[Path], Path]
) -> None:
    pipe = fifo(tmp_path / "skill" / "scripts" / "run.sh")
    assert returns(lambda: _quote_file(pipe, chars=100, follow_symlinks=False)).startswith(
        "(unreadable"
    )
    link = tmp_path / "skill" / "scripts" / "link.sh"
    (tmp_path / "outside.sh").write_text("secret\n", encoding="utf-8")
    link.symlink_to(tmp_path / "outside.sh")
    assert _quote_file(link, chars=100, follow_symlinks=False).startswith("(unreadable")


def test_a_learnings_file_that_is_a_fifo_reads_as_none_and_is_replaced_by_a_merge(
    tmp_path: Path, fifo: Callable[[Path], Path]
) -> None:
    from skillrt.orchestration.learnings import Learning, merge_learnings, read_learnings

    fifo(tmp_path / "learnings" / "web.md")
    assert returns(lambda: read_learnings(tmp_path / "learnings", "web")).text == ""
    merged = returns(
        lambda: merge_learnings(tmp_path / "learnings", "web", [Learning("pin it", "t", "p")])
    )
    assert merged.path.is_file() and "pin it" in merged.path.read_text(encoding="utf-8")


def test_a_context_file_swapped_for_a_fifo_after_the_listing_is_left_out(
    tmp_path: Path, fifo: Callable[[Path], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = MemoryFolder(tmp_path / "memory")
    folder.ensure()
    (folder.root / "t-a-memory.md").write_text("a\r\nb\n", encoding="utf-8")
    fifo(folder.root / "t-b-memory.md")
    # The listing saw two regular files; the second is a FIFO by the time it is read.
    monkeypatch.setattr(Path, "is_file", lambda self: True)
    found = returns(lambda: folder.match(["t-*-memory.md"], "t"))
    assert [f.name for f in found] == ["t-a-memory.md"]
    assert found[0].text == "a\nb\n"  # newlines as a text-mode read gives them


def test_a_repair_prompt_quotes_whole_characters_and_says_where_it_cut(tmp_path: Path) -> None:
    skill_md = tmp_path / "SKILL.md"
    skill_md.write_text("技能" * 30_000, encoding="utf-8")  # 3 bytes a character
    quoted = _quote_file(skill_md, chars=40_000)
    assert quoted.startswith("技能" * 20_000)
    assert quoted.endswith("[... cut at 40,000 characters]") and "\ufffd" not in quoted
