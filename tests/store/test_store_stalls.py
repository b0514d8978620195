"""A PostgreSQL store that is misconfigured, down or silent never holds a command.

Against the real test server (``.ci/postgres.sh``): a configuration the server refuses
is ``E_STORE_CONFIG`` (not retryable, the server's words) at once; a server that does
not answer is ``E_STORE_UNAVAILABLE`` within the connect timeout; nothing is logged by
a pool behind the caller's back. A missing driver and a URL naming no store skillrt has
are their own structured errors.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest
from tests.pg_processes import child_pids, postmaster_pid

from skillrt.errors import StoreMisconfigured, StoreUnavailable
from skillrt.store import Store, skill_state
from skillrt.store.postgres import PostgresStore

REPO = Path(__file__).resolve().parents[2]
BLOCKER = """
import sys
class _NoPsycopg:
    def find_spec(self, name, path=None, target=None):
        if name == "psycopg" or name.startswith(("psycopg.", "psycopg_")):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _NoPsycopg())
"""


def with_url(url: str, *, path: str | None = None, **query: str) -> str:
    """``url`` with its database (``path``) or query parameters changed."""
    parts = urlsplit(url)
    params = dict(parse_qsl(parts.query))
    params.update(query)
    return urlunsplit(
        parts._replace(path=parts.path if path is None else path, query=urlencode(params))
    )


def with_user(url: str, user: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{user}@{host}"))


def skillrt(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, Any, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "skillrt", "--json", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,  # a command that waits on the store for good fails here
        env={**os.environ, **(env or {})},
    )
    out = json.loads(proc.stdout) if proc.stdout.strip() else None
    return proc.returncode, out, proc.stderr


@pytest.fixture
def nologin_role(postgres_url: str) -> Iterator[str]:
    """A role the server knows but refuses to log in (an authentication failure)."""
    import psycopg

    name = f"nologin_{os.getpid()}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'DROP ROLE IF EXISTS "{name}"')
        conn.execute(f'CREATE ROLE "{name}" NOLOGIN')
    yield name
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'DROP ROLE IF EXISTS "{name}"')


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A loopback TCP peer that accepts connections and never says a word."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            held.append(conn)  # kept open, never answered

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"postgresql://skillrt@127.0.0.1:{listener.getsockname()[1]}/postgres"
    stop.set()
    thread.join(5)
    for conn in held:
        conn.close()
    listener.close()


def misconfigurations(url: str, role: str) -> dict[str, str]:
    return {
        "no such database": with_url(url, path="/no_such_database_here"),
        "no such role": with_user(url, "no_such_role_here"),
        "role may not log in": with_user(url, role),
        "bad sslmode": with_url(url, sslmode="bogus"),
        "unknown URL option": with_url(url, bogus_option="1"),
        "unknown server setting": with_url(url, options="-cbogus_setting=1"),
        "malformed URL": "postgresql://skillrt@[::1/postgres",
    }


WORDS = {
    "no such database": "no_such_database_here",
    "no such role": "no_such_role_here",
    "role may not log in": "not permitted to log in",
    "bad sslmode": "sslmode",
    "unknown URL option": "bogus_option",
    "unknown server setting": "bogus_setting",
    "malformed URL": "IPv6",
}


def test_a_configuration_the_server_refuses_is_its_own_error_at_once(
    postgres_url: str, nologin_role: str, tmp_path: Path
) -> None:
    """Each mistake raises E_STORE_CONFIG (retryable: false) with the server's words on
    the first call, even with a long retry_s: retrying cannot cure it."""
    for what, url in misconfigurations(postgres_url, nologin_role).items():
        store = PostgresStore(url, cache_path=tmp_path / "cache.db", retry_s=600.0)
        with pytest.raises(StoreMisconfigured) as exc:
            skill_state.disabled_names(store)
        data = exc.value.to_dict()
        assert data["code"] == "E_STORE_CONFIG", what
        assert data["retryable"] is False, what
        assert WORDS[what] in data["detail"] and WORDS[what] in data["message"], what
        store.close()


def test_the_cli_reports_a_misconfigured_store_without_pool_noise(
    postgres_url: str, nologin_role: str, tmp_path: Path, make_skill: Any
) -> None:
    make_skill("pdf-tools", description="Extract text and tables from PDF files.")
    root = tmp_path / "skills"
    for what in ("no such database", "role may not log in", "bad sslmode", "malformed URL"):
        url = misconfigurations(postgres_url, nologin_role)[what]
        code, out, err = skillrt(
            "--root", str(root), "--state", url, "disable", "pdf-tools", cwd=tmp_path
        )
        assert code == 1, (what, err)
        assert out["error"]["code"] == "E_STORE_CONFIG", what
        assert out["error"]["retryable"] is False
        assert WORDS[what] in out["error"]["message"]
        assert "error connecting" not in err and "psycopg" not in err, err  # no pool logging


def test_a_never_reached_server_fails_on_the_first_attempt(tmp_path: Path) -> None:
    """A server that refuses connections fails the command at once, not after retry_s
    (here 600 s: the subprocess guard would end a command that waited for it)."""
    script = (
        "from skillrt.store.postgres import PostgresStore\n"
        "from skillrt.store import skill_state\n"
        "from skillrt.errors import StoreError\n"
        f"s = PostgresStore('postgresql://nobody@/none?host={tmp_path}&port=1', retry_s=600)\n"
        "for _ in range(3):\n"
        "    try:\n"
        "        skill_state.disabled_names(s)\n"
        "    except StoreError as e:\n"
        "        print(e.code, e.to_dict()['retryable'])\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert proc.stdout.split("\n")[:3] == ["E_STORE_UNAVAILABLE True"] * 3, proc.stderr
    assert proc.stderr == ""


def test_a_server_that_does_not_answer_fails_within_the_connect_timeout(
    silent_server: str, tmp_path: Path
) -> None:
    store = PostgresStore(silent_server, cache_path=tmp_path / "c.db", connect_timeout_s=2.0)
    with pytest.raises(StoreUnavailable) as exc:
        skill_state.disabled_names(store)
    data = exc.value.to_dict()
    assert data["code"] == "E_STORE_UNAVAILABLE" and data["retryable"] is True
    assert "no answer within 2 s" in data["message"]
    store.close()


def test_the_connect_timeout_is_read_from_skillrt_yaml(
    silent_server: str, tmp_path: Path, make_skill: Any
) -> None:
    from skillrt.config import RuntimeConfig
    from skillrt.store import open_store

    make_skill("pdf-tools", description="Extract text and tables from PDF files.")
    (tmp_path / "skillrt.yaml").write_text(
        f"state:\n  url: '{silent_server}'\n  connect_timeout_s: 2\nroots: [skills]\n"
    )
    config = RuntimeConfig.from_file(tmp_path / "skillrt.yaml")
    store = open_store(config)
    assert isinstance(store, PostgresStore) and store.connect_timeout_s == 2
    store.close()
    code, out, err = skillrt("disable", "pdf-tools", cwd=tmp_path)
    assert code == 1 and out["error"]["code"] == "E_STORE_UNAVAILABLE", err
    assert "no answer within 2 s" in out["error"]["message"]


def test_a_stopped_postmaster_is_a_server_that_does_not_answer(
    postgres_url: str, tmp_path: Path
) -> None:
    """SIGSTOP the postmaster: a new connection waits for an answer that never comes, and
    fails with E_STORE_UNAVAILABLE after the connect timeout."""
    folder = os.environ.get("SKILLRT_PG_DIR")
    if not folder:
        pytest.skip("needs SKILLRT_PG_DIR (set by `.ci/postgres.sh start`)")
    pid = int((Path(folder) / "data" / "postmaster.pid").read_text().split()[0])
    store = PostgresStore(postgres_url, cache_path=tmp_path / "c.db", connect_timeout_s=2.0)
    os.kill(pid, signal.SIGSTOP)
    try:
        with pytest.raises(StoreUnavailable) as exc:
            skill_state.disabled_names(store)
    finally:
        os.kill(pid, signal.SIGCONT)
    assert exc.value.to_dict()["retryable"] is True
    assert "no answer within 2 s" in exc.value.message
    store.close()


def test_a_missing_driver_is_store_driver_missing(tmp_path: Path, make_skill: Any) -> None:
    """psycopg cannot be imported (a meta-path blocker, as on a machine without it): the
    promised E_STORE_DRIVER_MISSING with the pip line, not E_INTERNAL."""
    make_skill("pdf-tools", description="Extract text and tables from PDF files.")
    block = tmp_path / "block"
    block.mkdir()
    (block / "sitecustomize.py").write_text(BLOCKER)
    env = {"PYTHONPATH": os.pathsep.join([str(block), os.environ.get("PYTHONPATH", "")])}
    url = "postgresql://nobody@127.0.0.1:1/none"
    code, out, err = skillrt(
        "--root", str(tmp_path / "skills"), "--state", url, "disable", "pdf-tools",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert code == 1, err
    assert out["error"]["code"] == "E_STORE_DRIVER_MISSING"
    assert "pip install 'skillrt[postgres]'" in out["error"]["message"]
    assert out["error"]["missing"] == "psycopg"


def test_an_unknown_url_scheme_is_refused_and_creates_nothing(tmp_path: Path) -> None:
    code, out, _ = skillrt("--state", "mysql://x/y", "list", cwd=tmp_path)
    assert code == 2 and out["error"]["code"] == "E_USAGE"
    assert out["error"]["argument"] == "--state" and "mysql" in out["error"]["message"]
    assert list(tmp_path.iterdir()) == []  # no folder named 'mysql:'
    with pytest.raises(StoreMisconfigured):
        Store("mysql://x/y")
    assert list(tmp_path.iterdir()) == []


def test_a_refused_url_never_shows_its_password(tmp_path: Path) -> None:
    for url in ("postgresql://me:s3cret@[::1/db", "postgresql://me:s3cret@h/db?bogus=1"):
        store = PostgresStore(url, cache_path=tmp_path / "c.db")
        with pytest.raises(StoreMisconfigured) as exc:
            skill_state.disabled_names(store)
        assert "s3cret" not in json.dumps(exc.value.to_dict())


def test_the_hook_refuses_an_unknown_url_scheme_without_a_folder(tmp_path: Path) -> None:
    payload = json.dumps({"prompt": "review my pr", "cwd": str(tmp_path)})
    proc = subprocess.run(
        [sys.executable, "-m", "skillrt", "hook", "claude-code", "--state", "mysql://x/y"],
        input=payload, capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stdout == ""
    assert list(tmp_path.iterdir()) == []  # no 'mysql:' folder, nothing in the project
    from skillrt.hooks.locations import default_state_dir

    log = Path(default_state_dir(str(tmp_path), os.environ)) / "hook.log"  # the user's cache
    assert "unknown URL scheme 'mysql'" in log.read_text()


def test_a_route_on_a_silent_store_waits_its_budget_not_the_connect_timeout(
    silent_server: str, tmp_path: Path, make_skill: Any
) -> None:
    """`skillrt route` against a server that never answers (a connect timeout of 600 s):
    reading the enable state, the stats and closing the event writer all stay within
    state.route_wait_s (the subprocess guard of 60 s would end a command that waited
    on the connect timeout). It answers with its in-process route, says what it could
    not read, and keeps its event in the outbox."""
    make_skill(
        "pdf-tools",
        description="Extract text and tables from PDF files.",
        triggers=["extract the tables"],
    )
    (tmp_path / "skillrt.yaml").write_text(
        f"state:\n  url: '{silent_server}'\n  connect_timeout_s: 600\n  route_wait_s: 0.5\n"
        "roots: [skills]\nrouting:\n  embedding_backend: hashing\n"
    )
    code, out, err = skillrt("route", "extract the tables from this pdf", cwd=tmp_path)
    assert code == 0, err
    assert [s["name"] for s in out["plan"]["skills"]] == ["pdf-tools"]
    (event,) = out["events"]
    assert event["recorded"] is False and event["queued"] is True
    assert "enable/disable state unavailable" in err
    assert "skill stats unavailable" in err
    assert "did not answer in time (skillrt went on without it)" in err
    assert "kept in" in err and "outbox" in err
    outbox = tmp_path / ".skillrt" / "outbox"
    assert [p.name.endswith(".jsonl") for p in outbox.iterdir()] == [True]


def test_patience_counts_waits_on_the_store_not_the_time_between_them(
    postgres_url: str, tmp_path: Path
) -> None:
    """A budget is spent only while a store call waits: work between calls (a slow walk
    of the skill folders) leaves the next call its share, so a healthy server is read."""
    from skillrt.store.base import patience

    store = PostgresStore(postgres_url, cache_path=tmp_path / "c.db")
    try:
        with patience(0.5):
            time.sleep(1.0)  # longer than the budget: none of it is a wait on the store
            assert skill_state.disabled_names(store) == frozenset()
    finally:
        store.close()


def test_a_spent_budget_fails_the_next_store_call_at_once(
    silent_server: str, postgres_url: str, tmp_path: Path
) -> None:
    """Once a budget is spent on a server that does not answer, the calls after it in
    the same budget do not wait again: a healthy store's call fails too (nothing is left
    to wait with), with the same error."""
    from skillrt.store.base import patience

    silent = PostgresStore(silent_server, cache_path=tmp_path / "s.db", connect_timeout_s=600)
    healthy = PostgresStore(postgres_url, cache_path=tmp_path / "h.db")
    try:
        with patience(0.3):
            with pytest.raises(StoreUnavailable) as first:
                skill_state.disabled_names(silent)
            with pytest.raises(StoreUnavailable) as second:
                skill_state.disabled_names(healthy)
        for exc in (first, second):
            assert "did not answer in time (skillrt went on without it)" in exc.value.message
        assert skill_state.disabled_names(healthy) == frozenset()  # outside the budget
    finally:
        silent.close()
        healthy.close()


def test_closing_the_event_writer_skips_the_flush_on_a_store_never_reached(
    silent_server: str, tmp_path: Path
) -> None:
    """The route found the store silent: the event writer's own handle would wait the
    connect timeout (600 s) before it knew. Closing it does not wait for that: the event
    goes to the outbox at once."""
    from skillrt.store.base import patience
    from skillrt.telemetry.events import RouteEvent
    from skillrt.telemetry.writer import RouteEventWriter

    store = PostgresStore(silent_server, cache_path=tmp_path / "c.db", connect_timeout_s=600)
    with patience(0.3), pytest.raises(StoreUnavailable):
        skill_state.disabled_names(store)
    writer = RouteEventWriter(store)
    event = RouteEvent("r1", 1.0, "cli", "default", "h", 1, None, "none", 0, (), {}, "", 1.0)
    assert writer.submit_event(event, [])
    closer = threading.Thread(target=writer.close, kwargs={"timeout_s": 600}, daemon=True)
    closer.start()
    closer.join(60)
    assert not closer.is_alive(), "close() waited for a server it never reached"
    assert writer.outbox is not None and writer.outbox.pending() == 1
    store.close()


def _server_pids(folder: str) -> list[int]:
    """The postmaster of the test cluster and every process it started (its backends)."""
    postmaster = postmaster_pid(folder)
    return [postmaster, *child_pids(postmaster)]


@pytest.fixture
def stopped_server(postgres_url: str) -> Iterator[Any]:
    """``stop()`` freezes the whole test server (SIGSTOP: the postmaster and its
    backends, so a connection already open gets no answer either); it runs again
    after the test, whatever happened."""
    folder = os.environ.get("SKILLRT_PG_DIR")
    if not folder or not os.path.isdir("/proc"):
        pytest.skip("needs SKILLRT_PG_DIR (set by `.ci/postgres.sh start`) and /proc")
    stopped: list[int] = []

    def stop() -> None:
        for pid in _server_pids(folder):
            os.kill(pid, signal.SIGSTOP)
            stopped.append(pid)

    yield stop
    for pid in reversed(stopped):
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass


def test_a_statement_on_an_open_connection_ends_with_the_budget(
    postgres_url: str, stopped_server: Any, tmp_path: Path
) -> None:
    """The connection is open and pooled when the server stops answering (a frozen
    server still acknowledges TCP, so no keepalive notices): a read within a budget
    ends with it (the connection is cut) instead of waiting for the server; the handle
    works again once the server does."""
    from skillrt.store.base import patience

    store = PostgresStore(postgres_url, cache_path=tmp_path / "c.db")
    try:
        assert skill_state.disabled_names(store) == frozenset()  # connected, pooled
        stopped_server()
        outcome: list[BaseException] = []

        def read() -> None:
            try:
                with patience(0.5):
                    skill_state.disabled_names(store)
            except BaseException as exc:
                outcome.append(exc)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(60)  # without the cut it waits for the server, here for good
        assert not reader.is_alive(), "the statement waited on a frozen server"
        assert isinstance(outcome[0], StoreUnavailable)
        assert "did not answer in time" in outcome[0].message
    finally:
        for pid in _server_pids(os.environ["SKILLRT_PG_DIR"]):
            os.kill(pid, signal.SIGCONT)
        store.close()


def test_connections_send_keepalives(postgres_url: str, tmp_path: Path) -> None:
    """Over TCP, a connection gives up on a peer that stops acknowledging within a few
    connect timeouts (keepalives, tcp_user_timeout, from connect_timeout_s); settings
    the URL gives itself win. Read back from the live connection's libpq settings."""
    for url, idle, user_timeout in (
        (postgres_url, "2", "8000"),
        (with_url(postgres_url, keepalives_idle="60", tcp_user_timeout="0"), "60", "0"),
    ):
        store = PostgresStore(url, cache_path=tmp_path / "c.db", connect_timeout_s=1.5)
        try:
            assert skill_state.disabled_names(store) == frozenset()
            assert store._pool is not None
            (conn,) = store._pool._idle
            settings = conn.info.get_parameters()
        finally:
            store.close()
        assert settings["keepalives"] == "1" and settings["keepalives_count"] == "3"
        assert settings["keepalives_idle"] == idle and settings["keepalives_interval"] == "2"
        assert settings["tcp_user_timeout"] == user_timeout


@pytest.fixture
def own_database(postgres_url: str) -> Iterator[str]:
    """A database of the test's own (its URL), dropped afterwards."""
    import psycopg

    name = f"refusing_{os.getpid()}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    yield with_url(postgres_url, path=f"/{name}")
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_refusal_after_the_server_was_reached_is_retried_not_misconfigured(
    postgres_url: str, own_database: str, tmp_path: Path
) -> None:
    """A worker's handle reached its database; then the server refuses new connections
    for a while with a FATAL no list of transient words has (here: the database stops
    accepting connections, as an operator or a failover does). The handle waits for it
    within retry_s, as for a restart, instead of failing for good with E_STORE_CONFIG."""
    import psycopg

    folder = os.environ.get("SKILLRT_PG_DIR")
    if not folder:
        pytest.skip("needs SKILLRT_PG_DIR (its server.log)")
    log = Path(folder) / "server.log"
    name = urlsplit(own_database).path.lstrip("/")
    store = PostgresStore(own_database, cache_path=tmp_path / "c.db", retry_s=60)
    try:
        assert skill_state.disabled_names(store) == frozenset()  # reached
        seen = len(log.read_text(errors="replace"))
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (name,),
            )
        outcome: list[Any] = []

        def write() -> None:
            try:
                skill_state.set_enabled(store, "pdf-tools", False)
                outcome.append("written")
            except Exception as exc:
                outcome.append(exc)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        refused = f'database "{name}" is not currently accepting connections'
        wait_until = time.monotonic() + 60  # a safety net, not a bound
        while refused not in log.read_text(errors="replace")[seen:] and writer.is_alive():
            assert time.monotonic() < wait_until, "the server never refused"
            time.sleep(0.05)
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        writer.join(60)
        assert outcome == ["written"]
        assert skill_state.disabled_names(store) == frozenset({"pdf-tools"})
    finally:
        store.close()


def test_a_never_reached_database_refusing_connections_is_still_a_config_error(
    postgres_url: str, own_database: str, tmp_path: Path
) -> None:
    import psycopg

    name = urlsplit(own_database).path.lstrip("/")
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
    store = PostgresStore(own_database, cache_path=tmp_path / "c.db", retry_s=600)
    with pytest.raises(StoreMisconfigured) as exc:
        skill_state.disabled_names(store)
    assert "not currently accepting connections" in exc.value.message
    store.close()


def test_connection_failures_are_told_apart_by_sqlstate_then_by_words() -> None:
    """The driver's SQLSTATE decides when it gives one (whatever language the words
    are in); without one, PostgreSQL 14's wording of a server not accepting
    connections is transient too."""
    import psycopg
    from psycopg import errors

    from skillrt.store.pgpool import classify

    def kind(exc: BaseException) -> str:
        return classify(exc, "postgresql://x", 3.0).code

    german = "FATAL:  das Datenbanksystem fährt herunter"
    assert kind(errors.lookup("57P03")(german)) == "E_STORE_UNAVAILABLE"
    assert kind(errors.lookup("53300")(f"FATAL:  {german}")) == "E_STORE_UNAVAILABLE"
    assert kind(errors.lookup("3D000")("FATAL:  Datenbank »x« existiert nicht")) == (
        "E_STORE_CONFIG"
    )
    assert kind(errors.lookup("28P01")("FATAL:  password authentication failed")) == (
        "E_STORE_CONFIG"
    )
    pg14 = (
        'connection failed: connection to server on socket "/tmp/.s.PGSQL.5432" failed: '
        "FATAL:  the database system is not accepting connections\n"
        "DETAIL:  Hot standby mode is disabled."
    )
    assert kind(psycopg.OperationalError(pg14)) == "E_STORE_UNAVAILABLE"
    assert kind(psycopg.OperationalError('FATAL:  database "x" does not exist')) == (
        "E_STORE_CONFIG"
    )


HOOK_AT_DEADLINE = """
import os, sys, time
from skillrt.config import RuntimeConfig
from skillrt.hooks import entry
from skillrt.runtime import SkillRuntime

project = sys.argv[1]
config = RuntimeConfig.from_file(os.path.join(project, "skillrt.yaml"))
runtime = SkillRuntime(config)
runtime.route("extract the tables from this pdf")  # its event waits: the store is silent
run = entry._Run(entry.parse_args(["claude-code"]), time.monotonic())
run.state_dir = str(config.state_dir)
run.routing = runtime.routing  # as the hook's in-process work sets it
run.stage = "working in-process"
run.expire()  # what the hook's main thread does at the deadline; never returns
print("expire() returned")
"""


def test_the_hooks_deadline_keeps_its_queued_route_event(
    silent_server: str, tmp_path: Path, make_skill: Any
) -> None:
    """The hook's deadline ends the process at once (os._exit: no exit handlers, no
    writer close): the route event still queued for a silent store goes to the outbox
    first, and the log says where, instead of vanishing uncounted."""
    from skillrt.telemetry.outbox import Outbox

    make_skill("pdf-tools", description="Extract text and tables from PDF files.")
    (tmp_path / "skillrt.yaml").write_text(
        f"state:\n  url: '{silent_server}'\n  connect_timeout_s: 600\n  route_wait_s: 0.3\n"
        "roots: [skills]\nrouting:\n  embedding_backend: hashing\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", HOOK_AT_DEADLINE, str(tmp_path)],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0 and "returned" not in proc.stdout, proc.stderr
    outbox = Outbox(tmp_path / ".skillrt" / "outbox")
    assert outbox.pending() == 1 and outbox.lost() == 0
    log = (tmp_path / ".skillrt" / "hook.log").read_text()
    assert "deadline of" in log and "working in-process" in log
