"""Interrupts that are never lost.

Python raises a signal handler's exception wherever the main thread happens to be. In
a weakref callback or a ``__del__`` the exception is printed and dropped; inside a C
extension's initialisation (onnxruntime's) it becomes an ``ImportError``, which an
optional import's fallback then takes for a missing package. Either way the process
carries on as if it had never been told to stop: a workflow ran all its phases after a
SIGTERM. The handler here records the signal before it raises, and code that would
carry on past such a place (an optional import's fallback, a wait on a child process, a
phase boundary) calls :func:`check`.

Nothing is imported at module level: the prompt hook's path imports this module.
"""

from __future__ import annotations

__all__ = ["check", "raise_on", "received", "record"]

_received: int | None = None


def record(signum: int) -> None:
    """Note that signal ``signum`` asked this process to stop."""
    global _received
    _received = signum


def received() -> int | None:
    """The signal that asked this process to stop, if one did."""
    return _received


def check() -> None:
    """Raise ``KeyboardInterrupt`` if a signal asked this process to stop (its first
    ``KeyboardInterrupt`` may have been swallowed where the handler happened to run)."""
    if _received is not None:
        raise KeyboardInterrupt


def _record_and_raise(signum: int, _frame: object) -> None:
    record(signum)
    raise KeyboardInterrupt


def raise_on(*signals: int) -> None:
    """Make each of ``signals`` raise ``KeyboardInterrupt``, recorded for :func:`check`
    (main thread only: elsewhere Python refuses handlers, and this does nothing). A
    signal the process was started ignoring (a shell's background job and SIGINT)
    stays ignored."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        for sig in signals:
            if signal.getsignal(sig) is not signal.SIG_IGN:
                signal.signal(sig, _record_and_raise)
