"""`skillrt serve` as a real process, driven over its real socket."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hooks"))
from hook_support import build_skills, claude_payload, env, hook_output, skillrt, wait_for

from skillrt.daemon.client import DaemonClient, DaemonError, DaemonUnavailable
from skillrt.daemon.protocol import MAX_LINE_BYTES, parse_address


class Served:
    def __init__(self, proc: subprocess.Popen[str], address: str, project: Path, skills: Path):
        self.proc = proc
        self.address = address
        self.project = project
        self.skills = skills

    @property
    def expect(self) -> dict[str, Any]:
        return {
            "roots": [str(self.skills.resolve())],
            "config": None,
            "project_dir": str(self.project),
        }

    def client(self, **kw: Any) -> DaemonClient:
        address = parse_address(self.address)
        token = None
        if isinstance(address, tuple):
            info = json.loads((self.project / ".skillrt" / "skillrt.daemon.json").read_text())
            token = info["token"]
        return DaemonClient(address, token=token, **kw)


def start(project: Path, skills: Path, *extra: str) -> Served:
    proc = subprocess.Popen(
        [sys.executable, "-m", "skillrt", "serve", "--root", str(skills), "--poll", "0.2", *extra],
        cwd=project,
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    try:
        event = json.loads(line) if line else {}
        assert event.get("event") == "listening", f"serve failed: {line}"
    except BaseException:
        proc.kill()  # never leave a daemon behind a failed start
        proc.wait(30)
        raise
    threading.Thread(target=proc.stderr.read, daemon=True).start()  # drain
    return Served(proc, event["address"], project, skills)


def stop(served: Served) -> None:
    if served.proc.poll() is None:
        served.proc.send_signal(signal.SIGTERM)
        served.proc.wait(30)


@pytest.fixture
def daemon_project(tmp_path: Path, make_skill: Callable[..., Path]) -> tuple[Path, Path]:
    project = tmp_path / "project"
    project.mkdir()
    return project, build_skills(tmp_path / "skills", make_skill)


@pytest.fixture
def served(daemon_project: tuple[Path, Path]) -> Iterator[Served]:
    s = start(*daemon_project)
    yield s
    stop(s)


def test_socket_is_private_and_status_names_the_roots(served: Served) -> None:
    mode = os.stat(served.address).st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600
    info = served.project / ".skillrt" / "skillrt.daemon.json"
    assert stat.S_IMODE(info.stat().st_mode) == 0o600
    proc = skillrt("serve", "--status", "--json", "--root", str(served.skills), cwd=served.project)
    status = json.loads(proc.stdout)
    assert proc.returncode == 0 and status["running"] and status["pid"] == served.proc.pid
    assert status["roots"] == [str(served.skills.resolve())] and status["skills"] == 5


def test_hook_through_the_daemon_answers_like_in_process(served: Served) -> None:
    prompts = [
        "please do a code review of my pr",
        "$nope x",
        "what is the capital of France?",
        "$big-skill plan the migration",
    ]
    for prompt in prompts:
        args = ("hook", "claude-code", "--root", str(served.skills))
        payload = claude_payload(prompt, served.project)
        warm = skillrt(*args, cwd=served.project, stdin=payload)
        cold = skillrt(*args, "--no-daemon", cwd=served.project, stdin=payload)
        assert hook_output(warm) == hook_output(cold), prompt
    log = served.project / ".skillrt" / "hook.log"
    assert not log.exists() or "in-process" not in log.read_text()


#: Modules a daemon-answered prompt must not import: each costs milliseconds a prompt
#: (docs/performance.md, "Where a warm hook's time goes").
HOOK_NEVER_IMPORTS = ("json", "re", "typing", "argparse", "socket", "threading", "pathlib")


@pytest.mark.parametrize("site_imports", [False, True])
def test_a_hook_answered_by_the_daemon_stays_on_the_standard_library_fast_path(
    served: Served, tmp_path: Path, site_imports: bool
) -> None:
    """``site_imports``: an interpreter whose start-up already imports re, typing,
    threading and pathlib (a site-packages .pth does that on some machines)."""
    from skillrt.install.targets import HOOK_BOOT

    environ = env()
    if site_imports:
        (tmp_path / "site").mkdir()
        (tmp_path / "site" / "sitecustomize.py").write_text(
            "import re, typing, threading, pathlib  # what some machines' .pth files do\n"
        )
        environ["PYTHONPATH"] = f"{tmp_path / 'site'}{os.pathsep}{environ['PYTHONPATH']}"
    payload = claude_payload("please do a code review of my pr", served.project)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", HOOK_BOOT, "hook", "claude-code",
         "--root", str(served.skills), "--deadline", "120"],
        input=payload, capture_output=True, text=True, cwd=served.project, env=environ,
        timeout=120,
    )  # fmt: skip
    assert hook_output(proc) is not None, proc.stderr[-2000:]
    # What this interpreter imports before any code runs (site-packages' .pth files may
    # import re, typing, ... at start) is not the hook's doing.
    bare = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"],
                          capture_output=True, text=True, env=environ, timeout=60)  # fmt: skip
    imported = _imported(proc.stderr) - _imported(bare.stderr)
    assert "skillrt.daemon.client" in imported  # the daemon answered, not the runtime
    assert "skillrt.runtime" not in imported
    assert imported.isdisjoint(HOOK_NEVER_IMPORTS), imported & set(HOOK_NEVER_IMPORTS)


def _imported(importtime: str) -> set[str]:
    return {
        line.rsplit("|", 1)[1].strip()
        for line in importtime.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def test_routes_through_the_daemon_record_t1_events(served: Served) -> None:
    with served.client() as client:
        ctx = client.request(
            "context", {"prompt": "please do a code review of my pr"}, expect=served.expect
        )
        route = client.request("route", {"query": "check my sql query", "surface": "cli"})
    db = served.project / ".skillrt" / "state.db"

    def recorded() -> list[tuple[str, str]]:
        conn = sqlite3.connect(db)
        try:
            return conn.execute("SELECT route_id, surface FROM route_events").fetchall()
        finally:
            conn.close()

    wait_for(lambda: len(recorded()) >= 2)
    assert set(recorded()) >= {(ctx["route_id"], "hook"), (route["route_id"], "cli")}


def test_cli_route_show_and_resolve_use_the_daemon(served: Served) -> None:
    root = ("--root", str(served.skills))
    for args in (
        ("route", "check my sql query for injection", "--json"),
        ("show", "code-review", "--json", "--no-spill"),
        ("resolve", "$code-review now", "--json", "--no-apply"),
    ):
        warm = skillrt(*args, *root, cwd=served.project)
        cold = skillrt(*args, *root, "--no-daemon", cwd=served.project)
        assert warm.returncode == cold.returncode == 0, warm.stderr + cold.stderr
        a, b = json.loads(warm.stdout), json.loads(cold.stdout)
        if args[0] == "route":  # scores move with the per-skill stats each route adds
            assert [c["name"] for c in a["candidates"]] == [c["name"] for c in b["candidates"]]
            assert [c["status"] for c in a["candidates"]] == [c["status"] for c in b["candidates"]]
            a, b = a["plan"]["skills"][0]["name"], b["plan"]["skills"][0]["name"]
        for volatile in ("latency_ms", "event"):
            if isinstance(a, dict):
                a.pop(volatile, None)
                b.pop(volatile, None)
        assert a == b, args
    with served.client() as client:
        assert client.request("status")["requests"] >= 3
    human = skillrt("route", "check my sql query for injection", *root, cwd=served.project)
    assert "Plan: sql-review" in human.stdout


def test_a_daemon_for_other_skills_is_not_used(served: Served, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / "solo").mkdir(parents=True)
    (other / "solo" / "SKILL.md").write_text(
        "---\nname: solo\ndescription: Review a pull request carefully.\n---\n# Solo\n"
    )
    with served.client() as client, pytest.raises(DaemonUnavailable):
        client.request("ping", expect={"roots": [str(other)], "config": None})
    proc = skillrt(
        "route", "review a pull request", "--root", str(other), "--json", cwd=served.project
    )
    assert json.loads(proc.stdout)["plan"]["skills"][0]["name"] == "solo"


def test_bad_requests_get_structured_errors_and_the_connection_survives(served: Served) -> None:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(served.address)
        f = sock.makefile("rwb")
        for line, code in [
            (b"not json", "E_BAD_REQUEST"),
            (b"[1]", "E_BAD_REQUEST"),
            (b'{"id": 1, "op": "fly"}', "E_UNKNOWN_OP"),
            (b'{"id": 2, "op": "route", "args": []}', "E_BAD_REQUEST"),
            (b'{"id": 3, "op": "route", "args": {"query": 5}}', "E_BAD_REQUEST"),
            (b'{"id": 4, "op": "activate", "args": {"name": "nope"}}', "SkillNotFound"),
            (
                b'{"id": 5, "op": "activate", "args": {"name": "deploy"}}',
                "MODEL_INVOCATION_DISABLED",
            ),
            (
                b'{"id": 6, "op": "read", "args": {"name": "code-review",'
                b' "path": "../../etc/passwd"}}',
                "PathTraversalBlocked",
            ),
        ]:
            f.write(line + b"\n")
            f.flush()
            reply = json.loads(f.readline())
            assert reply["ok"] is False and reply["error"]["code"] == code, line
        f.write(b'{"id": 7, "op": "ping"}\n')
        f.flush()
        assert json.loads(f.readline())["result"]["pong"] is True


def test_oversized_request_is_refused_and_others_carry_on(served: Served) -> None:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(served.address)
        sock.sendall(b"x" * (MAX_LINE_BYTES + 10))
        reply = json.loads(sock.makefile("rb").readline())
        assert reply["error"]["code"] == "E_TOO_LARGE"
    with served.client() as client:
        assert client.request("ping")["pong"]


def test_client_that_disconnects_mid_request_does_not_hurt(served: Served) -> None:
    for _ in range(20):
        with socket.socket(socket.AF_UNIX) as sock:
            sock.connect(served.address)
            sock.sendall(b'{"id": 1, "op": "context", "args": {"prompt": "review my')
    with socket.socket(socket.AF_UNIX) as sock:  # asks, then leaves before the answer
        sock.connect(served.address)
        sock.sendall(b'{"id": 1, "op": "context", "args": {"prompt": "review my pr"}}\n')
    with served.client() as client:
        assert client.request("route", {"query": "review my pr"})["plan"]["skills"]
    assert served.proc.poll() is None


def test_concurrent_clients(served: Served) -> None:
    errors: list[BaseException] = []
    answers: list[str] = []

    def worker(i: int) -> None:
        try:
            with served.client() as client:
                for j in range(15):
                    op = (
                        ("context", {"prompt": "please do a code review of my pr"})
                        if j % 2
                        else ("route", {"query": f"check my sql query {i} {j}"})
                    )
                    result = client.request(*op)
                    answers.append(result.get("route_id", ""))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors and len(answers) == 8 * 15 and len(set(answers)) == len(answers)


def test_changed_skills_are_reloaded(served: Served) -> None:
    new = served.skills / "kubectl-debug"
    new.mkdir()
    (new / "SKILL.md").write_text(
        "---\nname: kubectl-debug\ndescription: Debug crashing Kubernetes pods with kubectl."
        "\n---\n# Kubectl debug\n"
    )

    def found() -> bool:
        with served.client() as client:
            try:
                return bool(client.request("activate", {"name": "kubectl-debug"})["text"])
            except DaemonError:
                return False

    wait_for(found)
    (new / "SKILL.md").unlink()
    new.rmdir()

    def gone() -> bool:
        with served.client() as client:
            try:
                client.request("activate", {"name": "kubectl-debug"})
            except DaemonError as err:
                return err.code == "SkillNotFound"
            return False

    wait_for(gone)


def test_sigterm_stops_cleanly_and_removes_the_socket(served: Served) -> None:
    info = served.project / ".skillrt" / "skillrt.daemon.json"
    served.proc.send_signal(signal.SIGTERM)
    assert served.proc.wait(30) == 0
    assert not os.path.exists(served.address) and not info.exists()


def test_serve_stop_and_a_second_daemon(served: Served) -> None:
    root = ("--root", str(served.skills))
    second = skillrt("serve", *root, "--json", cwd=served.project)
    assert second.returncode == 1
    assert json.loads(second.stdout)["error"]["code"] == "E_DAEMON_START"
    stopped = skillrt("serve", "--stop", "--json", *root, cwd=served.project)
    assert stopped.returncode == 0 and json.loads(stopped.stdout)["stopped"]
    assert served.proc.wait(30) == 0 and not os.path.exists(served.address)
    none = skillrt("serve", "--stop", "--json", *root, cwd=served.project)
    assert none.returncode == 1 and json.loads(none.stdout)["error"]["code"] == "E_NO_DAEMON"
    status = skillrt("serve", "--status", "--json", *root, cwd=served.project)
    assert status.returncode == 1 and json.loads(status.stdout)["running"] is False


def test_stale_socket_is_replaced(daemon_project: tuple[Path, Path]) -> None:
    project, skills = daemon_project
    path = project / ".skillrt" / "skillrt.sock"
    path.parent.mkdir()
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()  # left behind, as by a killed daemon
    served = start(project, skills)
    try:
        with served.client() as client:
            assert client.request("ping")["pong"]
    finally:
        stop(served)


def test_loopback_port_needs_the_token(daemon_project: tuple[Path, Path]) -> None:
    project, skills = daemon_project
    served = start(project, skills, "--port", "0")
    try:
        assert served.address.startswith("tcp://127.0.0.1:")
        host, port = parse_address(served.address)  # type: ignore[misc]
        with DaemonClient((host, port)) as anonymous, pytest.raises(DaemonError) as err:
            anonymous.request("ping")
        assert err.value.code == "E_UNAUTHORIZED"
        with served.client() as client:
            assert client.request("ping")["pong"]
        hook = skillrt(
            "hook",
            "claude-code",
            "--root",
            str(skills),
            cwd=project,
            stdin=claude_payload("$code-review go", project),
        )
        assert hook_output(hook) is not None
        with served.client() as client:
            assert client.request("status")["requests"] >= 3  # the hook asked it
    finally:
        stop(served)


def test_two_daemons_started_at_once_one_serves(daemon_project: tuple[Path, Path]) -> None:
    """Two `serve` on one state folder at the same moment: one serves, the other refuses
    (E_DAEMON_START) without touching its socket; status names the one that serves, and
    stopping it removes its socket and info file."""
    project, skills = daemon_project
    argv = [sys.executable, "-m", "skillrt", "serve", "--json", "--root", str(skills)]
    procs = [
        subprocess.Popen(
            argv,
            cwd=project,
            env=env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for _ in range(2)
    ]
    try:
        firsts = []
        for proc in procs:
            assert proc.stderr is not None
            firsts.append(proc.stderr.readline())  # "listening", or the process ended
        serving = [p for p, line in zip(procs, firsts, strict=True) if '"listening"' in line]
        refused = [p for p in procs if p not in serving]
        assert len(serving) == 1 and len(refused) == 1, firsts
        out, _ = refused[0].communicate(timeout=60)
        assert refused[0].returncode == 1
        assert json.loads(out)["error"]["code"] == "E_DAEMON_START"
        root = ("--root", str(skills))
        status = skillrt("serve", "--status", "--json", *root, cwd=project)
        assert json.loads(status.stdout)["pid"] == serving[0].pid
        with DaemonClient(str(project / ".skillrt" / "skillrt.sock")) as client:
            assert client.request("ping")["pid"] == serving[0].pid
        stopped = skillrt("serve", "--stop", "--json", *root, cwd=project)
        assert stopped.returncode == 0, stopped.stderr
        assert serving[0].wait(30) == 0
        assert not (project / ".skillrt" / "skillrt.sock").exists()
        assert not (project / ".skillrt" / "skillrt.daemon.json").exists()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)


def test_a_daemon_removes_only_its_own_socket_and_info(tmp_path: Path) -> None:
    from typing import cast

    from skillrt.daemon.server import Daemon
    from skillrt.mcp.service import SkillService

    state = tmp_path / "state"
    path = str(state / "skillrt.sock")
    info = state / "skillrt.daemon.json"
    daemon = Daemon(cast(SkillService, None), path, identity={}, info_file=info)
    daemon.bind()
    assert daemon._server is not None
    daemon._server.server_close()
    os.unlink(path)  # another daemon's socket and info took their places meanwhile
    other = socket.socket(socket.AF_UNIX)
    other.bind(path)
    other.listen(1)
    info.write_text(json.dumps({"pid": os.getpid() + 1}))
    daemon._cleanup()
    assert os.path.exists(path) and info.exists()
    other.close()
    second = Daemon(cast(SkillService, None), path, identity={}, info_file=info)
    second.bind()  # the first let the state folder's lock go
    assert second._server is not None
    second._server.server_close()
    second._cleanup()
    assert not os.path.exists(path)


def test_deeply_nested_json_is_a_bad_request(served: Served) -> None:
    """100k-deep JSON is refused as E_BAD_REQUEST (it was E_INTERNAL), and so are
    arguments nested deeper than the stages walk; the connection carries on."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(60)
        sock.connect(served.address)
        reader = sock.makefile("rb")
        for line in (
            b"[" * 100_000 + b"\n",
            b'{"id": 1, "op": "ping", "args": ' + b'{"a":' * 100_000 + b"\n",
        ):
            sock.sendall(line)
            reply = json.loads(reader.readline())
            assert reply["ok"] is False and reply["error"]["code"] == "E_BAD_REQUEST", reply
        nested: Any = "x"
        for _ in range(900):  # parses, but deep: answered, or refused, never E_INTERNAL
            nested = {"a": nested}
        history = [{"role": "user", "content": nested}]
        for op, args in (("context", {"prompt": "review my pr"}), ("route", {"query": "x"})):
            request = {"id": 3, "op": op, "args": {**args, "history": history}}
            sock.sendall(json.dumps(request).encode() + b"\n")
            reply = json.loads(reader.readline())
            assert reply["ok"] or reply["error"]["code"] == "E_BAD_REQUEST", reply
        sock.sendall(b'{"id": 2, "op": "ping"}\n')
        assert json.loads(reader.readline())["ok"] is True


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts /proc/PID/fd")
def test_tcp_connections_are_capped_and_unauthenticated_ones_closed(
    daemon_project: tuple[Path, Path],
) -> None:
    """300 loopback connections that never send a token: the daemon holds at most
    MAX_UNAUTHENTICATED of them (the rest are told E_BUSY and closed), closes the idle
    ones within AUTH_TIMEOUT_S, and meanwhile a client that sent its token is served
    (the unauthenticated never take its slot); a new one is served afterwards."""
    from skillrt.daemon.limits import MAX_UNAUTHENTICATED

    project, skills = daemon_project
    served = start(project, skills, "--port", "0")
    idle: list[socket.socket] = []
    try:
        host, port = parse_address(served.address)  # type: ignore[misc]
        before = open_fds(served.proc.pid)
        trusted = served.client(timeout=60)
        assert trusted.request("ping")["pong"]  # authenticated before the flood
        for _ in range(300):
            conn = socket.create_connection((host, port), timeout=60)
            idle.append(conn)
        assert trusted.request("ping")["pong"]  # still served during it
        trusted.close()
        busy = 0
        for conn in idle:  # every one is answered E_BUSY or closed unauthenticated
            data = conn.makefile("rb").readline()
            if data:
                assert json.loads(data)["error"]["code"] == "E_BUSY"
                busy += 1
        assert busy >= 300 - MAX_UNAUTHENTICATED
        # The idle ones were closed. The server closes a connection (the trusted one's
        # too) in its own thread after the client sees the end: wait for that, bounded.
        wait_for(lambda: open_fds(served.proc.pid) <= before + 5, timeout=30)
        with served.client(timeout=60) as client:
            assert client.request("ping")["pong"]
        with socket.create_connection((host, port), timeout=60) as stranger:
            stranger.sendall(b'{"id": 1, "op": "ping", "token": "wrong"}\n')
            reader = stranger.makefile("rb")
            assert json.loads(reader.readline())["error"]["code"] == "E_UNAUTHORIZED"
            assert reader.readline() == b""  # and closed: no second try
    finally:
        for conn in idle:
            conn.close()
        stop(served)


def test_a_client_trickling_its_first_request_is_cut_off(
    daemon_project: tuple[Path, Path],
) -> None:
    """AUTH_TIMEOUT_S bounds the whole first request, not each read: a client sending a
    byte every half second (never idle for AUTH_TIMEOUT_S) is cut off long before its
    request line is complete."""
    import select
    import time

    project, skills = daemon_project
    served = start(project, skills, "--port", "0")
    try:
        host, port = parse_address(served.address)  # type: ignore[misc]
        line = b'{"id": 1, "op": "ping", "token": "' + b"x" * 400 + b'"}\n'
        sent = 0
        with socket.create_connection((host, port), timeout=60) as conn:
            give_up = time.monotonic() + 60  # a safety net: the whole line takes 200 s
            closed = False
            while sent < len(line) and time.monotonic() < give_up:
                try:
                    conn.sendall(line[sent : sent + 1])
                except OSError:  # reset: the daemon closed it
                    closed = True
                    break
                sent += 1
                readable, _, _ = select.select([conn], [], [], 0.5)
                if readable:
                    try:
                        closed = conn.recv(4096) == b""
                    except OSError:
                        closed = True
                    break
        assert closed, f"the daemon kept a connection that sent {sent} bytes of a request"
        assert sent < len(line)
        with served.client(timeout=60) as client:  # others are served as before
            assert client.request("ping")["pong"]
    finally:
        stop(served)


def test_a_daemon_lets_the_state_folder_go_only_after_its_last_events(
    tmp_path: Path, make_skill: Callable[..., Path]
) -> None:
    """The state folder's lock is the last thing a stopping daemon lets go: a second
    daemon that starts the moment it is free finds the first one's event writer closed
    (its events written or kept), never two writers at once."""
    from skillrt.config import RoutingConfig, RuntimeConfig
    from skillrt.daemon.server import Daemon
    from skillrt.mcp import SkillService, event_writer
    from skillrt.runtime import SkillRuntime
    from skillrt.telemetry.events import RouteEvent

    skills = build_skills(tmp_path / "skills", make_skill)
    state = tmp_path / "state"
    config = RuntimeConfig(
        project_dir=tmp_path, state_dir=state, routing=RoutingConfig(embedding_backend="hashing")
    )
    runtime = SkillRuntime(config, roots=[skills])
    service = SkillService(runtime, events=event_writer(runtime), surface="daemon")
    writer = service.events
    assert writer is not None
    daemon = Daemon(
        service,
        str(state / "skillrt.sock"),
        identity={},
        info_file=state / "skillrt.daemon.json",
        poll_interval_s=0,
    )
    probe = RouteEvent("r", 1.0, "daemon", "default", "h", 1, None, "none", 0, (), {}, "", 1.0)
    writer_open_at_release: list[bool] = []
    release = daemon._lock.release

    def watched_release() -> None:
        writer_open_at_release.append(writer.submit_event(probe, []))  # False once closed
        release()

    daemon._lock.release = watched_release  # type: ignore[method-assign]
    server = threading.Thread(
        target=daemon.serve, kwargs={"warm": False, "ready": lambda d: d.stop()}, daemon=True
    )
    server.start()
    server.join(60)
    try:
        assert not server.is_alive()
        assert writer_open_at_release == [False]
    finally:
        runtime.close()


_SIGNAL_WHILE_LOCKED = """
import os, signal, sys
from pathlib import Path
from typing import cast
from skillrt.daemon.server import Daemon
from skillrt.mcp.service import SkillService

state = Path(sys.argv[1])
daemon = Daemon(cast(SkillService, None), str(state / "skillrt.sock"), identity={},
                info_file=state / "skillrt.daemon.json", poll_interval_s=0)
daemon.service = cast(SkillService, type("S", (), {"start": lambda *a, **k: None,
                                                   "events": None})())

def ready(d):
    # The moment that hung a stopped-then-resumed daemon: SIGTERM handled while the
    # main thread holds the stop event's own lock (inside Event.wait).
    with d._stop._cond:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(1000):
            pass

daemon.serve(warm=False, ready=ready)
print("stopped")
"""


def test_sigterm_while_the_main_thread_holds_the_stop_lock(tmp_path: Path) -> None:
    """SIGTERM stops the daemon whatever the main thread holds when the handler runs
    (setting the stop event in the handler deadlocked: the CI's stopped-and-resumed
    daemon never exited)."""
    proc = subprocess.run(
        [sys.executable, "-c", _SIGNAL_WHILE_LOCKED, str(tmp_path / "state")],
        capture_output=True, text=True, timeout=60, env=env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "stopped"
    assert not (tmp_path / "state" / "skillrt.sock").exists()
