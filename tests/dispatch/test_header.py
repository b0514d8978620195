"""D2: the runtime header of seed 000 §2."""

from __future__ import annotations

import re

import yaml
from hypothesis import given
from hypothesis import strategies as st

from skillrt.dispatch.header import (
    Identity,
    Policy,
    RuntimeHeader,
    Trace,
    new_request_id,
    yaml_scalar,
)

SEED_EXAMPLE = {
    "execution_mode": "delegated",
    "identity": {
        "role": "fixer",
        "current_skill": "systematic-debugging",
        "origin_skill": "executing-plans",
        "root_loaded": True,
    },
    "policy": {"forbid_root_reload": True, "max_depth": 3, "allow_reentry": False},
    "trace": {
        "request_id": "req-2026-02-15-001",
        "depth": 2,
        "skill_stack": ["writing-plans", "executing-plans", "systematic-debugging"],
        "visited_skills": ["writing-plans", "executing-plans"],
    },
}


def seed_header() -> RuntimeHeader:
    return RuntimeHeader(
        "delegated",
        Identity("fixer", "systematic-debugging", "executing-plans", True),
        Policy(True, 3, False),
        Trace(
            "req-2026-02-15-001",
            2,
            ("writing-plans", "executing-plans", "systematic-debugging"),
            ("writing-plans", "executing-plans"),
        ),
    )


def test_header_yaml_is_the_seed_example() -> None:
    text = seed_header().to_yaml()
    assert yaml.safe_load(text) == SEED_EXAMPLE
    # Keys in the seed's order.
    keys = [line.split(":")[0].strip() for line in text.splitlines() if ":" in line]
    assert keys[:4] == ["execution_mode", "identity", "role", "current_skill"]
    assert keys.index("policy") < keys.index("trace")


def test_child_header_follows_the_seed_pseudocode() -> None:
    parent = RuntimeHeader(
        "root",
        Identity("fixer", "writing-plans", None, True),
        Policy(),
        Trace("req-1", 0, ("writing-plans",), ()),
    )
    child = parent.child("executing-plans")
    grandchild = child.child("systematic-debugging")
    assert child.execution_mode == "delegated"
    assert child.identity.origin_skill == "writing-plans"
    assert child.identity.current_skill == "executing-plans"
    assert child.identity.root_loaded is True
    assert grandchild.trace.depth == 2
    assert grandchild.trace.skill_stack == (
        "writing-plans",
        "executing-plans",
        "systematic-debugging",
    )
    assert grandchild.trace.visited_skills == ("writing-plans", "executing-plans")
    assert yaml.safe_load(grandchild.to_yaml())["trace"] == SEED_EXAMPLE["trace"] | {
        "request_id": "req-1"
    }


def test_empty_lists_and_nulls_render_as_yaml() -> None:
    header = RuntimeHeader(
        "root", Identity("oracle", None, None, False), Policy(), Trace("r", 0, (), ())
    )
    data = yaml.safe_load(header.to_yaml())
    assert data["identity"]["current_skill"] is None
    assert data["trace"]["skill_stack"] == []
    assert data["identity"]["root_loaded"] is False


def test_request_id_shape() -> None:
    assert re.fullmatch(r"req-\d{4}-\d{2}-\d{2}-[0-9a-f]{8}", new_request_id())
    assert new_request_id() != new_request_id()


@given(st.text(max_size=40))
def test_any_string_scalar_round_trips(value: str) -> None:
    assert yaml.safe_load(f"k: {yaml_scalar(value)}\n") == {"k": value}


@given(
    st.lists(st.text(max_size=20), max_size=4),
    st.text(max_size=20),
    st.integers(min_value=0, max_value=50),
)
def test_any_header_round_trips(stack: list[str], skill: str, depth: int) -> None:
    header = RuntimeHeader(
        "delegated",
        Identity(skill or "r", skill, None, True),
        Policy(max_depth=depth),
        Trace(skill, depth, tuple(stack), tuple(stack[:-1])),
    )
    data = yaml.safe_load(header.to_yaml())
    assert data["identity"]["current_skill"] == skill
    assert data["trace"]["skill_stack"] == stack
    assert data["trace"]["visited_skills"] == stack[:-1]
    assert data["trace"]["request_id"] == skill
    assert data["policy"]["max_depth"] == depth


def test_yaml_words_and_numbers_are_quoted() -> None:
    for value in ("yes", "No", "null", "3", "1e3", "0x1f", "on", "~", "-", "a: b", "#x", "x:"):
        assert yaml.safe_load(f"k: {yaml_scalar(value)}") == {"k": value}
    assert yaml_scalar("systematic-debugging") == "systematic-debugging"
    assert yaml_scalar("acme:gh-fix-ci") == "acme:gh-fix-ci"
