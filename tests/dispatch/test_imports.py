"""``dispatch/`` imports one way: no module of it imports another that imports it back,
and importing the dispatcher loads nothing that imports the dispatcher (issue 16).

Every import statement counts: module level, inside functions, under TYPE_CHECKING.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.import_graph import SRC, skillrt_graph

DISPATCH = SRC / "dispatch"


def imports_of(path: Path) -> set[str]:
    """Every ``skillrt.*`` module ``path`` imports, anywhere in the file (the walk of
    tests/import_graph.py, which tests/test_imports.py runs over the whole package); a
    package's ``_EXPORTS`` table is not an import: it loads a name on first use."""
    return skillrt_graph().imports_of(path, tables=False)


def _module_name(path: Path) -> str:
    return skillrt_graph().module_name(path)


def _source(module: str) -> Path | None:
    return skillrt_graph().source_of(module)


def test_dispatch_modules_import_each_other_one_way() -> None:
    modules = {_module_name(p): p for p in DISPATCH.glob("*.py")}
    graph = {
        name: {m for m in imports_of(path) if m in modules and m != name}
        for name, path in modules.items()
    }
    assert not graph["skillrt.dispatch"], "the package imports its modules by name only"
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*trail[trail.index(nxt) :], nxt] if nxt in trail else [node, nxt]
                raise AssertionError(f"import cycle in dispatch/: {' -> '.join(cycle)}")
            if nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_importing_the_dispatcher_loads_nothing_that_imports_it_back() -> None:
    code = (
        "import json, sys; import skillrt.dispatch.dispatcher; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('skillrt'))))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = json.loads(proc.stdout)
    assert "skillrt.dispatch.dispatcher" in loaded
    back = []
    for module in loaded:
        path = _source(module)
        if module == "skillrt.dispatch.dispatcher" or path is None:
            continue
        if "skillrt.dispatch.dispatcher" in imports_of(path):
            back.append(module)
    assert back == [], f"these modules import the dispatcher back: {back}"
    # Nothing that runs plans, repairs or workflows is loaded with the dispatcher.
    assert not {m for m in loaded if m.startswith(("skillrt.dispatch.pipeline", "skillrt.runtime"))}


def test_the_walk_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from skillrt.dispatch.model import Prepared\n"
        "def f():\n    from skillrt.dispatch import Dispatcher\n    import skillrt.errors\n",
        encoding="utf-8",
    )
    found = imports_of(sample)
    assert {"skillrt.dispatch.model", "skillrt.dispatch.dispatcher", "skillrt.errors"} <= found


#: The run path's layers, lowest first: a layer imports only from layers below it.
LAYERS = ("execution", "dispatch", "orchestration")
#: What no layer of the run path imports (surfaces and the facade sit above them all).
ABOVE = ("skillrt.runtime", "skillrt.cli", "skillrt.mcp", "skillrt.daemon", "skillrt.serve")


def test_the_run_path_goes_one_way() -> None:
    """A reader follows a phase from the workflow to the runner without going back up:
    orchestration -> dispatch -> execution, every import counted (issue 20)."""
    wrong = []
    for i, layer in enumerate(LAYERS):
        higher = tuple(f"skillrt.{name}" for name in LAYERS[i + 1 :]) + ABOVE
        for path in sorted((SRC / layer).glob("*.py")):
            for module in imports_of(path):
                if module.startswith(higher):
                    wrong.append(f"{layer}/{path.name} imports {module}")
    assert wrong == []


def test_workflow_phases_use_the_dispatcher_through_its_protocol() -> None:
    for path in (SRC / "orchestration").glob("*.py"):
        assert "skillrt.dispatch.dispatcher" not in imports_of(path), path.name


def test_the_phase_agent_gets_a_typed_handle() -> None:
    import typing

    from skillrt.dispatch.model import ReadyDispatch, SkillDispatcher
    from skillrt.orchestration.agents import PhaseDispatch, PreparedPhase

    hints = typing.get_type_hints(PreparedPhase)
    assert typing.Any not in hints.values()
    assert hints["dispatch"] == PhaseDispatch | None
    assert typing.get_type_hints(PhaseDispatch) == {
        "dispatcher": SkillDispatcher,
        "ready": ReadyDispatch,
    }
