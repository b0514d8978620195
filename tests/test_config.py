"""``skillrt.yaml`` is validated strictly by pydantic: no value changes type on the way in,
unknown keys are refused, every problem is listed, paths are relative to the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillrt.config import RuntimeConfig
from skillrt.errors import ConfigError

BASE = Path("/project")


def load(data: dict[str, Any]) -> RuntimeConfig:
    return RuntimeConfig.from_mapping(data, base_dir=BASE)


def problems(data: dict[str, Any]) -> list[dict[str, str]]:
    with pytest.raises(ConfigError) as exc:
        load(data)
    assert exc.value.code == "E_CONFIG"
    return list(exc.value.problems or [])


def test_a_list_of_strings_must_hold_strings() -> None:
    # Before: loaded as (1, None), and the loader then compared extensions with None.
    found = problems({"limits": {"allowed_extensions": [1, None]}})
    assert [p["where"] for p in found] == [
        "limits.allowed_extensions.0",
        "limits.allowed_extensions.1",
    ]
    assert load({"limits": {"allowed_extensions": [".md"]}}).limits.allowed_extensions == (".md",)


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("routing", "semantic_top_k", "3"),  # no string is read as a number
        ("routing", "semantic_top_k", 2.5),
        ("routing", "semantic_top_k", True),  # nor a boolean as one
        ("routing", "read_bodies", 1),
        ("routing", "embedding_backend", 5),
        ("routing", "embedding_model_variant", "fp16"),
        ("execution", "retryable_exit_codes", ["75"]),
        ("execution", "pass_env", "HOME"),  # a string is not a list of one
        ("orchestration", "domains", ["technical"]),
        ("dispatch", "roles_dir", 7),
    ],
)
def test_no_value_changes_type(section: str, key: str, value: Any) -> None:
    found = problems({section: {key: value}})
    assert found[0]["where"].startswith(f"{section}.{key}")


def test_every_problem_is_listed_and_unknown_keys_are_named() -> None:
    found = problems({"routing": {"bogus": 1, "semantic_top_k": "x", "weights": {"zz": 1}}})
    assert {(p["where"], p["message"]) for p in found} >= {
        ("routing.bogus", "unknown key"),
        ("routing.weights.zz", "unknown key"),
    }
    assert any(p["where"] == "routing.semantic_top_k" for p in found)


def test_numbers_widen_and_paths_are_relative_to_the_file() -> None:
    cfg = load(
        {
            "routing": {"selection_threshold": 1, "model_cache_dir": "models"},
            "state_dir": "state",
            "orchestration": {"memory_dir": "/abs/mem"},
            "roots": ["skills", {"path": "vendor", "namespace": "acme", "scope": "user"}],
            "namespaces": {"vendor/x": "x"},
        }
    )
    assert cfg.routing.selection_threshold == 1.0
    assert isinstance(cfg.routing.selection_threshold, float)
    assert cfg.routing.model_cache_dir == BASE / "models"
    assert cfg.state_dir == BASE / "state"
    assert cfg.orchestration.memory_dir == Path("/abs/mem")
    assert [(r.path, r.namespace, r.scope) for r in cfg.discovery.roots] == [
        (BASE / "skills", None, "project"),
        (BASE / "vendor", "acme", "user"),
    ]
    assert cfg.discovery.namespaces == ((BASE / "vendor/x", "x"),)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)


@given(top_k=_JSON, exts=_JSON, threshold=_JSON)
def test_any_value_is_read_as_its_type_or_refused(top_k: Any, exts: Any, threshold: Any) -> None:
    data = {
        "routing": {"semantic_top_k": top_k, "selection_threshold": threshold},
        "limits": {"allowed_extensions": exts},
    }
    try:
        cfg = load(json.loads(json.dumps(data)))
    except ConfigError as exc:
        assert exc.problems
        return
    assert type(cfg.routing.semantic_top_k) is int
    assert type(cfg.routing.selection_threshold) is float
    assert all(type(e) is str for e in cfg.limits.allowed_extensions)
