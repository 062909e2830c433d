"""Errors in one place (issue 24 item 6): every exception class skillwire defines is in `core/errors.py`,
derives from `SkillwireError`, and is in its `__all__` (made from the classes at import, so a class that is
not a `SkillwireError` is missing from it and fails here) and so exported from the root.

Read from the AST of `src/skillwire`, with the one stated exception: the command line's own two
signals, which never leave the `skillwire` command. The scanner is first run on a planted copy.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import skillwire
from skillwire.core import errors
from support.imports import MODULES

OWNER = "skillwire.core.errors"
# module -> the exception classes it may define itself, and why
COMMAND_LINE_SIGNALS = {
    "skillwire.cli.args": {"UsageError"},  # a usage mistake: exit status 2 and one line, never raised past main
    "skillwire.cli.connect": {"ClientError"},  # a failed connection, printed by the command as one line
}
_EXCEPTION_BASES = {"Exception", "BaseException", "ValueError", "OSError", "RuntimeError", "KeyError", "TypeError"}


def exception_classes(tree: ast.AST, known: set[str]) -> Iterator[str]:
    """Classes deriving from a built-in exception or from a class already known to be one."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases}
            if bases & (_EXCEPTION_BASES | known) or any(b.endswith(("Error", "Exception")) for b in bases):
                yield node.name


def test_the_scanner_finds_a_planted_exception() -> None:
    planted = ast.parse(
        "class LockError(ValueError):\n    pass\nclass Other(SkillwireError):\n    pass\nclass Fine:\n    pass\n"
    )
    assert list(exception_classes(planted, {"SkillwireError"})) == ["LockError", "Other"]


def test_every_exception_class_is_defined_in_core_errors() -> None:
    known = {name for name in dir(errors) if isinstance(getattr(errors, name), type)}
    elsewhere = {
        module: sorted(set(exception_classes(ast.parse(path.read_text(encoding="utf-8")), known)))
        for module, path in MODULES.items()
        if module != OWNER
    }
    stray = {
        m: public
        for m, found in elsewhere.items()
        if (public := [n for n in found if not n.startswith("_") and n not in COMMAND_LINE_SIGNALS.get(m, set())])
    }
    assert stray == {}, "define exceptions in skillwire/core/errors.py (see its header)"


def test_core_errors_lists_and_the_root_exports_every_class_it_defines() -> None:
    tree = ast.parse(MODULES[OWNER].read_text(encoding="utf-8"))
    defined = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    assert sorted(defined) == sorted(errors.__all__)
    assert all(issubclass(getattr(errors, name), errors.SkillwireError) for name in defined)
    assert defined <= set(skillwire.__all__)
