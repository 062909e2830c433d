"""One trigger per rule that no other test produced (review §5 found 25 of check's rules and 2 of lint's
named in no test): each case breaks an honest server, or writes a skill, in one way, and the rule must
be among the findings. test_rule_coverage.py then holds every rule to having some test."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INTERNAL_ERROR

from skillwire.catalog.filesystem import MAX_SKILL_MD_BYTES
from skillwire.checks.lint import lint_path
from support.fake_skills_server import FakeServer, md

ALPHA = "skill://fake/alpha/SKILL.md"
ENVELOPE = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
FAILED = MCPError(INTERNAL_ERROR, "internal error")


def entry_of(fake: FakeServer, uri: str = ALPHA) -> dict[str, object]:
    return fake.entries[uri]


def frontmatter_of(fake: FakeServer, uri: str = ALPHA) -> dict[str, object]:
    frontmatter = fake.entries[uri]["frontmatter"]
    assert isinstance(frontmatter, dict)
    return frontmatter


def list_error(fake: FakeServer) -> None:
    fake.errors[("skills/list", "")] = FAILED


def list_result_invalid(fake: FakeServer) -> None:
    fake.replies[("skills/list", "")] = {"skills": "none", **ENVELOPE}


def list_cursor_invalid(fake: FakeServer) -> None:
    fake.replies[("skills/list", "")] = {"skills": [entry_of(fake)], "nextCursor": 2, **ENVELOPE}


def entry_uri_invalid(fake: FakeServer) -> None:
    entry_of(fake)["uri"] = "skill://fake/alpha/README.md"


def entry_authority_invalid(fake: FakeServer) -> None:
    fake.entries = {"skill://fa^ke/alpha/SKILL.md": {**entry_of(fake), "uri": "skill://fa^ke/alpha/SKILL.md"}}


def entry_frontmatter_missing(fake: FakeServer) -> None:
    entry_of(fake)["frontmatter"] = "name: alpha"


def entry_name_missing(fake: FakeServer) -> None:
    del frontmatter_of(fake)["name"]


def entry_compatibility_invalid(fake: FakeServer) -> None:
    frontmatter_of(fake)["compatibility"] = 3


def entry_field_advice(fake: FakeServer) -> None:
    frontmatter_of(fake)["allowed-tools"] = ["Read", "Bash"]  # a list where the spec says a string


def entry_metadata_reserved_key(fake: FakeServer) -> None:
    frontmatter_of(fake)["metadata"] = {"io.modelcontextprotocol/owner": "x"}


def entry_resources_invalid(fake: FakeServer) -> None:
    entry_of(fake)["resources"] = 5


def entry_resource_invalid(fake: FakeServer) -> None:
    resources = entry_of(fake)["resources"]
    assert isinstance(resources, list)
    resources.append(5)


def entry_inner_file_missing(fake: FakeServer) -> None:
    inner = "skill://fake/outer/inner/SKILL.md"
    resources = entry_of(fake, inner)["resources"]
    assert isinstance(resources, list)
    entry_of(fake, inner)["resources"] = [r for r in resources if not r["uri"].endswith("/data.md")]


def get_result_type(fake: FakeServer) -> None:
    fake.get_envelope = {**fake.get_envelope, "resultType": "incomplete"}


def get_entry_invalid(fake: FakeServer) -> None:
    fake.get_entries[ALPHA] = {"name": "alpha"}


def file_contents_invalid(fake: FakeServer) -> None:
    fake.replies[("resources/read", "skill://fake/alpha/refs/one.md")] = {"contents": "one"}


def file_skill_md_not_text(fake: FakeServer) -> None:
    blob = base64.b64encode(fake.files[ALPHA].encode()).decode()
    fake.replies[("resources/read", ALPHA)] = {"contents": [{"uri": ALPHA, "mimeType": "text/markdown", "blob": blob}]}


def file_skill_md_mime_type(fake: FakeServer) -> None:
    fake.replies[("resources/read", ALPHA)] = {
        "contents": [{"uri": ALPHA, "mimeType": "text/plain", "text": md("alpha")}]
    }


def resources_list_error(fake: FakeServer) -> None:
    fake.errors[("resources/list", "")] = FAILED


def dir_error(fake: FakeServer) -> None:
    fake.errors[("resources/directory/read", "skill://fake/alpha/refs")] = FAILED


def dir_result_invalid(fake: FakeServer) -> None:
    fake.replies[("resources/directory/read", "skill://fake/alpha")] = {"resultType": "complete", "resources": 1}


def dir_cursor_repeated(fake: FakeServer) -> None:
    children = list(fake.directories["skill://fake/alpha/refs"].values())
    reply = {"resultType": "complete", "resources": children, "nextCursor": "again"}
    fake.replies[("resources/directory/read", "skill://fake/alpha/refs")] = reply


CHECK_TRIGGERS: dict[str, Callable[[FakeServer], None]] = {
    "list.error": list_error,
    "list.result-invalid": list_result_invalid,
    "list.cursor-invalid": list_cursor_invalid,
    "entry.uri-invalid": entry_uri_invalid,
    "entry.authority-invalid": entry_authority_invalid,
    "entry.frontmatter-missing": entry_frontmatter_missing,
    "entry.name-missing": entry_name_missing,
    "entry.compatibility-invalid": entry_compatibility_invalid,
    "entry.field-advice": entry_field_advice,
    "entry.metadata-reserved-key": entry_metadata_reserved_key,
    "entry.resources-invalid": entry_resources_invalid,
    "entry.resource-invalid": entry_resource_invalid,
    "entry.inner-file-missing": entry_inner_file_missing,
    "get.result-type": get_result_type,
    "get.entry-invalid": get_entry_invalid,
    "file.contents-invalid": file_contents_invalid,
    "file.skill-md-not-text": file_skill_md_not_text,
    "file.skill-md-mime-type": file_skill_md_mime_type,
    "resources.list-error": resources_list_error,
    "dir.error": dir_error,
    "dir.result-invalid": dir_result_invalid,
    "dir.cursor-repeated": dir_cursor_repeated,
}


@pytest.mark.parametrize("rule", CHECK_TRIGGERS)
def test_check_rule_is_triggered(rule: str) -> None:
    fake = FakeServer()
    assert fake.audit().findings == []  # honest before the one change
    CHECK_TRIGGERS[rule](fake)
    assert rule in {f.rule for f in fake.audit().findings}


def test_check_rules_of_the_uri_scheme_and_the_page_limit() -> None:
    other = FakeServer({"repo://fake/alpha/SKILL.md": md("alpha")}, directory_read=False)
    assert [f.rule for f in other.audit().findings] == ["entry.scheme-not-skill"]
    paged = FakeServer(page_size=1, directory_read=False)
    assert [(f.rule, f.message) for f in paged.audit(max_pages=2).findings] == [
        ("list.page-limit", "skills/list still had a nextCursor after 2 pages; only those were checked")
    ]


def test_lint_skill_md_too_large(tmp_path: Path) -> None:
    folder = tmp_path / "huge"
    folder.mkdir()
    with open(folder / "SKILL.md", "wb") as handle:  # sparse: the walk's size decides, nothing is read
        handle.truncate(MAX_SKILL_MD_BYTES + 1)
    # Over 16 MiB, the SKILL.md alone also breaks the skill's byte limit.
    assert [f.rule for f in lint_path(str(tmp_path)).findings] == ["too-large", "skill-md-too-large"]


def test_lint_yaml_interop(tmp_path: Path) -> None:
    folder = tmp_path / "binary"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: binary\ndescription: d\nmetadata:\n  mask: 0b101\n---\n")
    findings = [(f.rule, f.line) for f in lint_path(str(tmp_path)).findings]
    assert findings == [("yaml-interop", 5)]
