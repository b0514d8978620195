"""`skillrt hook claude-code` as Claude Code runs it: a subprocess, the hook JSON on stdin,
additional context (or nothing) on stdout, exit 0 whatever happens."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hook_support import claude_payload, hook_output, hook_state, skillrt, write_transcript

from skillrt.turns import DEFAULT_BUDGET


def run_hook(project: Path, skills: Path | None, prompt: str, *extra: str, **kw: object):  # type: ignore[no-untyped-def]
    roots = ["--root", str(skills)] if skills else []
    payload = kw.pop("payload", None) or claude_payload(prompt, project, kw.pop("transcript", None))  # type: ignore[arg-type]
    return skillrt(
        "hook", "claude-code", *roots, "--no-daemon", *extra, cwd=project, stdin=payload, **kw
    )  # type: ignore[arg-type]


def test_routed_skill_is_the_show_inject_block(project: Path, skills: Path) -> None:
    out = hook_output(run_hook(project, skills, "please do a code review of my pr"))
    assert out is not None
    spec = out["hookSpecificOutput"]
    assert spec["hookEventName"] == "UserPromptSubmit"
    context = spec["additionalContext"]
    assert context.startswith("Using skill: code-review\n[Skill: code-review | source=flag]\n")
    shown = skillrt(
        "show", "code-review", "--inject", "--root", str(skills), "--no-daemon", cwd=project
    )
    assert shown.returncode == 0, shown.stderr
    assert context == "Using skill: code-review\n" + shown.stdout.rstrip("\n")
    assert out["systemMessage"] == "Using skill: code-review"


def test_nothing_passes_the_threshold_prints_nothing(project: Path, skills: Path) -> None:
    proc = run_hook(project, skills, "what is the capital of France?")
    assert proc.returncode == 0 and proc.stdout == ""


def test_route_is_recorded_as_a_hook_route(project: Path, skills: Path) -> None:
    import sqlite3

    hook_output(run_hook(project, skills, "please do a code review of my pr"))
    conn = sqlite3.connect(hook_state(project) / "state.db")
    rows = conn.execute("SELECT surface, selected_skills FROM route_events").fetchall()
    conn.close()
    assert len(rows) == 1 and rows[0][0] == "hook" and "code-review" in rows[0][1]


def test_dollar_mention_activates_even_a_manual_only_skill(project: Path, skills: Path) -> None:
    out = hook_output(run_hook(project, skills, "$deploy ship version 2"))
    assert out is not None
    assert out["hookSpecificOutput"]["additionalContext"].startswith("Using skill: deploy\n")


def test_manual_only_skill_is_never_routed(project: Path, skills: Path) -> None:
    proc = run_hook(project, skills, "deploy to production now please")
    out = hook_output(proc)
    assert (
        out is None or "Using skill: deploy" not in out["hookSpecificOutput"]["additionalContext"]
    )


@pytest.mark.parametrize(
    ("prompt", "message"),
    [
        # the seed's message, naming the command a coding agent's user can run
        ("$nope do a thing", "No skill named 'nope'. Run `skillrt list` to see available skills."),
        ("$code-revie check this", "No exact skill 'code-revie'. Did you mean $code-review?"),
        (
            "$code-review $sql-review both",
            "Choose one skill to lead this turn: $code-review or $sql-review.",
        ),
    ],
)
def test_mentions_answer_with_seed_004_messages(
    project: Path, skills: Path, prompt: str, message: str
) -> None:
    out = hook_output(run_hook(project, skills, prompt))
    assert out is not None
    assert out["hookSpecificOutput"]["additionalContext"] == message
    assert "Using skill" not in out["systemMessage"]


def test_disabled_skill_is_refused_when_named_and_never_routed(project: Path, skills: Path) -> None:
    off = skillrt("disable", "retired", "--root", str(skills), cwd=project)
    assert off.returncode == 0, off.stderr
    named = hook_output(run_hook(project, skills, "$retired write them"))
    assert named is not None
    text = named["hookSpecificOutput"]["additionalContext"]
    assert "Skill 'retired' is disabled" in text and "Using skill" not in text
    routed = hook_output(run_hook(project, skills, "write the release notes for 2.0"))
    assert routed is None or "retired" not in routed["hookSpecificOutput"]["additionalContext"]


def test_long_body_is_fitted_under_ten_thousand_characters(project: Path, skills: Path) -> None:
    out = hook_output(run_hook(project, skills, "$big-skill plan the database migration"))
    assert out is not None
    context = out["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= DEFAULT_BUDGET < 10_000
    assert "truncated=true" in context and "## Steps" in context  # key sections kept


def test_a_named_long_skill_writes_nothing_into_the_project(project: Path, skills: Path) -> None:
    # A $mention of a body past the loader's cap used to spill the whole body into
    # <project>/.agent/runs/<run>/observations (a file the injected text never named).
    out = hook_output(run_hook(project, skills, "$big-skill plan the database migration"))
    assert out is not None and "truncated=true" in out["hookSpecificOutput"]["additionalContext"]
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == []


def _breakdown(project: Path) -> list[str]:
    import sqlite3

    conn = sqlite3.connect(hook_state(project) / "state.db")
    rows = [r[0] for r in conn.execute("SELECT score_breakdown FROM route_events ORDER BY ts")]
    conn.close()
    return rows


def test_history_comes_from_the_transcript(project: Path, skills: Path, tmp_path: Path) -> None:
    """A follow-up ("do that again") recalls the skill the transcript last used: the
    history reached the router (the router then scores it like any candidate)."""
    transcript = write_transcript(
        tmp_path / "t.jsonl",
        [("user", "$sql-review check my query"), ("assistant", "Using skill: sql-review. Done.")],
    )
    assert run_hook(project, skills, "do that again", transcript=transcript).returncode == 0
    assert run_hook(project, skills, "do that again").returncode == 0
    with_history, without = (json.loads(b) for b in _breakdown(project))
    assert "rule" in with_history["sql-review"]["sources"]
    assert "rule" not in without.get("sql-review", {}).get("sources", [])


@pytest.mark.parametrize(
    "payload",
    ["", "not json", "[1, 2]", json.dumps({"prompt": 3}), "\x00\xff" * 10],
)
def test_bad_input_prints_nothing_and_logs(project: Path, skills: Path, payload: str) -> None:
    proc = run_hook(project, skills, "", payload=payload or " ")
    assert proc.returncode == 0 and proc.stdout == ""
    log = (hook_state(project) / "hook.log").read_text()
    assert "hook input" in log


def test_other_event_is_ignored(project: Path, skills: Path) -> None:
    payload = json.dumps({"hook_event_name": "Stop", "prompt": "$code-review now"})
    proc = run_hook(project, skills, "", payload=payload)
    assert proc.returncode == 0 and proc.stdout == ""


def test_no_roots_prints_nothing(project: Path) -> None:
    proc = run_hook(project, None, "please do a code review of my pr", HOME=str(project))
    assert proc.returncode == 0 and proc.stdout == ""


def test_broken_skill_is_skipped_and_the_rest_still_routes(project: Path, skills: Path) -> None:
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("---\nname: [unclosed\n---\nbody\n")
    out = hook_output(run_hook(project, skills, "please do a code review of my pr"))
    assert out is not None and "code-review" in out["systemMessage"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_unreadable_state_dir_exits_zero(project: Path, skills: Path) -> None:
    state = project / ".skillrt"
    state.mkdir()
    state.chmod(0o000)
    try:
        proc = run_hook(project, skills, "please do a code review of my pr")
    finally:
        state.chmod(0o700)
    assert proc.returncode == 0 and proc.stdout == ""


def test_state_path_that_is_a_file_never_breaks_the_prompt(project: Path, skills: Path) -> None:
    """No store can be opened there: routing still answers (telemetry is skipped with a
    warning on stderr) and stdout is the hook's JSON, never a traceback."""
    (project / "blocker").write_text("not a folder")
    proc = run_hook(project, skills, "please do a code review of my pr", "--state", "blocker")
    out = hook_output(proc)
    assert out is not None and out["systemMessage"] == "Using skill: code-review"
    assert (project / "blocker").read_text() == "not a folder"


def test_usage_error_exits_two(project: Path) -> None:
    proc = skillrt("hook", "nowhere", cwd=project, stdin="{}")
    assert proc.returncode == 2 and "name a client" in proc.stderr


def test_gemini_and_codex_answer_in_their_event(project: Path, skills: Path) -> None:
    payload = json.dumps(
        {
            "hook_event_name": "BeforeAgent",
            "prompt": "$code-review go",
            "cwd": str(project),
            "session_id": "g",
            "transcript_path": None,
        }
    )
    gem = skillrt(
        "hook", "gemini", "--root", str(skills), "--no-daemon", cwd=project, stdin=payload
    )
    out = hook_output(gem)
    assert out is not None and out["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"
    codex = skillrt(
        "hook",
        "codex",
        "--root",
        str(skills),
        "--no-daemon",
        cwd=project,
        stdin=claude_payload("$code-review go", project),
    )
    out = hook_output(codex)
    assert out is not None and out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"


def test_a_fifo_as_the_transcript_never_hangs_the_hook(
    project: Path, skills: Path, tmp_path: Path
) -> None:
    """Nobody writes to it: a blocking open would wait for good (the subprocess timeout
    is only a guard). The hook answers without history."""
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)
    proc = run_hook(
        project, skills, "please do a code review of my pr", transcript=fifo, timeout=60
    )
    out = hook_output(proc)
    assert out is not None and out["systemMessage"] == "Using skill: code-review"


def test_a_deeply_nested_transcript_line_is_skipped(
    project: Path, skills: Path, tmp_path: Path
) -> None:
    """A line nested past the parser's recursion limit is one unreadable line: the hook
    still answers, with the history around it."""
    transcript = write_transcript(tmp_path / "t.jsonl", [("user", "an earlier question")])
    with transcript.open("a", encoding="utf-8") as fh:
        fh.write("[" * 100_000 + "]" * 100_000 + "\n")
        fh.write('{"a":' * 3000 + "1" + "}" * 3000 + "\n")
    out = hook_output(
        run_hook(project, skills, "please do a code review of my pr", transcript=transcript)
    )
    assert out is not None and out["systemMessage"] == "Using skill: code-review"


def test_codex_gets_a_context_its_own_limit_keeps_inline(project: Path, skills: Path) -> None:
    """Codex replaces hook context past 2,500 tokens by a file the model must open: the
    codex hook's budget is smaller (issue 27)."""
    payload = claude_payload("$big-skill plan the database migration", project)
    proc = skillrt(
        "hook", "codex", "--root", str(skills), "--no-daemon", cwd=project, stdin=payload
    )
    out = hook_output(proc)
    assert out is not None
    context = out["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= 7_000 and "## Steps" in context
