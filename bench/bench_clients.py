"""What skillrt's hook costs a real client's prompt (issue 27 targets), measured with the
real CLIs (Claude Code, Codex CLI, Gemini CLI from .ci/clients) against the recorder of
tests/clients on 127.0.0.1, after `skillrt install` alone (no hand-started daemon):

1. the wall time a prompt gains from the hook, against the same client without it:
   median of N prompts after the first, each a new session, the set-ups taken in turn
   (target <= 100 ms per client); beside it, the same install with each hook command
   replaced by ``cat > /dev/null``: what the client itself spends on running a hook,
   and what skillrt's adds to that (Claude Code and Gemini CLI); for Gemini CLI also
   the time its prompt waits on hooks, as Gemini itself reports it (``--debug``: "Hook
   execution for <event>: ... total duration"), which the noise of a ~4 s prompt
   does not hide; for Claude Code also the same install with skillrt's hook taken out
   of the settings file (Claude Code pays for reading a settings file, whatever it
   holds), and its own clock (``--debug hooks``): the prompt's path to the model
   request with and without the hook;
2. the first prompt after a user-level install over 1,000 real skills, in a repository
   never seen, no daemon running: it must inject, and add at most 1.5 s;
3. the hook process alone, answered by the daemon that first prompt started, at 1,000
   real skills (target p95 <= 60 ms);
4. `skillrt mcp --with-hook` answering `initialize` at 1,000 skills (target <= 300 ms),
   and the `tools/list` after it (Codex offers the tools listed ~1 s after initialize).

    python bench/bench_clients.py [--clients claude-code,codex,gemini] [--prompts 10]
                                  [--skills 1000] [--hooks 60] [--work DIR]

Run it on a quiet machine (it prints the load average before and after each part).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "clients"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    import skillrt  # noqa: F401
except ImportError:  # run from a checkout without installing
    sys.path.insert(0, str(REPO / "src"))

from client_env import client_env, prompt_argv, stop_daemons, trust  # noqa: E402
from model_server import ModelServer, running  # noqa: E402
from real_catalogue import build_real_catalogue  # noqa: E402

from skillrt.clients import CLIENTS  # noqa: E402

TARGET_OVERHEAD_MS = 100.0
TARGET_FIRST_PROMPT_S = 1.5
TARGET_HOOK_P95_MS = 60.0
TARGET_MCP_INIT_MS = 300.0
BIN = Path(os.environ.get("SKILLRT_CLIENTS_BIN") or REPO / ".ci/cache/clients/node_modules/.bin")
FOLDER = {"claude-code": ".claude/skills", "codex": ".agents/skills", "gemini": ".gemini/skills"}
PROMPT = "The nightly build fails after the refactor: find the root cause before fixing anything"
#: The big catalogue gets one example skill of a name it lacks, and these prompts go to
#: it: a first prompt that must inject is not left to how crowded the catalogue is.
EXTRA_SKILL = "sql-query-review"
REAL_PROMPTS = [
    "review this SQL query for injection",
    "check my sql query for injection before I merge it",
    "is this SQL query safe from injection?",
]


def loadavg() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Setup:
    """A HOME and a project for one client, its model API at the recorder."""

    def __init__(self, root: Path, client: str, server: ModelServer, cache: Path) -> None:
        self.client = client
        self.home = root / "home"
        self.project = root / "project"
        self.home.mkdir(parents=True)
        self.project.mkdir()
        subprocess.run(["git", "init", "-q", str(self.project)], check=True)
        self.env = client_env(client, self.home, server.url, cache, BIN)
        self.trust(self.project)

    def trust(self, project: Path) -> None:
        trust(self.client, self.home, project)

    def skillrt(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "skillrt", *args]
        return subprocess.run(argv, cwd=cwd or self.project, env=self.env,
                              capture_output=True, text=True, timeout=1800)  # fmt: skip

    def prompt(self, text: str, cwd: Path | None = None) -> float:
        argv = prompt_argv(self.client, BIN, text)
        started = time.perf_counter()
        proc = subprocess.run(argv, cwd=cwd or self.project, env=self.env, capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL)  # fmt: skip
        if proc.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed: {proc.stderr[-1500:]}")
        return time.perf_counter() - started

    def stop_daemons(self) -> None:
        """End the daemons this set-up's hooks started (their state is in its cache)."""
        stop_daemons(Path(self.env["XDG_CACHE_HOME"]))


def overhead(
    client: str, work: Path, prompts: int, cache: Path, scope: str = "project"
) -> dict[str, Any]:
    """Part 1: the same prompts with and without the hook, in turn (``scope``: where
    install writes the hook, the project's settings or the user's)."""
    out: dict[str, Any] = {"client": client, "scope": scope, "load_before": loadavg()}
    with running() as server:
        plain = Setup(work / f"{client}-plain", client, server, cache / "plain")
        hooked = Setup(work / f"{client}-hooked", client, server, cache / "hooked")
        setups = [plain, hooked]
        # The client's own cost of running a hook at all: the same install, each of
        # skillrt's commands replaced by one that reads its input and does nothing
        # (not for Codex, which runs a changed hook only once it is trusted again).
        empty = bare = None
        if client != "codex":
            empty = Setup(work / f"{client}-empty", client, server, cache / "empty")
            setups.append(empty)
        if client == "claude-code":
            # Claude Code pays for reading a settings file whatever it holds: the same
            # install with skillrt's hooks taken out is the baseline of a user who has a
            # settings file of their own.
            bare = Setup(work / f"{client}-bare", client, server, cache / "bare")
            setups.append(bare)
        for setup in setups:
            shutil.copytree(REPO / "examples" / "skills", setup.project / FOLDER[client])
        user = ["--user"] if scope == "user" else []
        for setup in setups[1:]:
            where = setup.home if user else setup.project
            installed = setup.skillrt("install", client, *user, "--json", cwd=where)
            if installed.returncode != 0:
                raise RuntimeError(f"install failed: {installed.stdout} {installed.stderr}")
        spec = CLIENTS[client]
        if empty is not None:
            base = empty.home if user else empty.project
            _empty_hooks(base / spec.folder / str(spec.hooks_file))
        if bare is not None:
            base = bare.home if user else bare.project
            _without_skillrt(base / spec.folder / str(spec.hooks_file))
            # A hook known to cost 200 ms: the yardstick of what Claude Code's log shows.
            slow = Setup(work / f"{client}-slow", client, server, cache / "slow")
            shutil.copytree(REPO / "examples" / "skills", slow.project / FOLDER[client])
            where = slow.home if user else slow.project
            slow.skillrt("install", client, *user, "--json", cwd=where)
            _empty_hooks(where / spec.folder / str(spec.hooks_file), SLOW_HOOK)
        try:
            for setup in setups:
                setup.prompt(PROMPT)  # the first: skillrt's starts the daemon
            times: list[list[float]] = [[] for _ in setups]
            for _ in range(prompts):
                for setup, took in zip(setups, times, strict=True):
                    took.append(setup.prompt(PROMPT))
            injected = sum("[Skill: systematic-debugging" in r.text
                           for r in server.model_requests())  # fmt: skip
            if client == "gemini":
                out["in_client_hook_ms"] = _gemini_hook_time(hooked, prompts)
            if bare is not None and empty is not None:
                named = {"no_settings": plain, "settings_without_hook": bare,
                         "empty_hook": empty, "slow_hook": slow,
                         "skillrt_hook": hooked}  # fmt: skip
                out["in_client_prompt_path"] = _claude_prompt_path(named, prompts)
        finally:
            hooked.stop_daemons()
    without, with_hook = times[0], times[1]
    overhead_ms, paired_gain_ms = _gain(with_hook, without)
    out.update(
        median_with_ms=round(statistics.median(with_hook) * 1000, 1),
        median_without_ms=round(statistics.median(without) * 1000, 1),
        overhead_ms=overhead_ms,
        paired_median_gain_ms=paired_gain_ms,
        requests_with_the_skill=injected,
    )
    if empty is not None:
        idle = times[2]
        costs, _ = _gain(idle, without)
        over, paired = _gain(with_hook, idle)
        out.update(
            median_empty_hook_ms=round(statistics.median(idle) * 1000, 1),
            empty_hook_costs_ms=costs,
            over_empty_hook_ms=over,
            paired_over_empty_ms=paired,
        )
    if bare is not None:
        base_times = times[setups.index(bare)]
        over, paired = _gain(with_hook, base_times)
        out.update(
            median_bare_settings_ms=round(statistics.median(base_times) * 1000, 1),
            over_bare_settings_ms=over,
            paired_over_bare_ms=paired,
        )
    out["load_after"] = loadavg()
    return out


def _gain(later: list[float], earlier: list[float]) -> tuple[float, float]:
    """In ms, how much ``later``'s median is over ``earlier``'s (seconds, taken in turn),
    and the median of their paired differences."""
    over = (statistics.median(later) - statistics.median(earlier)) * 1000
    paired = statistics.median((a - b) * 1000 for a, b in zip(later, earlier, strict=True))
    return round(over, 1), round(paired, 1)


def _claude_debug_spans(log: Path) -> tuple[float, float]:
    """From one Claude Code debug log (``--debug hooks``): ms from its first line
    (Node is up by then) to its model request, and from the prompt's processing (the
    attachments it gathers, the hooks' output among them) to that request."""
    import datetime
    import re

    stamped = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z ")
    start = prompt = request = None
    for line in log.read_text(encoding="utf-8").splitlines():
        m = stamped.match(line)
        if m is None:
            continue
        at = datetime.datetime.fromisoformat(m.group(1) + "+00:00").timestamp() * 1000
        start = at if start is None else start
        if prompt is None and "getLSPDiagnosticAttachments called" in line:
            prompt = at
        if "[API REQUEST]" in line:
            request = at
            break
    if start is None or prompt is None or request is None:
        raise RuntimeError(f"no prompt in Claude Code's debug log {log}")
    return request - start, request - prompt


def _claude_prompt_path(named: dict[str, Setup], prompts: int) -> dict[str, Any]:
    """Claude Code's own account (its ``--debug hooks`` log) for each named set-up, run
    in turn (the order rotated each round): the median ms from the log's first line to
    the model request and from the prompt's processing to it, and the paired medians
    of the later set-ups against each earlier one. Each prompt must succeed and leave
    exactly one new log that holds its model request."""
    names = list(named)
    spans: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    for round_ in range(prompts):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            setup = named[name]
            logs = setup.home / ".claude" / "debug"
            before = set(logs.glob("*.txt"))
            argv = [*prompt_argv("claude-code", BIN, PROMPT), "--debug", "hooks"]
            proc = subprocess.run(argv, cwd=setup.project, env=setup.env, capture_output=True,
                                  text=True, timeout=300, stdin=subprocess.DEVNULL)  # fmt: skip
            if proc.returncode != 0:
                raise RuntimeError(f"claude failed ({name}): {proc.stderr[-1500:]}")
            new = [p for p in set(logs.glob("*.txt")) - before
                   if "[API REQUEST]" in p.read_text(encoding="utf-8")]  # fmt: skip
            if len(new) != 1:
                raise RuntimeError(f"{len(new)} new Claude Code debug logs with a request")
            spans[name].append(_claude_debug_spans(new[0]))
    out: dict[str, Any] = {"prompts": prompts}
    for name in names:
        out[f"{name}_start_to_request_ms"] = round(statistics.median(s for s, _ in spans[name]), 1)
        out[f"{name}_prompt_to_request_ms"] = round(statistics.median(p for _, p in spans[name]), 1)
    for k, later in enumerate(names):
        for earlier in names[:k]:
            for n, part in enumerate(("start_to_request", "prompt_to_request")):
                diffs = [a[n] - b[n] for a, b in zip(spans[later], spans[earlier], strict=True)]
                out[f"{later}_vs_{earlier}_{part}_ms"] = round(statistics.median(diffs), 1)
    return out


def _gemini_hook_time(setup: Setup, prompts: int) -> dict[str, Any]:
    """Per prompt, the milliseconds Gemini CLI waited on hooks, as it logs them with
    ``--debug`` (each event's "total duration", summed over the prompt): median, p95."""
    import re

    found = re.compile(r"Hook execution for (\w+): .*total duration: (\d+)ms")
    per_prompt: list[float] = []
    events: set[str] = set()
    for _ in range(prompts):
        argv = [*prompt_argv("gemini", BIN, PROMPT), "--debug"]
        proc = subprocess.run(argv, cwd=setup.project, env=setup.env, capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL)  # fmt: skip
        hits = found.findall(proc.stdout + proc.stderr)
        events.update(event for event, _ms in hits)
        per_prompt.append(sum(float(ms) for _event, ms in hits))
    return {
        "median_ms": round(statistics.median(per_prompt), 1),
        "p95_ms": round(pct(per_prompt, 0.95), 1),
        "events": sorted(events),
    }


def _without_skillrt(settings: Path) -> None:
    """``settings`` with skillrt's hook handlers (and the groups and events they leave
    empty) taken out."""
    data = json.loads(settings.read_text())
    for event, groups in list(data["hooks"].items()):
        for group in groups:
            group["hooks"] = [h for h in group["hooks"] if "skillrt" not in h["command"]]
        data["hooks"][event] = [g for g in groups if g["hooks"]]
        if not data["hooks"][event]:
            del data["hooks"][event]
    if not data["hooks"]:
        del data["hooks"]
    settings.write_text(json.dumps(data, indent=2))


#: A hook that reads its input, waits 0.2 s and answers nothing.
SLOW_HOOK = "cat > /dev/null; sleep 0.2"


def _empty_hooks(settings: Path, command: str = "cat > /dev/null") -> None:
    """Each of skillrt's hook commands in ``settings`` replaced by ``command``."""
    data = json.loads(settings.read_text())
    for groups in data["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                if "skillrt" in handler["command"]:
                    handler["command"] = command
    settings.write_text(json.dumps(data, indent=2))


def first_prompt(
    client: str, work: Path, catalogue: Path, cache: Path, hooks: int, first_runs: int = 3
) -> dict[str, Any]:
    """Parts 2 and 3: a user-level install over the big catalogue, the first prompt in a
    never-seen repository (median of ``first_runs``, each in a new one), then the hook
    alone against the daemon the last of them started."""
    out: dict[str, Any] = {"client": client, "load_before": loadavg()}
    with running() as server:
        setup = Setup(work / f"{client}-first", client, server, cache / "first")
        shutil.copytree(catalogue, setup.home / FOLDER[client])
        plain = Setup(work / f"{client}-first-plain", client, server, cache / "first-plain")
        shutil.copytree(catalogue, plain.home / FOLDER[client])
        started = time.perf_counter()
        installed = setup.skillrt("install", client, "--user", "--json", cwd=setup.home)
        out["install_s"] = round(time.perf_counter() - started, 1)
        if installed.returncode != 0:
            raise RuntimeError(f"install failed: {installed.stdout} {installed.stderr}")
        out["skills"] = json.loads(installed.stdout).get("skill_count")
        try:
            baseline = [plain.prompt(REAL_PROMPTS[0]) for _ in range(3)]
            firsts: list[float] = []
            injected = []
            for i in range(first_runs):
                # Each in a repository never seen, no daemon running (the one the
                # previous first prompt started is stopped; the last one's stays, for
                # the hook alone).
                setup.stop_daemons()
                time.sleep(1)
                fresh = setup.project.parent / f"never-seen-{i}"
                fresh.mkdir()
                subprocess.run(["git", "init", "-q", str(fresh)], check=True)
                setup.trust(fresh)
                server.clear()
                firsts.append(setup.prompt(REAL_PROMPTS[0], cwd=fresh))
                injected.append("[Skill: " in " ".join(r.text for r in server.model_requests()))
            first = statistics.median(firsts)
            out.update(
                first_prompt_s=round(first, 2),
                first_prompts_s=[round(f, 2) for f in firsts],
                without_hook_s=round(statistics.median(baseline), 2),
                first_prompt_adds_s=round(first - statistics.median(baseline), 2),
                first_prompt_injected=all(injected),
            )
            out["hook_alone"] = hook_alone(setup, fresh, hooks)
            out["mcp"] = mcp_initialize(setup, fresh)
        finally:
            setup.stop_daemons()
    out["load_after"] = loadavg()
    return out


def hook_alone(setup: Setup, project: Path, runs: int) -> dict[str, Any]:
    """The installed hook command, run as the client runs it, answered by the daemon."""
    import shlex

    settings = {"claude-code": ".claude/settings.json", "codex": ".codex/hooks.json",
                "gemini": ".gemini/settings.json"}[setup.client]  # fmt: skip
    # Gemini CLI's one hook is BeforeModel: the prompt arrives in the request's messages.
    event = {"claude-code": "UserPromptSubmit", "codex": "UserPromptSubmit",
             "gemini": "BeforeModel"}[setup.client]  # fmt: skip
    data = json.loads((setup.home / settings).read_text())
    command = shlex.split(data["hooks"][event][0]["hooks"][0]["command"])
    state = None
    deadline = time.monotonic() + 600
    times: list[float] = []
    answered = 0
    while time.monotonic() < deadline and len(times) < runs + 5:
        prompt = REAL_PROMPTS[len(times) % len(REAL_PROMPTS)]
        fields: dict[str, Any] = {"prompt": prompt}
        if event == "BeforeModel":  # a new session each time: each prompt is routed
            opening = "<session_context>\nThis is the Gemini CLI.\n</session_context>"
            messages = [{"role": "user", "content": opening + prompt}]
            fields = {"llm_request": {"model": "gemini-test", "messages": messages}}
        payload = json.dumps({"session_id": f"bench-{len(times)}-{time.time_ns()}",
                              "transcript_path": "", "cwd": str(project),
                              "hook_event_name": event, **fields})  # fmt: skip
        started = time.perf_counter()
        proc = subprocess.run(command, input=payload, capture_output=True, text=True,
                              cwd=project, env=setup.env, timeout=60)  # fmt: skip
        elapsed = time.perf_counter() - started
        if state is None:  # wait for the daemon the first prompt started to answer
            log = list(Path(setup.env["XDG_CACHE_HOME"]).rglob("hook.log"))
            if log and "working in-process" in log[0].read_text() and elapsed > 0.2:
                log[0].write_text("")
                time.sleep(1)
                continue
            state = "warm"
        times.append(elapsed * 1000)
        answered += bool(proc.stdout.strip())
    times = times[5:]  # the first after the daemon came up settle the page cache
    return {
        "runs": len(times),
        "p50_ms": round(pct(times, 0.5), 1),
        "p95_ms": round(pct(times, 0.95), 1),
        "answered": answered,
    }


def mcp_initialize(setup: Setup, project: Path, runs: int = 5) -> dict[str, float]:
    """Median ms from `skillrt mcp --with-hook` start to its `initialize` answer, and
    to its answer to the `tools/list` sent after `initialized` (as Codex does: its first
    turn offers the tools listed about a second after initialize, and no others)."""
    first = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}}) + "\n"  # fmt: skip
    then = (json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
            + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) + "\n")  # fmt: skip
    init: list[float] = []
    listed: list[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "skillrt", "mcp", "--with-hook"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, cwd=project, env=setup.env)  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(first.encode())
        proc.stdin.flush()
        proc.stdout.readline()
        init.append((time.perf_counter() - started) * 1000)
        proc.stdin.write(then.encode())
        proc.stdin.flush()
        proc.stdout.readline()
        listed.append((time.perf_counter() - started) * 1000)
        proc.kill()
        proc.wait()
    return {"initialize_ms": round(statistics.median(init), 1),
            "tools_list_ms": round(statistics.median(listed), 1)}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="claude-code,codex,gemini")
    parser.add_argument("--prompts", type=int, default=10)
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--hooks", type=int, default=60, help="hook runs against the daemon")
    parser.add_argument("--work", type=Path, help="keep the set-ups here")
    parser.add_argument("--skip-overhead", action="store_true")
    parser.add_argument("--scope", choices=("project", "user"), default="project",
                        help="where install writes the hook for the overhead part")  # fmt: skip
    parser.add_argument("--skip-first", action="store_true")
    parser.add_argument("--first-runs", type=int, default=3,
                        help="first prompts, each in a new never-seen repository")  # fmt: skip
    args = parser.parse_args(argv)
    if not (BIN / "claude").exists():
        print(f"no clients in {BIN}: run `bash .ci/clients.sh install`", file=sys.stderr)
        return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-clients-"))
    work.mkdir(parents=True, exist_ok=True)
    cache = work / "cache"
    catalogue = work / f"real{args.skills}"
    if not catalogue.exists():
        build_real_catalogue(catalogue, args.skills - 1, seed=0)
        shutil.copytree(REPO / "examples" / "skills" / EXTRA_SKILL, catalogue / EXTRA_SKILL)
    results: dict[str, Any] = {"overhead": [], "first": []}
    for client in args.clients.split(","):
        if not args.skip_overhead:
            r = overhead(client, work, args.prompts, cache, args.scope)
            results["overhead"].append(r)
            ok = "ok" if r["overhead_ms"] <= TARGET_OVERHEAD_MS else "OVER"
            print(f"{client}: a prompt gains {r['overhead_ms']} ms from the hook (median "
                  f"{r['median_with_ms']} vs {r['median_without_ms']} ms over {args.prompts} "
                  f"prompts; paired {r['paired_median_gain_ms']} ms) target "
                  f"{TARGET_OVERHEAD_MS:g} ms [{ok}]  "
                  f"{r['load_before']} -> {r['load_after']}")  # fmt: skip
            if "in_client_hook_ms" in r:
                t = r["in_client_hook_ms"]
                events = ", ".join(t["events"])
                print(f"{client}: a prompt waits on hooks {t['median_ms']} ms (p95 "
                      f"{t['p95_ms']}; {events}), as the client logs it")  # fmt: skip
            if "over_bare_settings_ms" in r:
                print(f"{client}: against the same settings file without skillrt's hook, "
                      f"a prompt gains {r['over_bare_settings_ms']} ms (paired "
                      f"{r['paired_over_bare_ms']} ms)")  # fmt: skip
            if "in_client_prompt_path" in r:
                t = r["in_client_prompt_path"]
                print(f"{client}: its own debug log, median of {t['prompts']} (first line -> "
                      "model request / prompt -> model request, ms):")  # fmt: skip
                for name in ("no_settings", "settings_without_hook", "empty_hook",
                             "slow_hook", "skillrt_hook"):  # fmt: skip
                    print(f"  {name:22s} {t[f'{name}_start_to_request_ms']:7.1f} / "
                          f"{t[f'{name}_prompt_to_request_ms']:6.1f}")  # fmt: skip
                for later, earlier in (("settings_without_hook", "no_settings"),
                                       ("empty_hook", "settings_without_hook"),
                                       ("slow_hook", "empty_hook"),
                                       ("skillrt_hook", "empty_hook"),
                                       ("skillrt_hook", "settings_without_hook")):  # fmt: skip
                    key = (
                        f"{later}_vs_{earlier}"
                        if f"{later}_vs_{earlier}_start_to_request_ms" in t
                        else f"{earlier}_vs_{later}"
                    )
                    sign = 1 if key.startswith(later) else -1
                    print(f"  {later} vs {earlier}, paired: "
                          f"{sign * t[f'{key}_start_to_request_ms']:+.1f} / "
                          f"{sign * t[f'{key}_prompt_to_request_ms']:+.1f}")  # fmt: skip
            if "empty_hook_costs_ms" in r:
                print(f"{client}: an empty hook (cat > /dev/null) costs "
                      f"{r['empty_hook_costs_ms']} ms of the client's own; skillrt's hook "
                      f"{r['over_empty_hook_ms']} ms more than it (paired "
                      f"{r['paired_over_empty_ms']} ms)")  # fmt: skip
        if not args.skip_first:
            r = first_prompt(client, work, catalogue, cache / client, args.hooks,
                             args.first_runs)  # fmt: skip
            results["first"].append(r)
            ok = (
                "ok"
                if r["first_prompt_injected"] and r["first_prompt_adds_s"] <= TARGET_FIRST_PROMPT_S
                else "OVER"
            )
            h = r["hook_alone"]
            print(f"{client}: first prompt at {r['skills']} skills (install {r['install_s']} s) "
                  f"injected={r['first_prompt_injected']} adds {r['first_prompt_adds_s']} s "
                  f"(median of {r['first_prompts_s']} vs {r['without_hook_s']} s) target "
                  f"{TARGET_FIRST_PROMPT_S:g} s [{ok}]; hook alone p50 {h['p50_ms']} / p95 "
                  f"{h['p95_ms']} ms over {h['runs']} runs (target p95 {TARGET_HOOK_P95_MS:g}); "
                  f"mcp initialize {r['mcp']['initialize_ms']} ms (target "
                  f"{TARGET_MCP_INIT_MS:g}), tools/list {r['mcp']['tools_list_ms']} ms  "
                  f"{r['load_before']} -> {r['load_after']}")  # fmt: skip
    out = work / "results.json"
    out.write_text(json.dumps(results, indent=1))
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
