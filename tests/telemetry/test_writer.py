"""The background route-event writer: routes never wait; locked stores delay, not lose."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from skillrt.config import RoutingConfig
from skillrt.routing.plan import RouteResult
from skillrt.routing.router import Router
from skillrt.skills.reader import read_skill
from skillrt.store import Store, open_location
from skillrt.telemetry.writer import Batch, RouteEventWriter


@pytest.fixture
def routes(tmp_path: Path, make_skill: Callable[..., Path]) -> Callable[[int], list[RouteResult]]:
    dirs = [
        make_skill("code-review", description="Review pull requests.", triggers=["review my pr"]),
        make_skill("commit-messages", description="Write commit messages from a diff."),
    ]
    skills = [read_skill(d) for d in dirs]
    router = Router.from_skills(skills, RoutingConfig(), store=None, backend=None)

    def make(n: int) -> list[RouteResult]:
        return [router.route(f"review my pr number {i}") for i in range(n)]

    return make


def count(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM route_events").fetchone()[0])


def test_events_are_written_in_order(
    tmp_path: Path, routes: Callable[[int], list[RouteResult]]
) -> None:
    db = tmp_path / "state.db"
    open_location(db).schema_version()  # migrated
    writer = RouteEventWriter(db)
    batch = routes(5)
    for r in batch:
        writer.submit(r, surface="mcp")
    assert writer.flush(30)
    writer.close()
    assert count(db) == 5 and writer.written == 5 and writer.dropped == 0
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT route_id, surface FROM route_events ORDER BY ts").fetchall()
    assert [r[0] for r in rows] == [r.route_id for r in batch]
    assert {r[1] for r in rows} == {"mcp"}


@pytest.mark.filterwarnings("ignore::skillrt.telemetry.events.TelemetryWarning")
def test_locked_store_delays_but_loses_nothing(
    tmp_path: Path, routes: Callable[[int], list[RouteResult]], caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "state.db"
    open_location(db).schema_version()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    writer = RouteEventWriter(db, write_timeout_ms=20)
    with caplog.at_level(logging.WARNING, logger="skillrt.telemetry"):
        for r in routes(3):
            writer.submit(r, surface="mcp")  # returns at once, lock or not
        assert not writer.flush(0.5)  # cannot drain while the lock is held
        assert writer.pending == 3
        assert any("locked or unavailable" in m for m in caplog.messages)
        holder.execute("COMMIT")
        holder.close()
        assert writer.flush(30)
    writer.close()
    assert count(db) == 3 and writer.dropped == 0


def test_unwritable_store_drops_with_a_warning(
    tmp_path: Path, routes: Callable[[int], list[RouteResult]], caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "state.db"
    open_location(db).schema_version()
    ro = open_location(db, read_only=True)  # every write fails, like a read-only file
    calls: list[int] = []

    def write(store: Store, items: Batch) -> int:
        from skillrt.telemetry.events import write_route_events

        calls.append(len(items))
        return write_route_events(ro, items)

    writer = RouteEventWriter(db, give_up_s=0.2, write=write)
    with caplog.at_level(logging.WARNING, logger="skillrt.telemetry"):
        writer.submit(routes(1)[0], surface="mcp")
        assert writer.flush(30)
    writer.close()
    assert writer.dropped == 1 and writer.written == 0 and count(db) == 0
    assert calls == [1]  # a read-only store is not retried: retrying cannot cure it
    assert any("was not recorded" in m for m in caplog.messages)
    from skillrt.telemetry.outbox import Outbox

    assert Outbox(tmp_path / "outbox").lost() == 1  # counted, for `skillrt stats`


def test_unavailable_store_is_retried_then_kept_in_the_outbox(
    tmp_path: Path, routes: Callable[[int], list[RouteResult]], caplog: pytest.LogCaptureFixture
) -> None:
    """Events that wait too long for a store that cannot be reached are not dropped: they
    go to this machine's outbox, and the next writer that reaches the store writes them."""
    from skillrt.errors import StoreUnavailable
    from skillrt.telemetry.outbox import Outbox

    db = tmp_path / "state.db"
    calls: list[int] = []

    def write(store: Store, items: Batch) -> int:
        calls.append(len(items))
        raise StoreUnavailable("server restarting", retryable=True)

    writer = RouteEventWriter(db, give_up_s=0.3, write=write)
    batch = routes(2)
    with caplog.at_level(logging.WARNING, logger="skillrt.telemetry"):
        for r in batch:
            writer.submit(r, surface="mcp")
        assert writer.flush(30)
    writer.close()
    assert writer.spilled == 2 and writer.dropped == 0 and len(calls) >= 2  # retried first
    assert any("kept in" in m for m in caplog.messages)
    outbox = Outbox(tmp_path / "outbox")
    assert outbox.summary()["pending"] == 2 and outbox.lost() == 0
    # The store is back: the next writer on this machine writes them, once.
    later = RouteEventWriter(db)
    for _ in range(300):
        if not outbox.pending():
            break
        time.sleep(0.1)
    later.close()
    assert count(db) == 2 and outbox.pending() == 0
    with sqlite3.connect(db) as conn:
        ids = {r[0] for r in conn.execute("SELECT route_id FROM route_events")}
    assert ids == {r.route_id for r in batch}


def test_close_during_an_outage_keeps_the_queue_without_waiting(
    tmp_path: Path, routes: Callable[[int], list[RouteResult]]
) -> None:
    """close() on a writer whose store does not answer returns while the write still
    hangs, the queued events in the outbox (an exiting command is never held)."""
    from skillrt.errors import StoreUnavailable
    from skillrt.telemetry.outbox import Outbox

    db = tmp_path / "state.db"
    hang = threading.Event()
    first = threading.Event()

    def write(store: Store, items: Batch) -> int:
        if not first.is_set():
            first.set()
            raise StoreUnavailable("no answer", retryable=True)
        hang.wait(60)  # a server that does not answer
        raise StoreUnavailable("no answer", retryable=True)

    writer = RouteEventWriter(db, write=write)
    for r in routes(3):
        writer.submit(r, surface="hook")
    assert first.wait(30)
    writer.close(timeout_s=60)  # the store is known to be down: no flush wait
    assert not hang.is_set()
    assert Outbox(tmp_path / "outbox").pending() == 3 and writer.dropped == 0
    hang.set()


def test_a_batch_written_twice_counts_once(
    tmp_path: Path, routes: Callable[[int], list[RouteResult]]
) -> None:
    """A batch retried after a commit whose answer was lost adds nothing twice."""
    from skillrt.store.counters import skill_stats
    from skillrt.telemetry.events import route_event, write_route_events

    store = open_location(tmp_path / "state.db")
    batch = [(route_event(r, surface="mcp"), [c.name for c in r.candidates]) for r in routes(3)]
    assert write_route_events(store, batch) == 3
    before = skill_stats(store)
    assert write_route_events(store, batch) == 0
    assert skill_stats(store) == before
    assert count(tmp_path / "state.db") == 3


@pytest.mark.filterwarnings("ignore::skillrt.telemetry.events.TelemetryWarning")
def test_queue_overflow_moves_the_oldest_to_the_outbox(
    tmp_path: Path, routes: Callable[[int], list[RouteResult]]
) -> None:
    from skillrt.telemetry.outbox import Outbox

    db = tmp_path / "state.db"
    open_location(db).schema_version()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    writer = RouteEventWriter(db, write_timeout_ms=10, max_queue=2)
    batch = routes(4)
    for r in batch:
        writer.submit(r, surface="mcp")
    for _ in range(600):  # the writer thread moves the overflow to the outbox
        if writer.spilled:
            break
        writer.flush(0.05)
    assert writer.spilled == 2 and writer.dropped == 0
    holder.execute("COMMIT")
    holder.close()
    assert writer.flush(30)
    writer.close()
    later = RouteEventWriter(db)  # the next writer writes what the outbox kept
    outbox = Outbox(tmp_path / "outbox")
    for _ in range(300):
        if not outbox.pending():
            break
        time.sleep(0.1)
    later.close()
    assert count(db) == 4 and outbox.lost() == 0


def test_many_threads_no_loss(tmp_path: Path, routes: Callable[[int], list[RouteResult]]) -> None:
    db = tmp_path / "state.db"
    open_location(db).schema_version()
    writer = RouteEventWriter(db)
    batch = routes(40)

    def submit(offset: int) -> None:
        for r in batch[offset::8]:
            writer.submit(r, surface="mcp")

    threads = [threading.Thread(target=submit, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert writer.flush(60)
    writer.close()
    assert count(db) == 40


def test_memory_store_is_refused() -> None:
    with pytest.raises(ValueError):
        RouteEventWriter(":memory:")


def test_one_bad_event_costs_only_itself(
    tmp_path: Path, routes: Callable[[int], list[RouteResult]], caplog: pytest.LogCaptureFixture
) -> None:
    """An event the store refuses (not a lock: a retry cannot cure it) is dropped alone;
    the rest of its batch is written."""
    from skillrt.errors import StoreError
    from skillrt.telemetry.events import write_route_events

    db = tmp_path / "state.db"
    batch = routes(6)
    poisoned = batch[2].route_id

    def write(store: Store, items: Batch) -> int:
        if any(event.route_id == poisoned for event, _ in items):
            raise StoreError("invalid byte sequence")
        return write_route_events(store, items)

    writer = RouteEventWriter(db, write=write, linger_s=0.5)  # one batch of six
    with caplog.at_level(logging.WARNING, logger="skillrt.telemetry"):
        for r in batch:
            writer.submit(r, surface="mcp")
        assert writer.flush(30)
    writer.close()
    assert writer.written == 5 and writer.dropped == 1 and count(db) == 5
    assert any(poisoned in m and "was not recorded" in m for m in caplog.messages)


def test_counting_a_loss_never_holds_a_route(
    tmp_path: Path, routes: Callable[[int], list[RouteResult]]
) -> None:
    """The writer counts refused events in outbox/lost.log; while that file hangs (here a
    FIFO nobody reads: opening it blocks), a route still queues its event at once — the
    writer does file I/O with its lock released."""
    import os

    db = tmp_path / "state.db"
    open_location(db).schema_version()
    ro = open_location(db, read_only=True)  # every write refused for good: counted as lost

    def write(store: Store, items: Batch) -> int:
        from skillrt.telemetry.events import write_route_events

        return write_route_events(ro, items)

    (tmp_path / "outbox").mkdir()
    fifo = tmp_path / "outbox" / "lost.log"
    os.mkfifo(fifo)
    writer = RouteEventWriter(db, write=write)
    first, second = routes(2)
    writer.submit(first, surface="mcp")
    deadline = time.monotonic() + 60  # a safety net, not a bound
    while writer.dropped == 0:  # the writer is counting it now, blocked on the FIFO
        assert time.monotonic() < deadline, "the event was never refused"
        time.sleep(0.01)
    queued: list[object] = []
    route = threading.Thread(
        target=lambda: queued.append(writer.submit(second, surface="mcp")), daemon=True
    )
    route.start()
    route.join(30)
    try:
        assert not route.is_alive(), "a route waited for the writer's file I/O"
        assert queued and queued[0] is not None
    finally:
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets the writer go on
        route.join(30)
        writer.close()
        os.close(reader)
