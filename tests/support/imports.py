"""The import graph of `src/skillwire`, read from the import statements (the AST), never by importing.

Reading statements rather than `sys.modules` after an import means a package `__init__` that imports
everything cannot hide an edge, and nothing here runs the code it judges. Each edge says how it is
written: at module level, under `if TYPE_CHECKING:`, or inside a function (a deferred import), so a
test can decide which kinds count and say why.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "skillwire"

Where = Literal["module", "type-checking", "function"]


@dataclass(frozen=True)
class Edge:
    source: str  # the importing module, dotted
    target: str  # the imported module, dotted (a skillwire module, or a third-party one as written)
    line: int
    where: Where


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_files() -> dict[str, Path]:
    # `examples/` holds skill folders (data the server publishes, scripts included), not package code.
    return {
        module_name(path): path
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).parts[0] != "examples"
    }


MODULES = module_files()


def _resolve(source: str, node: ast.ImportFrom) -> str:
    """The absolute module an `ImportFrom` names (relative imports resolved against `source`)."""
    if node.level == 0:
        return node.module or ""
    is_package = MODULES.get(source, Path()).name == "__init__.py"
    base = source.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _is_type_checking(test: ast.expr) -> bool:
    return "TYPE_CHECKING" in ast.unparse(test)


def _walk(node: ast.AST, where: Where) -> Iterator[tuple[ast.AST, Where]]:
    for child in ast.iter_child_nodes(node):
        inner = where
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            inner = "function"
        yield child, inner
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for part in child.body:
                yield part, "type-checking"
                yield from _walk(part, "type-checking")
            for part in child.orelse:
                yield part, inner
                yield from _walk(part, inner)
            continue
        yield from _walk(child, inner)


def edges_of(module: str) -> list[Edge]:
    path = MODULES[module]
    found: list[Edge] = []
    for node, where in _walk(ast.parse(path.read_text(encoding="utf-8")), "module"):
        if isinstance(node, ast.Import):
            found += [Edge(module, alias.name, node.lineno, where) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            for alias in node.names:
                # `from skillwire.core import verify` imports the submodule, not the package's namespace.
                sub = f"{target}.{alias.name}"
                found.append(Edge(module, sub if sub in MODULES else target, node.lineno, where))
    return found


EDGES: dict[str, list[Edge]] = {module: edges_of(module) for module in MODULES}


def internal_edges(*kinds: Where) -> dict[str, set[str]]:
    """module -> the skillwire modules it imports by an edge of one of `kinds`."""
    return {
        module: {e.target for e in edges if e.where in kinds and e.target in MODULES and e.target != module}
        for module, edges in EDGES.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan), as a path."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [_path_through(graph, set(c)) for c in components]


def _path_through(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest cycle through the first module of a component: readable in a failure message."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph.get(node, set()) & component):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    return sorted(component)
