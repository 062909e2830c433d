"""Index format 2 (`catalog.indexed`): a snapshot answered from the index's lines, against format 1 built whole.

The same catalog (the example skills, a nested skill, an unlisted one, percent-encoded names, a second
scheme, a signed entry) is published to a real `file://` store by `publish()` (format 2) and written in
format 1 by this test's own encoder (the format as documented, not the product's code), then every
query a request can make is asked of both snapshots and must get the same answer, cursors included.
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import time
import tracemalloc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import obstore
import pytest
from obstore.store import LocalStore

from skillwire.catalog.audiences import audience_rules, visible_to
from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.catalog.index_receive import receive
from skillwire.catalog.index_records import _BUILT_FILES_KEPT
from skillwire.catalog.indexed import IndexedSnapshot
from skillwire.catalog.published import (
    PublishedCatalog,
    build_index,
    canonical_json,
    encode_index,
    load_index,
    publish,
    snapshot_from_index,
)
from skillwire.catalog.snapshot import CatalogFile, CatalogSkill, CatalogSnapshot, MemoryContent
from skillwire.catalog.store import POINTER_KEY, BlobReader, open_store, parse_location
from skillwire.core.cursor import encode_cursor
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import InvalidIndex
from skillwire.core.manifest import sha256_digest
from skillwire.server.visibility import view_of
from support.index_builds import count_index_builds
from support.servers import EXAMPLES

SECRET = b"shared-by-every-replica"


def _skill(uri: str, files: dict[str, bytes], *, listed: bool = True, mime: str = "text/markdown") -> CatalogSkill:
    root = uri.rsplit("/", 1)[0]
    manifest = tuple(
        CatalogFile(f"{root}/{path}", sha256_digest(data), len(data), mime, True, MemoryContent(data))
        for path, data in sorted(files.items())
    )
    name = root.rsplit("/", 1)[-1]
    return CatalogSkill(SkillEntry(uri, {"name": name, "description": f"{name} for a test"}, manifest), uri, listed)


def source_snapshot() -> CatalogSnapshot:
    folder = SkillCatalog([EXAMPLES], digest_cache=DigestCache()).snapshot
    extras = [
        _skill("skill://other/x%20y/SKILL.md", {"SKILL.md": b"---\nname: x y\n---\n", "docs/a%20b.md": b"spaced"}),
        _skill("skill://acme/hidden/SKILL.md", {"SKILL.md": b"---\nname: hidden\n---\n"}, listed=False),
        _skill("docs://team/guide/SKILL.md", {"SKILL.md": b"# guide", "data/x.bin": b"\x00\x01"}, mime="text/plain"),
        _skill("skill://other/shared/SKILL.md", {"SKILL.md": b"---\nname: shared\n---\n", "same.md": b"spaced"}),
    ]
    skills = [*folder.skill_by_uri.values(), *extras]
    files = [*folder.files.values(), *(f for s in extras for f in s.entry.files if isinstance(f, CatalogFile))]
    return CatalogSnapshot(skills, files, folder.skipped, ignored=folder.ignored)


def encode_format_1(index: dict[str, Any]) -> bytes:
    """Format 1 as `skillwire publish` wrote it before format 2: a header, then each skill canonical."""
    header = {key: value for key, value in index.items() if key != "skills"}
    header.update(format="skillwire-index/1", skills=len(index["skills"]))
    return b"\n".join([canonical_json(header), *(canonical_json(skill) for skill in index["skills"])])


def signed(index: dict[str, Any]) -> dict[str, Any]:
    """The index with a `_meta` on one record, as a publisher signature puts it there."""
    skills = [dict(s) for s in index["skills"]]
    skills[0]["_meta"] = {"io.skillwire/signature": {"signer": "test", "value": "c2ln"}}
    return {**index, "skills": skills}


def published_pair(tmp_path: Path) -> tuple[CatalogSnapshot, IndexedSnapshot, BlobReader]:
    """The same catalog as a format-1 snapshot and a format-2 one, over blobs in a real file:// store."""
    source = source_snapshot()
    location = parse_location(f"file://{tmp_path / 'store'}")
    anyio.run(lambda: publish(source, location))  # every blob, for the reads below
    blobs = BlobReader(open_store(location), location)
    index = signed(build_index(source, audience_rules([("skill://acme/billing", ["billing"])])))
    old_body, new_body = encode_format_1(index), encode_index(index)
    old = snapshot_from_index(old_body, hashlib.sha256(old_body).hexdigest(), blobs, cursor_secret=SECRET)
    new = snapshot_from_index(new_body, hashlib.sha256(new_body).hexdigest(), blobs, cursor_secret=SECRET)
    assert not isinstance(old, IndexedSnapshot)
    assert isinstance(new, IndexedSnapshot)
    return old, new, blobs


def file_facts(snapshot: CatalogSnapshot) -> dict[str, tuple[str, int, str, bool]]:
    return {uri: (f.digest, f.size, f.mime_type, f.is_text) for uri, f in snapshot.files.items()}


def pages(snapshot: CatalogSnapshot, limit: int) -> list[tuple[list[str], str | None]]:
    out: list[tuple[list[str], str | None]] = []
    cursor: str | None = None
    while True:
        page, cursor = snapshot.list_page(cursor, limit)
        out.append(([s.uri for s in page], cursor))
        if cursor is None:
            return out


def directory_pages(snapshot: CatalogSnapshot, uri: str, limit: int) -> list[tuple[list[dict[str, Any]], str | None]]:
    out: list[tuple[list[dict[str, Any]], str | None]] = []
    cursor: str | None = None
    while True:
        page = snapshot.directory_page(uri, cursor, limit)
        assert page is not None, uri
        out.append((page.items, page.next_cursor))
        cursor = page.next_cursor
        if cursor is None:
            return out


def assert_same_answers(old: CatalogSnapshot, new: CatalogSnapshot) -> None:
    assert list(new.skill_by_uri) == sorted(old.skill_by_uri)
    assert len(new) == len(old)
    for uri, skill in old.skill_by_uri.items():
        built = new.skill_by_uri[uri]
        assert built.wire == skill.wire
        assert (built.source, built.listed, built.entry.meta) == (skill.source, skill.listed, skill.entry.meta)
        assert new.frontmatter_of(uri) == old.frontmatter_of(uri)
        assert new.skill_path(uri) == old.skill_path(uri)
    assert file_facts(new) == file_facts(old)
    assert len(new.files) == len(old.files)
    assert [s.uri for s in new.listed] == [s.uri for s in old.listed]
    for limit in (1, 2, 3, 1000):
        assert pages(new, limit) == pages(old, limit)  # the same cursors, byte for byte
    key: str | None = None
    while True:
        items, after = new.skill_md_page(key, 2)
        assert (items, after) == old.skill_md_page(key, 2)
        if after is None:
            break
        key = after
    assert new.schemes == old.schemes
    directories = old.directory_uris()
    assert new.directory_uris() == directories
    for uri in directories:
        assert new.is_directory(uri)
        for limit in (1, 1000):
            assert directory_pages(new, uri, limit) == directory_pages(old, uri, limit)
    for uri in old.files:
        assert not new.is_directory(uri)
        assert new.directory_page(uri, None, 10) is None
    for missing in ("skill://nowhere/x/SKILL.md", "skill://acme", "skill://acme/billing/refunds/nope.md", "x", ""):
        assert (missing in new.files, missing in new.skill_by_uri) == (
            missing in old.files,
            missing in old.skill_by_uri,
        )
        assert new.is_directory(missing) == old.is_directory(missing)


def test_format_2_answers_every_query_as_format_1(tmp_path: Path) -> None:
    old, new, _ = published_pair(tmp_path)
    assert old.skipped == new.skipped
    assert old.ignored == new.ignored
    assert old.audience_rules == new.audience_rules  # type: ignore[attr-defined]
    assert_same_answers(old, new)
    # A nested skill, an unlisted one and an encoded name are really in the catalog under test.
    assert "skill://code-review/security-audit/SKILL.md" in new.skill_by_uri
    assert not new.skill_by_uri["skill://acme/hidden/SKILL.md"].listed
    assert new.is_directory("skill://other/x%20y/docs")


def test_format_2_reads_verified_bytes_by_digest(tmp_path: Path) -> None:
    old, new, blobs = published_pair(tmp_path)
    for uri, file in old.files.items():
        assert new.files[uri].read() == file.read()
    assert blobs.misses == len({f.digest for f in old.files.values()})  # both read through one cache


def test_views_match_format_1_views(tmp_path: Path) -> None:
    old, new, _ = published_pair(tmp_path)
    assert isinstance(new, IndexedSnapshot)
    rules = new.audience_rules
    for audiences in (frozenset(), frozenset({"billing"})):

        def by_uri(uri: str, audiences: frozenset[str] = audiences) -> bool:
            return visible_to(rules, uri, audiences)

        def hook(skill: CatalogSkill) -> bool:
            return skill.entry.name != "git-workflow"

        expected = view_of(old, lambda s, by_uri=by_uri: by_uri(s.uri) and hook(s))  # type: ignore[misc]
        assert_same_answers(expected, new.view(by_uri, hook))
        shown = new.view(by_uri, None)
        assert ("skill://acme/billing/refunds/SKILL.md" in shown.skill_by_uri) == ("billing" in audiences)
        assert "skill://git-workflow/SKILL.md" in shown.skill_by_uri


def test_cursor_of_a_format_1_replica_continues_on_format_2_of_a_changed_catalog(tmp_path: Path) -> None:
    old, _, blobs = published_pair(tmp_path)
    first, cursor = old.list_page(None, 3)
    assert cursor is not None
    # The catalog is republished (format 2) with a skill before and one after the cursor's key.
    source = source_snapshot()
    extra = [
        _skill("skill://aaa/first/SKILL.md", {"SKILL.md": b"a"}),
        _skill("skill://zzz/last/SKILL.md", {"SKILL.md": b"z"}),
    ]
    changed = CatalogSnapshot(
        [*source.skill_by_uri.values(), *extra],
        [*source.files.values(), *(f for s in extra for f in s.entry.files if isinstance(f, CatalogFile))],
    )
    body = encode_index(build_index(changed))
    new = snapshot_from_index(body, hashlib.sha256(body).hexdigest(), blobs, cursor_secret=SECRET)
    rest: list[str] = []
    while cursor is not None:
        page, cursor = new.list_page(cursor, 3)
        rest += [s.uri for s in page]
    seen = [s.uri for s in first] + rest
    assert len(seen) == len(set(seen))  # nothing repeated
    assert set(s.uri for s in old.listed) <= set(seen)  # nothing that existed throughout was skipped
    assert seen[-1] == "skill://zzz/last/SKILL.md"


def test_an_old_format_index_is_served_then_a_republish_moves_it_to_format_2(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = source_snapshot()
    location = parse_location(f"file://{tmp_path / 'store'}")
    anyio.run(lambda: publish(source, location))
    store = LocalStore(prefix=tmp_path / "store")
    pointer = json.loads(bytes(obstore.get(store, POINTER_KEY).bytes()))
    old_body = encode_format_1(build_index(source))
    old_id = hashlib.sha256(old_body).hexdigest()
    obstore.put(store, f"indexes/{old_id}.jsonl", old_body)
    # The pointer an older skillwire wrote: no sequence (its indexes are unnumbered).
    unnumbered = {key: value for key, value in pointer.items() if key != "sequence"}
    obstore.put(
        store, POINTER_KEY, json.dumps({**unnumbered, "id": old_id, "index": f"indexes/{old_id}.jsonl"}).encode()
    )
    catalog = PublishedCatalog(str(location), poll_seconds=0)
    changes: list[tuple[CatalogSnapshot, CatalogSnapshot]] = []
    catalog.on_change(lambda before, after: changes.append((before, after)))
    with caplog.at_level(logging.WARNING, "skillwire.published"):
        served = catalog.snapshot
    assert not isinstance(served, IndexedSnapshot)
    assert "format skillwire-index/1: built whole at load" in caplog.text
    assert sorted(served.skill_by_uri) == sorted(source.skill_by_uri)
    obstore.put(store, POINTER_KEY, json.dumps(pointer).encode())  # what the next `publish` writes
    swapped = catalog.refresh()
    assert isinstance(swapped, IndexedSnapshot)
    assert_same_answers(served, swapped)
    assert len(changes) == 1  # a change of format is announced: clients re-list once
    assert catalog.refresh() is swapped  # the same index again: nothing reloaded


def test_a_republish_with_the_same_content_announces_nothing(tmp_path: Path) -> None:
    source = source_snapshot()
    location = parse_location(f"file://{tmp_path / 'store'}")
    anyio.run(lambda: publish(source, location))
    catalog = PublishedCatalog(str(location), poll_seconds=0)
    first = catalog.snapshot
    changes: list[object] = []
    catalog.on_change(lambda before, after: changes.append(after))
    store = LocalStore(prefix=tmp_path / "store")
    pointer = json.loads(bytes(obstore.get(store, POINTER_KEY).bytes()))
    # Another index id with the same skill lines (only the skip report differs): swapped, not announced.
    body = bytes(obstore.get(store, pointer["index"]).bytes())
    header, rest = body.split(b"\n", 1)
    other = canonical_json({**json.loads(header), "skipped": [{"location": "x", "reason": "y"}]}) + b"\n" + rest
    other_id = hashlib.sha256(other).hexdigest()
    obstore.put(store, f"indexes/{other_id}.jsonl", other)
    obstore.put(
        store, POINTER_KEY, json.dumps({**pointer, "id": other_id, "index": f"indexes/{other_id}.jsonl"}).encode()
    )
    assert catalog.refresh() is not first
    assert changes == []
    anyio.run(lambda: publish(CatalogSnapshot(list(source.skill_by_uri.values())[1:], source.files.values()), location))
    catalog.refresh()
    assert len(changes) == 1


def _index(lines: list[bytes], header: dict[str, Any] | None = None) -> bytes:
    head = {
        "format": "skillwire-index/2",
        "skills": len(lines),
        "files": 1,
        "digests": "ab" * 32,
        "mimeTypes": ["text/markdown"],
    }
    return b"\n".join([canonical_json({**head, **(header or {})}), *lines])


def _load(body: bytes) -> CatalogSnapshot:
    return snapshot_from_index(body, hashlib.sha256(body).hexdigest(), BlobReader(None, parse_location("s3://b")))  # type: ignore[arg-type]


GOOD = b'{"uri":"skill://a/b/SKILL.md","files":[["SKILL.md",0,3,0,true]],"frontmatter":{"name":"b"},"source":"s"}'


@pytest.mark.parametrize(
    ("lines", "header", "message"),
    [
        ([GOOD, GOOD], None, "lines must be sorted by URI, each URI once"),
        ([GOOD.replace(b"a/b", b"a/c"), GOOD], None, "lines must be sorted by URI"),
        ([b'{"files":[],"uri":"skill://a/b/SKILL.md"}'], None, 'a line must start with {"uri":"'),
        ([b'{"uri":"skill://a/b/README.md"}'], None, "is not a SKILL.md URI"),
        ([b'{"uri":"skill://a/b/SKILL.md'], None, "the uri string does not end"),
        ([GOOD], {"skills": 2}, "the header announces 2 skill lines, the index holds 1"),
        ([GOOD], {"digests": "zz" * 32}, "digests: must be a string of 64 hex digits per digest"),
        ([GOOD], {"digests": "ab" * 31}, "digests: must be a string of 64 hex digits per digest"),
        ([GOOD], {"mimeTypes": "text/markdown"}, "mimeTypes: must be an array of strings"),
        ([GOOD], {"files": -1}, "files: the header must give the number of files"),
        ([GOOD], {"format": "skillwire-index/9"}, "is not a skillwire-index/2 (or skillwire-index/1) document"),
    ],
)
def test_an_index_that_is_wrong_at_load_is_refused_in_one_line(
    lines: list[bytes], header: dict[str, Any] | None, message: str
) -> None:
    with pytest.raises(InvalidIndex, match=message.replace("(", r"\(").replace(")", r"\)").replace("{", r"\{")) as info:
        _load(_index(lines, header))
    assert "\n" not in str(info.value)


FINE = b'{"uri":"skill://z/ok/SKILL.md","files":[["SKILL.md",0,3,0,true]],"frontmatter":{"name":"ok"},"source":"s"}'


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (GOOD.replace(b"0,3,0,true", b"1,3,0,true"), r"files\[0\] .*: digest 1 is not an index of the digest table"),
        (GOOD.replace(b"0,3,0,true", b"0,3,5,true"), r"mimeType must index mimeTypes"),
        (GOOD.replace(b"0,3,0,true", b"0,-3,0,true"), r"size -3 is not a non-negative integer"),
        (GOOD.replace(b'"SKILL.md",0', b'"../x",0'), r"is not a canonical relative path inside the skill"),
        (
            GOOD.replace(
                b'[["SKILL.md",0,3,0,true]]', b'[["SKILL.md",0,3,0,true],["../../s0/references/r.md",0,3,0,true]]'
            ),
            r"path '../../s0/references/r.md' is not a canonical relative path",
        ),
        (GOOD.replace(b'"SKILL.md",0', b'"SKILL%2Emd",0'), r"is not a canonical relative path"),
        (GOOD.replace(b'[["SKILL.md",0,3,0,true]]', b'[["SKILL.md",0,3,0,true],["a//b",0,3,0,true]]'), "canonical"),
        (
            GOOD.replace(b'[["SKILL.md",0,3,0,true]]', b'[["SKILL.md",0,3,0,true],["SKILL.md",0,3,0,true]]'),
            "listed twice",
        ),
        (GOOD.replace(b'"source":"s"}', b'"source":"s","uri":"skill://a/c/SKILL.md"}'), "the line's uri is not"),
        (GOOD.replace(b'"source":"s"}', b'"source":"s","listed":false}'), '"listed" must follow the uri'),
        (GOOD.replace(b'"frontmatter":{"name":"b"}', b'"frontmatter":{}'), "frontmatter must be an object with a name"),
        (GOOD[:-1], "line is not JSON"),
    ],
)
def test_a_bad_record_refuses_the_index_at_load_naming_its_line(line: bytes, message: str) -> None:
    # Checked before the index is served (issue 19, defect 6): after a swap, a bad line failed every
    # skills/list page holding it (-32603) and the last good snapshot was gone.
    with pytest.raises(InvalidIndex, match=message) as info:
        _load(_index([line, FINE]))
    assert str(info.value).startswith("index: skills[0]")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "spelling",
    [b"skill://a/%62/SKILL.md", b"SKILL://a/b/SKILL.md", b"skill://a/./b/SKILL.md", b"skill://a/%2Fb/SKILL.md"],
)
def test_a_second_spelling_of_a_skill_refuses_the_index(spelling: bytes) -> None:
    # Defect 7: two lines for one skill, one under another spelling, were both served and listed.
    other = GOOD.replace(b"skill://a/b/SKILL.md", spelling)
    lines = sorted([other, GOOD])
    with pytest.raises(InvalidIndex, match=r"the uri is not canonical|lines must be sorted"):
        _load(_index(lines))


def test_a_format_1_index_with_a_skill_twice_is_refused() -> None:
    one = canonical_json(
        {
            "files": [["SKILL.md", "sha256:" + "ab" * 32, 3, "text/markdown", True]],
            "frontmatter": {"name": "b"},
            "source": "s",
            "uri": "skill://a/b/SKILL.md",
        }
    )
    body = canonical_json({"format": "skillwire-index/1", "skills": 2}) + b"\n" + one + b"\n" + one
    with pytest.raises(
        InvalidIndex, match=r"skills\[1\] \(skill://a/b/SKILL.md\): lines must be sorted by URI, each URI once"
    ):
        _load(body)


def test_an_index_larger_than_the_replica_accepts_is_refused_before_it_is_read() -> None:
    body = _index([GOOD])
    blobs = BlobReader(None, parse_location("s3://b"))  # type: ignore[arg-type]

    def never() -> Iterator[bytes]:
        raise AssertionError("the stream was read")
        yield b""

    with pytest.raises(InvalidIndex, match="is 1099511627776 bytes, over the 1,073,741,824 this replica accepts"):
        load_index(never(), 1 << 40, hashlib.sha256(body).hexdigest(), blobs)
    assert load_index([body], len(body), hashlib.sha256(body).hexdigest(), blobs, max_bytes=len(body)) is not None


def test_an_escaped_uri_and_an_unlisted_flag_are_read_at_load() -> None:
    escaped = b'{"uri":"skill:\\/\\/a\\/b\\/SKILL.md","listed":false,' + GOOD[len(b'{"uri":"skill://a/b/SKILL.md",') :]
    snapshot = _load(_index([escaped]))
    assert list(snapshot.skill_by_uri) == ["skill://a/b/SKILL.md"]
    assert list(snapshot.listed) == []
    assert snapshot.skill_by_uri["skill://a/b/SKILL.md"].listed is False


def test_a_stream_that_is_short_or_long_is_refused() -> None:
    body = _index([GOOD])
    with pytest.raises(InvalidIndex, match="the index ended after"):
        receive([body[:10], body[10:]], len(body) + 5)
    with pytest.raises(InvalidIndex, match="longer than the"):
        receive([body[:10], body[10:]], len(body) - 5)
    received = receive([body[:3], memoryview(body[3:])], len(body))
    assert received.sha256 == hashlib.sha256(body).hexdigest()
    assert received.header + b"\n" + bytes(received.rest) == body


def test_a_huge_request_uri_costs_one_pass() -> None:
    snapshot = _load(_index([GOOD]))
    hostile = "skill://a/" + "b/" * 500_000 + "SKILL.md"  # a million slashes: quadratic would never end
    began = time.perf_counter()
    assert hostile not in snapshot.files
    assert not snapshot.is_directory(hostile)
    assert hostile not in snapshot.skill_by_uri
    assert time.perf_counter() - began < 2.0


def test_memory_is_the_index_not_an_object_per_file() -> None:
    files = {f"r/{i}.md": b"%d" % i for i in range(9)}
    skills = [
        _skill(f"skill://m/g{n // 100:02d}/s{n:05d}/SKILL.md", {"SKILL.md": b"x%d" % n, **files}) for n in range(5000)
    ]
    source = CatalogSnapshot(skills, [f for s in skills for f in s.entry.files if isinstance(f, CatalogFile)])
    index = build_index(source)
    blobs = BlobReader(None, parse_location("s3://b"))  # type: ignore[arg-type]
    sizes = {}
    kept: dict[str, CatalogSnapshot] = {}
    for name, body in (("format 1", encode_format_1(index)), ("format 2", encode_index(index))):
        tracemalloc.start()
        kept[name] = snapshot_from_index(body, hashlib.sha256(body).hexdigest(), blobs)
        sizes[name] = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        assert len(kept[name].files) == 50_000
    # Format 2 keeps its 50,000 file records as index bytes: a fraction of format 1's objects.
    assert sizes["format 2"] * 4 < sizes["format 1"], sizes
    # Walking everything builds every skill, but the LRU keeps at most _BUILT_FILES_KEPT file records.
    indexed = kept["format 2"]
    assert isinstance(indexed, IndexedSnapshot)
    assert pages(indexed, 700) == pages(kept["format 1"], 700)
    assert all(uri in indexed.files for uri in kept["format 1"].files)
    assert 0 < indexed.records._built_files <= _BUILT_FILES_KEPT < 50_000
    assert len(indexed.records._built) < 5000


def test_a_page_builds_only_its_own_records_at_any_catalog_size(monkeypatch: pytest.MonkeyPatch) -> None:
    built = count_index_builds(monkeypatch)
    blobs = BlobReader(None, parse_location("s3://b"))  # type: ignore[arg-type]
    for size in (300, 30_000):
        skills = [_skill(f"skill://f/g{n // 1000:02d}/s{n:05d}/SKILL.md", {"SKILL.md": b"%d" % n}) for n in range(size)]
        source = CatalogSnapshot(skills, [f for s in skills for f in s.entry.files if isinstance(f, CatalogFile)])
        body = encode_index(build_index(source))
        snapshot = snapshot_from_index(body, hashlib.sha256(body).hexdigest(), blobs)
        assert not built  # loading builds no record
        middle = encode_cursor("skills/list", skills[size // 2].uri, secret=snapshot.cursor_secret)
        page, _ = snapshot.list_page(middle, 50)
        assert [s.uri for s in page] == [s.uri for s in skills[size // 2 + 1 : size // 2 + 51]]
        assert len(built) == 50  # a page of 50 builds 50 records, whatever the catalog's size
        built.clear()
        uri = skills[size // 3].uri
        assert snapshot.skill_by_uri[uri].uri == uri
        assert f"{uri[: -len('SKILL.md')]}SKILL.md" in snapshot.files
        assert snapshot.directory_page("skill://f", None, 10) is not None
        assert len(built) == 1  # one skills/get, a file lookup and a prefix directory: one record
        built.clear()


def test_a_swapped_out_indexed_snapshot_is_freed_although_frozen_at_load(tmp_path: Path) -> None:
    source = source_snapshot()
    location = parse_location(f"file://{tmp_path / 'store'}")
    anyio.run(lambda: publish(source, location))
    catalog = PublishedCatalog(str(location), poll_seconds=0)
    first = catalog.snapshot
    assert isinstance(first, IndexedSnapshot)
    assert gc.get_freeze_count() > 0  # frozen by the load: only reference counting can free it
    gone, records = weakref.ref(first), weakref.ref(first.records)
    assert first.skill_by_uri["skill://git-workflow/SKILL.md"].uri  # a built record and a file lookup too
    assert "skill://git-workflow/SKILL.md" in first.files
    first.is_directory("skill://acme")
    del first
    fewer = [s for s in source.skill_by_uri.values() if s.uri != "skill://git-workflow/SKILL.md"]
    anyio.run(lambda: publish(CatalogSnapshot(fewer, source.files.values()), location))
    assert catalog.refresh() is not None
    gc.collect()
    assert gone() is None
    assert records() is None


def test_a_watched_republish_awaits_every_async_listener_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # The poll loop announces through SkillCatalog's own notifier: a failing listener is logged, the
    # next one still runs, and the poll goes on.
    source = source_snapshot()
    location = parse_location(f"file://{tmp_path / 'store'}")
    anyio.run(lambda: publish(source, location))
    catalog = PublishedCatalog(str(location), poll_seconds=0.05)
    assert catalog.snapshot is not None
    heard: list[str] = []

    async def failing() -> None:
        heard.append("failing")
        raise RuntimeError("listener broke")

    async def listening() -> None:
        heard.append("listening")

    catalog.on_change_async(failing)
    catalog.on_change_async(listening)

    async def main() -> None:
        stop = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: catalog.watch(stop_event=stop))
            smaller = CatalogSnapshot(list(source.skill_by_uri.values())[1:], source.files.values())
            await publish(smaller, location)
            with anyio.fail_after(30):
                while "listening" not in heard:
                    await anyio.sleep(0.02)
            await anyio.sleep(0.3)  # several more polls of the same pointer: nothing announced again
            stop.set()

    with caplog.at_level(logging.ERROR, "skillwire"):
        anyio.run(main)
    assert heard == ["failing", "listening"]
    assert "catalog change notification failed" in caplog.text


@pytest.mark.parametrize(
    "spelling",
    ["skill://a/%62/SKILL.md", "SKILL://a/b/SKILL.md", "skill://a/./b/SKILL.md", "skill://a/b/SKILL.md"],
)
def test_a_format_1_index_naming_a_skill_twice_in_any_spelling_is_refused(spelling: str) -> None:
    # Issue 35, defect 13: format 1 compared only the URI text, so a second spelling of a skill was a
    # second line, both served and `skills/list` named the skill twice.
    def line(uri: str) -> bytes:
        return canonical_json(
            {
                "files": [["SKILL.md", "sha256:" + "ab" * 32, 3, "text/markdown", True]],
                "frontmatter": {"name": "b"},
                "source": "s",
                "uri": uri,
            }
        )

    lines = (
        sorted({line(spelling), line("skill://a/b/SKILL.md")})
        if spelling != "skill://a/b/SKILL.md"
        else [
            line(spelling),
            line(spelling),
        ]
    )
    body = canonical_json({"format": "skillwire-index/1", "skills": 2}) + b"\n" + b"\n".join(lines)
    with pytest.raises(
        InvalidIndex, match=r"the uri is not canonical|lines must be sorted by URI, each URI once"
    ) as info:
        _load(body)
    assert "\n" not in str(info.value)
