"""Interop hazards are data (issue 12, item 4): a kind per hazard, which lint maps to its rule, and the
FastMCP folded-description hazard (issue 10, item 7) reported with file and line."""

from __future__ import annotations

import pytest

from skillwire.checks.hazards import Hazard, HazardKind, interop_hazards
from skillwire.checks.lint import HAZARD_RULES, RULES, check_skill_md


def test_every_hazard_kind_has_a_lint_rule() -> None:
    assert set(HAZARD_RULES) == set(HazardKind)
    assert all(rule in RULES for rule in HAZARD_RULES.values())


@pytest.mark.parametrize(
    ("yaml_text", "kind", "path"),
    [
        ("a: yes", HazardKind.YAML11_BOOL, "a"),
        ("a: n", HazardKind.YAML11_BOOL, "a"),
        ("a: 2024-01-31", HazardKind.YAML11_DATE, "a"),
        ("a: 0o17", HazardKind.OCTAL, "a"),
        ("a: 010", HazardKind.OCTAL, "a"),
        ("a: 1.10", HazardKind.NUMBER_LOSES_TEXT, "a"),
        ("a: 1_000", HazardKind.YAML11_NUMBER, "a"),
        ("a: .inf", HazardKind.NOT_FINITE, "a"),
        ("a: 12345678901234567890", HazardKind.BEYOND_SAFE_INTEGER, "a"),
        ("a: =", HazardKind.YAML11_VALUE_TAG, "a"),
        ("<<: a", HazardKind.YAML11_MERGE_KEY, "<<"),
        ("description: >\n  Folded\n  text.", HazardKind.FOLDED_TRAILING_NEWLINE, "description"),
    ],
)
def test_each_hazard_has_its_kind(yaml_text: str, kind: HazardKind, path: str) -> None:
    [hazard] = interop_hazards(yaml_text)
    assert (hazard.kind, hazard.path, hazard.line) == (kind, path, 1)


@pytest.mark.parametrize(
    "yaml_text",
    [
        "description: >-\n  Folded, no final break.",
        "description: |\n  Literal.",
        "description: 'x'",
        "metadata:\n  description: >\n    nested, not the skill's description",
    ],
)
def test_no_folded_hazard_without_a_final_line_break_at_the_top(yaml_text: str) -> None:
    assert not [h for h in interop_hazards(yaml_text) if h.kind is HazardKind.FOLDED_TRAILING_NEWLINE]


def test_lint_warns_about_a_folded_description_with_file_and_line() -> None:
    data = b"---\nname: pdf\ndescription: >\n  Extract text\n  from PDFs.\nlicense: MIT\n---\nBody.\n"
    findings = check_skill_md(data, file="pdf/SKILL.md", expected_name="pdf").findings
    [finding] = [f for f in findings if f.rule == "folded-description"]
    assert (finding.file, finding.line, finding.severity) == ("pdf/SKILL.md", 3, "warning")
    assert "FastMCP" in finding.message
    assert ">-" in finding.suggestion
    fixed = data.replace(b"description: >\n", b"description: >-\n")
    assert not [f for f in check_skill_md(fixed, file="pdf/SKILL.md", expected_name="pdf").findings]


def test_hazard_is_plain_data() -> None:
    [hazard] = interop_hazards("x: 1\nversion: 1.10", first_line=5)
    assert hazard == Hazard(HazardKind.NUMBER_LOSES_TEXT, "1.10", "version", 6, hazard.message)
