"""Write route events off the request path: a route never waits on the state store.

Long-lived servers (the MCP server, the daemon), and every runtime on a shared store,
route with recording off and hand each result to a :class:`RouteEventWriter`. The route
thread only appends to a bounded queue; one writer thread writes the queue in batches
(one transaction each, up to ``batch_size`` events) through its own store handle, whose
lock wait is ``telemetry.write_timeout_ms``. So:

- a store that is locked, restarting or unreachable delays events, never a route: the
  writer warns once, keeps the events and retries; events it has held for
  ``give_up_s``, or that overflow the queue, go to this machine's outbox
  (:mod:`skillrt.telemetry.outbox`), and so do the events still queued when the writer
  is closed (after a flush bounded by ``close(timeout_s)``, skipped while the store is
  known to be unreachable: never reached, its last attempt failed). A writer that
  reaches the store writes the outbox's events (at start, when the store comes back,
  and every ``DRAIN_INTERVAL_S`` while some wait);
- a read-only or broken store (an error that retrying cannot cure) costs the events
  at once (with a warning, counted as lost in the outbox), never a route;
- writes are idempotent (a batch retried after an unanswered commit, or written from
  the outbox as well, adds nothing twice), and serialized by the one writer thread.

A writer that was never closed is closed when the interpreter exits normally.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from skillrt.errors import StoreError, StoreUnavailable
from skillrt.store.backends import open_location
from skillrt.store.base import MEMORY, Store
from skillrt.telemetry.outbox import Outbox, outbox_for

if TYPE_CHECKING:
    from skillrt.routing.plan import RouteResult
    from skillrt.telemetry.events import RouteEvent

log = logging.getLogger("skillrt.telemetry")

#: Events kept in memory while the store is unavailable; beyond this the oldest go to
#: the outbox.
DEFAULT_MAX_QUEUE = 10_000
#: Seconds an event may wait in memory for an unavailable store before it goes to the
#: outbox (a read-only or broken store drops it at once).
DEFAULT_GIVE_UP_S = 30.0
#: Events per transaction.
DEFAULT_BATCH = 256
#: Seconds :meth:`RouteEventWriter.close` waits for queued events by default.
DEFAULT_CLOSE_S = 2.0
#: Seconds between attempts to write the outbox while events wait in it.
DRAIN_INTERVAL_S = 30.0

Batch = Sequence[tuple["RouteEvent", Sequence[str]]]
#: ``write(store, [(event, candidate names), ...]) -> events written``; raises on failure.
BatchWriter = Callable[[Store, Batch], int]


#: Seconds the writer waits for more events before it writes a batch that is not full:
#: fewer, larger transactions, and less time holding the interpreter while routes run.
DEFAULT_LINGER_S = 0.05


@dataclass
class _Pending:
    event: RouteEvent
    candidates: list[str]
    first_try: float = 0.0


@dataclass
class _Failed:
    """What a failed write decided for its events (see ``RouteEventWriter._failed``)."""

    #: Refused for good: counted as lost.
    dropped: list[_Pending] = field(default_factory=list)
    #: Waited too long, or no room left: to the outbox.
    give_up: list[_Pending] = field(default_factory=list)
    #: Put back in the queue to try again.
    kept: int = 0
    warn_drop: bool = False
    newly_failing: bool = False


class RouteEventWriter:
    """A background writer of route events.

    Args:
        store: The state store (a second handle is opened on it), or its location (a
            SQLite path or a ``postgresql://`` URL). An in-memory store is refused: a
            second handle would see another database.
        write_timeout_ms: How long a write waits on a lock before it is retried later.
        record_query_text: Keep the raw query text (``routing.record_query_text``).
        read_only: The store was opened read-only: every event is dropped (with a warning).
        batch_size: Most events written in one transaction.
        linger_s: How long a batch that is not full waits for more events.
        outbox: Where events that cannot be written in time are kept; default the
            outbox of ``store``'s state folder (None when it has none).
        write: Writes one batch (tests inject failures here).
    """

    def __init__(
        self,
        store: Store | Path | str,
        *,
        write_timeout_ms: int = 100,
        record_query_text: bool = False,
        max_queue: int = DEFAULT_MAX_QUEUE,
        give_up_s: float = DEFAULT_GIVE_UP_S,
        read_only: bool = False,
        batch_size: int = DEFAULT_BATCH,
        linger_s: float = DEFAULT_LINGER_S,
        outbox: Outbox | None = None,
        write: BatchWriter | None = None,
    ) -> None:
        if isinstance(store, Store):
            if store.is_memory:
                raise ValueError("RouteEventWriter needs a file or server store")
            self.outbox = outbox or outbox_for(store)
            self._store = store.reopen(busy_timeout_ms=write_timeout_ms, read_only=read_only)
        else:
            if str(store) == MEMORY:
                raise ValueError("RouteEventWriter needs a file or server store")
            self._store = open_location(
                store, busy_timeout_ms=write_timeout_ms, read_only=read_only
            )
            self.outbox = outbox or outbox_for(self._store)
        self.location = self._store.location
        self.write_timeout_ms = write_timeout_ms
        self.record_query_text = record_query_text
        self.max_queue = max_queue
        self.give_up_s = give_up_s
        self.read_only = read_only
        self.batch_size = max(1, batch_size)
        self.linger_s = linger_s
        self._write_batch = write
        self._flushing = 0
        self._queue: deque[_Pending] = deque()
        self._inflight: list[_Pending] = []
        #: Events to move to the outbox (overflow), by the writer thread.
        self._overflow: list[_Pending] = []
        self._cond = threading.Condition()
        #: Held while events are written to the outbox (a process ending at once waits
        #: for such a write: :meth:`abandon`).
        self._keeping = threading.Lock()
        self._closed = False
        self._failing = False
        self._overflowing = False
        self._warned_drop = False
        self._drain_at = 0.0  # time.monotonic() of the next outbox drain (0: at start)
        self.written = 0
        #: Events lost for good (a store that refuses them; no outbox to keep them).
        self.dropped = 0
        #: Events moved to the outbox (written later, by this or another writer).
        self.spilled = 0
        self._thread = threading.Thread(target=self._run, name="skillrt-telemetry", daemon=True)
        self._thread.start()
        # A writer nobody closed still closes when the interpreter exits normally.
        ref = weakref.ref(self)

        def at_exit() -> None:
            writer = ref()
            if writer is not None:
                writer.close()

        self._atexit = at_exit
        atexit.register(at_exit)

    # -- request side -------------------------------------------------------------------
    def submit(
        self, result: RouteResult, *, surface: str, model_id: str | None = None
    ) -> RouteEvent | None:
        """Queue one route's event (built here, so the writer thread only writes); never
        blocks on the store, never raises. Returns the event (None once closed)."""
        from skillrt.telemetry.events import route_event

        try:
            event = route_event(
                result,
                surface=surface,
                model_id=model_id,
                record_query_text=self.record_query_text,
            )
        except Exception:  # a malformed result costs its event, never the route
            log.exception("telemetry: could not build a route event")
            return None
        return event if self.submit_event(event, [c.name for c in result.candidates]) else None

    def submit_event(self, event: RouteEvent, candidates: Sequence[str]) -> bool:
        """Queue a built event (``candidates``: the names counted as routed); False once
        closed. Never blocks on the store, never raises."""
        with self._cond:
            if self._closed:
                return False
            if len(self._queue) >= self.max_queue:
                self._overflow.append(self._queue.popleft())  # to the outbox, off this thread
                if not self._overflowing:  # once per episode, not once per route
                    log.warning("telemetry queue full: the oldest route events go to the outbox")
                    self._overflowing = True
            self._queue.append(_Pending(event, list(candidates)))
            self._cond.notify()
        return True

    @property
    def pending(self) -> int:
        """Events queued or being written."""
        with self._cond:
            return len(self._queue) + len(self._inflight) + len(self._overflow)

    def flush(self, timeout_s: float = 10.0, *, while_reachable: bool = False) -> bool:
        """Wait until every queued event is written, kept in the outbox or dropped
        (True), or ``timeout_s`` passes (False); ``while_reachable``: stop waiting (False)
        as soon as a write finds the store unreachable."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            self._flushing += 1  # no lingering while someone waits
            try:
                while self._queue or self._inflight or self._overflow:
                    left = deadline - time.monotonic()
                    if left <= 0 or (while_reachable and self._failing):
                        return False
                    self._cond.notify_all()
                    self._cond.wait(min(left, 0.05))
            finally:
                self._flushing -= 1
        return True

    def close(self, timeout_s: float = DEFAULT_CLOSE_S) -> None:
        """Flush (bounded by ``timeout_s``; not at all while the store is known to be
        unreachable: a server never reached whose last attempt failed, or a write that
        just failed), keep what is left in the outbox, then stop the writer thread."""
        atexit.unregister(self._atexit)
        with self._cond:
            if self._closed:
                return
        if not self._store.unreachable:
            self.flush(timeout_s, while_reachable=True)
        with self._cond:
            self._closed = True
            # Events being written are kept too: if that write succeeds after all, the
            # outbox's copy adds nothing (writes are idempotent).
            left = [*self._overflow, *self._queue, *self._inflight]
            self._queue.clear()
            self._overflow = []
            self._cond.notify_all()
        if left:
            self._keep(left, "the process ended before the state store took them")
        self._thread.join(timeout=0.5 if left else max(1.0, timeout_s))
        if not self._thread.is_alive():
            self._store.close()  # else the thread still uses it; the process ends anyway

    def abandon(self, why: str) -> int:
        """For a process about to end at once (the hook's deadline): keep every event not
        written yet in the outbox now, or count it lost, without waiting on the store or
        for the writer thread's write; the writer takes no more events. Returns how many
        were handed to the outbox."""
        atexit.unregister(self._atexit)
        if not self._cond.acquire(timeout=0.5):  # held only for bookkeeping, never I/O
            log.warning("telemetry: route events not kept (%s): the writer is busy", why)
            return 0
        try:
            self._closed = True
            left = [*self._overflow, *self._queue, *self._inflight]
            self._queue.clear()
            self._overflow = []
            self._cond.notify_all()
        finally:
            self._cond.release()
        if not left:
            return 0
        if not self._keeping.acquire(timeout=0.5):  # a spill in progress: let it finish
            log.warning("telemetry: %d route event(s) lost (%s)", len(left), why)
            return 0
        try:
            self._keep_now(left, why)
        finally:
            self._keeping.release()
        return len(left)

    # -- writer thread ------------------------------------------------------------------
    def _write(self, batch: Sequence[_Pending] | Batch) -> None:
        from skillrt.telemetry.events import write_route_events

        write = self._write_batch or write_route_events
        items = [(p.event, p.candidates) if isinstance(p, _Pending) else p for p in batch]
        write(self._store, items)

    def _keep(self, items: list[_Pending], why: str) -> None:
        """Move ``items`` to the outbox (or count them lost when there is none)."""
        with self._keeping:
            self._keep_now(items, why)

    def _keep_now(self, items: list[_Pending], why: str) -> None:
        pairs = [(p.event, p.candidates) for p in items]
        kept = self.outbox.spill(pairs, reason=why) if self.outbox is not None else 0
        with self._cond:
            self.spilled += kept
            self.dropped += len(items) - kept
        if kept:
            log.warning("telemetry: %d route event(s) kept in %s (%s); they are written "
                        "when a skillrt process on this machine reaches the state store",
                        kept, self.outbox.folder if self.outbox else "", why)  # fmt: skip
        if len(items) > kept:
            log.warning("telemetry: %d route event(s) lost (%s)", len(items) - kept, why)

    def _drain(self) -> None:
        """Write the outbox's events (at start, when the store is back, now and then)."""
        if self.outbox is None:
            return
        try:
            if not self.outbox.files():
                self._drain_at = float("inf")  # until something is spilled again
                return
            n = self.outbox.drain(self._write, batch_size=self.batch_size)
        except StoreUnavailable:
            self._drain_at = time.monotonic() + DRAIN_INTERVAL_S
            return
        except Exception as exc:  # a broken outbox must not stop the writer
            log.warning("telemetry: cannot write the outbox %s: %s", self.outbox.folder, exc)
            self._drain_at = time.monotonic() + DRAIN_INTERVAL_S
            return
        self._drain_at = float("inf")
        if n:
            log.info("telemetry: %d route event(s) from the outbox written", n)

    def _run(self) -> None:
        while True:
            with self._cond:
                overflow, self._overflow = self._overflow, []
            if overflow:
                self._keep(overflow, "the queue was full while the state store was unavailable")
            if time.monotonic() >= self._drain_at and not self._closed:
                self._drain()
            with self._cond:
                while not self._queue and not self._closed and not self._overflow:
                    wait = self._drain_at - time.monotonic()
                    if wait <= 0:
                        break
                    self._cond.wait(None if wait == float("inf") else wait)
                if self._closed:
                    return  # what was left went to the outbox in close()
                if not self._queue:
                    continue
                if len(self._queue) < self.batch_size and not self._flushing:
                    self._cond.wait(self.linger_s)  # let a batch gather
                n = min(self.batch_size, len(self._queue))
                if n == 0 or self._closed:
                    continue
                batch = [self._queue.popleft() for _ in range(n)]
                self._inflight = batch
            now = time.monotonic()
            for item in batch:
                if not item.first_try:
                    item.first_try = now
            failed, error = self._write_batch_or_each(batch)
            recovered = False
            outcome = _Failed()
            with self._cond:
                if self._closed:
                    return  # close() kept this batch in the outbox
                self._inflight = []
                self.written += n - len(failed)
                if error is None:
                    self._warned_drop = False
                    if not self._queue:
                        self._overflowing = False
                    if self._failing:
                        self._failing = False
                        recovered = True
                else:
                    outcome = self._failed(failed, error)
                self._cond.notify_all()
            # Files and logs are written with the lock released: a slow disk or a full
            # stderr pipe must never hold a route that queues an event.
            if recovered:
                log.warning("telemetry: state store writable again; events resumed")
                self._drain_at = 0.0  # the store is back: write what waited in the outbox
            if error is not None:
                self._report(outcome, error)
            if outcome.give_up:
                self._keep(
                    outcome.give_up, f"the state store was unavailable for {self.give_up_s:g} s"
                )
            if outcome.kept:
                with self._cond:
                    if not self._closed:
                        self._cond.wait(0.05)  # back off before retrying

    def _write_batch_or_each(
        self, batch: list[_Pending]
    ) -> tuple[list[_Pending], BaseException | None]:
        """Write ``batch`` in one transaction; when it fails for a reason a retry cannot
        cure, write its events one by one, so one bad event costs only itself. Returns
        the events not written and the last error."""
        try:
            self._write(batch)
            return [], None
        except StoreUnavailable as exc:
            return batch, exc  # the whole batch waits for the store
        except Exception as exc:
            error: BaseException = exc
        if len(batch) == 1:
            if not isinstance(error, StoreError):
                log.error("telemetry: writing a route event failed: %s", error)
            return batch, error
        failed = []
        for item in batch:
            try:
                self._write([item])
            except Exception as exc:  # the writer must outlive any one bad event
                failed.append(item)
                error = exc
        return failed, (error if failed else None)

    def _failed(self, batch: list[_Pending], error: BaseException) -> _Failed:
        """Drop what can never be written; put back what may be, oldest first; say what
        waited too long (for the outbox). Called holding the lock: only bookkeeping, the
        caller writes files and logs (:meth:`_report`) once it is released."""
        out = _Failed()
        final = not isinstance(error, StoreUnavailable)  # read-only, broken: never cured
        now = time.monotonic()
        keep: list[_Pending] = []
        for item in batch:
            if final or self.read_only:
                self.dropped += 1
                out.dropped.append(item)
            elif now - item.first_try > self.give_up_s:
                out.give_up.append(item)
            else:
                keep.append(item)
        room = self.max_queue - len(self._queue)
        if len(keep) > room:  # the queue filled meanwhile: the oldest go to the outbox
            cut = len(keep) - max(room, 0)
            out.give_up += keep[:cut]
            keep = keep[cut:]
        self._queue.extendleft(reversed(keep))
        out.kept = len(keep)
        out.warn_drop = not self._warned_drop
        if out.dropped:
            self._warned_drop = True
        if (keep or out.give_up) and not self._failing:
            self._failing = True
            out.newly_failing = True
        return out

    def _report(self, out: _Failed, error: BaseException) -> None:
        """Count and log what :meth:`_failed` decided (outside the lock)."""
        if out.dropped:
            if self.outbox is not None:
                self.outbox.count_lost(len(out.dropped), f"the state store refused it: {error}")
            for n, item in enumerate(out.dropped):
                log.log(
                    logging.WARNING if out.warn_drop and n == 0 else logging.DEBUG,
                    "telemetry: route %s was not recorded (state store %s unavailable%s: %s)",
                    item.event.route_id,
                    self.location,
                    ", read-only" if self.read_only else "",
                    error,
                )
        if out.newly_failing:
            log.warning(
                "telemetry: state store %s is locked or unavailable (%s); route events "
                "are queued (routes are unaffected)",
                self.location,
                error,
            )
