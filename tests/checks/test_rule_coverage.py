"""Every rule of `skillwire lint` and `skillwire check` is produced by at least one test (review §5).

The collector (tests/support/rule_coverage.py, a plugin tests/conftest.py loads) records the rule of
each finding made in this process; the coverage test runs last and compares the records with the two
rule tables. A rule no test produces fails it, unless it is listed in `UNPRODUCIBLE` with the reason
it cannot be produced here, so adding a rule without a test that triggers it fails the suite. The
judgement needs the whole suite: with a selection (`-k`, `-m`, a subset of files) it skips and says why.
It counts only rules produced without `../shared` (the collector watches every file opened), which is
what a fresh clone can run: the suite here judges coverage as a new user's run does.
"""

from __future__ import annotations

import ast
import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from skillwire.checks import audit, links, lint
from skillwire.checks.findings import Rule, RuleSet
from support import rule_coverage
from support.rule_coverage import PRODUCED, PRODUCED_WITH_SHARED, SESSION

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
    gaps = coverage_gaps(TABLES, PRODUCED, UNPRODUCIBLE)
    only_shared = sorted(PRODUCED_WITH_SHARED - PRODUCED)
    hint = f" (produced only by tests that read ../shared: {', '.join(only_shared)})" if only_shared else ""
    assert gaps == [], f"{gaps}{hint}"


def test_a_rule_produced_after_reading_shared_data_does_not_count(tmp_path: Path) -> None:
    """The judgement is the one a clone without ../shared makes: the collector's audit hook sees the
    read, and the rule goes to PRODUCED_WITH_SHARED."""
    assert rule_coverage.uses_shared(rule_coverage.SHARED / "corpora" / "x" / "SKILL.md")
    assert rule_coverage.uses_shared(os.fsencode(rule_coverage.SHARED / "review"))
    assert not rule_coverage.uses_shared(tmp_path / "shared" / "SKILL.md")
    assert not rule_coverage.uses_shared(3)
    saved = dict(rule_coverage.TAINT)
    produced, with_shared = set(PRODUCED), set(PRODUCED_WITH_SHARED)
    try:
        rule_coverage.TAINT["shared"] = False
        with contextlib.suppress(OSError):  # only the attempt matters (there may be no ../shared)
            os.scandir(rule_coverage.SHARED).close()
        assert rule_coverage.TAINT["shared"]
        rule_coverage.record("planted.rule")
        assert "planted.rule" in PRODUCED_WITH_SHARED
        assert "planted.rule" not in PRODUCED
    finally:
        rule_coverage.TAINT.update(saved)
        PRODUCED.intersection_update(produced)
        PRODUCED_WITH_SHARED.intersection_update(with_shared)


# -- every rule id the engines write is registered -----------------------------------------------------------

ENGINES = Path(__file__).resolve().parents[2] / "src" / "skillwire" / "checks"
#: The calls that take a rule id first, and the tables that map kinds of problem to rule ids.
REPORTING_CALLS = frozenset({"add", "_finding", "finding"})


def written_rule_ids(source: str) -> list[str]:
    """Rule ids written as literals: the first argument of a reporting call, and the values of a
    `*_RULES` table (a tuple value's first item)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in REPORTING_CALLS and isinstance(node.args[0].value, str):
                found.append(node.args[0].value)
        elif isinstance(node, ast.AnnAssign | ast.Assign) and isinstance(node.value, ast.Dict):
            targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
            if any(isinstance(t, ast.Name) and t.id.endswith("_RULES") for t in targets):
                for value in node.value.values:
                    item = value.elts[0] if isinstance(value, ast.Tuple) else value
                    if isinstance(item, ast.Constant) and isinstance(item.value, str):
                        found.append(item.value)
    return found


@pytest.mark.parametrize(
    ("module", "rules"),
    [("lint.py", lint.RULES), ("links.py", links.LINK_RULES), ("audit", audit.RULES)],
)
def test_every_rule_id_an_engine_writes_is_registered(module: str, rules: RuleSet) -> None:
    """A mistyped id fails here, not only when the line that reports it runs (`RuleSet.finding` raises)."""
    # An engine is a module or a package (`audit/`: every module of it).
    files = sorted((ENGINES / module).glob("*.py")) if (ENGINES / module).is_dir() else [ENGINES / module]
    written = [rule for file in files for rule in written_rule_ids(file.read_text(encoding="utf-8"))]
    assert len(written) >= 4, written  # the scan finds the engine's call sites
    assert sorted(set(written) - set(rules)) == []


def test_the_scan_finds_a_mistyped_id() -> None:
    source = 'add("broken-lnik", 1, "m", "s")\nIGNORED_RULES = {k: ("unreadble", "s")}\nself.add("list.eror", S, "m")\n'
    assert sorted(written_rule_ids(source)) == ["broken-lnik", "list.eror", "unreadble"]
