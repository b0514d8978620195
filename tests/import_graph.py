"""The import graph of a package (``src/skillrt`` unless told otherwise): every import
statement of every module (module level, inside functions, under ``TYPE_CHECKING``),
each resolved to the module that defines the name, so a re-export through a package's
``__init__`` (an import there, or an ``_EXPORTS`` map of name -> module) is an edge to
the module behind it. The CLI's table of command modules (``COMMAND_MODULES``, loaded
by name) counts as imports of them.

``python tests/import_graph.py`` prints the counts (module edges, circles, package
pairs) and every circle and pair with the imports that tie it.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "skillrt"

#: Name tables a module loads by name (``importlib.import_module``): module -> (the
#: table's name, the prefix of each entry). The walk reads them as imports.
NAME_TABLES = {"skillrt.cli.app": ("COMMAND_MODULES", "skillrt.cli.")}


def _absolute(node: ast.ImportFrom, package: str) -> str:
    base = node.module or ""
    if not node.level:
        return base
    parts = package.split(".")
    up = parts[: len(parts) - node.level + 1]
    return ".".join([*up, *([base] if base else [])])


def _assigned(node: ast.AST, name: str) -> ast.expr | None:
    if isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == name for t in node.targets
    ):
        return node.value
    target = node.target if isinstance(node, ast.AnnAssign) else None
    if isinstance(node, ast.AnnAssign) and isinstance(target, ast.Name) and target.id == name:
        return node.value
    return None


class ImportGraph:
    """The modules under ``src`` (a package folder) and what each imports; messages
    show files from ``shown_from`` (the repository: ``src/skillrt/...``)."""

    def __init__(self, src: Path = SRC, *, shown_from: Path | None = None) -> None:
        self.src = src
        self.root = src.name
        self.shown_from = shown_from or src.parent.parent

    # -- modules -------------------------------------------------------------------------
    def module_name(self, path: Path) -> str:
        parts = path.relative_to(self.src.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    @functools.cached_property
    def modules(self) -> dict[str, Path]:
        """Every module of the package by its dotted name."""
        return {self.module_name(p): p for p in sorted(self.src.rglob("*.py"))}

    def source_of(self, module: str) -> Path | None:
        return self.modules.get(module)

    @functools.cache  # noqa: B019 (one graph per test session)
    def tree(self, path: Path) -> ast.Module:
        return ast.parse(path.read_text(encoding="utf-8"))

    def _package_of_file(self, path: Path) -> str:
        """The package that relative imports in ``path`` start from."""
        try:
            rel = path.relative_to(self.src.parent)
        except ValueError:
            return ""
        return ".".join(rel.parent.parts)

    # -- resolution ----------------------------------------------------------------------
    @functools.cache  # noqa: B019
    def reexports(self, package: str) -> dict[str, str]:
        """Name -> module for what a package's ``__init__`` hands on: its own imports
        (eager or lazy) and an ``_EXPORTS`` map of name -> module."""
        path = self.source_of(package)
        if path is None or path.name != "__init__.py":
            return {}
        out: dict[str, str] = {}
        for node in ast.walk(self.tree(path)):
            if isinstance(node, ast.ImportFrom):
                base = _absolute(node, package)
                for alias in node.names:
                    name = alias.asname or alias.name
                    if f"{base}.{alias.name}" in self.modules:
                        out[name] = f"{base}.{alias.name}"
                    elif base != package and base in self.modules:
                        out[name] = base
            value = _assigned(node, "_EXPORTS")
            if value is not None:
                table = ast.literal_eval(value)
                out.update({k: v for k, v in table.items() if v in self.modules})
        return out

    def resolve(self, base: str, name: str) -> str:
        """The module ``from base import name`` takes ``name`` from."""
        if f"{base}.{name}" in self.modules:
            return f"{base}.{name}"
        seen: set[str] = set()
        while base not in seen:
            seen.add(base)
            target = self.reexports(base).get(name)
            if target is None or target == base:
                return base
            if f"{target}.{name}" in self.modules:
                return f"{target}.{name}"
            base = target
        return base

    def imports_in(self, path: Path, *, tables: bool = True) -> Iterator[tuple[str, int]]:
        """Every module ``path`` imports (of any package), with the line of the import;
        ``tables=False`` leaves out what it loads by name from a table (``_EXPORTS``,
        ``COMMAND_MODULES``), on first use rather than on import."""
        package = self._package_of_file(path)
        module = self.module_name(path) if path.is_relative_to(self.src.parent) else ""
        table = NAME_TABLES.get(module)
        for node in ast.walk(self.tree(path)):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield alias.name, node.lineno
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node, package)
                for alias in node.names:
                    if alias.name == "*":
                        yield base, node.lineno
                    else:
                        yield self.resolve(base, alias.name), node.lineno
            elif not tables:
                continue
            elif path.name == "__init__.py" and (value := _assigned(node, "_EXPORTS")):
                for target in ast.literal_eval(value).values():
                    yield target, node.lineno
            elif table is not None and (value := _assigned(node, table[0])) is not None:
                for entry in ast.literal_eval(value):
                    yield table[1] + entry, node.lineno

    def imports_of(self, path: Path, *, tables: bool = True) -> set[str]:
        """The package's modules ``path`` imports, anywhere in the file."""
        prefix = self.root + "."
        found = self.imports_in(path, tables=tables)
        return {m for m, _ in found if m == self.root or m.startswith(prefix)}

    # -- the graph -----------------------------------------------------------------------
    @functools.cached_property
    def edges(self) -> dict[str, dict[str, int]]:
        """Module -> {imported module: the line of its first import}."""
        out: dict[str, dict[str, int]] = {}
        for name, path in self.modules.items():
            found: dict[str, int] = {}
            for target, line in self.imports_in(path):
                if target in self.modules and target != name:
                    found.setdefault(target, line)
            out[name] = found
        return out

    def edge(self, a: str, b: str) -> str:
        """``a`` -> ``b`` for a message: the file and line of the import."""
        rel = self.modules[a].relative_to(self.shown_from)
        return f"{rel}:{self.edges[a][b]} imports {b}"

    def package_of(self, module: str) -> str:
        """``skillrt.routing.embeddings.base`` -> ``routing``; a top-level module is a
        package of its own (``config``, ``runtime``); the root ``__init__`` is the
        root's name (``skillrt``: the package's face)."""
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else self.root

    @functools.cached_property
    def packages(self) -> dict[str, dict[str, list[tuple[str, str]]]]:
        """Package -> {imported package: the module edges behind it}."""
        out: dict[str, dict[str, list[tuple[str, str]]]] = {}
        for a, targets in self.edges.items():
            pa = self.package_of(a)
            out.setdefault(pa, {})
            for b in targets:
                pb = self.package_of(b)
                if pa != pb:
                    out[pa].setdefault(pb, []).append((a, b))
        return out

    def module_circles(self) -> list[list[str]]:
        return circles(self.edges)

    def package_circles(self) -> list[list[str]]:
        return circles(self.packages)

    def package_pairs(self) -> list[tuple[str, str]]:
        """Two packages that import each other."""
        pg = self.packages
        return sorted((a, b) for a in pg for b in pg[a] if a < b and a in pg.get(b, {}))

    def counts(self) -> dict[str, int]:
        return {
            "modules": len(self.edges),
            "module edges": sum(len(t) for t in self.edges.values()),
            "module circles": len(self.module_circles()),
            "modules in circles": sum(len(c) for c in self.module_circles()),
            "package edges": sum(len(t) for t in self.packages.values()),
            "package circles": len(self.package_circles()),
            "package pairs": len(self.package_pairs()),
        }


def circles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(out)


@functools.cache
def skillrt_graph() -> ImportGraph:
    return ImportGraph(SRC)


def main(src: Path) -> None:
    g = ImportGraph(src)
    for key, value in g.counts().items():
        print(f"{key}: {value}")
    for circle in g.module_circles():
        print("circle:", " ".join(circle))
        for a in circle:
            for b in circle:
                if b in g.edges[a]:
                    print("   ", g.edge(a, b))
    for circle in g.package_circles():
        print("package circle:", " ".join(circle))
    for a, b in g.package_pairs():
        print(f"pair {a} <-> {b}:")
        for x, y in g.packages[a][b] + g.packages[b][a]:
            print("   ", g.edge(x, y))


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else SRC)
