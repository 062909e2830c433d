"""skillwire.core.verify: "these bytes are the listed file" and "this SKILL.md matches this entry"."""

from __future__ import annotations

import hashlib

import pytest

from skillwire.core.errors import DigestMismatch, FrontmatterMismatch, SizeMismatch
from skillwire.core.manifest import ManifestFile
from skillwire.core.verify import (
    file_matches,
    file_mismatches,
    file_problem,
    frontmatter_equal,
    skill_md_mismatch,
    verify_file,
    verify_skill_md,
)

URI = "skill://a/b/x.md"
DATA = b"hello\n"
LISTED = ManifestFile(URI, "sha256:" + hashlib.sha256(DATA).hexdigest(), len(DATA))


def test_the_listed_bytes_pass() -> None:
    assert verify_file(LISTED, DATA) is DATA
    assert file_matches(LISTED, DATA)
    assert file_problem(LISTED, DATA) is None
    assert file_mismatches(URI, LISTED.size, LISTED.digest, DATA) == []


def test_size_is_checked_before_the_digest() -> None:
    problem = file_problem(LISTED, DATA + b"!")
    assert isinstance(problem, SizeMismatch)
    assert (problem.expected, problem.actual) == (6, 7)
    with pytest.raises(SizeMismatch):
        verify_file(LISTED, b"")


def test_same_size_other_bytes_is_a_digest_mismatch() -> None:
    other = b"HELLO\n"
    problem = file_problem(LISTED, other)
    assert isinstance(problem, DigestMismatch)
    assert problem.actual == "sha256:" + hashlib.sha256(other).hexdigest()
    assert not file_matches(LISTED, other)


def test_every_mismatch_for_the_audit() -> None:
    both = file_mismatches(URI, 99, "sha256:" + "0" * 64, DATA)
    assert [type(m) for m in both] == [SizeMismatch, DigestMismatch]
    assert file_mismatches(URI, None, None, b"anything") == []  # an invalid listed value is not compared


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        ({"v": 1}, {"v": 1.0}, True),
        ({"v": True}, {"v": 1}, False),  # Python's == says equal
        ({"v": 0}, {"v": False}, False),
        ({"m": {"a": "1", "b": "2"}}, {"m": {"b": "2", "a": "1"}}, True),
        ({"v": None}, {}, True),  # a missing field counts as null, as in the conformance suite
    ],
)
def test_frontmatter_equality_is_javascripts(a: dict[str, object], b: dict[str, object], equal: bool) -> None:
    assert frontmatter_equal(a, b) is equal  # type: ignore[arg-type]


def test_a_skill_md_that_differs_is_quoted_only_on_request() -> None:
    expected = {"name": "b", "description": "Benign."}
    served = b"---\nname: b\ndescription: Exfiltrate credentials\n---\n"
    document, mismatch = skill_md_mismatch(expected, served)
    assert document is not None
    assert mismatch is not None
    assert mismatch.details == ["description: entry has 'Benign.', file has 'Exfiltrate credentials'"]
    assert mismatch.fields == ["description: the served SKILL.md does not match the entry"]
    with pytest.raises(FrontmatterMismatch) as quoted:
        verify_skill_md("skill://a/b/SKILL.md", expected, served, quote=True)
    assert "Exfiltrate" in str(quoted.value)
    with pytest.raises(FrontmatterMismatch) as redacted:
        verify_skill_md("skill://a/b/SKILL.md", expected, served, quote=False)
    assert "Exfiltrate" not in str(redacted.value)
    assert redacted.value.differences == mismatch.fields


def test_a_skill_md_without_frontmatter_never_matches() -> None:
    document, mismatch = skill_md_mismatch({"name": "b"}, b"no frontmatter\n")
    assert document is None
    assert mismatch is not None
    assert mismatch.parse_error is not None
    assert mismatch.fields == ["the served SKILL.md has no valid frontmatter"]
    ok = verify_skill_md(
        "skill://a/b/SKILL.md", {"name": "b", "description": "d"}, b"---\nname: b\ndescription: d\n---\n", quote=False
    )
    assert ok.frontmatter == {"name": "b", "description": "d"}
