"""Write route events off the request path: a route never waits on the state store.

Long-lived servers (the MCP server), and every runtime on a shared store, route with
recording off and hand each result to a :class:`RouteEventWriter`. The route thread
only appends to a bounded queue; one writer thread writes the queue in batches (one
transaction each, up to ``batch_size`` events) through its own store handle, whose
lock wait is ``telemetry.write_timeout_ms``. So:

- a store that is locked, restarting or unreachable delays events, never a route: the
  writer warns once, keeps the events and retries until it is back (or the queue
  overflows, when the oldest events are dropped with a warning);
- a read-only or broken store (an error that retrying cannot cure) costs the events
  at once (with a warning), never a route;
- writes are idempotent (a batch retried after an unanswered commit adds nothing
  twice), and serialized by the one writer thread, so no event or count is lost.

:meth:`close` flushes what is queued (bounded by a deadline); a writer that was never
closed flushes when the interpreter exits normally.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from skillrt.errors import StoreError, StoreUnavailable
from skillrt.store.base import MEMORY, Store, open_location

if TYPE_CHECKING:
    from skillrt.routing.plan import RouteResult
    from skillrt.telemetry.events import RouteEvent

log = logging.getLogger("skillrt.telemetry")

#: Events kept while the store is unavailable; beyond this the oldest are dropped.
DEFAULT_MAX_QUEUE = 10_000
#: Give up on an event after this long failing (a read-only store never recovers).
DEFAULT_GIVE_UP_S = 30.0
#: Events per transaction.
DEFAULT_BATCH = 256

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
        write: BatchWriter | None = None,
    ) -> None:
        if isinstance(store, Store):
            if store.is_memory:
                raise ValueError("RouteEventWriter needs a file or server store")
            self._store = store.reopen(busy_timeout_ms=write_timeout_ms, read_only=read_only)
        else:
            if str(store) == MEMORY:
                raise ValueError("RouteEventWriter needs a file or server store")
            self._store = open_location(
                store, busy_timeout_ms=write_timeout_ms, read_only=read_only
            )
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
        self._inflight = 0
        self._cond = threading.Condition()
        self._closed = False
        self._failing = False
        self._overflowing = False
        self._warned_drop = False
        self.written = 0
        self.dropped = 0
        self._thread = threading.Thread(target=self._run, name="skillrt-telemetry", daemon=True)
        self._thread.start()
        # A writer nobody closed still flushes when the interpreter exits normally.
        ref = weakref.ref(self)

        def at_exit() -> None:
            writer = ref()
            if writer is not None:
                writer.close(timeout_s=5.0)

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
                self._queue.popleft()
                self.dropped += 1
                if not self._overflowing:  # once per episode, not once per route
                    log.warning("telemetry queue full: dropping the oldest route events")
                    self._overflowing = True
            self._queue.append(_Pending(event, list(candidates)))
            self._cond.notify()
        return True

    @property
    def pending(self) -> int:
        """Events queued or being written."""
        with self._cond:
            return len(self._queue) + self._inflight

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until every queued event is written or dropped (True), or ``timeout_s``
        passes (False)."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            self._flushing += 1  # no lingering while someone waits
            try:
                while self._queue or self._inflight:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._cond.notify_all()
                    self._cond.wait(min(left, 0.05))
            finally:
                self._flushing -= 1
        return True

    def close(self, timeout_s: float = 10.0) -> None:
        """Flush (bounded by ``timeout_s``), then stop the writer thread."""
        atexit.unregister(self._atexit)
        with self._cond:
            if self._closed:
                return
        if not self.flush(timeout_s) and self.pending:
            log.warning("telemetry: %d route event(s) not written at shutdown", self.pending)
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=max(1.0, timeout_s))
        self._store.close()

    # -- writer thread ------------------------------------------------------------------
    def _write(self, batch: list[_Pending]) -> None:
        from skillrt.telemetry.events import write_route_events

        write = self._write_batch or write_route_events
        write(self._store, [(p.event, p.candidates) for p in batch])

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue and self._closed:
                    return
                if len(self._queue) < self.batch_size and not (self._closed or self._flushing):
                    self._cond.wait(self.linger_s)  # let a batch gather
                n = min(self.batch_size, len(self._queue))
                if n == 0:
                    continue
                batch = [self._queue.popleft() for _ in range(n)]
                self._inflight = n
            now = time.monotonic()
            for item in batch:
                if not item.first_try:
                    item.first_try = now
            failed, error = self._write_batch_or_each(batch)
            with self._cond:
                self._inflight = 0
                self.written += n - len(failed)
                if error is None:
                    self._warned_drop = False
                    if not self._queue:
                        self._overflowing = False
                    if self._failing:
                        log.warning("telemetry: state store writable again; events resumed")
                        self._failing = False
                else:
                    self._failed(failed, error)
                self._cond.notify_all()

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

    def _failed(self, batch: list[_Pending], error: BaseException) -> None:
        """Drop what cannot be written any more; put the rest back, oldest first."""
        keep = []
        final = not isinstance(error, StoreUnavailable)  # read-only, broken: never cured
        for item in batch:
            if (
                final
                or self.read_only
                or self._closed
                or time.monotonic() - item.first_try > self.give_up_s
            ):
                self.dropped += 1
                level = logging.DEBUG if self._warned_drop else logging.WARNING
                log.log(
                    level,
                    "telemetry: route %s was not recorded (state store %s unavailable%s: %s)",
                    item.event.route_id,
                    self.location,
                    ", read-only" if self.read_only else "",
                    error,
                )
                self._warned_drop = True
            else:
                keep.append(item)
        room = self.max_queue - len(self._queue)
        if len(keep) > room:  # the queue filled meanwhile: the oldest go
            self.dropped += len(keep) - max(room, 0)
            keep = keep[len(keep) - max(room, 0) :]
        self._queue.extendleft(reversed(keep))
        if keep:
            if not self._failing:
                log.warning(
                    "telemetry: state store %s is locked or unavailable (%s); route events "
                    "are queued (routes are unaffected)",
                    self.location,
                    error,
                )
                self._failing = True
            self._cond.wait(0.05)  # back off before retrying
