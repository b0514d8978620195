"""History from transcripts: the formats each client writes, bounded, never an error."""

from __future__ import annotations

import json
from pathlib import Path

from hook_support import write_transcript
from hypothesis import given, settings
from hypothesis import strategies as st

from skillrt.hooks.transcript import TAIL_BYTES, read_history


def test_claude_code_text_blocks_only(tmp_path: Path) -> None:
    path = write_transcript(
        tmp_path / "t.jsonl", [("user", "fix the login bug"), ("assistant", "Looking at auth.py")]
    )
    assert read_history(str(path)) == [
        {"role": "user", "content": "fix the login bug"},
        {"role": "assistant", "content": "Looking at auth.py"},
    ]


def test_current_prompt_is_not_repeated(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl", [("assistant", "hi"), ("user", "now this")])
    path.write_text(
        "\n".join(line for line in path.read_text().splitlines() if '"isMeta"' not in line) + "\n"
    )
    assert read_history(str(path), prompt="now this") == [{"role": "assistant", "content": "hi"}]


def test_bounded_by_turns_and_characters(tmp_path: Path) -> None:
    turns = [
        ("user" if i % 2 == 0 else "assistant", f"message {i} " + "x" * 500) for i in range(40)
    ]
    path = write_transcript(tmp_path / "t.jsonl", turns)
    history = read_history(str(path), turns=6, max_chars=1000)
    assert len(history) <= 6
    assert sum(len(m["content"]) for m in history) <= 1000
    assert history[-1]["content"].startswith("message 39")


def test_codex_rollout_lines(tmp_path: Path) -> None:
    lines = [
        {"type": "session_meta", "payload": {"id": "x"}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "<environment_context>cwd</environment_context>"}
                ],
            },
        },
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "add a test"}],
            },
        },
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "ok"}],
            },
        },
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    assert read_history(str(path)) == [
        {"role": "user", "content": "add a test"},
        {"role": "assistant", "content": "ok"},
    ]


def test_gemini_session_document(tmp_path: Path) -> None:
    doc = {
        "sessionId": "s",
        "messages": [
            {"type": "user", "content": "plan it"},
            {"type": "gemini", "content": "Planned."},
        ],
    }
    path = tmp_path / "session.json"
    path.write_text(json.dumps(doc, indent=2))
    assert read_history(str(path)) == [
        {"role": "user", "content": "plan it"},
        {"role": "assistant", "content": "Planned."},
    ]


def test_only_the_tail_of_a_huge_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    filler = json.dumps({"type": "user", "message": {"role": "user", "content": "old " * 100}})
    with path.open("w") as fh:
        for _ in range(3 * TAIL_BYTES // len(filler)):
            fh.write(filler + "\n")
        fh.write(json.dumps({"type": "user", "message": {"role": "user", "content": "latest"}}))
    assert read_history(str(path))[-1] == {"role": "user", "content": "latest"}


def test_missing_unreadable_or_garbage_gives_no_history(tmp_path: Path) -> None:
    assert read_history(None) == []
    assert read_history(str(tmp_path / "missing.jsonl")) == []
    assert read_history(str(tmp_path)) == []  # a folder
    garbage = tmp_path / "g.jsonl"
    garbage.write_bytes(b'\xff\xfe\x00{not json\n[1,2]\n"str"\n')
    assert read_history(str(garbage)) == []


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=4000), st.integers(1, 10), st.integers(1, 3000))
def test_any_bytes_never_raise_and_stay_bounded(data: bytes, turns: int, chars: int) -> None:
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".jsonl") as fh:
        fh.write(data)
        fh.flush()
        history = read_history(fh.name, turns=turns, max_chars=chars)
    assert len(history) <= turns
    assert sum(len(m["content"]) for m in history) <= chars


def test_a_fifo_gives_no_history_without_waiting(tmp_path: Path) -> None:
    import os
    import threading

    fifo = tmp_path / "t.jsonl"
    os.mkfifo(fifo)
    out: list[object] = []
    worker = threading.Thread(target=lambda: out.append(read_history(str(fifo))), daemon=True)
    worker.start()
    worker.join(timeout=30)  # a guard against a hang, not a performance bound
    if worker.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # let the reader go
        raise AssertionError("reading a FIFO transcript blocked")
    assert out == [[]]


def test_lines_nested_past_the_recursion_limit_are_skipped(tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl", [("user", "kept"), ("assistant", "also kept")])
    with path.open("a", encoding="utf-8") as fh:
        fh.write("[" * 100_000 + "]" * 100_000 + "\n")
        deep = {"type": "user", "message": {"role": "user", "content": "x"}}
        fh.write('{"n":' * 2000 + json.dumps(deep) + "}" * 2000 + "\n")
    assert [m["content"] for m in read_history(str(path))] == ["kept", "also kept"]


def test_a_deeply_nested_document_gives_no_history(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    path.write_text('{"messages": ' + "[" * 50_000 + "]" * 50_000 + "}", encoding="utf-8")
    assert read_history(str(path)) == []
