"""Optional OpenTelemetry spans for route, load and dispatch.

``span("skillrt.route", {"skillrt.query_chars": 12})`` is a context manager. When
``opentelemetry-api`` is importable (checked once, on first use) and spans are enabled,
it opens a real span on the ``skillrt`` tracer; exceptions are recorded on it and
re-raised. Otherwise it returns :data:`NOOP_SPAN`, one shared object whose enter/exit
do nothing: no import, no allocation, no cost. The same no-op is used while the API is
installed but no SDK tracer provider is configured (the ``mcp`` SDK depends on the API,
so it is usually present). Exporters are the application's choice (``opentelemetry-sdk``),
never skillrt's.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping
from types import TracebackType
from typing import Any

TRACER_NAME = "skillrt"
_UNSET: Any = object()

_lock = threading.Lock()
_tracer: Any = _UNSET
_trace_api: Any = None
_enabled = True


class NoopSpan:
    """Does nothing; returned by :func:`span` when there is no tracer."""

    __slots__ = ()

    def __enter__(self) -> NoopSpan:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    def set_attribute(self, key: str, value: Any) -> None:
        return None

    def set_attributes(self, attributes: dict[str, Any]) -> None:
        return None


NOOP_SPAN = NoopSpan()


def _load_tracer() -> Any:
    """The skillrt tracer, or None when opentelemetry-api is not installed."""
    global _tracer
    if _tracer is _UNSET:
        with _lock:
            if _tracer is _UNSET:
                try:
                    from opentelemetry import trace
                except ImportError:
                    _tracer = None
                else:
                    from skillrt.version import __version__

                    global _trace_api
                    _trace_api = trace
                    _tracer = trace.get_tracer(TRACER_NAME, __version__)
    return _tracer


def _configured() -> bool:
    """True once the application installed a tracer provider (an SDK).

    Until then OpenTelemetry would hand out non-recording spans, which still cost a
    context switch per call: skillrt returns its no-op instead. The check is one global
    read, so a provider installed later is picked up by the next span.
    """
    api = _trace_api
    if api is None:
        return True  # a tracer was injected directly (tests)
    return not isinstance(api.get_tracer_provider(), api.ProxyTracerProvider)


def available() -> bool:
    """True when opentelemetry-api is installed (spans can be produced)."""
    return _load_tracer() is not None


def set_enabled(enabled: bool) -> None:
    """Turn spans on or off for this process (``telemetry.otel`` in the config)."""
    global _enabled
    _enabled = enabled


def reset() -> None:
    """Forget the cached import check (tests that add or hide opentelemetry)."""
    global _tracer, _trace_api
    with _lock:
        _tracer = _UNSET
        _trace_api = None


def span(name: str, attributes: Mapping[str, Any] | None = None, *, enabled: bool = True) -> Any:
    """A context manager for one span; :data:`NOOP_SPAN` when tracing is off or absent.

    ``enabled=False`` (a runtime's ``telemetry.otel``) also gives the no-op. Attribute
    values that are None are left out (OpenTelemetry rejects them).
    """
    if not (enabled and _enabled):
        return NOOP_SPAN
    if _tracer is _UNSET and "opentelemetry.trace" not in sys.modules:
        # Nothing in this process imported OpenTelemetry, so no provider is installed:
        # skip the ~70 ms import (a CLI run pays it otherwise).
        return NOOP_SPAN
    tracer = _load_tracer()
    if tracer is None or not _configured():
        return NOOP_SPAN
    attrs = {k: v for k, v in (attributes or {}).items() if v is not None}
    return tracer.start_as_current_span(name, attributes=attrs)
