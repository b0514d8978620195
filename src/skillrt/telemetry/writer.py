"""Write route events off the request path: a route never waits on the state store.

Long-lived servers (the MCP server) route with recording off and hand each result to a
:class:`RouteEventWriter`. The route thread only appends to a bounded queue; one writer
thread writes events in order through its own connection, whose busy timeout is
``telemetry.write_timeout_ms``. So:

- a store locked by another process delays events, never a route: the writer warns once,
  keeps the events and retries until the lock is gone (or the queue overflows, when the
  oldest events are dropped with a warning);
- a read-only or broken store costs the events (with a warning), never a route;
- within the process, writes are serialized by the one writer thread, so concurrent
  routes never contend for SQLite's lock and none is lost.

:meth:`close` flushes what is queued (bounded by a deadline) before the process exits.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from skillrt.store.sqlite import MEMORY, Store

if TYPE_CHECKING:
    from skillrt.routing.plan import RouteResult

log = logging.getLogger("skillrt.telemetry")

#: Events kept while the store is unavailable; beyond this the oldest are dropped.
DEFAULT_MAX_QUEUE = 10_000
#: Give up on an event after this long failing (a read-only store never recovers).
DEFAULT_GIVE_UP_S = 30.0


@dataclass
class _Pending:
    result: RouteResult
    surface: str
    model_id: str | None
    first_try: float = 0.0


class RouteEventWriter:
    """A background writer of route events to ``store_path``.

    Args:
        store_path: The state database (``:memory:`` is refused: a second connection
            would see another database).
        write_timeout_ms: Busy timeout of each write.
        record_query_text: Keep the raw query text (``routing.record_query_text``).
        read_only: The store was opened read-only: every event is dropped (with a warning).
    """

    def __init__(
        self,
        store_path: Path | str,
        *,
        write_timeout_ms: int = 100,
        record_query_text: bool = False,
        max_queue: int = DEFAULT_MAX_QUEUE,
        give_up_s: float = DEFAULT_GIVE_UP_S,
        read_only: bool = False,
        record: Callable[..., object] | None = None,
    ) -> None:
        if str(store_path) == MEMORY:
            raise ValueError("RouteEventWriter needs a file store")
        self.store_path = Path(store_path)
        self.write_timeout_ms = write_timeout_ms
        self.record_query_text = record_query_text
        self.max_queue = max_queue
        self.give_up_s = give_up_s
        self.read_only = read_only
        self._record = record
        self._queue: deque[_Pending] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self._store: Store | None = None
        self._failing = False
        self._overflowing = False
        self._warned_drop = False
        self.written = 0
        self.dropped = 0
        self._thread = threading.Thread(target=self._run, name="skillrt-telemetry", daemon=True)
        self._thread.start()

    # -- request side -------------------------------------------------------------------
    def submit(self, result: RouteResult, *, surface: str, model_id: str | None = None) -> None:
        """Queue one route's event; never blocks, never raises."""
        with self._cond:
            if self._closed:
                return
            if len(self._queue) >= self.max_queue:
                self._queue.popleft()
                self.dropped += 1
                if not self._overflowing:  # once per episode, not once per route
                    log.warning("telemetry queue full: dropping the oldest route events")
                    self._overflowing = True
            self._queue.append(_Pending(result, surface, model_id))
            self._cond.notify()

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._queue)

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Wait until the queue is empty (True) or ``timeout_s`` passes (False)."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while self._queue:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.notify_all()
                self._cond.wait(min(left, 0.05))
        return True

    def close(self, timeout_s: float = 10.0) -> None:
        """Flush (bounded by ``timeout_s``), then stop the writer thread."""
        if not self.flush(timeout_s) and self.pending:
            log.warning("telemetry: %d route event(s) not written at shutdown", self.pending)
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=max(1.0, timeout_s))
        if self._store is not None:
            self._store.close()

    # -- writer thread ------------------------------------------------------------------
    def _open(self) -> Store:
        if self._store is None:
            self._store = Store(
                self.store_path, busy_timeout_ms=self.write_timeout_ms, read_only=self.read_only
            )
        return self._store

    def _write(self, item: _Pending) -> bool:
        from skillrt.telemetry.events import record_route

        record = self._record or record_route
        if not self.store_path.exists() and not os.access(self.store_path.parent, os.W_OK):
            return False
        event = record(
            self._open(),
            item.result,
            surface=item.surface,
            model_id=item.model_id,
            record_query_text=self.record_query_text,
        )
        return event is not None

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue and self._closed:
                    return
                item = self._queue[0]
            if not item.first_try:
                item.first_try = time.monotonic()
            try:
                ok = self._write(item)
            except Exception:  # the writer must outlive any one bad event
                log.exception("telemetry: writing a route event failed")
                ok = False
            with self._cond:
                if ok:
                    self._queue.popleft()
                    self.written += 1
                    self._warned_drop = False
                    if not self._queue:
                        self._overflowing = False
                    if self._failing:
                        log.warning("telemetry: state store writable again; events resumed")
                        self._failing = False
                elif (
                    self.read_only
                    or self._closed
                    or time.monotonic() - item.first_try > self.give_up_s
                ):
                    self._queue.popleft()
                    self.dropped += 1
                    level = logging.DEBUG if self._warned_drop else logging.WARNING
                    log.log(
                        level,
                        "telemetry: route %s was not recorded (state store %s unavailable%s)",
                        item.result.route_id,
                        self.store_path,
                        ", read-only" if self.read_only else "",
                    )
                    self._warned_drop = True
                else:
                    if not self._failing:
                        log.warning(
                            "telemetry: state store %s is locked or read-only; route events "
                            "are queued (routes are unaffected)",
                            self.store_path,
                        )
                        self._failing = True
                    self._cond.wait(0.05)  # back off before retrying
                self._cond.notify_all()
