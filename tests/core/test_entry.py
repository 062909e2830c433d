"""skillwire.core: the skill entry (from_wire/to_wire), manifests (digests, limits, hash, diff), and names."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from skillwire.core.entry import DYNAMIC, SkillEntry
from skillwire.core.errors import InvalidEntry, InvalidName, LimitExceeded
from skillwire.core.fields import Problem, field_problems, publish_problem
from skillwire.core.manifest import (
    DIGEST_RE,
    MAX_BYTES_PER_SKILL,
    MAX_FILES_PER_SKILL,
    ManifestFile,
    check_limits,
    diff_manifests,
    limit_problem,
    manifest_hash,
    sha256_digest,
)
from skillwire.core.names import name_problem, validate_name
from skillwire.core.uri import SkillPath

# The conformance suite's regex (enumeration.ts). JavaScript's `$` is end-of-input, which `fullmatch`
# reproduces; Python's `$` alone would also accept a trailing newline.
CONFORMANCE_NAME_RE = re.compile(r"^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")


# -- names --------------------------------------------------------------------------------------------------


# Names on both sides of the rule: names the regex's shape accepts (of every length up to 64, "--" left to
# chance), short near misses, and 60-67 characters (the 64 limit) of the characters the seeded loop this
# replaces drew from. Hypothesis draws each character alike, so the valid names come from their own
# branch rather than from a 93% weight on the common characters.
COMMON = "abcxyz0189-"
RARE = "-_AZé. \n\t/"
NAME_TEXT = st.one_of(
    st.from_regex(r"[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?", fullmatch=True),
    st.text(alphabet=COMMON + RARE, max_size=6),
    st.text(alphabet=COMMON, min_size=60, max_size=67),
    st.text(alphabet=COMMON + RARE, min_size=60, max_size=67),
)


def test_ascii_name_rule_matches_the_conformance_regex() -> None:
    counts = {True: 0, False: 0}

    # The property runs inside this test so that the counts asserted below are over exactly the names it
    # checked: 200 batches of 20 (hypothesis' cost is per example; a failing batch shrinks to one name),
    # the 4,000 names of the seeded loop this replaces, plus the boundary names as explicit examples.
    @settings(max_examples=200)
    @given(batch=st.lists(NAME_TEXT, min_size=20, max_size=20))
    @example(batch=["a" * n for n in (63, 64, 65)] + ["a" + "-b" * 31 + "c", "abc\n", "a\nb", "\n"])
    def agrees_with_the_regex(batch: list[str]) -> None:
        for name in batch:
            expected = CONFORMANCE_NAME_RE.fullmatch(name) is not None
            problem = name_problem(name)
            assert (problem is None) is expected, (name, problem)
            if problem is not None:
                with pytest.raises(InvalidName) as info:
                    validate_name(name)
                assert info.value.reason == problem
            counts[expected] += 1

    agrees_with_the_regex()
    assert counts[True] > 500, counts
    assert counts[False] > 500, counts


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("a", None),
        ("0", None),
        ("pdf-processing", None),
        ("a" * 64, None),
        ("a-b-c-1-2-3", None),
        ("a" * 65, "65 characters long; the limit is 64"),
        ("", "must not be empty"),
        ("-a", "must not start or end with '-'"),
        ("a-", "must not start or end with '-'"),
        ("-", "must not start or end with '-'"),
        ("a--b", "must not contain '--'"),
        ("A", "lowercase ASCII"),
        ("Pdf", "lowercase ASCII"),
        ("a_b", "lowercase ASCII"),
        ("a.b", "lowercase ASCII"),
        ("a b", "lowercase ASCII"),
        ("café", "lowercase ASCII"),
        ("abc\n", "lowercase ASCII"),  # Python's `$` would accept this
        (5, "must be a string, got int"),
        (None, "must be a string, got NoneType"),
    ],
)
def test_name_problem_ascii(name: object, problem: str | None) -> None:
    result = name_problem(name)
    if problem is None:
        assert result is None
        assert validate_name(name) == name
    else:
        assert result is not None
        assert problem in result
        with pytest.raises(InvalidName):
            validate_name(name)


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("café", True),
        ("naïve-2", True),
        ("日本語", True),
        ("straße", True),
        ("pdf-processing", True),
        ("é" * 64, True),
        ("é" * 65, False),
        ("Café", False),
        ("CAFÉ", False),
        ("cafe\u0301", False),  # decomposed: not NFKC-normal
        ("\ufb01le", False),  # 'ﬁ' ligature: NFKC gives 'fi'
        ("x\u00b2", False),  # superscript two: NFKC gives '2'
        ("\u01c5", False),  # titlecase 'ǅ'
        ("ａｂ", False),  # fullwidth
        ("a b", False),
        ("a_b", False),
        ("a--é", False),
        ("-é", False),
        ("é\n", False),
    ],
)
def test_name_problem_unicode(name: str, ok: bool) -> None:
    assert (name_problem(name, allow_unicode=True) is None) is ok
    if ok and not name.isascii():
        assert name_problem(name) is not None  # the ASCII rule still refuses it


@pytest.mark.parametrize(
    ("description", "problem"),
    [
        ("x", None),
        ("x" * 1024, None),
        (" padded ", None),
        ("é" * 1024, None),
        ("x" * 1025, "1025 characters long; the limit is 1024"),
        ("", "must not be empty"),
        ("   \n\t", "must not be empty"),
        (None, "must be a string, not empty (null)"),
        (5, "must be a string, not the number 5"),
        (["x"], "must be a string, not a list"),
    ],
)
def test_description_problem(description: object, problem: str | None) -> None:
    found = [p.message for p in field_problems({"name": "x", "description": description}, "x")]
    if problem is None:
        assert found == []
    else:
        [message] = found
        assert problem in message


@pytest.mark.parametrize(
    ("frontmatter", "folder", "allow_unicode", "problem"),
    [
        ({"name": "pdf", "description": "d"}, "pdf", False, None),
        ({"name": "pdf", "description": "d", "extra": [1]}, "pdf", False, None),
        ({"name": "café", "description": "d"}, "café", True, None),
        ({"name": "café", "description": "d"}, "café", False, "lowercase ASCII"),
        ({"description": "d"}, "pdf", False, "no 'name'"),
        ({"name": "Pdf", "description": "d"}, "Pdf", False, "frontmatter name 'Pdf'"),
        ({"name": 3, "description": "d"}, "3", False, "must be a string"),
        ({"name": "pdf", "description": "d"}, "pdf-processing", False, "does not match its folder"),
        ({"name": "pdf"}, "pdf", False, "no 'description'"),
        ({"name": "pdf", "description": " "}, "pdf", False, "must not be empty"),
        ({"name": "pdf", "description": "x" * 1025}, "pdf", False, "limit is 1024"),
    ],
)
def test_frontmatter_problem(
    frontmatter: dict[str, object], folder: str, allow_unicode: bool, problem: str | None
) -> None:
    # A server publishes nothing with an `unpublishable` problem; a host (Unicode allowed) refuses `refused` ones.
    result: Problem | None
    if allow_unicode:
        result = next((p for p in field_problems(frontmatter, folder) if p.weight == "refused"), None)
    else:
        result = publish_problem(frontmatter, folder)
    if problem is None:
        assert result is None
    else:
        assert result is not None
        assert problem in result.message


# -- manifest -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "digest"),
    [
        (b"", "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (b"abc", "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    ],
)
def test_sha256_digest(data: bytes, digest: str) -> None:
    assert sha256_digest(data) == digest
    assert DIGEST_RE.match(digest)


@pytest.mark.parametrize(
    "digest",
    [
        "sha256:" + "A" * 64,
        "sha256:" + "a" * 63,
        "sha256:" + "a" * 65,
        "sha256:" + "g" * 64,
        "SHA256:" + "a" * 64,
        "sha-256:" + "a" * 64,
        "md5:" + "a" * 32,
        "a" * 64,
        "sha256:" + "a" * 64 + "\n",  # Python's `$` would accept this
        " sha256:" + "a" * 64,
    ],
)
def test_digest_re_refuses(digest: str) -> None:
    assert DIGEST_RE.match(digest) is None


@pytest.mark.parametrize(
    ("files", "total", "problem"),
    [
        (0, 0, None),
        (512, MAX_BYTES_PER_SKILL, None),
        (513, 0, "has 513 files; the limit is 512"),
        (1, MAX_BYTES_PER_SKILL - 1, None),
        (1, 16_777_216, None),
        (1, 16_777_217, "totals 16,777,217 bytes; the limit is 16,777,216 bytes"),
    ],
)
def test_limit_problem(files: int, total: int, problem: str | None) -> None:
    result = limit_problem(files, total)
    if problem is None:
        assert result is None
    else:
        assert result is not None
        assert problem in result


DIGEST_A = sha256_digest(b"a")
DIGEST_B = sha256_digest(b"b")


def _files(n: int, size: int = 1) -> list[ManifestFile]:
    return [ManifestFile(f"skill://s/f{i}.md", DIGEST_A, size) for i in range(n)]


def test_check_limits() -> None:
    assert MAX_FILES_PER_SKILL == 512
    assert MAX_BYTES_PER_SKILL == 16 * 1024 * 1024
    check_limits(_files(512))
    check_limits([ManifestFile("skill://s/SKILL.md", DIGEST_A, MAX_BYTES_PER_SKILL)])
    with pytest.raises(LimitExceeded) as info:
        check_limits(_files(513))
    assert (info.value.files, info.value.total_bytes) == (513, 513)
    with pytest.raises(LimitExceeded) as info:
        check_limits(iter([ManifestFile("skill://s/SKILL.md", DIGEST_A, MAX_BYTES_PER_SKILL + 1)]))
    assert (info.value.files, info.value.total_bytes) == (1, MAX_BYTES_PER_SKILL + 1)


MANIFEST_BASE = [ManifestFile(f"skill://s/{i}é.md", sha256_digest(bytes([i])), i * 7) for i in range(20)]
MANIFEST_FILE = st.builds(
    ManifestFile,
    st.text(min_size=1, max_size=12).map(lambda path: f"skill://s/{path}"),
    st.binary(max_size=4).map(sha256_digest),
    st.integers(0, 2**40),
)


# The seeded loop this replaces shuffled one 20-file manifest 20 times; here 200 manifests of 0-25
# files (distinct URIs, as in any listing), each in an order of hypothesis' choosing, and that base.
@settings(max_examples=200)
@given(
    st.lists(MANIFEST_FILE, max_size=25, unique_by=lambda f: f.uri).flatmap(
        lambda files: st.tuples(st.just(files), st.permutations(files))
    )
)
@example((MANIFEST_BASE, MANIFEST_BASE[::-1]))
def test_manifest_hash_is_order_independent(files_and_order: tuple[list[ManifestFile], list[ManifestFile]]) -> None:
    files, reordered = files_and_order
    assert DIGEST_RE.match(manifest_hash(files))
    assert manifest_hash(iter(reordered)) == manifest_hash(files)


def test_manifest_hash_is_sensitive() -> None:
    base = MANIFEST_BASE
    reference = manifest_hash(base)
    assert DIGEST_RE.match(reference)
    seen = {reference}
    for i in range(len(base)):
        f = base[i]
        for changed in (
            ManifestFile(f.uri + "x", f.digest, f.size),
            ManifestFile(f.uri, sha256_digest(b"other" + bytes([i])), f.size),
            ManifestFile(f.uri, f.digest, f.size + 1),
        ):
            variant = manifest_hash([*base[:i], changed, *base[i + 1 :]])
            assert variant not in seen
            seen.add(variant)
        assert manifest_hash(base[:i] + base[i + 1 :]) != reference  # a removed file
    assert manifest_hash([]) != manifest_hash(base[:1])
    # Field boundaries cannot be shifted: ("ab", digest) is not ("a", "b" + digest).
    assert manifest_hash([ManifestFile("a,b", DIGEST_A, 1)]) != manifest_hash([ManifestFile("a", "b," + DIGEST_A, 1)])


def test_diff_manifests() -> None:
    old = [
        ManifestFile("skill://s/a", DIGEST_A, 1),
        ManifestFile("skill://s/b", DIGEST_A, 1),
        ManifestFile("skill://s/c", DIGEST_A, 1),
        ManifestFile("skill://s/e", DIGEST_A, 1),
    ]
    new = [
        ManifestFile("skill://s/e", DIGEST_A, 2),  # size-only change
        ManifestFile("skill://s/d", DIGEST_A, 1),
        ManifestFile("skill://s/c", DIGEST_A, 1),
        ManifestFile("skill://s/b", DIGEST_B, 1),
        ManifestFile("skill://s/0", DIGEST_A, 1),
    ]
    diff = diff_manifests(old, new)
    assert diff.added == ("skill://s/0", "skill://s/d")
    assert diff.removed == ("skill://s/a",)
    assert diff.changed == ("skill://s/b", "skill://s/e")
    assert diff
    assert diff.describe() == (
        "added skill://s/0; added skill://s/d; removed skill://s/a; changed skill://s/b; changed skill://s/e"
    )
    same = diff_manifests(old, list(reversed(old)))
    assert not same
    assert (same.added, same.removed, same.changed) == ((), (), ())
    assert same.describe() == "no change"
    assert diff_manifests([], old).added == tuple(f.uri for f in old)
    assert diff_manifests(old, []).removed == tuple(f.uri for f in old)


def test_manifest_file_to_wire() -> None:
    assert ManifestFile("skill://s/a", DIGEST_A, 3).to_wire() == {
        "uri": "skill://s/a",
        "digest": DIGEST_A,
        "size": 3,
    }


# -- entry --------------------------------------------------------------------------------------------------

URI = "skill://a/b/SKILL.md"
_DELETE = object()  # a sentinel: drop this key


def _item(uri: str, digest: str = DIGEST_A, size: object = 10) -> dict[str, object]:
    return {"uri": uri, "digest": digest, "size": size}


def _good() -> dict[str, Any]:
    return {
        "uri": URI,
        "frontmatter": {"name": "b", "description": "Does b.", "metadata": {"k": "v"}, "version": 1.0},
        "resources": [_item(URI, DIGEST_A, 12), _item("skill://a/b/references/x.md", DIGEST_B, 0)],
    }


def _with(**changes: object) -> dict[str, Any]:
    data = _good()
    for key, value in changes.items():
        if value is _DELETE:
            del data[key]
        else:
            data[key] = value
    return data


def _fm(**changes: object) -> dict[str, Any]:
    fm: dict[str, Any] = copy.deepcopy(_good()["frontmatter"])
    for key, value in changes.items():
        if value is _DELETE:
            del fm[key]
        else:
            fm[key] = value
    return _with(frontmatter=fm)


def _res(*items: object) -> dict[str, Any]:
    return _with(resources=[_item(URI), *items])


def test_from_wire_accepts_a_good_entry() -> None:
    data = _good()
    entry = SkillEntry.from_wire(copy.deepcopy(data))
    assert entry.uri == URI
    assert entry.name == "b"
    assert entry.description == "Does b."
    assert entry.frontmatter == data["frontmatter"]
    assert entry.path == SkillPath("skill", ("a", "b"))
    assert not entry.is_dynamic
    assert entry.files == (
        ManifestFile(URI, DIGEST_A, 12),
        ManifestFile("skill://a/b/references/x.md", DIGEST_B, 0),
    )
    assert entry.total_size == 12
    assert entry.file("skill://a/b/references/x.md") == ManifestFile("skill://a/b/references/x.md", DIGEST_B, 0)
    assert entry.file("skill://a/b/missing.md") is None
    assert entry.limit_problem() is None
    assert entry.to_wire() == data
    assert SkillEntry.from_wire(entry.to_wire()) == entry


def test_from_wire_accepts_dynamic() -> None:
    entry = SkillEntry.from_wire(_with(resources="dynamic"))
    assert entry.is_dynamic
    assert entry.resources == DYNAMIC
    assert entry.files == ()
    assert entry.total_size == 0
    assert entry.limit_problem() is None
    assert entry.to_wire()["resources"] == "dynamic"
    assert SkillEntry.from_wire(entry.to_wire()) == entry


@pytest.mark.parametrize(
    ("uri", "name", "files"),
    [
        (
            "skill://acme/billing/refunds/SKILL.md",
            "refunds",
            ["examples/email.md", "nested/SKILL.md", "nested/x.md"],
        ),
        ("github://org/repo/skill/SKILL.md", "skill", ["a b.md"]),
        ("skill://solo/SKILL.md", "solo", []),
        ("skill://x/caf%C3%A9/SKILL.md", "café", ["é.md"]),
    ],
)
def test_from_wire_accepts_varied_shapes(uri: str, name: str, files: list[str]) -> None:
    path = SkillPath.from_skill_md_uri(uri)
    resources = [_item(uri)] + [_item(path.file_uri(f)) for f in files]
    entry = SkillEntry.from_wire(
        {"uri": uri, "frontmatter": {"name": name, "description": "d"}, "resources": resources}
    )
    assert entry.name == name == entry.path.name
    assert [f.uri for f in entry.files] == [r["uri"] for r in resources]
    assert SkillEntry.from_wire(json.loads(json.dumps(entry.to_wire()))) == entry


def test_from_wire_unicode_names_are_a_host_choice() -> None:
    data = {"uri": "skill://x/caf%C3%A9/SKILL.md", "frontmatter": {"name": "café", "description": "d"}}
    data["resources"] = "dynamic"
    assert SkillEntry.from_wire(data).name == "café"
    with pytest.raises(InvalidEntry, match=r"frontmatter name .café. may contain only lowercase ASCII"):
        SkillEntry.from_wire(data, allow_unicode_names=False)


def test_from_wire_does_not_enforce_limits_but_reports_them() -> None:
    items = [_item(URI, size=1)] + [_item(f"skill://a/b/f{i}.md", size=1) for i in range(512)]
    entry = SkillEntry.from_wire(_with(resources=items))
    problem = entry.limit_problem()
    assert problem is not None
    assert "513 files" in problem
    big = SkillEntry.from_wire(_with(resources=[_item(URI, size=MAX_BYTES_PER_SKILL + 1)]))
    big_problem = big.limit_problem()
    assert big_problem is not None
    assert "16,777,217" in big_problem


BAD_ENTRIES = [
    pytest.param([], "must be an object, got list", id="list"),
    pytest.param("skill://a/b/SKILL.md", "must be an object, got str", id="string"),
    pytest.param(None, "must be an object, got NoneType", id="none"),
    pytest.param(_with(uri=_DELETE), "no 'uri' string", id="uri-missing"),
    pytest.param(_with(uri=""), "no 'uri' string", id="uri-empty"),
    pytest.param(_with(uri=5), "no 'uri' string", id="uri-int"),
    pytest.param(_with(uri="skill://a/b/README.md"), "named by its SKILL.md URI", id="uri-not-skill-md"),
    pytest.param(_with(uri="skill://SKILL.md"), "named by its SKILL.md URI", id="uri-no-skill-path"),
    pytest.param(_with(uri="skill://a/../b/SKILL.md"), "dot segment", id="uri-dot-segment"),
    pytest.param(_with(uri="skill://a/b/SKILL.md?x"), "query", id="uri-query"),
    pytest.param(_with(frontmatter=_DELETE), "'frontmatter' must be an object", id="fm-missing"),
    pytest.param(_with(frontmatter=["name", "b"]), "'frontmatter' must be an object", id="fm-list"),
    pytest.param(_with(frontmatter="name: b"), "'frontmatter' must be an object", id="fm-string"),
    pytest.param(_fm(name="other"), "frontmatter name 'other' does not match its folder 'b'", id="name-mismatch"),
    pytest.param(_fm(name=_DELETE), "frontmatter has no 'name'", id="name-missing"),
    pytest.param(_fm(name="B"), "frontmatter name 'B' may contain only lowercase", id="name-upper"),
    pytest.param(_fm(name="b--"), "frontmatter name 'b--' must not", id="name-dashes"),
    pytest.param(_fm(description=_DELETE), "frontmatter has no 'description'", id="desc-missing"),
    pytest.param(_fm(description=""), "description must not be empty", id="desc-empty"),
    pytest.param(_fm(description=" \n"), "description must not be empty", id="desc-blank"),
    pytest.param(_fm(description="x" * 1025), "1025 characters long; the limit is 1024", id="desc-too-long"),
    pytest.param(_fm(compatibility="x" * 501), "501 characters long; the limit is 500", id="compat-too-long"),
    pytest.param(_fm(description=3), "description must be a string, not the number 3", id="desc-int"),
    pytest.param(_fm(metadata={"k": ["a"]}), "metadata.k must be a string", id="meta-list"),
    pytest.param(_fm(metadata={"k": 1}), "strings), not the number 1", id="meta-number"),
    pytest.param(_fm(metadata="k: v"), "metadata must be a mapping of strings, not a string", id="meta-string"),
    pytest.param(_fm(metadata=None), "metadata must be a mapping of strings, not empty (null)", id="meta-null"),
    pytest.param(_with(resources=_DELETE), "'resources' is missing", id="res-missing"),
    pytest.param(_with(resources=None), 'must be an array or "dynamic", got None', id="res-null"),
    pytest.param(_with(resources="static"), "must be an array or \"dynamic\", got 'static'", id="res-string"),
    pytest.param(_with(resources="Dynamic"), 'must be an array or "dynamic"', id="res-dynamic-case"),
    pytest.param(_with(resources={"uri": URI}), 'must be an array or "dynamic"', id="res-object"),
    pytest.param(_with(resources=5), 'must be an array or "dynamic"', id="res-int"),
    pytest.param(_with(resources=[URI]), "resources[0] must be an object", id="item-string"),
    pytest.param(_res(None), "resources[1] must be an object", id="item-null"),
    pytest.param(_res(_item("skill://a/x/y.md")), "is not a file inside skill://a/b", id="item-outside"),
    pytest.param(_res(_item("skill://a/bc/x.md")), "is not a file inside skill://a/b", id="item-sibling-prefix"),
    pytest.param(_res(_item("skill://a/b")), "is not a file inside", id="item-root"),
    pytest.param(_res(_item("github://a/b/x.md")), "is not a file inside", id="item-other-scheme"),
    pytest.param(_res(_item("skill://a/b/../c/x.md")), "is not a file inside", id="item-dot-segment"),
    pytest.param(_res(_item("skill://a/b/%2e%2e/c")), "is not a file inside", id="item-encoded-dots"),
    pytest.param(_res(_item("references/x.md")), "is not a file inside", id="item-relative"),
    pytest.param(_res({"digest": DIGEST_A, "size": 1}), "uri None is not a file", id="item-uri-missing"),
    pytest.param(_res(_item(URI)), "resources[1]: skill://a/b/SKILL.md is listed twice", id="duplicate"),
    pytest.param(_res(_item("skill://a/b/x.md"), _item("skill://a/b/%78.md")), "resources[2]", id="duplicate-encoded"),
    pytest.param(_res(_item("skill://a/b/x.md"), _item("SKILL://a/b/x.md")), "listed twice", id="duplicate-scheme"),
    pytest.param(_with(resources=[]), "does not list the skill's own SKILL.md", id="skill-md-missing-empty"),
    pytest.param(
        _with(resources=[_item("skill://a/b/x.md")]),
        "does not list the skill's own SKILL.md",
        id="skill-md-missing",
    ),
    pytest.param(
        _with(resources=[_item("skill://a/b/SKILL%2Emd")]),
        "does not list the skill's own",
        id="skill-md-not-verbatim",
    ),
    pytest.param(_res(_item("skill://a/b/x", "sha256:" + "A" * 64)), "digest 'sha256:AAA", id="digest-upper"),
    pytest.param(_res(_item("skill://a/b/x", "sha256:" + "a" * 63)), "digest 'sha256:", id="digest-63"),
    pytest.param(_res(_item("skill://a/b/x", "md5:" + "a" * 32)), "digest 'md5:", id="digest-md5"),
    pytest.param(_res(_item("skill://a/b/x", "a" * 64)), "64 lowercase hex", id="digest-bare-hex"),
    pytest.param(_res(_item("skill://a/b/x", DIGEST_A + "\n")), "64 lowercase hex", id="digest-newline"),
    pytest.param(_res({"uri": "skill://a/b/x", "size": 1}), "digest None is not", id="digest-missing"),
    pytest.param(_res(_item("skill://a/b/x", size=-1)), "size -1 is not a non-negative integer", id="size-negative"),
    pytest.param(_res(_item("skill://a/b/x", size=1.0)), "size 1.0 is not", id="size-float"),
    pytest.param(_res(_item("skill://a/b/x", size=True)), "size True is not", id="size-bool"),
    pytest.param(_res(_item("skill://a/b/x", size=False)), "size False is not", id="size-false"),
    pytest.param(_res(_item("skill://a/b/x", size="1")), "size '1' is not", id="size-string"),
    pytest.param(_res({"uri": "skill://a/b/x", "digest": DIGEST_A}), "size None is not", id="size-missing"),
]


@pytest.mark.parametrize(("data", "message"), BAD_ENTRIES)
def test_from_wire_refuses(data: object, message: str) -> None:
    with pytest.raises(InvalidEntry) as info:
        SkillEntry.from_wire(data)
    assert message in str(info.value)


def test_from_wire_refuses_a_lone_surrogate_cleanly() -> None:
    # A JSON string may carry "\ud800"; it must be an InvalidEntry, not a UnicodeEncodeError.
    with pytest.raises(InvalidEntry, match="not UTF-8"):
        SkillEntry.from_wire(_with(uri="skill://a/\ud800/SKILL.md"))
    with pytest.raises(InvalidEntry, match="is not a file inside"):
        SkillEntry.from_wire(_res(_item("skill://a/b/\ud800")))


ROUND_TRIP_ALPHABET = "abc xyz-_.é日🎉:@%"


@st.composite
def wire_entries(draw: st.DrawFn) -> SkillEntry:
    """An entry as the seeded loop this replaces built them: a prefix of 0-3 odd segments, a valid name,
    SKILL.md plus 0-6 files (some in a folder) in any order, and frontmatter with a float in it."""
    prefix = tuple(draw(st.lists(st.sampled_from(["acme", "a b", "org", "x:y", "é"]), max_size=3)))
    name = draw(st.sampled_from(["b", "pdf-processing", "café", "z9"]))
    path = SkillPath("skill", (*prefix, name))
    files: list[ManifestFile] = [ManifestFile(path.skill_md_uri, sha256_digest(b"skill"), 5)]
    for i in range(draw(st.integers(0, 6))):
        parts = [draw(st.text(alphabet=ROUND_TRIP_ALPHABET, min_size=1, max_size=5)) + str(i)]
        if draw(st.booleans()):
            parts.insert(0, "dir")
        size = draw(st.integers(0, 10**6))
        files.append(ManifestFile(path.file_uri("/".join(parts)), sha256_digest(bytes([i])), size))
    files = draw(st.permutations(files))
    fm: dict[str, Any] = {
        "name": name,
        "description": "d" * draw(st.integers(1, 30)),
        "n": draw(st.floats(0, 1, exclude_max=True)),
    }
    return SkillEntry(path.skill_md_uri, fm, tuple(files))


@settings(max_examples=200)
@given(entry=wire_entries())
def test_to_wire_from_wire_round_trip_property(entry: SkillEntry) -> None:
    wire = json.loads(json.dumps(entry.to_wire()))
    again = SkillEntry.from_wire(wire)
    assert again == entry
    assert again.to_wire() == wire
    assert manifest_hash(again.files) == manifest_hash(reversed(entry.files))
