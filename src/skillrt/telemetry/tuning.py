"""Tuning (seed 001 §15): gray release of a candidate routing config, trigger pruning.

Gray release: ``telemetry.candidate_config`` holds routing overrides (any keys of the
``routing`` section, e.g. ``{"selection_threshold": 0.7, "weights": {...}}``) and
``telemetry.candidate_share`` the share of routes it serves. :func:`choose_config` picks
by a hash of the route id, so the choice is deterministic (the same route id always gets
the same config) and uniform across ids. Every route event carries the ``config_id``
that served it; ``skillrt stats --by-config`` compares them.

Trigger pruning: :func:`trigger_report` lists triggers that fire often but whose routes
rarely succeed or are often corrected by feedback: candidates to delete or narrow.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillrt.config import RoutingConfig, RoutingWeights, TelemetryConfig, build_dataclass
from skillrt.errors import ConfigError

DEFAULT_CONFIG_ID = "default"
_NO_OVERRIDES: Mapping[str, Any] = {}


def candidate_id(telemetry: TelemetryConfig) -> str:
    """The label of the candidate config: configured, or ``candidate-<8 hex of overrides>``."""
    if telemetry.candidate_id:
        return telemetry.candidate_id
    blob = json.dumps(telemetry.candidate_config or {}, sort_keys=True, default=str)
    return "candidate-" + hashlib.sha256(blob.encode()).hexdigest()[:8]


def route_bucket(route_id: str) -> float:
    """A uniform number in [0, 1) from the route id (sha256, first 8 bytes)."""
    digest = hashlib.sha256(route_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64


def choose_config(route_id: str, telemetry: TelemetryConfig) -> tuple[str, Mapping[str, Any]]:
    """``(config_id, routing overrides)`` for one route.

    ``("default", {})`` unless a candidate is configured with a share above 0 and the
    route's bucket falls inside that share.
    """
    share = telemetry.candidate_share
    if not telemetry.candidate_config or share <= 0.0:
        return DEFAULT_CONFIG_ID, _NO_OVERRIDES
    if share >= 1.0 or route_bucket(route_id) < share:
        return candidate_id(telemetry), telemetry.candidate_config
    return DEFAULT_CONFIG_ID, _NO_OVERRIDES


def apply_overrides(base: RoutingConfig, overrides: Mapping[str, Any]) -> RoutingConfig:
    """``base`` with ``overrides`` applied; ``weights`` and ``options`` merge key by key.

    Raises :class:`ConfigError` for an unknown key or a wrongly typed value, exactly as
    the ``routing`` section of ``skillrt.yaml`` would.
    """
    if not overrides:
        return base
    if not isinstance(overrides, Mapping):
        raise ConfigError("telemetry.candidate_config must be a mapping of routing keys")
    changes = dict(overrides)
    weights = changes.pop("weights", None)
    options = changes.pop("options", None)
    cfg = build_dataclass(RoutingConfig, changes, "telemetry.candidate_config", Path("."))
    # build_dataclass filled unspecified fields with defaults: keep the base's instead.
    values = {k: getattr(cfg, k) for k in changes}
    if weights is not None:
        if not isinstance(weights, Mapping):
            raise ConfigError("telemetry.candidate_config.weights must be a mapping")
        merged = {f.name: getattr(base.weights, f.name) for f in dataclasses.fields(RoutingWeights)}
        merged.update(weights)
        values["weights"] = build_dataclass(
            RoutingWeights, merged, "telemetry.candidate_config.weights", Path(".")
        )
    if options is not None:
        if not isinstance(options, Mapping):
            raise ConfigError("telemetry.candidate_config.options must be a mapping")
        values["options"] = {**base.options, **options}
    return dataclasses.replace(base, **values)


def validate_gray_release(telemetry: TelemetryConfig, base: RoutingConfig) -> None:
    """Fail early (ConfigError) on a bad share or candidate config."""
    if not 0.0 <= telemetry.candidate_share <= 1.0:
        raise ConfigError(
            f"telemetry.candidate_share must be within 0..1, got {telemetry.candidate_share}",
            section="telemetry",
        )
    if telemetry.candidate_config:
        apply_overrides(base, telemetry.candidate_config)


@dataclass
class GrayRelease:
    """Config selection for a router: resolves the candidate RoutingConfig once."""

    telemetry: TelemetryConfig
    base: RoutingConfig

    def __post_init__(self) -> None:
        validate_gray_release(self.telemetry, self.base)
        self._candidate = (
            apply_overrides(self.base, self.telemetry.candidate_config)
            if self.telemetry.candidate_config
            else self.base
        )

    def routing_for(self, route_id: str) -> tuple[str, RoutingConfig]:
        """``(config_id, RoutingConfig)`` serving ``route_id``."""
        config_id, overrides = choose_config(route_id, self.telemetry)
        return config_id, (self._candidate if overrides else self.base)
