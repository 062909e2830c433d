"""The library API is the package root: `from skillwire import ...` for every public name.

"Public" is derived by a rule, so a name added later is caught: every class and function listed in
the `__all__` of a module of the package (outside `skillwire.cli`, the command line), and every
subclass of `SkillwireError` defined anywhere in it, plus `EXTENSION_ID` and `__version__`. The rule is
written once, in scripts/generate-exports, which writes the root's table from the modules; this file
holds the root to what it writes, and checks what the table cannot say by itself: every exception found
at run time is exported, each name is `skillwire.X`, and each name has one home (the one module whose
`__all__` lists it is the module that defines it). The behaviour the API promises, against a real
server, is in tests/e2e/test_public_api_behaviour.py.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Iterator
from functools import cache
from types import ModuleType

import pytest

import skillwire
from skillwire import (
    ActiveSkill,
    SkillCatalog,
    SkillHost,
    SkillsClient,
    SkillsExtension,
    SkillTools,
    SkillwireError,
    TaggedContent,
)
from skillwire.core import errors
from support.imports import MODULES

DOCUMENTED = [SkillHost, ActiveSkill, SkillCatalog, SkillsExtension, SkillsClient, SkillTools, TaggedContent]


@cache
def _generator() -> ModuleType:
    """scripts/generate-exports, the one statement of the rule (it is a script, not a module of the package)."""
    from importlib.machinery import SourceFileLoader
    from importlib.util import module_from_spec, spec_from_loader
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "scripts" / "generate-exports"
    loader = SourceFileLoader("generate_exports", str(path))
    spec = spec_from_loader("generate_exports", loader)
    assert spec is not None
    module = module_from_spec(spec)
    loader.exec_module(module)
    return module


def exception_classes() -> set[type[BaseException]]:
    """Every `SkillwireError` subclass (itself included) defined in the package, however deep, found at run
    time (the generator reads the modules' source: the two ways must agree)."""
    list(_generator().public_modules())  # every module imported, so every subclass exists
    found: set[type[BaseException]] = {SkillwireError}
    pending: list[type[BaseException]] = [SkillwireError]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub not in found and not sub.__name__.startswith("_"):
                found.add(sub)
                pending.append(sub)
    return found


def test_root_table_is_generated_from_the_modules() -> None:
    """One source: the modules' `__all__` (and the exception classes); the root's three lists are written
    from them by scripts/generate-exports, so a name added to a module's `__all__` fails here until it is run."""
    generator = _generator()
    text = generator.INIT.read_text(encoding="utf-8")
    assert generator.regenerated(text, generator.exports()) == text, "run .venv/bin/python scripts/generate-exports"
    table = generator.exports()
    assert {m: tuple(n) for m, n in table.items()} == skillwire._EXPORTS
    listed = [name for names in table.values() for name in names]
    assert sorted(skillwire.__all__) == sorted([*listed, "__version__"])
    assert len(skillwire.__all__) == len(set(skillwire.__all__)) == len(listed) + 1  # each name under one module
    exported = {n for n in dir(skillwire) if not n.startswith("_") and not inspect.ismodule(getattr(skillwire, n))}
    assert exported <= set(skillwire.__all__)  # nothing public-looking is left out of __all__


def test_every_exception_is_importable_from_the_root() -> None:
    classes = exception_classes()
    assert classes == {getattr(errors, name) for name in errors.__all__}  # and all of them live in core/errors
    for cls in classes:
        assert getattr(skillwire, cls.__name__) is cls, cls
        assert cls.__name__ in skillwire.__all__


def test_public_names_show_as_skillwire() -> None:
    for name in skillwire.__all__:
        value = getattr(skillwire, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__ == "skillwire", name
    assert repr(SkillHost) == "<class 'skillwire.SkillHost'>"


# -- one home per name ------------------------------------------------------------------------------------------

# module -> why its `__all__` may list classes and functions it does not define
RE_EXPORTERS = {
    "skillwire.core.frontmatter": "the old module's names for code written against it; nothing in skillwire imports it",
}


def listed_elsewhere(module: str, tree: ast.Module) -> Iterator[str]:
    """The names a module's `__all__` lists but neither defines nor takes from a private module of its own
    package (`core/yaml/__init__.py` from `_decode`): a second list of another module's names, as
    `server/app.py` listed `BindError` and `checks/lint.py` `Finding` and `LintPathError`. Constants
    (UPPER_CASE) are vocabulary, which `core/protocol.py` gathers on purpose, and not API by the rule."""
    defined: set[str] = set()
    own: set[str] = set()  # imported from a private module below this package
    listed: list[str] = []
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            defined |= names
            if "__all__" in names and isinstance(node.value, ast.List | ast.Tuple):
                listed = [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            below = node.module.removeprefix(package + ".")
            if below != node.module and below.startswith("_"):
                own |= {alias.asname or alias.name for alias in node.names}
    for name in listed:
        if name not in defined and name not in own and not name.isupper():
            yield name


def test_the_home_detector_finds_a_planted_copy() -> None:
    planted = ast.parse(
        "from skillwire.core.errors import BindError\n"
        "from skillwire.server._private import helper\n"
        "from skillwire.core.manifest import MAX_FILES_PER_SKILL\n"
        "__all__ = ['BindError', 'MAX_FILES_PER_SKILL', 'helper', 'serve']\n"
        "def serve():\n    pass\n"
    )
    assert list(listed_elsewhere("skillwire.server.app", planted)) == ["BindError"]


def test_each_public_name_is_listed_only_where_it_is_defined() -> None:
    found = {
        module: names
        for module, path in MODULES.items()
        if module not in RE_EXPORTERS and module != "skillwire"  # the root is the table itself
        if (names := list(listed_elsewhere(module, ast.parse(path.read_text(encoding="utf-8")))))
    }
    assert found == {}, "list a name in the __all__ of the module that defines it (the root is generated from those)"
    assert all(module in MODULES for module in RE_EXPORTERS)  # no stale entry


@pytest.mark.parametrize("cls", DOCUMENTED, ids=lambda cls: cls.__name__)
def test_class_docstrings_say_what_and_every_parameter(cls: type) -> None:
    doc = inspect.getdoc(cls) or ""
    assert len(doc.split("\n\n")[0]) > 40, f"{cls.__name__} has no summary"
    assert "Parameters\n----------" in doc
    parameters = [p for p in inspect.signature(cls).parameters if p not in ("self",)]
    for parameter in parameters:
        assert re.search(rf"^{parameter}:", doc, re.MULTILINE), f"{cls.__name__}: {parameter} is not documented"


def test_readme_names_are_importable_from_the_root() -> None:
    from skillwire import PerCallerSkills, TrustPolicy, TrustStore

    assert TrustStore.__module__ == TrustPolicy.__module__ == PerCallerSkills.__module__ == "skillwire"
