"""skillrt imports one way (issue 28): no module imports another that imports it back,
no two packages import each other, and every package imports only the packages of the
tiers below its own (:data:`LAYERS`), so a reader follows any import down and never
back up.

Every import statement counts: module level, inside functions, under TYPE_CHECKING, a
package's lazy re-exports (``_EXPORTS``) and the CLI's table of command modules; nothing
loads a module of skillrt by name around the walk (``importlib.import_module``,
``__import__``). A failure names the import to remove, with its file and line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from tests.import_graph import NAME_TABLES, ImportGraph, circles, skillrt_graph

#: skillrt's packages, lowest tier first (a top-level module is a package of its own;
#: ``skillrt`` is the package's face, its ``__init__``). A package imports only packages
#: of lower tiers; two packages of one tier never import each other. A new package or
#: top-level module takes its place here (docs/architecture.md draws the same tiers).
LAYERS: tuple[tuple[str, ...], ...] = (
    # the standard library only
    (
        "atomic",
        "clients",
        "fileopen",
        "hook_budget",
        "interrupts",
        "locks",
        "runner_settings",
        "score_terms",
        "statedir",
        "version",
        "webpage",
        "wellformed",
    ),
    ("fastjson", "serialize"),
    # errors; how to talk to a daemon (the prompt hook's fast path)
    ("daemon", "errors"),
    # the state store and the coding agents' config files
    ("install", "store"),
    ("config",),
    # a command's configuration from its flags; SKILL.md files, discovery, the registry
    ("settings", "skills"),
    ("loading",),
    ("execution", "invocation"),
    ("routing",),
    # route events and stats reports; labelled query sets; one turn's context
    ("eval", "telemetry", "turns"),
    ("dispatch", "doctor"),
    ("orchestration",),
    # the facade: the only place that wires the stages
    ("runtime",),
    # surfaces over the facade
    ("hooks", "mcp", "skillrt"),
    ("integrations", "serve"),
    ("cli",),
    ("__main__",),
)
#: Modules that load modules by name, and the table each loads from (the walk reads it).
BY_NAME = {"skillrt", "skillrt.dispatch", "skillrt.mcp", *NAME_TABLES}


def _tier() -> dict[str, int]:
    return {package: i for i, tier in enumerate(LAYERS) for package in tier}


def circle_report(graph: ImportGraph) -> list[str]:
    """Each module circle with the imports that tie it (one of them is to go)."""
    out = []
    for circle in graph.module_circles():
        ties = [graph.edge(a, b) for a in circle for b in circle if b in graph.edges[a]]
        out.append(f"circle of {len(circle)} modules; remove one of: " + "; ".join(ties))
    return out


def pair_report(graph: ImportGraph) -> list[str]:
    """Two packages that import each other, with the imports each way."""
    out = []
    for a, b in graph.package_pairs():
        both = graph.packages[a][b] + graph.packages[b][a]
        out.append(f"{a} <-> {b}: " + "; ".join(graph.edge(x, y) for x, y in both))
    return out


def upward_report(graph: ImportGraph, layers: dict[str, int]) -> list[str]:
    """Imports from a package to one of its own tier or above, and packages no tier
    holds."""
    out = []
    for package in sorted(graph.packages):
        if package not in layers:
            out.append(f"{package} is in no tier of LAYERS (tests/test_imports.py): place it")
    for a, targets in sorted(graph.packages.items()):
        for b, edges in sorted(targets.items()):
            if a in layers and b in layers and layers[b] >= layers[a]:
                where = "its own tier" if layers[b] == layers[a] else "a higher tier"
                out += [f"{graph.edge(x, y)}: {a} -> {b}, {where}" for x, y in edges]
    return out


def by_name_report(graph: ImportGraph, allowed: set[str]) -> list[str]:
    """Modules that load a module by name where the walk cannot see it."""
    out = []
    for name, path in graph.modules.items():
        if name in allowed:
            continue
        for node in ast.walk(graph.tree(path)):
            if isinstance(node, ast.Call):
                fn = node.func
                called = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
                if called in ("import_module", "__import__"):
                    out.append(f"{path.name}:{node.lineno} loads a module by name ({called})")
    return out


def test_no_module_imports_another_that_imports_it_back() -> None:
    assert circle_report(skillrt_graph()) == []


def test_no_two_packages_import_each_other() -> None:
    assert pair_report(skillrt_graph()) == []


def test_every_package_imports_only_lower_tiers() -> None:
    assert upward_report(skillrt_graph(), _tier()) == []
    assert skillrt_graph().package_circles() == []


def test_no_module_loads_another_by_name_around_the_walk() -> None:
    assert by_name_report(skillrt_graph(), BY_NAME) == []


def test_the_tiers_name_each_package_once() -> None:
    named = [p for tier in LAYERS for p in tier]
    assert len(named) == len(set(named))
    assert set(named) == set(skillrt_graph().packages), "a tier names a package that is gone"


# -- the walk itself, on a package made for the purpose ---------------------------------
def _package(tmp_path: Path, files: dict[str, str]) -> ImportGraph:
    src = tmp_path / "pkg"
    for rel, text in files.items():
        path = src / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return ImportGraph(src, shown_from=tmp_path)


def test_the_walk_counts_lazy_type_only_and_re_exported_imports(tmp_path: Path) -> None:
    graph = _package(
        tmp_path,
        {
            "__init__.py": "",
            "low/__init__.py": (
                "from pkg.low.model import Thing\n_EXPORTS = {'Other': 'pkg.low.other'}\n"
            ),
            "low/model.py": "class Thing: ...\n",
            "low/other.py": "def f():\n    from pkg.high import service\n",
            "high/__init__.py": "",
            "high/service.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from pkg.low import Thing\n"
                "def g():\n    from ..low import Other\n"
            ),
        },
    )
    assert graph.edges["pkg.high.service"] == {"pkg.low.model": 3, "pkg.low.other": 5}
    assert graph.edges["pkg.low.other"] == {"pkg.high.service": 2}
    assert circle_report(graph) == [
        "circle of 2 modules; remove one of: "
        "pkg/high/service.py:5 imports pkg.low.other; "
        "pkg/low/other.py:2 imports pkg.high.service"
    ]
    assert pair_report(graph) == [
        "high <-> low: pkg/high/service.py:3 imports pkg.low.model; "
        "pkg/high/service.py:5 imports pkg.low.other; "
        "pkg/low/other.py:2 imports pkg.high.service"
    ]


def test_an_upward_import_is_named_with_its_line(tmp_path: Path) -> None:
    graph = _package(
        tmp_path,
        {
            "__init__.py": "",
            "base.py": "import os\n\n\ndef f():\n    import pkg.top\n",
            "top.py": "from pkg import base\n",
            "loose.py": "import importlib\nimportlib.import_module('pkg.top')\n",
        },
    )
    assert upward_report(graph, {"base": 0, "top": 1, "loose": 2, "pkg": 3}) == [
        "pkg/base.py:5 imports pkg.top: base -> top, a higher tier"
    ]
    assert upward_report(graph, {"base": 0, "top": 1, "pkg": 3}) == [
        "loose is in no tier of LAYERS (tests/test_imports.py): place it",
        "pkg/base.py:5 imports pkg.top: base -> top, a higher tier",
    ]
    assert upward_report(graph, {"base": 0, "top": 0, "loose": 2, "pkg": 3}) == [
        "pkg/base.py:5 imports pkg.top: base -> top, its own tier",
        "pkg/top.py:1 imports pkg.base: top -> base, its own tier",
    ]
    assert by_name_report(graph, set()) == ["loose.py:2 loads a module by name (import_module)"]


@pytest.mark.parametrize(
    ("graph", "found"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": set()}, []),
        ({"a": {"a"}}, []),
    ],
)
def test_circles_are_the_strongly_connected_parts(
    graph: dict[str, set[str]], found: list[list[str]]
) -> None:
    assert circles(graph) == found
