"""The right skill in every prompt of the real clients (issue 27): Claude Code, Codex CLI
and Gemini CLI, installed from npm, send their requests to a recorder on 127.0.0.1, and
these tests read what the model would have received.

For each client, after ``skillrt install`` alone (no hand-started daemon, no other
step): the right skill's body is in the first prompt's request exactly once; an
unrelated prompt gets no skill; three turns of one session still hold it exactly once;
a user-level install answers the first prompt in a repository it never saw; nothing
appears in the project but what install wrote; uninstall gives the files back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import (
    CLIENTS,
    FOLLOW_UP,
    MARKER,
    PROMPT,
    UNRELATED,
    Agent,
    commit_all,
    git_status,
    marker_count,
    request_texts,
    skills_with_marker,
)

pytestmark = pytest.mark.slow

#: A quick question of fact about pasted SQL: sql-query-review is pointed to, not injected.
QUICK_FACT = (
    "SELECT * FROM orders WHERE created_at > now() - interval '7 days' ORDER BY total DESC;"
    "\n\nis now() here the transaction start time or the statement time?"
)
QUICK_MARKER = "SKILLRT-E2E-QUICK-FACT-3b9e"

#: client -> what install writes in a project.
WRITES = {
    "claude-code": [".claude/settings.json"],
    "codex": [".codex/hooks.json"],
    "gemini": [".gemini/settings.json"],
}


def test_project_install_one_body_per_session(agent: Agent) -> None:
    skills_with_marker(agent.project / CLIENTS[agent.client][1])
    sql = agent.project / CLIENTS[agent.client][1] / "sql-query-review" / "SKILL.md"
    sql.write_text(sql.read_text() + f"\n{QUICK_MARKER}\n")
    (agent.project / "skillrt.yaml").write_text("routing:\n  point_quick_facts: true\n")
    commit_all(agent.project)
    installed = agent.skillrt("install", agent.client, "--json")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert git_status(agent.project) == [f"?? {p}" for p in WRITES[agent.client]]

    first = agent.prompt(PROMPT)
    assert first and marker_count(first) == [1] * len(first), request_texts(first)[-1][-3000:]
    # Gemini CLI: the skill is in the user's own words, not in a <hook_context> part
    assert not [p for r in first for p in _parts(r.body) if p.startswith("<hook_context>")]

    second = agent.prompt(FOLLOW_UP, resume=True)
    third = agent.prompt("ok, and what about the flaky one on CI?", resume=True)
    assert marker_count(second) == [1] * len(second)
    assert marker_count(third) == [1] * len(third)  # three turns, one body

    other = agent.prompt(UNRELATED)  # a new session, a question no skill is for
    assert marker_count(other) == [0] * len(other)
    assert all("[Skill: " not in t and "Using skill" not in t for t in request_texts(other))

    # A quick question of fact about a paste, with the project's point_quick_facts on:
    # the skill is named for the model, its body stays out (issue 29).
    quick = agent.prompt(QUICK_FACT)
    texts = request_texts(quick)
    assert quick and all(QUICK_MARKER not in t for t in texts), texts[-1][-3000:]
    assert all("Skills that may apply" in t and "sql-query-review" in t for t in texts)

    # the hook's state, caches, log and daemon live outside the repository
    assert git_status(agent.project) == [f"?? {p}" for p in WRITES[agent.client]]
    removed = agent.skillrt("install", agent.client, "--uninstall")
    assert removed.returncode == 0, removed.stderr
    assert git_status(agent.project) == []


def test_user_install_answers_the_first_prompt_in_a_new_repo(agent: Agent) -> None:
    skills_with_marker(agent.home / CLIENTS[agent.client][2])
    installed = agent.skillrt("install", agent.client, "--user", "--json", cwd=agent.home)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    fresh = agent.new_project("never-seen")
    first = agent.prompt(PROMPT, cwd=fresh)
    assert first and marker_count(first) == [1] * len(first), request_texts(first)[-1][-3000:]
    assert git_status(fresh) == []  # not a file more in the repository
    assert MARKER not in (fresh / ".git" / "config").read_text()


def _parts(body: object) -> list[str]:
    """The text parts of a Gemini request's contents (other APIs: none)."""
    if not isinstance(body, dict):
        return []
    return [
        str(part.get("text") or "")
        for content in body.get("contents") or ()
        for part in content.get("parts") or ()
    ]


@pytest.mark.parametrize("agent", ["gemini"], indirect=True)
def test_a_turn_that_runs_a_tool_routes_its_prompt_once(agent: Agent) -> None:
    """Gemini CLI's one BeforeModel hook runs at each model call of a turn: the call
    after a tool's result carries the skill again, and routes nothing new."""
    skills_with_marker(agent.project / CLIENTS[agent.client][1])
    installed = agent.skillrt("install", agent.client, "--json")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    agent.server.tool_call = ("list_directory", {"dir_path": "."})
    try:
        turn = [r for r in agent.prompt(PROMPT) if r.body and r.body.get("tools")]
    finally:
        agent.server.tool_call = None
    assert len(turn) == 2, [r.text[-500:] for r in turn]  # the call, then with its result
    assert '"functionResponse"' in turn[1].text
    assert marker_count(turn) == [1, 1]
    # One block recorded for the turn: the tool's result was not routed as a prompt.
    records = list(Path(agent.env["XDG_CACHE_HOME"]).glob("skillrt/**/sessions/gemini-*.json"))
    assert len(records) == 1
    entries = json.loads(records[0].read_text())["entries"]
    assert [e["skills"] for e in entries] == [["systematic-debugging"]]


@pytest.mark.parametrize("agent", ["codex"], indirect=True)
def test_codex_trust_is_asked_of_codex_and_doctor_says_when_it_is_missing(agent: Agent) -> None:
    """Codex runs a hook only once it is trusted: `install --no-trust` leaves it
    untrusted (doctor says so, and Codex sends no skill); `install` records the approval
    through Codex's app server, and the next prompt carries the skill."""
    import json

    from skillrt.doctor.environment import hook_status

    skills_with_marker(agent.project / CLIENTS["codex"][1])
    assert agent.skillrt("install", "codex", "--no-trust").returncode == 0
    status = hook_status(agent.project, agent.home, environ=agent.env)  # what doctor reports
    problems = status["codex"]["problems"]
    assert [p["code"] for p in problems] == ["HOOK_UNTRUSTED"], problems
    assert marker_count(agent.prompt(PROMPT)) == [0]  # Codex skipped it without a word
    trusted = agent.skillrt("install", "codex", "--json")
    assert trusted.returncode == 0 and json.loads(trusted.stdout)["trust"]["ok"]
    assert "problems" not in hook_status(agent.project, agent.home, environ=agent.env)["codex"]
    assert marker_count(agent.prompt(PROMPT)) == [1]


@pytest.mark.parametrize("agent", ["codex", "gemini"], indirect=True)
def test_the_mcp_server_install_adds_is_in_the_first_request(agent: Agent) -> None:
    """``install --mcp``: the client's very first model request already reaches
    skillrt's server (Codex offers the tools listed ~1 s after ``initialize``, and no
    later ones), no tool name stands twice, and the hook still injects the skill once.

    Gemini CLI run with ``-p`` offers no tool of an MCP server that is not trusted (its
    tools would need an approval nobody can give); it offers the server's resources,
    which only a server that answered has."""
    skills_with_marker(agent.project / CLIENTS[agent.client][1])
    installed = agent.skillrt("install", agent.client, "--mcp", "--json")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    first = agent.prompt(PROMPT)
    names = _tool_names(first[0].body)
    assert len(names) == len(set(names)), sorted(names)
    if agent.client == "codex":
        assert "mcp__skillrt.load_skill" in names, names
    else:
        assert "list_mcp_resources" in names, names
    assert marker_count(first) == [1] * len(first)


def _tool_names(body: object) -> list[str]:
    """The names of the tools a model request offers (the Responses API, a namespace's
    tools as ``namespace.tool``; Gemini's function declarations)."""
    if not isinstance(body, dict):
        return []
    names: list[str] = []
    for tool in body.get("tools") or ():
        if tool.get("name"):
            names.append(str(tool["name"]))
        names += [f"{tool.get('name')}.{t.get('name')}" for t in tool.get("tools") or ()]
        names += [str(f.get("name")) for f in tool.get("functionDeclarations") or ()]
    return names
