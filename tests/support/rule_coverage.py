"""The rule-coverage collector, a pytest plugin (tests/conftest.py loads it; tests/checks/
test_rule_coverage.py judges what it saw).

Every `Finding` made in the test process is made by `RuleSet.finding`, so the plugin wraps it to
record each rule id for the whole session. Findings made in a subprocess (`skillwire check` run as
a process) are not seen: every rule must be produced in process by some test. The coverage test is
moved to the end of the session and told whether the session collected every test module whole;
only then can a rule that no test produced be told from a rule whose tests did not run.
"""

from __future__ import annotations

from typing import Any

import pytest

from skillwire.checks.findings import Finding, RuleSet

#: The rule id of every finding made so far in this session (lint's and check's ids never overlap).
PRODUCED: set[str] = set()
#: Whether this session collected every test module whole, so coverage can be judged; if not, why.
SESSION: dict[str, Any] = {"complete": False, "why": "not collected yet", "deselected": False}
COVERAGE_TEST = "test_every_rule_is_produced_by_some_test"

_original = RuleSet.finding


def _recording(self: RuleSet, rule: str, message: str, **where: Any) -> Finding:
    finding = _original(self, rule, message, **where)
    PRODUCED.add(rule)
    return finding


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
