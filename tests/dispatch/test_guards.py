"""D4: the four guards, in the seed's order, with the seed's codes and context."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillrt.dispatch.guards import first_blocking_guard
from skillrt.dispatch.header import Identity, Policy, RuntimeHeader, Trace
from skillrt.dispatch.model import DispatchRequest
from skillrt.errors import (
    DepthLimitExceeded,
    EdgeNotExecutable,
    RootReloadBlocked,
    SkillReentryBlocked,
)
from skillrt.execution.runners import DryRunRunner

from .support import make_runtime

CONTEXT_FIELDS = {"request_id", "current_skill", "target_skill", "depth", "skill_stack"}


def header(
    current: str = "b",
    *,
    depth: int = 1,
    stack: tuple[str, ...] = ("a", "b"),
    visited: tuple[str, ...] = ("a",),
    policy: Policy | None = None,
) -> RuntimeHeader:
    return RuntimeHeader(
        "delegated",
        Identity("fixer", current, "a", True),
        policy or Policy(max_depth=3),
        Trace("req-t", depth, stack, visited),
    )


def test_root_reload_blocked() -> None:
    err = first_blocking_guard(header(), "root", "requires_now", root_skill="root")
    assert isinstance(err, RootReloadBlocked)
    assert err.code == "E_ROOT_RELOAD_BLOCKED"
    assert set(err.to_dict()) >= CONTEXT_FIELDS
    assert err.context["target_skill"] == "root"


def test_root_reload_allowed_when_policy_allows() -> None:
    h = header(policy=Policy(forbid_root_reload=False))
    assert first_blocking_guard(h, "root", "requires_now", root_skill="root") is None


def test_reentry_blocked_for_a_visited_skill_a_b_a() -> None:
    err = first_blocking_guard(header(), "a", "requires_now", root_skill=None)
    assert isinstance(err, SkillReentryBlocked)
    assert err.code == "E_SKILL_REENTRY_BLOCKED"
    assert err.context["skill_stack"] == ["a", "b"]
    assert err.context["current_skill"] == "b"


def test_self_edge_blocked() -> None:
    err = first_blocking_guard(header(), "b", "requires_now", root_skill=None)
    assert isinstance(err, SkillReentryBlocked)
    assert "itself" in err.message


def test_reentry_allowed_by_policy() -> None:
    h = header(policy=Policy(allow_reentry=True, max_depth=9))
    assert first_blocking_guard(h, "a", "requires_now", root_skill=None) is None


def test_reentry_sees_the_request_wide_visited_set() -> None:
    err = first_blocking_guard(header(), "c", "requires_now", root_skill=None, visited={"c"})
    assert isinstance(err, SkillReentryBlocked)


def test_depth_limit() -> None:
    h = header(depth=3, policy=Policy(max_depth=3))
    err = first_blocking_guard(h, "c", "requires_now", root_skill=None)
    assert isinstance(err, DepthLimitExceeded)
    assert err.code == "E_DEPTH_LIMIT"
    assert err.context["depth"] == 3
    assert err.context["max_depth"] == 3
    assert first_blocking_guard(header(depth=2), "c", "requires_now", root_skill=None) is None


@pytest.mark.parametrize("edge_type", ["requires_later", "reference_only"])
def test_edge_not_executable(edge_type: str) -> None:
    err = first_blocking_guard(header(), "c", edge_type, root_skill=None)
    assert isinstance(err, EdgeNotExecutable)
    assert err.code == "E_EDGE_NOT_EXECUTABLE"
    assert err.context["edge_type"] == edge_type


def test_guards_apply_in_the_seed_order() -> None:
    # "a" is the root skill, already visited, too deep, and a reference: root reload first.
    h = header(depth=3, policy=Policy(max_depth=3))
    order = []
    for root_skill, target, edge in [
        ("a", "a", "reference_only"),
        (None, "a", "reference_only"),
        (None, "c", "reference_only"),
    ]:
        err = first_blocking_guard(h, target, edge, root_skill=root_skill)
        assert err is not None
        order.append(err.code)
    assert order == ["E_ROOT_RELOAD_BLOCKED", "E_SKILL_REENTRY_BLOCKED", "E_DEPTH_LIMIT"]
    err = first_blocking_guard(header(depth=0), "c", "reference_only", root_skill="a")
    assert err is not None and err.code == "E_EDGE_NOT_EXECUTABLE"


# -- through the dispatcher -----------------------------------------------------------
def graph(make_skill, tmp_path: Path, edges: dict[str, list[str]], **sections: object):
    for name in {*edges, *(t for ts in edges.values() for t in ts)}:
        body = "".join(f"**REQUIRED SUB-SKILL:** Use {t}\n\n" for t in edges.get(name, []))
        make_skill(name, body=body or "# Body\n")
    return make_runtime(tmp_path / "skills", tmp=tmp_path, **sections)


def blocked_codes(result) -> list[tuple[str, str, str]]:
    out = []
    for node in result.walk():
        for b in node.blocked:
            out.append((node.skill, b.target, (b.error or {}).get("code", b.reason)))
    return out


def test_cycle_a_b_a_is_blocked_in_the_tree(make_skill, tmp_path: Path) -> None:
    rt = graph(make_skill, tmp_path, {"aa-x": ["bb-x"], "bb-x": ["aa-x"]})
    result = rt.dispatch(DispatchRequest(skill="aa-x", prompt="t"), runner=DryRunRunner())
    assert [n.skill for n in result.walk()] == ["aa-x", "bb-x"]
    assert blocked_codes(result) == [("bb-x", "aa-x", "E_SKILL_REENTRY_BLOCKED")]


def test_self_edge_is_blocked_in_the_tree(make_skill, tmp_path: Path) -> None:
    rt = graph(make_skill, tmp_path, {"aa-x": ["aa-x"]})
    result = rt.dispatch(DispatchRequest(skill="aa-x", prompt="t"), runner=DryRunRunner())
    assert [n.skill for n in result.walk()] == ["aa-x"]
    assert blocked_codes(result) == [("aa-x", "aa-x", "E_SKILL_REENTRY_BLOCKED")]


@pytest.mark.parametrize("max_depth", [0, 1, 2, 3])
def test_depth_limit_from_config(make_skill, tmp_path: Path, max_depth: int) -> None:
    chain = ["s0-x", "s1-x", "s2-x", "s3-x", "s4-x"]
    rt = graph(
        make_skill,
        tmp_path,
        {a: [b] for a, b in zip(chain, chain[1:], strict=False)},
        dispatch={"max_depth": max_depth},
    )
    result = rt.dispatch(DispatchRequest(skill="s0-x", prompt="t"), runner=DryRunRunner())
    nodes = list(result.walk())
    assert len(nodes) == max_depth + 1
    assert max(n.depth for n in nodes) == max_depth
    assert blocked_codes(result)[-1] == (chain[max_depth], chain[max_depth + 1], "E_DEPTH_LIMIT")


def test_root_reload_blocked_in_the_tree(make_skill, tmp_path: Path) -> None:
    rt = graph(
        make_skill,
        tmp_path,
        {"tao-x": [], "aa-x": ["tao-x"]},
        dispatch={"root_skill": "tao-x"},
    )
    result = rt.dispatch(DispatchRequest(skill="aa-x", prompt="t"), runner=DryRunRunner())
    assert blocked_codes(result) == [("aa-x", "tao-x", "E_ROOT_RELOAD_BLOCKED")]


def test_explicit_delegated_dispatch_raises_each_code(examples_rt) -> None:
    runner = DryRunRunner()
    base = {
        "prompt": "t",
        "execution_mode": "delegated",
        "parent_skill": "executing-plans",
        "depth": 1,
    }
    with pytest.raises(SkillReentryBlocked) as info:
        examples_rt.dispatch(
            DispatchRequest(skill="writing-plans", visited_skills=("writing-plans",), **base),
            runner=runner,
        )
    assert set(info.value.to_dict()) >= CONTEXT_FIELDS
    with pytest.raises(DepthLimitExceeded):
        examples_rt.dispatch(
            DispatchRequest(skill="code-review", **{**base, "depth": 3}), runner=runner
        )
    with pytest.raises(EdgeNotExecutable):
        examples_rt.dispatch(
            DispatchRequest(skill="finishing-work", edge_type="requires_later", **base),
            runner=runner,
        )
