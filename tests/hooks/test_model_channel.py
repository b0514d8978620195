"""Gemini CLI's BeforeModel channel: the skill in the user's own message, once per
request, turn after turn (issue 27: BeforeAgent context is data to Gemini's model)."""

from __future__ import annotations

import json
from pathlib import Path

from hook_support import skillrt

from skillrt.hooks import model_channel as mc

SESSION_CONTEXT = "<session_context>\nThis is the Gemini CLI.\n</session_context>"


def request(*turns: str) -> list[dict[str, str]]:
    """Gemini CLI's hook view: the first prompt joined to the session context."""
    out = []
    for i, text in enumerate(turns):
        out.append({"role": "user", "content": (SESSION_CONTEXT + text) if i == 0 else text})
        out.append({"role": "model", "content": "Done."})
    return out[:-1]


def test_blocks_go_to_their_own_messages_every_call() -> None:
    record: dict = {"entries": []}  # type: ignore[type-arg]
    mc.remember(
        record, "debug the build", {"text": "Using skill: debug\nBODY", "skills": ["debug"]}
    )
    assert mc.loaded(record) == ["debug"]
    first = request("debug the build")
    assert mc.apply(record, first) == (True, False)
    assert first[0]["content"].endswith("debug the build\n\nUsing skill: debug\nBODY")
    mc.remember(record, "still broken", {"text": "Still using skill: debug (...)", "skills": []})
    later = request("debug the build", "still broken", "and now?")
    assert mc.apply(record, later) == (True, False)
    text = json.dumps(later)
    assert text.count("BODY") == 1 and text.count("Still using skill") == 1
    assert later[2]["content"].startswith("still broken\n\nStill using")
    assert later[4]["content"] == "and now?"  # a turn with nothing recorded is left alone


def test_a_compressed_history_marks_the_block_gone() -> None:
    record: dict = {"entries": []}  # type: ignore[type-arg]
    mc.remember(
        record, "debug the build", {"text": "Using skill: debug\nBODY", "skills": ["debug"]}
    )
    compressed = [{"role": "user", "content": "<summary>we debugged</summary>"},
                  {"role": "user", "content": "next step"}]  # fmt: skip
    assert mc.apply(record, compressed) == (False, True)
    assert mc.loaded(record) == []  # the next prompt that needs it injects it again


def test_a_repeated_prompt_takes_the_next_message() -> None:
    record: dict = {"entries": []}  # type: ignore[type-arg]
    mc.remember(record, "go on", {"text": "A", "skills": ["a"]})
    mc.remember(record, "go on", {"text": "B", "skills": ["b"]})
    msgs = request("start", "go on", "go on")
    mc.apply(record, msgs)
    assert msgs[2]["content"] == "go on\n\nA" and msgs[4]["content"] == "go on\n\nB"


def test_the_record_is_bounded_and_unreadable_records_are_empty(tmp_path: Path) -> None:
    path = mc.record_path(str(tmp_path), "../../etc/passwd")
    assert Path(path).parent == tmp_path / "sessions"  # a session id is not a path
    record: dict = {"entries": []}  # type: ignore[type-arg]
    for i in range(mc.MAX_ENTRIES + 50):
        mc.remember(record, f"p{i}", {"text": "x", "skills": []})
    mc.write_record(path, record)
    assert len(mc.read_record(path)["entries"]) == mc.MAX_ENTRIES
    Path(path).write_text("{not json")
    assert mc.read_record(path) == {"entries": []}


def test_the_hook_end_to_end(project: Path, skills: Path) -> None:
    """BeforeAgent prints only the person's line; BeforeModel carries the block."""
    state = project / ".skillrt"
    state.mkdir()
    base = {"session_id": "s-1", "cwd": str(project), "transcript_path": ""}
    agent = dict(base, hook_event_name="BeforeAgent", prompt="please do a code review of my pr")
    out = skillrt("hook", "gemini", "--root", str(skills), "--via-model", "--no-daemon",
                  cwd=project, stdin=json.dumps(agent))  # fmt: skip
    assert out.returncode == 0 and json.loads(out.stdout) == {
        "systemMessage": "Using skill: code-review"
    }
    messages = request("please do a code review of my pr")
    model = dict(
        base, hook_event_name="BeforeModel", llm_request={"model": "m", "messages": messages}
    )
    out = skillrt("hook", "gemini", "--root", str(skills), "--via-model", cwd=project,
                  stdin=json.dumps(model))  # fmt: skip
    sent = json.loads(out.stdout)["hookSpecificOutput"]
    assert sent["hookEventName"] == "BeforeModel"
    content = sent["llm_request"]["messages"][0]["content"]
    assert "[Skill: code-review |" in content and "<hook_context>" not in content
    # without --via-model, BeforeModel is not skillrt's: nothing printed
    out = skillrt("hook", "gemini", "--root", str(skills), cwd=project, stdin=json.dumps(model))
    assert out.returncode == 0 and out.stdout == ""


def test_a_long_session_is_matched_in_one_pass() -> None:
    # Thousands of messages, a block on each of the last turns: each message's text is
    # looked at about once per model call, not once per recorded block.
    class Counted(dict):  # type: ignore[type-arg]
        reads = 0

        def __getitem__(self, key: str) -> object:
            Counted.reads += key == "content"
            return super().__getitem__(key)

    turns = [f"prompt number {i}" for i in range(3000)]
    messages = [Counted(m) for m in request(*turns)]
    record: dict = {"entries": []}  # type: ignore[type-arg]
    for prompt in turns[-mc.MAX_ENTRIES :]:
        mc.remember(record, prompt, {"text": f"Using skill: s\n{prompt}!", "skills": ["s"]})
    assert mc.apply(record, messages) == (True, False)
    assert Counted.reads < 4 * len(turns)
    for message, prompt in zip(messages[-399::2], turns[-200:], strict=True):
        assert message["content"] == f"{prompt}\n\nUsing skill: s\n{prompt}!"
