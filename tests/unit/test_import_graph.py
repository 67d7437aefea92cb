"""The layers of ``server/tether`` hold: no module imports itself back through others, and
nothing below the front doors imports one.

Every import counts, including those under ``if TYPE_CHECKING:`` and those inside
functions: a cycle that only exists for the type checker, or only at call time, is still
two modules a reader cannot understand one without the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import tether

PACKAGE = Path(tether.__file__).parent
FRONT_DOORS = ("tether.lsp", "tether.acp", "tether.cli", "tether.daemon")
ALLOWED_IMPORTERS = (*FRONT_DOORS, "tether.__main__")
"""Who may import a front door: the front doors themselves (the CLI starts the LSP server,
the daemon serves it) and the entry point."""


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in PACKAGE.rglob("*.py"):
        if "examples" in path.relative_to(PACKAGE).parts:
            continue  # the demo project shipped as data, not part of the package
        parts = ("tether", *path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The ``tether`` modules ``name`` imports (a name imported from a package counts as
    its submodule when there is one, else as the package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                candidate = f"{module}.{alias.name}"
                out.add(candidate if candidate in MODULES else module)
    return {m for m in out if m in MODULES and m != name}


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (as a path back to its start) per strongly connected component."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_path_through(graph, set(c)) for c in components]


def _path_through(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A concrete cycle inside ``component``: a -> b -> ... -> a (breadth first)."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt: list[str] = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if w not in previous:
                    previous[w] = v
                    nxt.append(w)
        frontier = nxt
    return sorted(component)


def test_the_graph_is_read() -> None:
    # A parser that found nothing would pass every check below.
    assert len(MODULES) > 200
    assert "tether.core.messages" in GRAPH["tether.engine.history"]
    assert "tether.engine.engine" in GRAPH["tether.session.session"]


def test_no_import_cycles() -> None:
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_cycle_check_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c", "a"]]


def test_nothing_below_the_front_doors_imports_one() -> None:
    offending = sorted(
        f"{importer} imports {imported}"
        for importer, imported_set in GRAPH.items()
        if not _within(importer, ALLOWED_IMPORTERS)
        for imported in imported_set
        if _within(imported, FRONT_DOORS)
    )
    assert not offending, "front doors imported from below:\n" + "\n".join(offending)


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)
