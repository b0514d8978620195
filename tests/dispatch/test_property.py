"""D4: no input makes dispatch loop or recurse without bound (random skill graphs)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillrt.dispatch.model import DispatchRequest
from skillrt.execution.runners import DryRunRunner

from .support import make_runtime

NAMES = [f"node-{i}" for i in range(6)]


@st.composite
def graphs(draw: st.DrawFn) -> tuple[int, dict[str, list[str]], int, bool, int]:
    n = draw(st.integers(min_value=1, max_value=len(NAMES)))
    names = NAMES[:n]
    edges = {
        name: draw(st.lists(st.sampled_from(names), max_size=4))  # self-edges, cycles, dups
        for name in names
    }
    max_depth = draw(st.integers(min_value=0, max_value=5))
    allow_reentry = draw(st.booleans())
    start = draw(st.integers(min_value=0, max_value=n - 1))
    return n, edges, max_depth, allow_reentry, start


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs())
def test_dispatch_terminates_and_is_bounded(
    graph: tuple[int, dict[str, list[str]], int, bool, int],
) -> None:
    n, edges, max_depth, allow_reentry, start = graph
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "skills"
        for name, targets in edges.items():
            (root / name).mkdir(parents=True)
            body = "".join(f"**REQUIRED SUB-SKILL:** Use {t}\n\n" for t in targets)
            (root / name / "SKILL.md").write_text(
                f"---\nname: {name}\ndescription: node {name}\n---\n{body or '# leaf'}\n"
            )
        rt = make_runtime(
            root,
            tmp=Path(tmp),
            dispatch={"max_depth": max_depth, "allow_reentry": allow_reentry},
        )
        try:
            result = rt.dispatch(
                DispatchRequest(skill=NAMES[start], prompt="go"), runner=DryRunRunner()
            )
        finally:
            rt.close()
    nodes = list(result.walk())
    pairs = {(node.skill, node.depth) for node in nodes}
    # Never deeper than max_depth, never the same (skill, depth) twice.
    assert max(node.depth for node in nodes) <= max_depth
    assert len(pairs) == len(nodes)
    assert len(nodes) <= n * (max_depth + 1)
    if not allow_reentry:
        # Without re-entry every skill runs at most once per request.
        assert len({node.skill for node in nodes}) == len(nodes) <= n
    for node in nodes:
        assert all(c.depth == node.depth + 1 for c in node.children)
        for b in node.blocked:
            assert b.reason in ("guard", "already_dispatched")
            if b.reason == "guard":
                assert b.error["code"] in ("E_SKILL_REENTRY_BLOCKED", "E_DEPTH_LIMIT")
