"""Fuzzing what a host accepts from a server (`SkillEntry.from_wire`) and the URI parser, with hypothesis.

Every input to `from_wire` either becomes an entry that keeps the entry invariants (its URI names a
SKILL.md, every file lies inside the skill, the name matches, sizes and digests are well-formed) or
raises `InvalidEntry` / `SkillError`: never another exception. URIs round-trip through their canonical
form, and `SkillPath.resolve` never leaves the skill root, whatever the reference.

The budget here keeps the test command fast (and derandomized, tests/conftest.py);
`HYPOTHESIS_PROFILE=long SKILLWIRE_FUZZ_EXAMPLES=200000 pytest tests/core/test_fuzz_entry_uri.py` is the
longer run, on fresh random examples (see docs/architecture.md for its figures).
"""

from __future__ import annotations

import os
import string
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from skillwire.core.entry import SkillEntry
from skillwire.core.errors import InvalidSkillURI, SkillError
from skillwire.core.manifest import DIGEST_RE
from skillwire.core.uri import ParsedURI, SkillPath, canonical_uri, format_uri, parse_uri, validate_segment

EXAMPLES = int(os.environ.get("SKILLWIRE_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- URIs -------------------------------------------------------------------------------------------------

SEGMENT_TEXT = st.one_of(
    st.sampled_from(["..", ".", "", "SKILL.md", "%2e%2e", "%2E.", "%2f", "%5c", "%252e%252e", "%c0%ae", "%00", "a b"]),
    st.text(alphabet=string.ascii_letters + string.digits + "-._~%/\\:@!$&'()*+,;=?#", max_size=12),
    st.text(max_size=8),
)
URI_TEXT = st.one_of(
    st.builds(
        lambda scheme, parts, tail: f"{scheme}://{'/'.join(parts)}{tail}",
        st.sampled_from(["skill", "SKILL", "x+y", "1bad", "", "sk ill"]),
        st.lists(SEGMENT_TEXT, max_size=6),
        st.sampled_from(["", "/", "?q", "#f", "/SKILL.md"]),
    ),
    st.text(max_size=40),
)


@FUZZ
@given(URI_TEXT)
@example("skill://a/%2e%2e/SKILL.md")
@example("skill://a/%c0%ae%c0%ae/SKILL.md")
@example("skill://a/b%2Fc/SKILL.md")
@example("skill://a/\u0000/SKILL.md")
def test_parse_uri_refuses_or_round_trips(text: str) -> None:
    try:
        parsed = parse_uri(text)
    except InvalidSkillURI:
        return
    canonical = str(parsed)
    assert parse_uri(canonical) == parsed  # the canonical form names the same path
    assert canonical_uri(canonical) == canonical  # and is a fixed point
    for segment in parsed.segments:
        assert segment not in ("", ".", "..")
        assert "/" not in segment
        assert "\\" not in segment
        assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in segment)


DECODED_SEGMENT = st.text(min_size=1, max_size=10).filter(lambda s: _valid_segment(s))


def _valid_segment(segment: str) -> bool:
    try:
        validate_segment(segment)
    except InvalidSkillURI:
        return False
    return True


@FUZZ
@given(st.sampled_from(["skill", "acme"]), st.lists(DECODED_SEGMENT, min_size=1, max_size=5))
def test_format_then_parse_is_the_identity(scheme: str, segments: list[str]) -> None:
    assert parse_uri(format_uri(scheme, tuple(segments))) == ParsedURI(scheme, tuple(segments))


REFERENCE = st.one_of(
    st.lists(
        st.one_of(st.sampled_from(["..", ".", "", "%2e%2e", "a", "b", "SKILL.md", "\\", "c:"]), SEGMENT_TEXT),
        max_size=8,
    ).map("/".join),
    st.text(max_size=30),
)


@FUZZ
@given(st.lists(DECODED_SEGMENT, min_size=1, max_size=3), REFERENCE)
@example(["acme", "pdf"], "../../etc/passwd")
@example(["acme", "pdf"], "a/../../x")
@example(["acme", "pdf"], "..\\..\\x")
@example(["acme", "pdf"], "%2e%2e/x")
def test_resolve_never_leaves_the_skill_root(segments: list[str], reference: str) -> None:
    skill = SkillPath("skill", tuple(segments))
    try:
        resolved = skill.resolve(reference)
    except InvalidSkillURI:
        return
    parsed = parse_uri(resolved)
    assert parsed.is_within(skill.root)
    assert parsed != skill.root


# -- entries ------------------------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
NAMES = st.one_of(st.sampled_from(["pdf", "PDF", "a--b", "-x", "x" * 65, "naïve", "", "名前"]), st.text(max_size=10))
DIGESTS = st.one_of(
    st.sampled_from(["sha256:" + "0" * 64, "sha256:" + "A" * 64, "sha256:" + "0" * 63, "md5:00", ""]), JSON
)


@st.composite
def almost_entries(draw: st.DrawFn) -> Any:
    """Entries close to valid, with any one part replaced by something hostile."""
    name = draw(NAMES)
    prefix = draw(st.lists(st.sampled_from(["acme", "..", "%2e%2e", "a%2Fb", "x"]), max_size=2))
    root = "skill://" + "/".join([*prefix, name]) if prefix else f"skill://{name}"
    uri = draw(st.one_of(st.just(root + "/SKILL.md"), URI_TEXT, JSON))
    files: list[Any] = [{"uri": root + "/SKILL.md", "digest": "sha256:" + "a" * 64, "size": 10}]
    for _ in range(draw(st.integers(0, 3))):
        files.append(
            {
                "uri": draw(st.one_of(st.builds(lambda r: root + "/" + r, REFERENCE), URI_TEXT, JSON)),
                "digest": draw(DIGESTS),
                "size": draw(st.one_of(st.integers(-2, 2**70), st.booleans(), JSON)),
            }
        )
    entry: dict[str, Any] = {
        "uri": uri,
        "frontmatter": draw(
            st.one_of(
                st.fixed_dictionaries(
                    {"name": st.just(name), "description": st.text(max_size=20)}, optional={"x": JSON}
                ),
                JSON,
            )
        ),
        "resources": draw(st.one_of(st.just(files), st.just("dynamic"), JSON, st.lists(JSON, max_size=3))),
    }
    for key in draw(st.lists(st.sampled_from(["uri", "frontmatter", "resources"]), max_size=1)):
        del entry[key]
    return entry


@FUZZ
@given(st.one_of(almost_entries(), JSON))
@example({"uri": "skill://pdf/SKILL.md", "frontmatter": {"name": "pdf", "description": "d"}, "resources": "dynamic"})
def test_from_wire_parses_or_refuses_with_invalid_entry(data: Any) -> None:
    for allow_unicode in (True, False):
        try:
            entry = SkillEntry.from_wire(data, allow_unicode_names=allow_unicode)
        except SkillError:  # InvalidEntry is one; anything else escaping is a defect
            continue
        path = SkillPath.from_skill_md_uri(entry.uri)
        assert entry.name == path.name
        assert isinstance(entry.description, str)
        assert entry.description
        if not entry.is_dynamic:
            assert entry.uri in {f.uri for f in entry.files}
            for file in entry.files:
                assert path.file_path_of(file.uri) is not None  # inside the skill
                assert DIGEST_RE.match(file.digest)
                assert isinstance(file.size, int)
                assert not isinstance(file.size, bool)
                assert file.size >= 0
            assert len({canonical_uri(f.uri) for f in entry.files}) == len(entry.files)
