"""No code decides anything by the text of a message (issue 38, guard 2).

A message is for a person: its wording changes, it may quote a server, it is escaped where it is shown.
Code that compares one (`problem == "is missing"`, `reason.startswith("not approved")`, `"timed out" in
str(exc)`) breaks silently when the sentence is reworded, and two owners then hold one rule. Decisions are
made on data instead: an exception's class or fields, a problem's fields or enum (`DiskProblem.missing`,
`SyncOutcome.unapproved`).

Read from the AST of `src/skillwire`, like `test_rule_owners.py`: a comparison (`==`, `!=`, `in`, `not in`)
between a string literal and a message, or `.startswith`/`.endswith` on one, or `re.match`/`re.search`/
`re.fullmatch` over one, is a finding. A message is `str(x)`/`repr(x)` of a name, an f-string, or a name or
attribute called like one (`exc`, `error`, `problem`, `reason`, `message`, `note`, ...). The detector is
shown to find each planted shape first.
"""

from __future__ import annotations

import ast

import pytest

from support.imports import MODULES

# `message` alone is left out: in this code base it names a JSON-RPC or ASGI message (a dict) as often as a text.
MESSAGE_NAMES = frozenset({"exc", "err", "error", "e", "ex", "problem", "reason", "msg", "note", "why", "cause"})
MESSAGE_ATTRIBUTES = frozenset({"message", "reason", "note", "msg", "error", "args", "strerror"})
TEXT_TESTS = frozenset({"startswith", "endswith"})
REGEX_TESTS = frozenset({"match", "search", "fullmatch"})


def is_message(node: ast.AST) -> bool:
    """An expression that is (or holds) a message's text."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("str", "repr"):
        return len(node.args) == 1 and is_message_source(node.args[0])
    if isinstance(node, ast.Subscript):  # `exc.args[0]`; a string key is a mapping's field, not text
        index = node.slice
        return isinstance(index, ast.Constant) and isinstance(index.value, int) and is_message(node.value)
    return is_message_source(node)


def is_message_source(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in MESSAGE_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in MESSAGE_ATTRIBUTES
    return False


def is_text_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(is_text_literal(item) for item in node.elts)
    return False


def reads_text(call: ast.Call) -> bool:
    """`message.startswith(...)`, `message.endswith(...)`, or `re.match(pattern, message)` and its kin."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if func.attr in TEXT_TESTS:
        return is_message(func.value)
    is_re = isinstance(func.value, ast.Name) and func.value.id == "re"
    return func.attr in REGEX_TESTS and is_re and len(call.args) >= 2 and is_message(call.args[1])


def findings(tree: ast.AST) -> list[int]:
    """Line numbers where a message's text decides something."""
    found: list[int] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for left, op, right in zip(sides, node.ops, sides[1:], strict=False):
                if not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
                    continue
                if (is_message(left) and is_text_literal(right)) or (is_text_literal(left) and is_message(right)):
                    found.append(node.lineno)
        elif isinstance(node, ast.Call) and reads_text(node):
            found.append(node.lineno)
    return sorted(set(found))


PLANTED = """
def one(folder, skill):
    problem = disk_problem(folder, skill)
    if problem == "is missing":
        return "missing"
def two(outcomes):
    return any(o.reason.startswith("not approved") for o in outcomes)
def three(call):
    try:
        call()
    except OSError as exc:
        if "timed out" in str(exc):
            return 1
        if exc.args[0] != "gone":
            return 2
        if re.search("refused", str(exc)):
            return 3
def four(result):
    return result.message in ("denied", "refused")
"""


def test_the_detector_finds_every_planted_shape() -> None:
    # The two the review found (sync.py, cli/hostsync.py before issue 38), and the other usual shapes.
    assert findings(ast.parse(PLANTED)) == [4, 7, 12, 14, 16, 19]


def test_the_detector_leaves_decisions_on_data_alone() -> None:
    clean = ast.parse(
        "def f(problem, outcome, exc, entry):\n"
        "    if problem is not None and problem.missing:\n"
        "        return 1\n"
        "    if outcome.status == 'skipped' and outcome.unapproved:\n"
        "        return 2\n"
        "    if isinstance(exc, KeyError) or exc.code == 404:\n"
        "        return 3\n"
        "    return entry.name == 'x' or f'{problem}'\n"
    )
    assert findings(clean) == []


TREES = {module: ast.parse(path.read_text(encoding="utf-8")) for module, path in MODULES.items()}

# module -> why it reads a message's text (each entry must still find something, or it is stale): only
# exceptions from another library that carry the fact in no field or type.
ALLOWED = {
    "skillwire.catalog.published": "obstore's FileNotFoundError says NoSuchBucket only in its text (no code field)",
    "skillwire.search.index": "sqlite3 reports a build without FTS5 only as OperationalError text ('no such module')",
}


@pytest.mark.parametrize("module", sorted(TREES))
def test_no_module_decides_by_message_text(module: str) -> None:
    lines = findings(TREES[module])
    if module in ALLOWED:
        assert lines, f"stale entry in ALLOWED: {module} no longer reads a message's text"
        return
    assert lines == [], f"{module}: lines {lines} compare a message's text; decide on a field or type instead"


def test_allowed_entries_name_modules_that_exist() -> None:
    assert sorted(ALLOWED.keys() - TREES.keys()) == []
