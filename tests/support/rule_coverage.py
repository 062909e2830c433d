"""The rule-coverage collector, a pytest plugin (tests/conftest.py loads it; tests/checks/
test_rule_coverage.py judges what it saw).

Every `Finding` made in the test process is made by `RuleSet.finding`, so the plugin wraps it to
record each rule id for the whole session. A rule counts only where it was produced without the data
beside the repository (`../shared`, the real corpus): a new user's clone has none, and a rule whose only
trigger reads it passed here and failed there (issue 20: `entry.field-advice`). An audit hook sees every
file and folder opened in the process; once a test module opens anything under `../shared`, what it
produces from then on is recorded as `PRODUCED_WITH_SHARED` only (per module, not per test, because a
module fixture may read the corpus once for several tests). Findings made in a subprocess (`skillwire check` run as
a process) are not seen: every rule must be produced in process by some test. The coverage test is
moved to the end of the session and told whether the session collected every test module whole;
only then can a rule that no test produced be told from a rule whose tests did not run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from skillwire.checks.findings import Finding, RuleSet

#: The rule id of every finding made so far in this session without ../shared (lint's and check's ids
#: never overlap), and those made only by test modules that read ../shared.
PRODUCED: set[str] = set()
PRODUCED_WITH_SHARED: set[str] = set()
SHARED = Path(__file__).resolve().parents[3] / "shared"  # beside the repository (or a worktree)
_SHARED_PREFIXES = tuple({str(SHARED) + os.sep, str(SHARED.resolve()) + os.sep})
#: Whether the running test module has opened anything under ../shared (reset per module).
TAINT: dict[str, Any] = {"module": None, "shared": False}
_WATCHED_EVENTS = frozenset({"open", "os.scandir", "os.listdir"})
#: Whether this session collected every test module whole, so coverage can be judged; if not, why.
SESSION: dict[str, Any] = {"complete": False, "why": "not collected yet", "deselected": False}
COVERAGE_TEST = "test_every_rule_is_produced_by_some_test"

_original = RuleSet.finding


def uses_shared(path: object) -> bool:
    """Whether `path` (as `open` or `os.scandir` got it) is under ../shared."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, str | os.PathLike):
        return False  # a file descriptor, or None (the current folder)
    text = os.fspath(path)
    if not isinstance(text, str) or "shared" not in text:
        return False
    full = os.path.abspath(text) + os.sep
    return full.startswith(_SHARED_PREFIXES) or os.path.realpath(full).startswith(_SHARED_PREFIXES)


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in _WATCHED_EVENTS and not TAINT["shared"] and args and uses_shared(args[0]):
        TAINT["shared"] = True


def record(rule: str) -> None:
    (PRODUCED_WITH_SHARED if TAINT["shared"] else PRODUCED).add(rule)


def _recording(self: RuleSet, rule: str, message: str, **where: Any) -> Finding:
    finding = _original(self, rule, message, **where)
    record(rule)
    return finding


sys.addaudithook(_audit)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    module = getattr(item, "module", None)
    if module is not TAINT["module"]:
        TAINT.update(module=module, shared=False)


RuleSet.finding = _recording  # type: ignore[method-assign]


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        SESSION["deselected"] = True


@pytest.hookimpl(trylast=True)  # after -k/-m deselection, so `items` is what will run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    last = [item for item in items if item.name == COVERAGE_TEST]
    for item in last:
        items.remove(item)
        items.append(item)
    tests = config.rootpath / "tests"
    modules = {path.resolve() for path in tests.rglob("test_*.py")}
    missing = sorted(str(path.relative_to(tests)) for path in modules - {item.path.resolve() for item in items})
    if SESSION["deselected"]:
        SESSION.update(complete=False, why="tests were deselected (-k or -m)")
    elif missing:
        SESSION.update(complete=False, why=f"{len(missing)} test module(s) not collected, e.g. {missing[0]}")
    else:
        SESSION.update(complete=True, why="")
