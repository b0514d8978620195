"""The bundled ``develop-feature`` workflow, end to end, on the three kinds of runner
(issue 20): an OpenAI-compatible endpoint (a real HTTP server on loopback), a command
that only prints its answer, and an agentic command that writes its memory file — with
the same ``workflow start|resume|advance`` commands, as a user runs them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .chat_server import ChatServer, chat_server
from .conftest import EXAMPLE_SKILL, agent_cmd, cli_env, skillrt_cmd

QUERY = "Add CSV export to the reports API, with tests"
PHASES = ["clarification", "research", "implementation", "verification"]
KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write_project(tmp_path)
    return tmp_path


def write_project(root: Path, extra: str = "") -> None:
    (root / "skillrt.yaml").write_text(
        f"roots:\n  - {EXAMPLE_SKILL.parent}\ndiscovery:\n  conventional_roots: false\n"
        f"routing:\n  embedding_backend: hashing\n{extra}",
        encoding="utf-8",
    )


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with chat_server() as s:
        yield s


def cli(
    project: Path, *args: str, code: int = 0, env: dict[str, str] | None = None
) -> dict[str, Any]:
    proc = subprocess.run(
        skillrt_cmd(*args, "--json"),
        cwd=project,
        env=env if env is not None else cli_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def memory_texts(status: dict[str, Any]) -> dict[str, str]:
    return {p["phase_id"]: Path(p["memory_file"]).read_text("utf-8") for p in status["phases"]}


def log_counts(log: Path) -> Counter[str]:
    return Counter(log.read_text("utf-8").split()) if log.exists() else Counter()


def state_bytes(project: Path) -> bytes:
    state = project / ".skillrt"
    return b"".join(p.read_bytes() for p in state.glob("state.db*"))


def test_openai_endpoint_runs_the_whole_workflow(project: Path, server: ChatServer) -> None:
    env = cli_env(OPENAI_API_KEY=KEY)
    args = ("--runner", "openai", "--base-url", server.base_url, "--model", "test-model")
    done = cli(project, "workflow", "start", "develop-feature", QUERY, *args, env=env)
    assert done["state"] == "completed" and done["marker"] == "SKILL_ORCHESTRATION_COMPLETE"
    assert server.phases() == PHASES  # one request per phase, none twice
    assert {r["auth"] for r in server.requests} == {f"Bearer {KEY}"}
    assert {r["model"] for r in server.requests} == {"test-model"}
    # The model only answered: skillrt wrote each reply to the memory file, as is.
    for phase, text in memory_texts(done).items():
        assert text.startswith(f"{phase} concluded the {phase} phase")
        assert text.rstrip().endswith("Status: COMPLETED")
    prompt = server.requests[0]["prompt"]
    assert "Reply with the complete content of that file" in prompt
    assert "Memory file: " in prompt
    # Each phase records the runner, the model and the reply's token counts.
    for p in done["phases"]:
        ran = p["runner"]
        assert ran["kind"] == "openai" and ran["model"] == "test-model", ran
        assert ran["memory_from"] == "reply"
        assert ran["tokens_in"] > 0 and ran["tokens_out"] > 0
    status = cli(project, "workflow", "status", done["run_id"])
    assert status["runner"]["kind"] == "openai"
    assert status["runner"]["base_url"] == server.base_url
    # The key is read from the environment, never saved.
    assert KEY.encode() not in state_bytes(project)
    # Learnings from the replies were merged, as for any agent.
    assert "answered through a chat endpoint" in json.dumps(done["steps"]["6"]["learnings"])


def test_execution_runner_in_the_config_runs_the_workflow(
    tmp_path: Path, server: ChatServer
) -> None:
    write_project(
        tmp_path,
        f"execution:\n  runner: openai\n  base_url: {server.base_url}\n  model: cfg-model\n",
    )
    done = cli(tmp_path, "workflow", "start", "develop-feature", QUERY)
    assert done["state"] == "completed"
    assert server.phases() == PHASES
    assert {r["model"] for r in server.requests} == {"cfg-model"}
    assert {r["auth"] for r in server.requests} == {None}  # no key set: none sent


def test_a_fenced_reply_is_the_file_inside_the_fence(project: Path, server: ChatServer) -> None:
    server.fenced = True
    args = ("--runner", "openai", "--base-url", server.base_url, "--model", "m")
    done = cli(project, "workflow", "start", "develop-feature", QUERY, *args)
    assert done["state"] == "completed"
    for text in memory_texts(done).values():
        assert not text.startswith("```") and text.rstrip().endswith("Status: COMPLETED")


def test_resume_rebuilds_the_openai_runner_and_reads_the_key_again(
    project: Path, server: ChatServer
) -> None:
    server.failing = {"research"}
    args = ("--runner", "openai", "--base-url", server.base_url, "--model", "m")
    err = cli(
        project,
        "workflow",
        "start",
        "develop-feature",
        QUERY,
        *args,
        code=1,
        env=cli_env(OPENAI_API_KEY=KEY),
    )["error"]
    assert err["code"] == "E_WORKFLOW_PHASE_FAILED" and err["phase_id"] == "research"
    run_id = err["run_id"]
    assert server.phases() == ["clarification", "research", "research"]  # one retry of a 500
    server.failing = set()

    # Resumed with no runner option: the run's own runner, whose key is not set here.
    no_key = {k: v for k, v in cli_env().items() if k != "OPENAI_API_KEY"}
    before = cli(project, "workflow", "status", run_id, "--transitions")
    err = cli(project, "workflow", "resume", run_id, code=1, env=no_key)["error"]
    assert err["code"] == "E_CONFIG" and err["reason"] == "api_key_missing"
    assert err["key"] == "OPENAI_API_KEY" and "OPENAI_API_KEY" in err["message"]
    # Nothing else changes (issue 30): no transition, no event, the same blocked run.
    human = subprocess.run(
        skillrt_cmd("workflow", "resume", run_id), cwd=project, env=no_key,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert human.returncode == 1 and "E_CONFIG" in human.stderr
    assert "BLOCKED" not in human.stdout and human.stdout.strip() == ""
    after = cli(project, "workflow", "status", run_id, "--transitions")
    assert after["state"] == "blocked"
    assert after["transitions_log"] == before["transitions_log"]
    assert after["updated_at"] == before["updated_at"]

    done = cli(project, "workflow", "resume", run_id, env=cli_env(OPENAI_API_KEY=KEY))
    assert done["state"] == "completed"
    assert server.phases() == ["clarification", "research", "research", *PHASES[1:]]
    assert server.requests[-1]["auth"] == f"Bearer {KEY}"
    assert KEY.encode() not in state_bytes(project)


def test_resume_options_change_only_what_they_name(project: Path, server: ChatServer) -> None:
    """``resume --model X`` keeps the run's endpoint; the new choice is saved with it."""
    server.failing = {"research"}
    args = ("--runner", "openai", "--base-url", server.base_url, "--model", "m1")
    err = cli(project, "workflow", "start", "develop-feature", QUERY, *args, code=1)["error"]
    server.failing = set()
    done = cli(project, "workflow", "resume", err["run_id"], "--model", "m2")
    assert done["state"] == "completed"
    assert [r["model"] for r in server.requests] == ["m1", "m1", "m1", "m2", "m2", "m2"]
    assert done["runner"]["model"] == "m2" and done["runner"]["base_url"] == server.base_url


def text_agent(log: Path, *extra: str) -> str:
    return agent_cmd(log, "--text", *extra)


def test_a_text_only_command_runs_the_whole_workflow(project: Path) -> None:
    log = project / "agents.log"
    done = cli(
        project, "workflow", "start", "develop-feature", QUERY, "--runner-cmd", text_agent(log)
    )
    assert done["state"] == "completed"
    assert log_counts(log) == Counter(PHASES)
    for p in done["phases"]:
        assert p["runner"]["kind"] == "command" and p["runner"]["memory_from"] == "reply"
        assert p["runner"]["exit_code"] == 0
        text = Path(p["memory_file"]).read_text("utf-8")
        assert text.startswith(f"{p['agent']} concluded the {p['phase_id']} phase")
    # Each phase saw the earlier phases' files, written from their replies.
    research = Path(done["phases"][1]["memory_file"]).read_text("utf-8")
    assert "- TASK-clarification-memory.md" in research


def test_an_empty_reply_is_said_to_be_one(project: Path) -> None:
    """A text model that answers nothing: the error says the reply was empty, not that
    the agent "has not written" a file (issue 30)."""
    log = project / "agents.log"
    runner = text_agent(log, "--skip-in", "research")
    err = cli(
        project, "workflow", "start", "develop-feature", QUERY, "--runner-cmd", runner, code=1
    )["error"]
    assert err["code"] == "E_MEMORY_VERIFICATION_FAILED" and err["reason"] == "empty_reply"
    assert "reply was empty" in err["message"] and "has not written" not in err["message"]
    assert log_counts(log)["research"] == 2  # one retry, told why


def test_an_agentic_command_writes_its_own_files(project: Path) -> None:
    log = project / "agents.log"
    done = cli(
        project,
        "workflow",
        "start",
        "develop-feature",
        QUERY,
        "--runner-cmd",
        agent_cmd(log),
        "--writes-files",
        "--show-prompts",
    )
    assert done["state"] == "completed"
    assert log_counts(log) == Counter(PHASES)
    assert {p["runner"]["memory_from"] for p in done["phases"]} == {"agent"}
    assert {p["runner"]["writes_files"] for p in done["phases"]} == {True}
    prompt = next(e["prompt"] for e in done["events"] if e["kind"] == "phase_started")
    assert "Write that file" in prompt and "Reply with the complete content" not in prompt


def test_a_file_the_agent_wrote_wins_over_its_reply(project: Path) -> None:
    """An agent that writes its file and also answers: the file is kept, not the answer."""
    log = project / "agents.log"
    done = cli(
        project, "workflow", "start", "develop-feature", QUERY, "--runner-cmd", agent_cmd(log)
    )
    assert done["state"] == "completed"
    for p in done["phases"]:
        assert p["runner"]["memory_from"] == "agent"
        assert not Path(p["memory_file"]).read_text("utf-8").startswith("wrote ")


def test_a_reply_without_the_marker_gets_one_retry_then_blocks(project: Path) -> None:
    log = project / "agents.log"
    runner = text_agent(log, "--unmarked-in", "research")
    err = cli(
        project, "workflow", "start", "develop-feature", QUERY, "--runner-cmd", runner, code=1
    )["error"]
    assert err["code"] == "E_MEMORY_VERIFICATION_FAILED" and err["reason"] == "not_completed"
    assert err["phase_id"] == "research"
    assert log_counts(log) == Counter({"clarification": 1, "research": 2})  # one retry
    run_id = err["run_id"]
    status = cli(project, "workflow", "status", run_id)
    assert status["state"] == "blocked"
    research = status["phases"][1]
    assert research["state"] == "failed" and research["attempts"] == 2
    # Never faked: the reply was written as it was, without the marker.
    assert not Path(research["memory_file"]).read_text("utf-8").rstrip().endswith("COMPLETED")
    # The way out is named: fix the file and advance, or resume.
    assert f"workflow advance {run_id} research" in status["next"]
    assert f"workflow resume {run_id}" in status["next"]

    # Resume runs the phase again (told why); the agent now answers properly.
    fixed = text_agent(log)
    done = cli(project, "workflow", "resume", run_id, "--runner-cmd", fixed, "--show-prompts")
    assert done["state"] == "completed"
    assert log_counts(log) == Counter({**Counter(PHASES), "research": 3})
    started = [e for e in done["events"] if e["kind"] == "phase_started"]
    assert started[0]["phase_id"] == "research"
    assert "## Previous attempt" in started[0]["prompt"]
    assert "does not end with the line 'Status: COMPLETED'" in started[0]["prompt"]


def test_the_retry_tells_why_and_can_succeed(project: Path) -> None:
    log = project / "agents.log"
    once = project / "unmarked-once"
    runner = text_agent(log, "--unmarked-in", "research", "--unmarked-once", str(once))
    done = cli(
        project,
        "workflow",
        "start",
        "develop-feature",
        QUERY,
        "--runner-cmd",
        runner,
        "--show-prompts",
    )
    assert done["state"] == "completed"
    assert log_counts(log) == Counter({**Counter(PHASES), "research": 2})
    kinds = [(e["kind"], e.get("phase_id")) for e in done["events"]]
    assert ("phase_failed", "research") in kinds
    retry = [
        e for e in done["events"] if e["kind"] == "phase_started" and e["phase_id"] == "research"
    ]
    assert "## Previous attempt" not in retry[0]["prompt"]
    assert "## Previous attempt" in retry[1]["prompt"]
    research = done["phases"][1]
    assert research["attempts"] == 2 and research["state"] == "verified"


def test_status_blocked_in_a_reply_blocks_at_once(project: Path) -> None:
    log = project / "agents.log"
    runner = text_agent(log, "--blocked-in", "research")
    err = cli(
        project, "workflow", "start", "develop-feature", QUERY, "--runner-cmd", runner, code=1
    )["error"]
    assert err["code"] == "E_MEMORY_VERIFICATION_FAILED" and err["reason"] == "blocked"
    assert "waiting for an answer" in err["blocked"]
    assert log_counts(log) == Counter({"clarification": 1, "research": 1})  # no retry

    # advance after a fix: the answer is given in the file, then resume runs the rest.
    status = cli(project, "workflow", "status", err["run_id"])
    path = Path(status["phases"][1]["memory_file"])
    path.write_text(path.read_text("utf-8").replace("Status: BLOCKED", "Answer:") + "\n"
                    "Status: COMPLETED\n", encoding="utf-8")  # fmt: skip
    advanced = cli(project, "workflow", "advance", err["run_id"], "research")
    assert [p["state"] for p in advanced["phases"]][:2] == ["verified", "verified"]
    done = cli(project, "workflow", "resume", err["run_id"])  # the run's own runner
    assert done["state"] == "completed"
    assert log_counts(log) == Counter({**Counter(PHASES)})


def test_runner_options_are_refused_with_manual(project: Path) -> None:
    err = cli(
        project,
        "workflow",
        "start",
        "develop-feature",
        QUERY,
        "--manual",
        "--runner-cmd",
        "cat",
        code=2,
    )["error"]
    assert err["code"] == "E_USAGE" and "--runner-cmd" in err["message"]


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--runner", "openai"], "no_base_url"),
        (["--runner", "telepathy"], "unknown_runner"),
        (["--runner", "command"], "no_runner_cmd"),
    ],
)
def test_runner_errors_are_the_same_for_every_command(
    project: Path, args: list[str], reason: str
) -> None:
    """``--runner openai`` is the openai runner (not ``--runner-cmd openai``), and a bad
    choice is the same E_CONFIG error from ``workflow start``, ``run`` and ``dispatch``."""
    errors = [
        cli(project, "workflow", "start", "develop-feature", QUERY, *args, code=1)["error"],
        cli(project, "run", "hello", *args, code=1)["error"],
        cli(project, "dispatch", "--prompt", "hello", *args, code=1)["error"],
    ]
    assert {e["code"] for e in errors} == {"E_CONFIG"}
    assert {e["reason"] for e in errors} == {reason}
    assert len({e["message"] for e in errors}) == 1


def test_no_run_is_created_for_a_bad_runner(project: Path) -> None:
    cli(project, "workflow", "start", "develop-feature", QUERY, "--runner", "openai", code=1)
    assert cli(project, "workflow", "list")["runs"] == []


def test_the_python_api_takes_the_same_options(project: Path, server: ChatServer) -> None:
    """``workflow_start(runner_options=RunnerOptions(...))`` builds the runner the CLI
    flags would."""
    code = (
        "import json, sys\n"
        "from skillrt import RunnerOptions, SkillRuntime, RuntimeConfig\n"
        "rt = SkillRuntime(RuntimeConfig.from_file('skillrt.yaml'), env={})\n"
        "opts = RunnerOptions(runner='openai', base_url=sys.argv[1], model='py-model')\n"
        "st = rt.workflow_start('develop-feature', 'Add CSV export', runner_options=opts)\n"
        "print(json.dumps([st.state, [p.runner['model'] for p in st.phases]]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, server.base_url],
        cwd=project,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == ["completed", ["py-model"] * 4]


def test_a_dry_run_resume_keeps_the_runs_own_runner(project: Path) -> None:
    log = project / "agents.log"
    runner = text_agent(log, "--fail-in", "research")
    err = cli(
        project, "workflow", "start", "develop-feature", QUERY, "--runner-cmd", runner, code=1
    )["error"]
    shown = cli(project, "workflow", "resume", err["run_id"], "--dry-run")
    assert shown["dry_run"] is True
    status = cli(project, "workflow", "status", err["run_id"])
    assert status["runner"]["kind"] == "command" and status["runner"]["runner_cmd"] == runner


def test_options_that_choose_no_runner_do_not_make_one(project: Path) -> None:
    """``--timeout`` or ``--model`` alone modify a runner; they do not pick the default
    dry-run one to drive the phases."""
    for flags in (["--timeout", "30"], ["--model", "m"]):
        err = cli(project, "workflow", "start", "develop-feature", QUERY, *flags, code=1)
        assert err["error"]["code"] == "E_WORKFLOW_RUNNER_REQUIRED", flags
