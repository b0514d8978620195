"""OpenTelemetry spans: a shared no-op when the API is absent, real spans with the SDK."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from skillrt.telemetry import otel


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    otel.reset()
    otel.set_enabled(True)
    yield
    otel.reset()
    otel.set_enabled(True)


def test_absent_api_gives_the_noop_singleton(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None entry in sys.modules makes `import opentelemetry` raise ImportError.
    monkeypatch.setitem(sys.modules, "opentelemetry", None)
    otel.reset()
    assert otel.available() is False
    first = otel.span("skillrt.route", {"a": 1})
    assert first is otel.NOOP_SPAN
    assert otel.span("skillrt.load") is first  # one shared object, nothing allocated
    with first as s:
        s.set_attribute("k", "v")
    # An exception inside the no-op span propagates untouched.
    with pytest.raises(ValueError), otel.span("x"):
        raise ValueError("boom")


def test_disabled_gives_noop_even_when_installed() -> None:
    otel.set_enabled(False)
    assert otel.span("skillrt.route") is otel.NOOP_SPAN
    otel.set_enabled(True)
    assert otel.span("skillrt.route", enabled=False) is otel.NOOP_SPAN


def test_api_without_a_provider_is_noop() -> None:
    """The mcp SDK pulls in opentelemetry-api; until an application installs an SDK
    tracer provider, skillrt's spans stay the free no-op."""
    pytest.importorskip("opentelemetry.trace")
    from opentelemetry import trace

    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        pytest.skip("a global tracer provider is installed in this process")
    assert otel.available()
    assert otel.span("skillrt.route") is otel.NOOP_SPAN


def test_runtime_spans_route_load_dispatch(
    tmp_path, make_skill, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """The facade opens skillrt.load, skillrt.dispatch and skillrt.route spans."""
    pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from skillrt.config import RootConfig, RoutingConfig, RuntimeConfig
    from skillrt.runtime import SkillRuntime

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel._tracer = provider.get_tracer("skillrt")
    make_skill(
        "code-review", description="Review pull requests.", files={"references/a.md": "# A\n"}
    )
    config = RuntimeConfig(
        project_dir=tmp_path,
        state_dir=tmp_path / "state",
        routing=RoutingConfig(embedding_backend="none"),
    )
    runtime = SkillRuntime(config, roots=[RootConfig(tmp_path / "skills", scope="flag")])
    runtime.load_body("code-review")
    runtime.read_resource("code-review", "references/a.md")
    runtime.run_skill("code-review", "review this")
    routed = runtime.route("please review my pull request")
    runtime.close()
    spans = [(s.name, dict(s.attributes or {})) for s in exporter.get_finished_spans()]
    kinds = [(n, a.get("skillrt.kind")) for n, a in spans if n == "skillrt.load"]
    assert ("skillrt.load", "body") in kinds and ("skillrt.load", "resource") in kinds
    dispatch = [a for n, a in spans if n == "skillrt.dispatch"]
    assert dispatch and dispatch[0]["skillrt.status"] == "delegated"
    route = [a for n, a in spans if n == "skillrt.route"]
    assert route and route[0]["skillrt.route_id"] == routed.route_id


def test_real_spans_with_the_sdk() -> None:
    pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("skillrt")
    # Use the test provider without touching the process-global one.
    otel._tracer = tracer
    with otel.span("skillrt.route", {"skillrt.query_chars": 5, "skip": None}) as sp:
        sp.set_attribute("skillrt.route_id", "r1")
    with pytest.raises(RuntimeError), otel.span("skillrt.dispatch"):
        raise RuntimeError("failed")
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert spans["skillrt.route"].attributes["skillrt.query_chars"] == 5
    assert spans["skillrt.route"].attributes["skillrt.route_id"] == "r1"
    assert "skip" not in spans["skillrt.route"].attributes
    assert spans["skillrt.dispatch"].status.status_code == trace.StatusCode.ERROR


def test_a_process_that_never_imported_opentelemetry_does_not_import_it() -> None:
    # No provider can be installed without importing OpenTelemetry, so skillrt skips
    # the import (a cold CLI run would pay ~70 ms for nothing).
    import subprocess

    code = (
        "import sys; from skillrt.telemetry import otel; "
        "assert otel.span('skillrt.route') is otel.NOOP_SPAN; "
        "assert not [m for m in sys.modules if m.startswith('opentelemetry')]"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
