"""Every rule of `skillwire lint` and `skillwire check` is produced by at least one test (review §5).

The collector (tests/support/rule_coverage.py, a plugin tests/conftest.py loads) records the rule of
each finding made in this process; the coverage test runs last and compares the records with the two
rule tables. A rule no test produces fails it, unless it is listed in `UNPRODUCIBLE` with the reason
it cannot be produced here, so adding a rule without a test that triggers it fails the suite. The
judgement needs the whole suite: with a selection (`-k`, `-m`, a subset of files) it skips and says why.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from skillwire.checks import audit, lint
from skillwire.checks.findings import Rule, RuleSet
from support.rule_coverage import PRODUCED, SESSION

#: Rules no test here can produce, and why. Empty today: every rule has a test that triggers it.
UNPRODUCIBLE: dict[str, str] = {}

TABLES: dict[str, RuleSet] = {"lint": lint.RULES, "check": audit.RULES}


def coverage_gaps(tables: Mapping[str, RuleSet], produced: set[str], unproducible: Mapping[str, str]) -> list[str]:
    """What is wrong with the coverage, one line per problem (empty: every rule is produced or excused)."""
    gaps: list[str] = []
    for name, rules in tables.items():
        never = sorted(set(rules) - produced - set(unproducible))
        if never:
            gaps.append(f"{name} rules no test produces: {', '.join(never)}")
    every = {rule for rules in tables.values() for rule in rules}
    stale = sorted(set(unproducible) & produced)
    if stale:
        gaps.append(f"produced after all, so take them off UNPRODUCIBLE: {', '.join(stale)}")
    unknown = sorted(set(unproducible) - every)
    if unknown:
        gaps.append(f"UNPRODUCIBLE names no rule: {', '.join(unknown)}")
    return gaps


def test_the_judgement_reports_a_rule_without_a_test() -> None:
    rules = RuleSet({"old-rule": Rule("error", "tested"), "new-rule": Rule("warning", "added, never triggered")})
    assert coverage_gaps({"lint": rules}, {"old-rule"}, {}) == ["lint rules no test produces: new-rule"]
    assert coverage_gaps({"lint": rules}, {"old-rule"}, {"new-rule": "needs root"}) == []
    assert coverage_gaps({"lint": rules}, {"old-rule", "new-rule"}, {"new-rule": "needs root"}) == [
        "produced after all, so take them off UNPRODUCIBLE: new-rule"
    ]
    assert coverage_gaps({"lint": rules}, {"old-rule", "new-rule"}, {"gone": "x"}) == [
        "UNPRODUCIBLE names no rule: gone"
    ]


def test_every_rule_is_produced_by_some_test() -> None:
    if not SESSION["complete"]:
        pytest.skip(f"rule coverage is judged over the whole suite only ({SESSION['why']})")
    assert set(lint.RULES).isdisjoint(audit.RULES)  # so one set of produced ids serves both tables
    assert coverage_gaps(TABLES, PRODUCED, UNPRODUCIBLE) == []
