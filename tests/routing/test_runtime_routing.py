"""SkillRuntime.route / .router / .eval over real skill folders, config files, catalogues."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillrt.config import RuntimeConfig
from skillrt.errors import ConfigError
from skillrt.runtime import SkillRuntime
from skillrt.telemetry.events import list_route_events

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


def runtime(tmp_path: Path, routing: dict[str, object], **kwargs: object) -> SkillRuntime:
    cfg = tmp_path / "skillrt.yaml"
    cfg.write_text(json.dumps({"routing": routing}))  # JSON is YAML
    config = RuntimeConfig.from_file(cfg)
    return SkillRuntime(config, roots=[EXAMPLES], persist=False, **kwargs)  # type: ignore[arg-type]


def test_routing_config_comes_from_skillrt_yaml(tmp_path: Path) -> None:
    rt = runtime(
        tmp_path,
        {
            "embedding_backend": "hashing",
            "selection_threshold": 0.99,
            "options": {"score_model": {"bias": -3.0}},
        },
        env={},
    )
    assert rt.router.config.selection_threshold == 0.99
    result = rt.route("write a commit message for my staged changes")
    # Hardly anything reaches 0.99: the trigger helps, the stricter threshold decides.
    assert all(c.score.total < 0.99 for c in result.candidates if c.status != "selected")
    bad = runtime(tmp_path, {"embedding_backend": "hashing", "options": {"score_model": {"x": 1}}})
    with pytest.raises(ConfigError):
        bad.route("anything")


def test_runtime_route_records_and_respects_enable_state(tmp_path: Path) -> None:
    rt = runtime(tmp_path, {"embedding_backend": "hashing"}, env={})
    first = rt.route("write a commit message for my staged changes")
    assert first.plan.names == ("commit-messages",)
    assert [e.route_id for e in list_route_events(rt.store)] == [first.route_id]
    rt.disable("commit-messages")
    rt.refresh()
    again = rt.route("$commit-messages please")
    c = next(c for c in again.candidates if c.name == "commit-messages")
    assert c.status == "disabled" and again.plan.no_skill


def test_runtime_routes_over_a_catalogue_besides_roots(tmp_path: Path) -> None:
    cat = tmp_path / "extra.jsonl"
    cat.write_text(
        json.dumps({"name": "weather", "description": "Weather forecast and rain for a city."})
        + "\n"
    )
    rt = runtime(tmp_path, {"embedding_backend": "hashing"}, catalogs=[cat], env={})
    names = {s.qualified_name for s in rt.routable_skills()}
    assert "weather" in names and "code-review" in names
    assert rt.route("will it rain in paris: weather forecast").plan.names == ("weather",)


def test_runtime_eval_writes_no_telemetry(tmp_path: Path) -> None:
    rt = runtime(tmp_path, {"embedding_backend": "hashing"}, env={})
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps(
            {
                "query": "write a commit message for my staged changes",
                "expected": ["commit-messages"],
            }
        )
        + "\n"
        + json.dumps({"query": "what is the capital of peru", "expected": []})
        + "\n"
    )
    report = rt.eval(queries)
    assert report.counts["queries"] == 2 and report.top1 == 1.0
    assert list_route_events(rt.store) == []


@pytest.mark.slow
def test_real_model_routes_the_bundled_catalogue(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "git").write_text("#!/bin/sh\n")
    (bindir / "git").chmod(0o755)
    rt = runtime(tmp_path, {"embedding_backend": "onnx-minilm"}, env={"PATH": str(bindir)})
    commit = rt.route("Draft a conventional commit message for the staged diff")
    assert commit.plan.names == ("commit-messages",)
    debug = rt.route("my test fails intermittently and I cannot find the root cause")
    assert debug.candidates[0].name == "systematic-debugging"
    none = rt.route("what is the capital of peru")
    assert none.plan.no_skill
    # gh is not on that PATH: the CI fixer is listed as unavailable.
    ci = rt.route("fix the failing GitHub Actions checks on my PR")
    fixer = next(c for c in ci.candidates if c.name == "acme:gh-fix-ci")
    assert fixer.status == "unavailable" and "bin:gh" in fixer.missing


def test_model_variant_and_cache_dir_come_from_skillrt_yaml(tmp_path: Path) -> None:
    from skillrt.routing.embeddings import backend_options

    cfg = tmp_path / "skillrt.yaml"
    cfg.write_text(
        json.dumps({"routing": {"embedding_model_variant": "original", "model_cache_dir": "m"}})
    )
    routing = RuntimeConfig.from_file(cfg).routing
    assert routing.model_cache_dir == tmp_path / "m"
    options = backend_options("onnx-minilm", routing)
    assert options == {"variant": "original", "cache_dir": str(tmp_path / "m")}
    assert backend_options("hashing", routing) == {}
    cfg.write_text(json.dumps({"routing": {"embedding_model_variant": "fp16"}}))
    with pytest.raises(ConfigError, match="embedding_model_variant"):
        RuntimeConfig.from_file(cfg)
