"""One walk of the YAML engine's corrected event stream gives lint both the interop hazards and the line
of every key (checks/hazards.py): no second YAML reader (stock ruamel) and no line-regex fallback, so a
field problem points at its own line even in YAML the stock reader refuses."""

from __future__ import annotations

import pytest

from skillwire.checks.hazards import HazardKind, interop_hazards, quote_advice, scan_frontmatter
from skillwire.checks.lint import check_skill_md


def test_one_scan_gives_the_hazards_and_the_key_lines() -> None:
    yaml_text = "name: x\ndescription: d\nmetadata:\n  reviewed: yes\n  flags: [a, b]\n? [complex]\n: v\n"
    scan = scan_frontmatter(yaml_text, first_line=2)
    assert scan.hazards == interop_hazards(yaml_text, first_line=2)
    assert [(h.kind, h.path, h.line) for h in scan.hazards] == [(HazardKind.YAML11_BOOL, "metadata.reviewed", 5)]
    # Top-level keys and keys one level below; a collection key has no name to file it under.
    assert scan.key_lines == {
        ("name",): 2,
        ("description",): 3,
        ("metadata",): 4,
        ("metadata", "reviewed"): 5,
        ("metadata", "flags"): 6,
    }


def test_a_field_problem_points_at_its_own_line_where_stock_ruamel_refuses_the_yaml() -> None:
    # A tab after 'name:' is YAML 1.2 (npm yaml reads it); ruamel's stock scanner refuses it, and the old
    # fallback then knew only top-level lines, so metadata.b was reported on the 'metadata:' line (4).
    data = b"---\nname:\ttabbed\ndescription: Tabs.\nmetadata:\n  a: x\n  b: 2\n---\n# T\n"
    checked = check_skill_md(data, file="tabbed/SKILL.md", expected_name="tabbed")
    assert [(f.rule, f.line) for f in checked.findings] == [("metadata-not-string", 6)]


def test_a_nested_mapping_value_is_reported_at_the_line_of_its_key() -> None:
    data = b"---\nname: deep\ndescription: d\nmetadata:\n  outer:\n    inner: 1\n---\n"
    checked = check_skill_md(data, file="deep/SKILL.md", expected_name="deep")
    # metadata.outer is a mapping, not a string: reported on its own line (5), not on 'metadata:' (4).
    assert [(f.rule, f.line) for f in checked.findings] == [("metadata-not-string", 5)]


def test_quote_advice_gives_the_problem_and_when_to_quote_without_reading_the_message() -> None:
    number, key = interop_hazards("version: 1.10\nyes: x\n")
    assert quote_advice(number) == (
        "'1.10' is the number 1.1, not the text as written",
        " if it is a version or an identifier",
    )
    assert quote_advice(key) == (
        "key 'yes' is a string in YAML 1.2 but a boolean in YAML 1.1 parsers (PyYAML, FastMCP)",
        "",
    )
    for hazard in (number, key):
        head, when = quote_advice(hazard)
        assert hazard.message == f"{head}; quote it{when}"
    [folded] = interop_hazards("description: >\n  Folded.\n")
    with pytest.raises(ValueError, match="not a quotable hazard: folded-trailing-newline"):
        quote_advice(folded)
