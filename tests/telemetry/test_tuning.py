"""Gray release: deterministic, share-respecting config choice and override merging."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillrt.config import RoutingConfig, RuntimeConfig, TelemetryConfig
from skillrt.errors import ConfigError
from skillrt.telemetry.tuning import (
    DEFAULT_CONFIG_ID,
    GrayRelease,
    apply_overrides,
    candidate_id,
    choose_config,
    route_bucket,
)

CANDIDATE = {"selection_threshold": 0.7, "weights": {"trigger_match": 0.3}}


def tel(
    share: float, config: dict[str, object] | None = CANDIDATE, **kw: object
) -> TelemetryConfig:
    return TelemetryConfig(candidate_config=config, candidate_share=share, **kw)  # type: ignore[arg-type]


@given(st.text(min_size=1, max_size=64))
def test_choice_is_deterministic(route_id: str) -> None:
    t = tel(0.5)
    assert choose_config(route_id, t) == choose_config(route_id, t)
    assert 0.0 <= route_bucket(route_id) < 1.0


def test_no_candidate_or_zero_share_is_default() -> None:
    for t in (tel(0.0), tel(0.5, config=None), TelemetryConfig()):
        assert choose_config("r1", t) == (DEFAULT_CONFIG_ID, {})


def test_full_share_always_candidate() -> None:
    t = tel(1.0)
    cid, overrides = choose_config("anything", t)
    assert cid == candidate_id(t) and cid.startswith("candidate-")
    assert overrides == CANDIDATE


@pytest.mark.parametrize("share", [0.1, 0.25, 0.5])
def test_share_is_respected_over_many_routes(share: float) -> None:
    t = tel(share)
    n = 20_000
    hits = sum(choose_config(uuid.uuid4().hex, t)[0] != DEFAULT_CONFIG_ID for _ in range(n))
    # Binomial sd at n=20k is <= 0.0036; 5 sd of slack.
    assert abs(hits / n - share) < 0.02


def test_candidate_id_is_stable_and_overridable() -> None:
    assert candidate_id(tel(0.5)) == candidate_id(tel(0.2))
    assert candidate_id(tel(0.5, config={"selection_threshold": 0.8})) != candidate_id(tel(0.5))
    assert candidate_id(tel(0.5, candidate_id="v2")) == "v2"


def test_apply_overrides_merges_weights_and_keeps_base() -> None:
    base = RoutingConfig(semantic_top_k=5)
    out = apply_overrides(base, CANDIDATE)
    assert out.selection_threshold == 0.7
    assert out.semantic_top_k == 5  # untouched base value
    assert out.weights.trigger_match == 0.3
    assert out.weights.intent_match == base.weights.intent_match
    assert apply_overrides(base, {}) is base


@pytest.mark.parametrize(
    "bad",
    [
        {"no_such_key": 1},
        {"selection_threshold": "high"},
        {"weights": {"nope": 1.0}},
        {"weights": 3},
    ],
)
def test_bad_overrides_are_config_errors(bad: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        apply_overrides(RoutingConfig(), bad)


def test_gray_release_resolves_once_and_validates() -> None:
    gr = GrayRelease(tel(1.0), RoutingConfig())
    cid, cfg = gr.routing_for("r")
    assert cid.startswith("candidate-") and cfg.selection_threshold == 0.7
    with pytest.raises(ConfigError):
        GrayRelease(tel(1.5), RoutingConfig())
    with pytest.raises(ConfigError):
        GrayRelease(tel(0.5, config={"bogus": 1}), RoutingConfig())


def test_config_file_section(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cfg_file = tmp_path / "skillrt.yaml"
    cfg_file.write_text(
        "telemetry:\n  candidate_share: 0.2\n  candidate_config:\n    selection_threshold: 0.7\n"
        "mcp:\n  poll_interval_s: 0.5\n  instructions_budget: 1000\n"
    )
    cfg = RuntimeConfig.from_file(cfg_file)
    assert cfg.telemetry.candidate_share == 0.2
    assert cfg.telemetry.candidate_config == {"selection_threshold": 0.7}
    assert cfg.mcp.poll_interval_s == 0.5 and cfg.mcp.instructions_budget == 1000
