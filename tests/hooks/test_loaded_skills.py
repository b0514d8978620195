"""Each skill once per conversation: the skills a transcript already holds (issue 27).

The hook reads, from the client's own transcript, which injection blocks stand in the
conversation since it was last compacted or rewound; those skills get a reminder line
instead of their body again.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from skillrt.hooks import transcript
from skillrt.hooks.transcript import loaded_skills


def block(name: str) -> str:
    return f"Using skill: {name}\n[Skill: {name} | source=project]\n[Skill Path: /x]\nbody"


def claude_lines(*items: tuple[str, str]) -> str:
    """Claude Code's transcript: hook context as ``attachment`` lines, compaction as a
    ``compact_boundary`` system line (compact JSON, as Claude Code writes it)."""
    out = []
    for kind, value in items:
        if kind == "context":
            entry = {"type": "attachment", "attachment": {"type": "hook_additional_context",
                     "content": [value], "hookEvent": "UserPromptSubmit"}}  # fmt: skip
        elif kind == "compact":
            entry = {"type": "system", "subtype": "compact_boundary", "content": "Compacted"}
        else:
            entry = {"type": "user", "message": {"role": "user", "content": value}}
        out.append(json.dumps(entry, separators=(",", ":")))
    return "\n".join(out) + "\n"


def test_claude_code_blocks_until_the_compaction(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(claude_lines(("user", "debug this"), ("context", block("debugging"))))
    assert loaded_skills(str(path)) == {"debugging"}
    with path.open("a") as fh:
        fh.write(claude_lines(("compact", ""), ("user", "go on"), ("context", block("tdd"))))
    assert loaded_skills(str(path)) == {"tdd"}  # the debugging body is gone from context


def test_codex_developer_messages_and_compacted(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    item = {"type": "response_item", "payload": {"type": "message", "role": "developer",
            "content": [{"type": "input_text", "text": block("code-review")}]}}  # fmt: skip
    path.write_text(json.dumps(item, separators=(",", ":")) + "\n")
    assert loaded_skills(str(path)) == {"code-review"}
    with path.open("a") as fh:
        fh.write(json.dumps({"type": "compacted", "payload": {"message": "..."}},
                            separators=(",", ":")) + "\n")  # fmt: skip
    assert loaded_skills(str(path)) == set()


def test_gemini_hook_context_parts_and_a_rewind(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    lines = [
        {"$set": {"messages": [{"id": "0", "type": "user", "content": [{"text": "ctx"}]}]}},
        {
            "id": "1",
            "type": "user",
            "content": [
                {"text": "plan it"},
                {"text": f"<hook_context>{block('writing-plans')}</hook_context>"},
            ],
        },  # fmt: skip
    ]
    path.write_text("\n".join(json.dumps(x, separators=(",", ":")) for x in lines) + "\n")
    assert loaded_skills(str(path)) == {"writing-plans"}
    with path.open("a") as fh:
        fh.write(json.dumps({"$rewindTo": "0"}, separators=(",", ":")) + "\n")
    assert loaded_skills(str(path)) == set()


def test_a_namespaced_and_a_non_ascii_name(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    text = claude_lines(("context", block("acme:deploy")), ("context", block("café-notes")))
    path.write_text(text)  # raw UTF-8
    assert loaded_skills(str(path)) == {"acme:deploy", "café-notes"}
    escaped = tmp_path / "e.jsonl"  # as a client that escapes non-ASCII writes it
    entry = {"type": "attachment", "attachment": {"content": [block("café-notes")]}}
    escaped.write_text(json.dumps(entry, ensure_ascii=True) + "\n")
    assert loaded_skills(str(escaped)) == {"café-notes"}


def test_a_block_across_the_scan_chunks_is_found(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(transcript, "_SCAN_CHUNK", 64)
    path = tmp_path / "t.jsonl"
    filler = claude_lines(*[("user", "x" * 50) for _ in range(20)])
    path.write_text(claude_lines(("context", block("deep-skill"))) + filler)
    assert loaded_skills(str(path)) == {"deep-skill"}


def test_only_the_tail_is_read(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(transcript, "LOADED_SCAN_BYTES", 4096)
    path = tmp_path / "t.jsonl"
    path.write_text(claude_lines(("context", block("old"))) + "x" * 10_000 + "\n")
    assert loaded_skills(str(path)) == set()  # beyond the bound: injected again, not hung


def test_nothing_readable_gives_nothing(tmp_path: Path) -> None:
    import os

    assert loaded_skills(None) == set() and loaded_skills(str(tmp_path / "no")) == set()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert loaded_skills(str(fifo)) == set()  # never waits on a FIFO
    assert loaded_skills(str(tmp_path)) == set()


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=3000))
def test_any_bytes_never_raise(data: bytes) -> None:
    import tempfile

    with tempfile.NamedTemporaryFile() as fh:
        fh.write(data)
        fh.flush()
        names = loaded_skills(fh.name)
    assert all(isinstance(n, str) and "\n" not in n for n in names)


def test_a_block_in_a_last_line_longer_than_a_chunk_is_found(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # One line longer than a scan chunk (Gemini CLI writes its whole message list on one
    # line), with a block wherever it falls against the chunks' edges, the line whole or
    # still being written (no newline yet).
    monkeypatch.setattr(transcript, "_SCAN_CHUNK", 64)
    path = tmp_path / "session.jsonl"
    for pad in range(130):
        content = "a" * pad + block("long-line-skill") + "b" * 200
        entry = {"$set": {"messages": [{"id": "0", "type": "user", "content": content}]}}
        for end in ("\n", ""):  # the last line, whole or still being written
            path.write_text(json.dumps(entry, separators=(",", ":")) + end)
            assert loaded_skills(str(path)) == {"long-line-skill"}, (pad, end)


def test_a_huge_line_is_read_in_bounded_memory(tmp_path: Path) -> None:
    # A line of many megabytes (a pasted image, a whole message list) is scanned a chunk
    # at a time: never gathered whole, never copied over and over.
    import tracemalloc

    path = tmp_path / "t.jsonl"
    line = b"x" * (8 * 1024 * 1024) + block("in-a-huge-line").encode() + b"y" * (8 * 1024 * 1024)
    for end in (b"\n", b""):
        path.write_bytes(line + end)
        tracemalloc.start()
        try:
            assert loaded_skills(str(path)) == {"in-a-huge-line"}
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 4 * transcript._SCAN_CHUNK, peak
