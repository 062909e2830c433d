"""skillwire.core.uri: parsing, canonical formatting, and resolution that can never leave a skill."""

from __future__ import annotations

import re
import time
from typing import cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillwire.core.errors import InvalidSkillURI
from skillwire.core.names import REG_NAME_RE
from skillwire.core.uri import (
    ParsedURI,
    SkillPath,
    canonical_uri,
    encode_segment,
    format_uri,
    is_absolute,
    parse_uri,
    validate_segment,
)

PCT_RE = re.compile(r"%(..)")

# -- round trip ---------------------------------------------------------------------------------------------

ROUND_TRIP = [
    pytest.param(("acme", "billing", "refunds", "SKILL.md"), "skill://acme/billing/refunds/SKILL.md", id="plain"),
    pytest.param(("a", "b c"), "skill://a/b%20c", id="space"),
    pytest.param(("café", "日本語.md"), "skill://caf%C3%A9/%E6%97%A5%E6%9C%AC%E8%AA%9E.md", id="unicode"),
    pytest.param(("a", "party 🎉"), "skill://a/party%20%F0%9F%8E%89", id="astral"),
    pytest.param(("user@host:80", "x:y@z"), "skill://user%40host%3A80/x:y@z", id="authority-reg-name"),
    pytest.param(("a", "100%"), "skill://a/100%25", id="percent"),
    pytest.param(("a", "q?#[]"), "skill://a/q%3F%23%5B%5D", id="gen-delims"),
    pytest.param(("a!$&'()*+,;=", "!$&'()*+,;="), "skill://a!$&'()*+,;=/!$&'()*+,;=", id="sub-delims"),
    pytest.param(("a", "~-._"), "skill://a/~-._", id="unreserved"),
    pytest.param(("a", '"<>{}|^`'), "skill://a/%22%3C%3E%7B%7D%7C%5E%60", id="unsafe-ascii"),
    pytest.param(("a", "...", ".hidden", "x."), "skill://a/.../.hidden/x.", id="dots-not-dot-segments"),
]


@pytest.mark.parametrize(("segments", "text"), ROUND_TRIP)
def test_format_and_parse_round_trip(segments: tuple[str, ...], text: str) -> None:
    assert format_uri("skill", segments) == text
    assert parse_uri(text) == ParsedURI("skill", segments)
    assert str(parse_uri(text)) == text
    assert canonical_uri(text) == text


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("SKILL://a/b", "skill://a/b"),
        ("skill://a/caf%c3%a9", "skill://a/caf%C3%A9"),  # lower-case hex is upper-cased
        ("skill://a/b c", "skill://a/b%20c"),  # a raw space is tolerated and encoded
        ("skill://a/café", "skill://a/caf%C3%A9"),
        ("skill://a/%7e%41", "skill://a/~A"),  # unreserved characters are decoded
        ("skill://a/x%3Ay%40z", "skill://a/x:y@z"),  # ':' and '@' are pchar after the authority
        ("skill://a:b@c/x", "skill://a%3Ab%40c/x"),  # ... but not in the authority (reg-name)
        ("github://org/repo/skill/SKILL.md", "github://org/repo/skill/SKILL.md"),
    ],
)
def test_canonical_uri(given: str, canonical: str) -> None:
    assert canonical_uri(given) == canonical
    assert canonical_uri(canonical) == canonical
    assert parse_uri(given) == parse_uri(canonical)


def test_encode_segment_uses_reg_name_set_only_for_the_authority() -> None:
    assert encode_segment("a:b@c", authority=True) == "a%3Ab%40c"
    assert encode_segment("a:b@c") == "a:b@c"
    assert encode_segment("a/b\\c") == "a%2Fb%5Cc"


SEGMENT_ALPHABET = "abcXYZ019-._~ :@/?#[]!$&'()*+,;=%\"<>éß日🎉\u00a0"

# One decoded segment: 1-8 characters of SEGMENT_ALPHABET, never a '/' (a segment cannot hold one), never
# a dot segment. Drawing from the alphabet without '/' is the same distribution as drawing with it and
# rejecting every segment that holds one.
SEGMENT = st.text(alphabet=SEGMENT_ALPHABET.replace("/", ""), min_size=1, max_size=8).filter(
    lambda seg: seg not in (".", "..")
)


# Hypothesis' cost is per example, so each example is a batch of cases; a failing batch still shrinks to
# the one case that fails. 100 batches of 20: the 2,000 cases of the seeded loop this replaces.
@settings(max_examples=100)
@given(batch=st.lists(st.lists(SEGMENT, min_size=1, max_size=5).map(tuple), min_size=20, max_size=20))
def test_round_trip_property(batch: list[tuple[str, ...]]) -> None:
    for segments in batch:
        text = format_uri("skill", segments)
        assert parse_uri(text).segments == segments, text
        assert canonical_uri(text) == text
        for hex_pair in PCT_RE.findall(text):
            assert re.fullmatch("[0-9A-F]{2}", hex_pair), text
        authority = text.removeprefix("skill://").split("/")[0]
        assert REG_NAME_RE.match(authority), text
        assert ":" not in authority
        assert "@" not in authority
        # Every encoded segment is free of raw delimiters, so the segment count survives.
        assert text.count("/") == 2 + len(segments) - 1


# -- hostile forms ------------------------------------------------------------------------------------------

HOSTILE = [
    ("skill://a/../b", "dot segment"),
    ("skill://a/./b", "dot segment"),
    ("skill://../b", "dot segment"),
    ("skill://a/b/..", "dot segment"),
    ("skill://a/%2e%2E/b", "dot segment"),
    ("skill://a/%2E/b", "dot segment"),
    ("skill://a/.%2e/b", "dot segment"),
    ("skill://a/b%2Fc", "forbidden character '/'"),
    ("skill://a/b%2fc", "forbidden character '/'"),
    ("skill://a/b%5Cc", "forbidden character '\\\\'"),
    ("skill://a/b\\c", "forbidden character '\\\\'"),
    ("skill://a/b%00c", "forbidden character '\\x00'"),
    ("skill://a/b%0Ac", "forbidden character '\\n'"),
    ("skill://a/b%1F", "forbidden character"),
    ("skill://a/b%7F", "forbidden character '\\x7f'"),
    ("skill://a/b%C2%85", "forbidden character '\\x85'"),  # C1 control (NEL)
    ("skill://a/b\tc", "forbidden character '\\t'"),
    ("skill://a/b\nc", "forbidden character '\\n'"),
    ("skill://a//b", "empty path segment"),
    ("skill:///a", "empty path segment"),
    ("skill://a/b/", "trailing '/'"),
    ("skill://a/", "trailing '/'"),
    ("skill://a/b?x=1", "query and fragment"),
    ("skill://a/b?", "query and fragment"),
    ("skill://a/b#frag", "query and fragment"),
    ("a/b/SKILL.md", "missing '<scheme>://'"),
    ("skill:a/b", "missing '<scheme>://'"),
    ("", "missing '<scheme>://'"),
    ("://a/b", "invalid scheme"),
    ("1skill://a/b", "invalid scheme"),
    ("sk ill://a/b", "invalid scheme"),
    (" skill://a/b", "invalid scheme"),
    ("skill\n://a/b", "invalid scheme"),
    ("a/b://c", "invalid scheme"),
    ("skill://", "missing authority"),
    ("skill://a/%zz", "malformed percent-encoding"),
    ("skill://a/%4", "malformed percent-encoding"),
    ("skill://a/x%4g", "malformed percent-encoding"),
    ("skill://a/%", "malformed percent-encoding"),
    ("skill://%/b", "malformed percent-encoding"),
    ("skill://a/%ff", "not UTF-8"),
    ("skill://a/%C3", "not UTF-8"),  # truncated sequence
    ("skill://a/%C0%AE", "not UTF-8"),  # overlong '.'
    ("skill://a/%ED%A0%80", "not UTF-8"),  # encoded surrogate
    ("skill://a/\ud800", "not UTF-8"),  # lone surrogate in the text (e.g. from JSON "\ud800")
]


@pytest.mark.parametrize(("uri", "reason"), HOSTILE)
def test_hostile_uris_are_refused_with_a_reason(uri: str, reason: str) -> None:
    with pytest.raises(InvalidSkillURI) as info:
        parse_uri(uri)
    assert reason in info.value.reason
    assert info.value.uri == uri
    with pytest.raises(InvalidSkillURI):
        canonical_uri(uri)


@pytest.mark.parametrize("value", [None, 5, b"skill://a/b", ["skill://a/b"]])
def test_parse_uri_refuses_non_strings(value: object) -> None:
    with pytest.raises(InvalidSkillURI, match="not a string"):
        parse_uri(cast(str, value))


def test_format_uri_needs_an_authority() -> None:
    with pytest.raises(InvalidSkillURI, match="authority"):
        format_uri("skill", ())


@pytest.mark.parametrize("segment", ["a b", "café", "...", "x:y", "100%", "%2e%2e"])
def test_validate_segment_accepts(segment: str) -> None:
    assert validate_segment(segment) == segment


@pytest.mark.parametrize(
    ("segment", "reason"),
    [
        ("", "empty"),
        (".", "dot segment"),
        ("..", "dot segment"),
        ("a/b", "forbidden"),
        ("a\\b", "forbidden"),
        ("a\x00", "forbidden"),
        ("a\x1b", "forbidden"),
        ("a\x85", "forbidden"),
        ("bad\udcff", "not valid Unicode"),  # os.listdir's surrogateescape for an undecodable name
    ],
)
def test_validate_segment_refuses(segment: str, reason: str) -> None:
    with pytest.raises(InvalidSkillURI) as info:
        validate_segment(segment)
    assert reason in info.value.reason


# -- ParsedURI containment ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "inside", "rel"),
    [
        ("skill://a/b", True, ()),
        ("skill://a/b/c", True, ("c",)),
        ("skill://a/b/c/d%20e", True, ("c", "d e")),
        ("SKILL://a/b/c", True, ("c",)),
        ("skill://a/bc", False, None),
        ("skill://a/bc/x", False, None),
        ("skill://a", False, None),
        ("skill://b/b/c", False, None),
        ("github://a/b/c", False, None),
    ],
)
def test_is_within_and_relative_to(uri: str, inside: bool, rel: tuple[str, ...] | None) -> None:
    root = parse_uri("skill://a/b")
    assert parse_uri(uri).is_within(root) is inside
    assert parse_uri(uri).relative_to(root) == rel


# -- SkillPath ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("uri", "scheme", "segments", "root"),
    [
        (
            "skill://acme/billing/refunds/SKILL.md",
            "skill",
            ("acme", "billing", "refunds"),
            "skill://acme/billing/refunds",
        ),
        ("skill://pdf-processing/SKILL.md", "skill", ("pdf-processing",), "skill://pdf-processing"),
        ("github://org/repo/skill/SKILL.md", "github", ("org", "repo", "skill"), "github://org/repo/skill"),
        ("SKILL://a/b/SKILL.md", "skill", ("a", "b"), "skill://a/b"),
        ("skill://a/caf%c3%a9/SKILL.md", "skill", ("a", "café"), "skill://a/caf%C3%A9"),
    ],
)
def test_skill_path_from_skill_md_uri(uri: str, scheme: str, segments: tuple[str, ...], root: str) -> None:
    path = SkillPath.from_skill_md_uri(uri)
    assert path.scheme == scheme
    assert path.segments == segments
    assert path.name == segments[-1]
    assert path.root_uri == root
    assert path.root == ParsedURI(scheme, segments)
    assert path.skill_md_uri == root + "/SKILL.md"
    assert SkillPath.from_skill_md_uri(path.skill_md_uri) == path


@pytest.mark.parametrize(
    ("uri", "reason"),
    [
        ("skill://SKILL.md", "named by its SKILL.md URI"),
        ("skill://a/b/README.md", "named by its SKILL.md URI"),
        ("skill://a/b/skill.md", "named by its SKILL.md URI"),
        ("skill://a/b", "named by its SKILL.md URI"),
        ("skill://a/b/SKILL.md/x", "named by its SKILL.md URI"),
        ("skill://a/b/SKILL.md/", "trailing"),
        ("skill://a/../SKILL.md", "dot segment"),
        ("skill://a/b/SKILL.md#x", "query and fragment"),
    ],
)
def test_skill_path_from_skill_md_uri_refuses(uri: str, reason: str) -> None:
    with pytest.raises(InvalidSkillURI) as info:
        SkillPath.from_skill_md_uri(uri)
    assert reason in info.value.reason


def test_skill_path_parse_and_constructor() -> None:
    assert SkillPath.parse("acme/billing/refunds").segments == ("acme", "billing", "refunds")
    assert SkillPath.parse("/solo/").root_uri == "skill://solo"
    assert SkillPath.parse("org/x", scheme="github").root_uri == "github://org/x"
    for bad in [(), ("a", ".."), ("a/b",), ("a", ""), ("a\x00",)]:
        with pytest.raises(InvalidSkillURI):
            SkillPath("skill", bad)


@pytest.mark.parametrize(
    ("file_path", "uri"),
    [
        ("SKILL.md", "skill://acme/refunds/SKILL.md"),
        ("references/a b.md", "skill://acme/refunds/references/a%20b.md"),
        ("x:y@z.md", "skill://acme/refunds/x:y@z.md"),
        ("日本.md", "skill://acme/refunds/%E6%97%A5%E6%9C%AC.md"),
    ],
)
def test_file_uri(file_path: str, uri: str) -> None:
    path = SkillPath.parse("acme/refunds")
    assert path.file_uri(file_path) == uri
    assert path.file_path_of(uri) == file_path


@pytest.mark.parametrize("file_path", ["", "/x", "x/", "a//b", "./x", "../x", "a/../b", "a\\b", "a\x00"])
def test_file_uri_refuses(file_path: str) -> None:
    with pytest.raises(InvalidSkillURI):
        SkillPath.parse("acme/refunds").file_uri(file_path)


@pytest.mark.parametrize(
    ("uri", "file_path"),
    [
        ("skill://a/b/SKILL.md", "SKILL.md"),
        ("skill://a/b/references/x.md", "references/x.md"),
        ("skill://a/b/x%20y.md", "x y.md"),
        ("SKILL://a/b/x", "x"),
        ("skill://a/b/nested/SKILL.md", "nested/SKILL.md"),
        ("skill://a/b", None),  # the root is a directory, not a file
        ("skill://a/bc/x", None),  # sibling sharing a textual prefix
        ("skill://a/bc", None),
        ("skill://a/x", None),
        ("skill://a", None),
        ("github://a/b/x", None),
        ("skill://a/b/../b/x", None),
        ("skill://a/b/%2e%2e/c/x", None),
        ("skill://a/b/x%2F..%2F..%2Fy", None),
        ("not a uri", None),
    ],
)
def test_file_path_of(uri: str, file_path: str | None) -> None:
    assert SkillPath.parse("a/b").file_path_of(uri) == file_path


# -- resolve ------------------------------------------------------------------------------------------------

ROOT = SkillPath.parse("acme/billing/refunds")
R = ROOT.root_uri


@pytest.mark.parametrize(
    ("reference", "uri"),
    [
        ("references/x.md", f"{R}/references/x.md"),
        ("./x.md", f"{R}/x.md"),
        ("a/../b.md", f"{R}/b.md"),
        ("a/./b/../c.md", f"{R}/a/c.md"),
        ("x.md#frag", f"{R}/x.md"),
        ("x.md?q=1#f", f"{R}/x.md"),
        ("a b.md", f"{R}/a%20b.md"),
        ("a%20b.md", f"{R}/a%20b.md"),
        ("caf%C3%A9.md", f"{R}/caf%C3%A9.md"),
        ("references\\x.md", f"{R}/references/x.md"),  # Windows-style separators are separators
        ("dir/", f"{R}/dir"),
        ("./a:b.md", f"{R}/a:b.md"),  # RFC 3986 4.2: a colon is fine after a './' prefix
        ("x/y:z.md", f"{R}/x/y:z.md"),
        ("nested/SKILL.md", f"{R}/nested/SKILL.md"),
    ],
)
def test_resolve(reference: str, uri: str) -> None:
    assert ROOT.resolve(reference) == uri
    assert parse_uri(ROOT.resolve(reference)).is_within(ROOT.root)


@pytest.mark.parametrize(
    ("reference", "reason"),
    [
        ("../x", "climbs out"),
        ("a/../../x", "climbs out"),
        ("..\\x", "climbs out"),
        ("a\\..\\..\\x", "climbs out"),
        ("..", "climbs out"),
        ("./../refunds/x", "climbs out"),  # even when it would land back inside
        ("/etc/passwd", "only references relative"),
        ("//evil/x", "only references relative"),
        ("\\\\evil\\x", "only references relative"),
        ("\\x", "only references relative"),
        ("https://evil/x", "only references relative"),
        ("skill://acme/billing/refunds/x.md", "only references relative"),
        ("file:///etc/passwd", "only references relative"),
        # Decision: `scheme:` references (RFC 3986 4.2) and drive-letter paths are absolute, not files.
        ("C:\\x", "only references relative"),
        ("C:/x", "only references relative"),
        ("mailto:someone@example.com", "only references relative"),
        ("javascript:alert(1)", "only references relative"),
        ("", "names the skill root"),
        ("#frag", "names the skill root"),
        ("?q", "names the skill root"),
        (".", "names the skill root"),
        ("./", "names the skill root"),
        ("a/..", "names the skill root"),
        ("%2e%2e/x", "dot segment"),
        ("a/%2E%2e/x", "dot segment"),
        ("%2e/x", "dot segment"),
        ("a%2Fb", "forbidden character"),
        ("a%5Cb", "forbidden character"),
        ("a%00b", "forbidden character"),
        ("a\x00b", "forbidden character"),
        ("%zz", "malformed percent-encoding"),
        ("%4", "malformed percent-encoding"),
        ("%ff", "not UTF-8"),
    ],
)
def test_resolve_refuses(reference: str, reason: str) -> None:
    with pytest.raises(InvalidSkillURI) as info:
        ROOT.resolve(reference)
    assert reason in info.value.reason
    assert info.value.uri == reference


REF_PARTS = ["a", "b", "..", ".", "%2e", "%2E%2e", ".%2e", "b c", "c%20d", "", "é", "x.md", "%2F", "\\", ":"]


def test_resolve_never_leaves_the_skill_property() -> None:
    outcomes = {"resolved": 0, "refused": 0}
    reasons: set[str] = set()

    # The property runs inside this test so that the coverage asserted below is over exactly the
    # references it checked: 50 batches of 20, the 1,000 cases of the seeded loop this replaces.
    @settings(max_examples=50)
    @given(batch=st.lists(st.lists(st.sampled_from(REF_PARTS), min_size=1, max_size=6), min_size=20, max_size=20))
    def resolves_inside_or_refuses(batch: list[list[str]]) -> None:
        for parts in batch:
            reference = "/".join(parts)
            try:
                resolved = ROOT.resolve(reference)
            except InvalidSkillURI as exc:
                reasons.add(exc.reason.split(" ")[0])
                outcomes["refused"] += 1
                continue
            outcomes["resolved"] += 1
            parsed = parse_uri(resolved)
            assert parsed.is_within(ROOT.root), (reference, resolved)
            assert parsed != ROOT.root, reference
            assert ROOT.file_path_of(resolved) is not None
            assert canonical_uri(resolved) == resolved

    resolves_inside_or_refuses()
    # Both branches must be exercised, or the property says nothing.
    assert outcomes["resolved"] > 100, outcomes
    assert outcomes["refused"] > 100, outcomes
    # Every way out is exercised: dot segments, encoded separators, absolute forms, climbing, the root.
    assert reasons == {"dot", "segment", "only", "climbs", "names"}, reasons


# -- structure of canonical text (the fast helpers every walk uses) ----------------------------------------------


def test_structure_helpers_on_canonical_text() -> None:
    from skillwire.core.uri import ancestors, authority_of, child_name, lineage, parent_of, scheme_of

    uri = "skill://acme/a%20b/refs/x%25y.md"
    assert (scheme_of(uri), authority_of(uri)) == ("skill", "acme")
    assert parent_of(uri) == "skill://acme/a%20b/refs"
    assert list(ancestors(uri)) == ["skill://acme/a%20b/refs", "skill://acme/a%20b", "skill://acme"]
    assert list(lineage(uri)) == [uri, *ancestors(uri)]
    assert [child_name(u) for u in lineage(uri)] == ["x%y.md", "refs", "a b", "acme"]
    # An authority has no parent; text without a scheme has no structure at all.
    assert (parent_of("skill://acme"), list(ancestors("skill://acme"))) == (None, [])
    bare = "acme/x"
    assert (scheme_of(bare), authority_of(bare), parent_of(bare), list(lineage(bare))) == ("", "", None, [])
    assert list(lineage(uri, longest=len("skill://acme/a%20b"))) == ["skill://acme/a%20b", "skill://acme"]
    # Each prefix the helpers give is itself a canonical directory URI.
    assert all(canonical_uri(u) == u for u in lineage(uri))


@pytest.mark.parametrize(
    ("text", "absolute"),
    [
        ("skill://acme/x/SKILL.md", True),
        ("git+https://example.test/r", True),
        ("SKILL://acme", True),
        ("x-1.2+y://a", True),
        ("pdf-tools", False),  # a skill's name
        ("references/a.md", False),  # a path inside a skill
        ("docs/a://b", False),  # `://` not right after a scheme
        ("://acme/x", False),  # no scheme
        ("1x://acme", False),  # a scheme starts with a letter
        ("sk ill://acme", False),
        ("", False),
    ],
)
def test_is_absolute(text: str, absolute: bool) -> None:
    assert is_absolute(text) is absolute


def test_is_absolute_is_linear_in_a_long_text_without_a_scheme() -> None:
    started = time.process_time()
    assert not is_absolute("a" * 2_000_000 + ":/")
    assert time.process_time() - started < 0.5
