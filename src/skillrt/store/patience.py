"""How long store calls may wait on a server: :func:`patience` budgets.

``with patience(0.3):`` gives the store calls made inside 0.3 s of waiting *all told*:
each call that waits on the server (a connection, a statement, a commit) is a
:func:`store_wait`, and the time it takes is taken from the budget. Time spent between
store calls (walking skill folders, embedding texts) is not, so a slow walk never uses
up the wait the route has for the store; and once the budget is spent, store calls fail
at once (``StoreUnavailable``) instead of waiting again.

``until`` also ends the budget at a moment (``time.monotonic()``), whatever is left of
it: the prompt hook's deadline. Budgets nest: the tighter one wins, and a wait is taken
from every budget around it. A thread started inside does not inherit a budget.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["patience", "patience_deadline", "store_wait"]


class _Budget:
    """One :func:`patience` block: the seconds of waiting left, its end, the one around."""

    __slots__ = ("left", "outer", "until")

    def __init__(self, left: float, until: float | None, outer: _Budget | None) -> None:
        self.left = left
        self.until = until
        self.outer = outer


_BUDGET: ContextVar[_Budget | None] = ContextVar("skillrt_store_patience", default=None)
#: The deadline of the store wait in progress (a wait inside it is part of it).
_WAIT: ContextVar[float | None] = ContextVar("skillrt_store_wait", default=None)


@contextmanager
def patience(seconds: float | None, *, until: float | None = None) -> Iterator[None]:
    """Store calls made inside wait on a server at most ``seconds`` all told (and never
    past ``until``), then raise ``StoreUnavailable``, whatever the store's own
    ``retry_s`` and connect timeout say. None: no bound (``until`` ignored)."""
    if seconds is None:
        yield
        return
    token = _BUDGET.set(_Budget(max(0.0, seconds), until, _BUDGET.get()))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _left(budget: _Budget | None, now: float) -> float | None:
    """Seconds of waiting left in ``budget`` and every budget around it (None: none)."""
    if budget is None:
        return None
    left = budget.left
    while budget is not None:
        left = min(left, budget.left)
        if budget.until is not None:
            left = min(left, budget.until - now)
        budget = budget.outer
    return max(0.0, left)


def patience_deadline() -> float | None:
    """The latest moment (``time.monotonic()``) the store wait in progress, or one
    starting now, may last; None without a budget."""
    current = _WAIT.get()
    if current is not None:
        return current
    now = time.monotonic()
    left = _left(_BUDGET.get(), now)
    return None if left is None else now + left


@contextmanager
def store_wait() -> Iterator[float | None]:
    """One wait on the server: yields its deadline (None: unbounded), and takes the time
    it took from every budget around it. A wait inside a wait is part of it."""
    budget = _BUDGET.get()
    if budget is None or _WAIT.get() is not None:
        yield patience_deadline()
        return
    start = time.monotonic()
    deadline = start + (_left(budget, start) or 0.0)
    token = _WAIT.set(deadline)
    try:
        yield deadline
    finally:
        _WAIT.reset(token)
        spent = time.monotonic() - start
        outer: _Budget | None = budget
        while outer is not None:
            outer.left = max(0.0, outer.left - spent)
            outer = outer.outer
