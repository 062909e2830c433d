"""The library API is the package root: `from skillwire import ...` for every public name.

"Public" is derived by a rule, so a name added later is caught: every class and function listed in
the `__all__` of a module of the package (outside `skillwire.cli`, the command line), and every
subclass of `SkillwireError` defined anywhere in it. The root's `__all__` must be exactly that (plus
`EXTENSION_ID` and `__version__`), each name shown as `skillwire.X`. The behaviour the API promises,
against a real server, is in tests/e2e/test_public_api_behaviour.py.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator
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

CONSTANTS = {"EXTENSION_ID", "__version__"}  # public values that are neither classes nor functions
DOCUMENTED = [SkillHost, ActiveSkill, SkillCatalog, SkillsExtension, SkillsClient, SkillTools, TaggedContent]


def package_modules() -> Iterator[ModuleType]:
    for info in pkgutil.walk_packages(skillwire.__path__, "skillwire."):
        if info.name.split(".")[1] not in ("cli", "examples"):
            yield importlib.import_module(info.name)


def exception_classes() -> set[type[BaseException]]:
    """Every `SkillwireError` subclass (itself included) defined in the package, however deep."""
    list(package_modules())  # every module imported, so every subclass exists
    found: set[type[BaseException]] = {SkillwireError}
    pending: list[type[BaseException]] = [SkillwireError]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub not in found and not sub.__name__.startswith("_"):
                found.add(sub)
                pending.append(sub)
    return found


def public_surface() -> set[str]:
    names = {cls.__name__ for cls in exception_classes()}
    for module in package_modules():
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if inspect.isclass(value) or inspect.isfunction(value):
                names.add(name)
    return names | CONSTANTS


def test_root_all_is_exactly_the_public_surface() -> None:
    assert sorted(skillwire.__all__) == sorted(public_surface())
    assert len(skillwire.__all__) == len(set(skillwire.__all__))
    exported = {n for n in dir(skillwire) if not n.startswith("_") and not inspect.ismodule(getattr(skillwire, n))}
    assert exported <= set(skillwire.__all__)  # nothing public-looking is left out of __all__


def test_every_exception_is_importable_from_the_root() -> None:
    classes = exception_classes()
    assert len(classes) >= 28  # core/errors.py alone defines 28
    for cls in classes:
        assert getattr(skillwire, cls.__name__) is cls, cls
        assert cls.__name__ in skillwire.__all__


def test_public_names_show_as_skillwire() -> None:
    for name in skillwire.__all__:
        value = getattr(skillwire, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__module__ == "skillwire", name
    assert repr(SkillHost) == "<class 'skillwire.SkillHost'>"


@pytest.mark.parametrize("cls", DOCUMENTED, ids=lambda cls: cls.__name__)
def test_class_docstrings_say_what_and_every_parameter(cls: type) -> None:
    doc = inspect.getdoc(cls) or ""
    assert len(doc.split("\n\n")[0]) > 40, f"{cls.__name__} has no summary"
    assert "Parameters\n----------" in doc
    parameters = [p for p in inspect.signature(cls).parameters if p not in ("self",)]
    for parameter in parameters:
        assert re.search(rf"^{parameter}:", doc, re.MULTILINE), f"{cls.__name__}: {parameter} is not documented"


def _generator() -> ModuleType:
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


def test_root_table_is_generated_from_the_modules() -> None:
    """One source: the modules' `__all__` (and the exception classes); the root's three lists are written
    from them by scripts/generate-exports, so a name added to a module's `__all__` fails here until it is run."""
    generator = _generator()
    text = generator.INIT.read_text(encoding="utf-8")
    assert generator.regenerated(text, generator.exports()) == text, "run .venv/bin/python scripts/generate-exports"
    assert {m: tuple(n) for m, n in generator.exports().items()} == skillwire._EXPORTS


def test_readme_names_are_importable_from_the_root() -> None:
    from skillwire import PerCallerSkills, TrustPolicy, TrustStore

    assert TrustStore.__module__ == TrustPolicy.__module__ == PerCallerSkills.__module__ == "skillwire"
