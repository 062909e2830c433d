"""No private name crosses a package boundary (issue 38's guard): `from skillwire.core.yaml._scanner import
_events` in `checks/` is a dependency on something its owner never promised. Inside one package a private
name is a shared detail of that package and fine; the root's own private modules (`_version`,
`_deprecation`) are the whole package's and fine too.

"Package" is the folder a module sits in (`skillwire.core.yaml._decode` is in `skillwire.core.yaml`); a name
or module is private when it starts with one underscore. Read from the AST, never by importing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from support.imports import MODULES

# The root's private modules: shared by every package on purpose (the version string, renaming shims).
ROOT_PRIVATE = {"skillwire._version", "skillwire._deprecation"}

# Known crossings, each with why it is still here. The list must shrink: an entry that no longer matches an
# import fails the test, so it is removed with the import it excused.
KNOWN: dict[str, str] = {}


def _package_of(module: str) -> str:
    path = MODULES.get(module)
    if path is not None and path.name == "__init__.py":
        return module
    return module.rsplit(".", 1)[0]


def _is_private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def private_imports(source: str, tree: ast.AST) -> Iterator[str]:
    """Each `from X import N` in `source` where X or N is private and X's package is not `source`'s."""
    here = _package_of(source)
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level or not (node.module or "").startswith("skillwire"):
            continue
        target = node.module or ""
        if target in ROOT_PRIVATE:
            continue
        for alias in node.names:
            imported = f"{target}.{alias.name}"
            # `from pkg import _mod` names a module of pkg: its package is pkg.
            owner_package = target if imported in MODULES else _package_of(target)
            if owner_package == here:
                continue
            if _is_private(alias.name) or any(_is_private(part) for part in target.split(".")):
                yield f"{source}: from {target} import {alias.name}"


def _found() -> list[str]:
    return [hit for module, path in MODULES.items() for hit in private_imports(module, ast.parse(path.read_text()))]


def test_no_private_name_crosses_a_package() -> None:
    assert [hit for hit in _found() if hit not in KNOWN] == []


def test_every_known_crossing_is_still_there() -> None:
    """An excused import that is gone takes its entry with it, so the list only shrinks."""
    found = set(_found())
    assert [entry for entry in KNOWN if entry not in found] == []


def test_the_guard_catches_a_planted_copy() -> None:
    planted = ast.parse("from skillwire.core.yaml._scanner import events\nfrom skillwire.server.app import _helper\n")
    assert list(private_imports("skillwire.checks.hazards", planted)) == [
        "skillwire.checks.hazards: from skillwire.core.yaml._scanner import events",
        "skillwire.checks.hazards: from skillwire.server.app import _helper",
    ]
    inside = ast.parse("from skillwire.core.yaml._jsnum import _js_int\n")
    assert list(private_imports("skillwire.core.yaml._schema", inside)) == []
