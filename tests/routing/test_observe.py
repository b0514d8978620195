"""Recording a route is an observer the router calls (issue 28), and a router is complete
when constructed: nothing sets its collaborators afterwards."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from tests.import_graph import skillrt_graph

from skillrt.config import RoutingConfig, RuntimeConfig
from skillrt.routing.observe import RouteSeen
from skillrt.routing.plan import RouteResult
from skillrt.routing.router import Router
from skillrt.runtime import SkillRuntime
from skillrt.telemetry.recording import RouteRecorder

from .conftest import catalogue

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


class Heard:
    """An observer that keeps what it is told and answers with one event."""

    def __init__(self) -> None:
        self.heard: list[tuple[RouteResult, RouteSeen]] = []

    def __call__(self, result: RouteResult, seen: RouteSeen) -> tuple[dict[str, Any], ...]:
        self.heard.append((result, seen))
        return ({"event": "heard", "route_id": result.route_id},)


def test_the_router_tells_each_observer_once_and_attaches_what_it_returns() -> None:
    first, second = Heard(), Heard()
    router = Router.from_skills(
        catalogue(), RoutingConfig(use_stats=False), backend="hashing", on_route=[first, second]
    )
    result = router.route("please do a code review of my pull request", surface="mcp")
    assert [r.route_id for r, _ in first.heard] == [result.route_id]
    assert [r.route_id for r, _ in second.heard] == [result.route_id]
    assert first.heard[0][1] == RouteSeen(surface="mcp", model_id=router.index.model_id)
    assert result.events == (
        {"event": "heard", "route_id": result.route_id},
        {"event": "heard", "route_id": result.route_id},
    )
    # The caller's say on recording reaches the observers; the default surface is the
    # router's own.
    router.route("tell me a joke", record=False)
    assert first.heard[1][1] == RouteSeen(
        surface="library", model_id=router.index.model_id, record=False
    )


def test_a_router_without_observers_leaves_events_empty() -> None:
    router = Router.from_skills(catalogue(), RoutingConfig(use_stats=False), backend="hashing")
    assert router.on_route == ()
    assert router.route("please do a code review").events == ()


def test_the_runtime_s_router_is_complete_when_built(tmp_path: Path) -> None:
    config = RuntimeConfig(routing=RoutingConfig(embedding_backend="hashing"))
    with SkillRuntime(config, roots=[EXAMPLES], persist=False, env={}) as rt:
        router = rt.router
        assert router.store is rt.store  # per-skill stats: the shared state
        assert router.on_route == (rt.routing,)
        assert isinstance(rt.routing, RouteRecorder)
        result = rt.route("write a commit message for my staged changes")
        assert result.events and result.events[0]["recorded"] is True
        quiet = rt.route("write a commit message for my staged changes", record=False)
        assert quiet.events == ()


def test_a_query_backend_encodes_requests_and_the_skills_stay_with_theirs() -> None:
    from skillrt.routing.embeddings.hashing import HashingBackend

    skills_backend, requests_backend = HashingBackend(), HashingBackend()
    router = Router.from_skills(
        catalogue(), RoutingConfig(use_stats=False), backend=skills_backend,
        query_backend=requests_backend,
    )  # fmt: skip
    assert router.index.backend is requests_backend
    assert router.index.semantic is not None and router.index.semantic.backend is skills_backend


#: What a router or an index is built with: never set on one from outside afterwards.
COLLABORATORS = {"store", "backend", "index", "on_route", "reranker", "reader", "config"}


def test_no_module_sets_a_collaborator_after_construction() -> None:
    """``router.store = ...``, ``router.index.backend = ...`` and the like: an object is
    given its collaborators when it is made (only ``self.x = ...`` in its own class)."""
    graph = skillrt_graph()
    found = []
    for path in graph.modules.values():
        for node in ast.walk(graph.tree(path)):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                if not isinstance(target, ast.Attribute) or target.attr not in COLLABORATORS:
                    continue
                owner = target.value
                if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
                    continue
                found.append(f"{path.name}:{node.lineno} sets {ast.unparse(target)}")
    assert found == []
