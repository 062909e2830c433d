"""The frontmatter split (issue 12, item 4): JSON types without the YAML engine, and no import cycle
among the modules of `skillwire.core` (read from their import statements, so a package `__init__` that
imports everything does not hide one)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "src" / "skillwire" / "core"


def module_name(path: Path) -> str:
    parts = path.relative_to(CORE.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Modules (skillwire's and third-party roots) a file imports at run time."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            node.body = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


GRAPH = {module_name(path): imports_of(path) for path in CORE.rglob("*.py")}


@pytest.mark.parametrize(
    ("module", "forbidden"),
    [
        ("skillwire.core.json", ["ruamel", "skillwire.core.yaml", "skillwire.core.skill_md"]),
        ("skillwire.core.entry", ["ruamel", "skillwire.core.yaml", "skillwire.core.frontmatter"]),
        ("skillwire.core.yaml._schema", ["ruamel", "skillwire.core.yaml._scanner", "skillwire.core.yaml._compose"]),
        ("skillwire.core.yaml._flat", ["ruamel", "skillwire.core.yaml._compose", "skillwire.core.yaml._decode"]),
        ("skillwire.core.yaml._scanner", ["skillwire.core.yaml._compose", "skillwire.core.yaml._decode"]),
    ],
)
def test_module_does_not_import_the_layers_above_it(module: str, forbidden: list[str]) -> None:
    pulled = sorted(name for name in GRAPH[module] for prefix in forbidden if name.startswith(prefix))
    assert not pulled, f"{module} imports {pulled}"


def test_no_import_cycle_in_core() -> None:
    def visit(module: str, path: list[str]) -> None:
        for target in GRAPH.get(module, ()):
            if target not in GRAPH:
                continue
            assert target not in path, f"import cycle: {' -> '.join([*path, target])}"
            visit(target, [*path, target])

    for module in GRAPH:
        visit(module, [module])


def test_the_old_module_is_only_a_re_export() -> None:
    import skillwire.core.frontmatter as old
    import skillwire.core.json
    import skillwire.core.skill_md
    import skillwire.core.yaml

    homes = (skillwire.core.json, skillwire.core.skill_md, skillwire.core.yaml)
    for name in old.__all__:
        assert any(getattr(home, name, None) is getattr(old, name) for home in homes), name
