"""Gemini CLI's BeforeModel channel: each new prompt routed once, the skill in the user's
own message, once per request, turn after turn (issue 27: BeforeAgent context is data to
Gemini's model, and one hook process a prompt instead of two)."""

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
    assert mc.apply(record, first) == (True, False, {0})
    assert first[0]["content"].endswith("debug the build\n\nUsing skill: debug\nBODY")
    mc.remember(record, "still broken", {"text": "Still using skill: debug (...)", "skills": []})
    later = request("debug the build", "still broken", "and now?")
    assert mc.apply(record, later)[:2] == (True, False)
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
    assert mc.apply(record, compressed) == (False, True, set())
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
    assert mc.apply(record, messages)[:2] == (True, False)
    assert Counted.reads < 4 * len(turns)
    for message, prompt in zip(messages[-399::2], turns[-200:], strict=True):
        assert message["content"] == f"{prompt}\n\nUsing skill: s\n{prompt}!"


def test_a_new_prompt_is_the_last_user_message_no_block_claims() -> None:
    record: dict = {"entries": []}  # type: ignore[type-arg]
    first = request("debug the build")
    claimed = mc.apply(record, first)[2]
    assert mc.new_prompt(first, mc.contents(first), claimed) == (0, "debug the build")
    mc.remember(record, "debug the build", {}, empty=True)  # routed, nothing to add
    again = request("debug the build")
    assert mc.apply(record, again) == (False, False, {0})  # an empty block changes nothing
    assert mc.new_prompt(again, mc.contents(again), {0}) is None
    # A tool call's turn: the model's words come after the prompt (its call and the
    # result have no text in the hook's view): the prompt is claimed, nothing is new.
    tool_turn = [*request("debug the build"), {"role": "model", "content": "Let me look."}]
    texts = mc.contents(tool_turn)
    assert mc.new_prompt(tool_turn, texts, mc.apply(record, tool_turn)[2]) is None
    # The next prompt is new; the conversation before it is its history.
    second = request("debug the build", "now the tests")
    texts = mc.contents(second)
    assert mc.new_prompt(second, texts, mc.apply(record, second)[2]) == (2, "now the tests")
    assert mc.history(second, texts, 2, turns=6) == [
        {"role": "user", "content": "debug the build"},
        {"role": "assistant", "content": "Done."},
    ]
    assert mc.history(second, texts, 2, turns=1) == [{"role": "assistant", "content": "Done."}]
    # A message of the session context alone holds no prompt.
    alone = [{"role": "user", "content": SESSION_CONTEXT}]
    assert mc.new_prompt(alone, mc.contents(alone), set()) is None


def test_only_the_main_conversation_is_followed() -> None:
    assert mc.main_conversation(request("hello"))
    # A subagent's chat opens with its task, not Gemini's session context.
    assert not mc.main_conversation([{"role": "user", "content": "investigate the build"}])
    assert not mc.main_conversation([])
    assert not mc.main_conversation([{"role": "model", "content": SESSION_CONTEXT}])


def _model_call(project: Path, skills: Path, messages: list[dict[str, str]]) -> dict:  # type: ignore[type-arg]
    payload = {
        "session_id": "s-2",
        "cwd": str(project),
        "transcript_path": "",
        "hook_event_name": "BeforeModel",
        "llm_request": {"model": "m", "messages": messages},
    }
    out = skillrt("hook", "gemini", "--root", str(skills), "--via-model", "--no-daemon",
                  "--state", str(project / "state"), cwd=project,
                  stdin=json.dumps(payload))  # fmt: skip
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout) if out.stdout.strip() else {}


def test_one_before_model_hook_routes_each_prompt_once(project: Path, skills: Path) -> None:
    """What ``install gemini`` writes now: BeforeModel alone routes, records and adds."""
    first = request("please do a code review of my pr")
    out = _model_call(project, skills, first)
    assert out["systemMessage"] == "Using skill: code-review"
    content = out["hookSpecificOutput"]["llm_request"]["messages"][0]["content"]
    assert content.startswith(SESSION_CONTEXT + "please do a code review of my pr\n\n")
    assert content.count("[Skill: code-review |") == 1
    record = mc.read_record(mc.record_path(str(project / "state"), "s-2"))
    assert [e["skills"] for e in record["entries"]] == [["code-review"]]
    # The same turn's next model call (after a tool): the block again, not routed again
    # (no second line for the person, no second entry).
    tool_turn = [*request("please do a code review of my pr"), {"role": "model", "content": "ok"}]
    out = _model_call(project, skills, tool_turn)
    assert "systemMessage" not in out
    assert out["hookSpecificOutput"]["llm_request"]["messages"][0]["content"] == content
    # A prompt that needs no skill: nothing printed, but routed once and recorded.
    chat = request("please do a code review of my pr", "thanks, that is all for today")
    out = _model_call(project, skills, chat)
    assert "systemMessage" not in out
    assert out["hookSpecificOutput"]["llm_request"]["messages"][2]["content"] == (
        "thanks, that is all for today"
    )
    record = mc.read_record(mc.record_path(str(project / "state"), "s-2"))
    assert [e["text"] == "" for e in record["entries"]] == [False, True]
    # A subagent's request (no session context first) is left alone.
    assert _model_call(project, skills, [{"role": "user", "content": "review my pr"}]) == {}
    assert len(mc.read_record(mc.record_path(str(project / "state"), "s-2"))["entries"]) == 2


def test_a_prompt_with_a_lone_surrogate_is_routed_not_dropped(project: Path, skills: Path) -> None:
    # JSON may carry "\ud800": a str that no encoder takes, in the prompt and history.
    chat = request("hi \ud800 there", "please do a code review of my pr \udfff")
    out = _model_call(project, skills, chat)
    assert out["systemMessage"] == "Using skill: code-review"
    assert (
        not (project / "state" / "hook.log").exists()
        or "Traceback" not in (project / "state" / "hook.log").read_text()
    )


def test_what_gemini_writes_as_the_user_is_not_a_prompt() -> None:
    """Its retry nudges, loop recovery and next-speaker check: never routed; a nudge
    appended to the prompt does not hide the prompt from its block."""
    record: dict = {"entries": []}  # type: ignore[type-arg]
    nudge = "[System: You previously returned an empty response. Please ensure ...]"
    for synthetic in (nudge, "System: Potential loop detected. Details: x.", "Please continue."):
        done = {"role": "model", "content": "[Tool execution completed.]"}
        msgs = [*request("debug the build"), done, {"role": "user", "content": synthetic}]
        assert mc.new_prompt(msgs, mc.contents(msgs), set()) is None, synthetic
    mc.remember(record, "debug the build", {"text": "BLOCK", "skills": ["debug"]}, before="")
    retried = request("debug the build")
    retried[0]["content"] += "\n" + nudge
    changed, gone, claimed = mc.apply(record, retried)
    assert (changed, gone, claimed) == (True, False, {0})
    assert retried[0]["content"].endswith(nudge + "\n\nBLOCK")


def test_the_editor_state_before_a_prompt_is_not_the_prompt() -> None:
    editor = (
        "Here is the user's editor context as a JSON object. This is for your information "
        'only.\n```json\n{\n  "activeFile": {"path": "/a.py", "selectedText": "x\\n```"}\n}\n```'
    )
    msgs = request("first", editor + "debug the build")
    texts = mc.contents(msgs)
    assert mc.new_prompt(msgs, texts, set()) == (2, "debug the build")
    assert mc.own_words(SESSION_CONTEXT + editor + "hi") == "hi"
    assert mc.own_words(editor[:60]) == ""  # cut short: nothing to route


def test_a_repeated_prompt_after_a_compression_is_new() -> None:
    """Gemini compressed the history, then the user typed an earlier prompt again: the
    old block must not claim it (its anchor, the text before it, differs)."""
    record: dict = {"entries": []}  # type: ignore[type-arg]
    msgs = request("start", "continue")
    texts = mc.contents(msgs)
    mc.remember(record, "continue", {"text": "OLD", "skills": ["a"]}, before=mc.anchor(texts, 2))
    assert mc.apply(record, msgs)[2] == {2}  # the same request again: claimed
    compressed = [{"role": "user", "content": SESSION_CONTEXT + "<summary>we started</summary>"},
                  {"role": "model", "content": "Got it. Thanks for the additional context!"},
                  {"role": "user", "content": "continue"}]  # fmt: skip
    changed, gone, claimed = mc.apply(record, compressed)
    assert (changed, gone, claimed) == (False, True, set())
    assert mc.new_prompt(compressed, mc.contents(compressed), claimed) == (2, "continue")
    assert compressed[2]["content"] == "continue"  # the old turn's block is not added


def test_history_holds_the_users_words_not_the_blocks() -> None:
    record: dict = {"entries": []}  # type: ignore[type-arg]
    mc.remember(record, "debug the build", {"text": "Using skill: debug\nBODY", "skills": ["d"]})
    msgs = request("debug the build", "and the tests?")
    texts = mc.contents(msgs)
    mc.apply(record, msgs, texts)
    assert "BODY" in msgs[0]["content"]
    assert mc.history(msgs, texts, 2, turns=6)[0] == {"role": "user", "content": "debug the build"}


def test_a_big_record_keeps_its_newest_blocks_and_a_cut_one_starts_afresh(tmp_path: Path) -> None:
    path = mc.record_path(str(tmp_path), "big")
    record: dict = {"entries": []}  # type: ignore[type-arg]
    for i in range(40):
        mc.remember(record, f"p{i}", {"text": "x" * 200_000, "skills": [f"s{i}"]})
    mc.write_record(path, record)
    assert Path(path).stat().st_size <= mc.MAX_RECORD_BYTES
    kept = mc.read_record(path)["entries"]
    assert kept and kept[-1]["prompt"] == "p39" and len(kept) < 40
    raw = Path(path).read_bytes()
    Path(path).write_bytes(raw[: len(raw) // 2])  # cut short (a full disk, a crash)
    assert mc.read_record(path) == {"entries": []}


def test_a_prompt_whose_route_fails_is_not_routed_again_each_call(project: Path) -> None:
    """The block is recorded before the route: a route that fails (here: a broken
    skillrt.yaml) or outlives the deadline is not tried again at every model call."""
    (project / "skillrt.yaml").write_text("hook: [unclosed\n")
    payload = {
        "session_id": "s-3",
        "cwd": str(project),
        "transcript_path": "",
        "hook_event_name": "BeforeModel",
        "llm_request": {"model": "m", "messages": request("please review my pr")},
    }
    argv = ["hook", "gemini", "--via-model", "--no-daemon", "--state", str(project / "state")]
    out = skillrt(*argv, cwd=project, stdin=json.dumps(payload))
    assert out.returncode == 0 and out.stdout == ""
    assert "ConfigError" in (project / "state" / "hook.log").read_text()
    record = mc.read_record(mc.record_path(str(project / "state"), "s-3"))
    assert [(e["prompt"], e["text"]) for e in record["entries"]] == [("please review my pr", "")]
