"""The persisted catalog snapshot (catalog/persist.py) on real folders: a warm catalog publishes what a
scan publishes, its stat check sees every kind of change made while no server ran, a file changed
before validation is refused rather than served, and a bad snapshot file is one warning and a scan."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import struct
import time
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from skillwire.catalog.catalog import FolderSource, SkillCatalog
from skillwire.catalog.digests import DigestCache, pack_stat
from skillwire.catalog.filesystem import ScanResult, SkillRoot, WalkRecords
from skillwire.catalog.persist import Persisted, RecordedWalk, SnapshotStore, _write, record_walk, snapshot_key
from skillwire.catalog.snapshot import CatalogSnapshot
from skillwire.catalog.source import ScanRequest
from skillwire.core.errors import ServedFileChanged

SKILL_MD = (
    '---\nname: {name}\ndescription: The {name} skill, for snapshot tests.\nmetadata:\n  n: "{n}"\n---\n\n# {name}\n'
)
PAST = 1_600_000_000


def make_tree(root: Path, names: list[str]) -> None:
    for n, name in enumerate(names):
        (root / "team" / name / "references").mkdir(parents=True)
        (root / "team" / name / "SKILL.md").write_text(SKILL_MD.format(name=name, n=n))
        (root / "team" / name / "references" / "notes.md").write_text(f"notes for {name}\n")
        (root / "team" / name / "logo.bin").write_bytes(bytes(range(256)))
    (root / "team" / "broken").mkdir()
    (root / "team" / "broken" / "SKILL.md").write_text("no frontmatter here\n")  # skipped, with a reason
    (root / "team" / ".env").write_text("SECRET=1\n")  # never served
    (root / ".skillignore").write_text("*.log\n")
    (root / "team" / name / "debug.log").write_text("ignored\n")
    for path in [root, *root.rglob("*")]:
        os.utime(path, (PAST, PAST))


def catalog_for(root: Path, state: Path, **kwargs: Any) -> SkillCatalog:
    store = SnapshotStore(state / "digests.sqlite.snapshot")
    return SkillCatalog([root], digest_cache=DigestCache(state / "digests.sqlite"), snapshot_store=store, **kwargs)


def saved_catalog(root: Path, state: Path) -> SkillCatalog:
    """A catalog that scanned `root` and saved its snapshot, as a server's first start does."""
    catalog = catalog_for(root, state)
    assert catalog.snapshot is not None
    assert catalog.validated
    catalog.wait_for_save(30)
    assert (state / "digests.sqlite.snapshot").is_file()
    return catalog


def warm_loaded(root: Path, state: Path) -> bool:
    """Whether a new catalog over `root` serves the saved snapshot (rather than scanning)."""
    catalog = catalog_for(root, state)
    assert catalog.snapshot is not None
    return not catalog.validated


def published(snapshot: CatalogSnapshot) -> str:
    """Everything a snapshot publishes, as the JSON a client would get, in one string."""
    pages: list[Any] = []
    cursor = None
    while True:
        page, cursor = snapshot.list_page(cursor, 2)
        pages.append([s.wire for s in page])
        if cursor is None:
            break
    files = {uri: [f.digest, f.size, f.mime_type, f.is_text, f.path] for uri, f in sorted(snapshot.files.items())}
    rest = [[s.location, s.reason] for s in snapshot.skipped], sorted(snapshot.ignored), snapshot.directory_uris()
    return json.dumps([pages, files, rest], sort_keys=True)


def test_a_warm_catalog_publishes_byte_for_byte_what_the_scan_published(tmp_path: Path) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_tree(root, ["alpha", "beta", "gamma"])
    cold = saved_catalog(root, state)
    warm = catalog_for(root, state)
    snapshot = warm.snapshot
    assert not warm.validated  # served from the file, before any stat
    assert warm.digests.hits == warm.digests.hashed == 0
    assert published(snapshot) == published(cold.snapshot)
    assert len(snapshot.skipped) == 1
    assert "broken" in snapshot.skipped[0].location
    # What a request reads is still checked against the listed digest.
    notes = snapshot.files["skill://team/beta/references/notes.md"]
    assert notes.read() == b"notes for beta\n"


def test_a_file_name_that_is_not_utf8_is_saved_and_read_back(tmp_path: Path) -> None:
    """A name `os.scandir` decodes with surrogateescape (a lone surrogate in the text) is skipped with
    its reason and saved (escaped, as JSON can carry it), so a restart serves the saved catalog: the
    save used to raise UnicodeEncodeError (one warning, and every start a cold one)."""
    root, state = tmp_path / "skills", tmp_path / "state"
    make_tree(root, ["alpha", "beta"])
    bad = root / "team" / os.fsdecode(b"caf\xe9")  # a skill folder: its location is in the snapshot section
    bad.mkdir()
    (bad / "SKILL.md").write_text(SKILL_MD.format(name="cafe", n=9))
    for path in (bad / "SKILL.md", bad, bad.parent):
        os.utime(path, (PAST, PAST))
    cold = saved_catalog(root, state)
    assert str(bad) in [s.location for s in cold.snapshot.skipped]
    warm = catalog_for(root, state)
    assert published(warm.snapshot) == published(cold.snapshot)
    assert not warm.validated


def test_an_untouched_tree_is_validated_by_stat_alone(tmp_path: Path) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_tree(root, ["alpha", "beta"])
    # ctime cannot be set back: wait until the files are older than the racy window of the scan.
    time.sleep(2.1)
    saved_catalog(root, state)
    warm = catalog_for(root, state)
    before = warm.snapshot
    assert warm.validate() is False  # nothing changed: no swap, no notification
    assert warm.validated
    assert warm.snapshot is before
    assert warm.digests.hits == warm.digests.hashed == 0  # no scan ran: no digest was even looked up


def loaded(root: Path, state: Path) -> Persisted:
    """The persisted snapshot, with the racy window moved out of the way, so that only the stat
    comparison decides (what `unchanged` would say of files settled long before the walk)."""
    persisted = SnapshotStore(state / "digests.sqlite.snapshot").load([root_of(root)], True)
    assert persisted is not None
    persisted.walk.scan_started_ns = 2**62
    return persisted


def root_of(root: Path) -> SkillRoot:
    return SkillRoot(root)


def _same_size_edit(root: Path) -> None:
    path = root / "team" / "beta" / "references" / "notes.md"
    path.write_text("NOTES FOR BETA\n")  # same length
    os.utime(path, (PAST, PAST))  # and the old mtime: only ctime tells


def _symlink_swap(root: Path) -> None:
    (root / "team" / "beta" / "logo.bin").unlink()
    (root / "team" / "beta" / "logo.bin").symlink_to(root / "team" / "alpha" / "logo.bin")  # same bytes


def _chmod_folder(root: Path) -> None:
    os.chmod(root / "team" / "beta" / "references", 0o700)


CHANGES: dict[str, Callable[[Path], object]] = {
    "same-size edit with mtime restored": _same_size_edit,
    "file added": lambda root: (root / "team" / "beta" / "extra.md").write_text("new\n"),
    "file removed": lambda root: (root / "team" / "beta" / "logo.bin").unlink(),
    "skill added": lambda root: make_tree(root / "more", ["delta"]),
    "skill folder renamed": lambda root: (root / "team" / "alpha").rename(root / "team" / "alpha2"),
    "skillignore edited": lambda root: (root / ".skillignore").write_text("*.bin\n"),
    "file swapped for a symlink": _symlink_swap,
    "folder permissions changed": _chmod_folder,
    "broken skill fixed": lambda root: (root / "team" / "broken" / "SKILL.md").write_text(
        SKILL_MD.format(name="broken", n=9)
    ),
}


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_the_stat_check_sees_each_kind_of_change(tmp_path: Path, change: str) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_tree(root, ["alpha", "beta", "gamma"])
    saved_catalog(root, state)
    assert loaded(root, state).unchanged()  # the control: the same tree passes
    CHANGES[change](root)
    assert not loaded(root, state).unchanged()


def test_a_change_in_the_racy_window_is_never_trusted(tmp_path: Path) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_tree(root, ["alpha"])
    saved_catalog(root, state)  # the files' ctime is now: within two seconds of the walk
    persisted = SnapshotStore(state / "digests.sqlite.snapshot").load([root_of(root)], True)
    assert persisted is not None
    assert not persisted.unchanged()


def test_edits_made_while_down_are_refused_then_served_after_validation(tmp_path: Path) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_tree(root, ["alpha", "beta", "gamma"])
    saved_catalog(root, state)
    (root / "team" / "beta" / "references" / "notes.md").write_text("rewritten while no server ran\n")
    (root / "team" / "gamma" / "SKILL.md").unlink()
    make_tree(root / "new", ["delta"])

    warm = catalog_for(root, state)
    stale = warm.snapshot
    assert not warm.validated
    edited = stale.files["skill://team/beta/references/notes.md"]
    with pytest.raises(ServedFileChanged):
        edited.read()  # the listed digest is the old one: refused, never served under it
    changes: list[tuple[CatalogSnapshot, CatalogSnapshot]] = []
    warm.on_change(lambda old, new: changes.append((old, new)))

    assert warm.validate() is True
    fresh = warm.snapshot
    assert warm.validated
    assert changes
    assert changes[-1][1] is fresh
    notes = fresh.files["skill://team/beta/references/notes.md"]
    data = notes.read()
    assert data == b"rewritten while no server ran\n"
    assert notes.digest == "sha256:" + hashlib.sha256(data).hexdigest()
    assert "skill://team/gamma/SKILL.md" not in fresh.skill_by_uri
    assert "skill://new/team/delta/SKILL.md" in fresh.skill_by_uri
    # The rescan saved the corrected snapshot: the next start serves it (and it checks out).
    warm.wait_for_save(30)
    assert published(catalog_for(root, state).snapshot) == published(fresh)


def watch_until_announced(catalog: SkillCatalog) -> None:
    """Run `catalog.watch` until it tells its async listeners (the list-changed notification) of a change."""
    heard = anyio.Event()

    async def listener() -> None:
        heard.set()

    catalog.on_change_async(listener)

    async def main() -> None:
        stop = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: catalog.watch(stop_event=stop))
            with anyio.fail_after(30):
                await heard.wait()
            stop.set()

    anyio.run(main)


def test_validation_during_watch_notifies_async_listeners(tmp_path: Path) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_tree(root, ["alpha", "beta"])
    saved_catalog(root, state)
    (root / "team" / "alpha" / "SKILL.md").write_text(SKILL_MD.format(name="alpha", n=42))
    warm = catalog_for(root, state)
    assert warm.snapshot.frontmatter_of("skill://team/alpha/SKILL.md") == {
        "name": "alpha",
        "description": "The alpha skill, for snapshot tests.",
        "metadata": {"n": "0"},
    }
    watch_until_announced(warm)
    assert warm.validated
    frontmatter = warm.snapshot.frontmatter_of("skill://team/alpha/SKILL.md")
    assert frontmatter is not None
    assert frontmatter["metadata"] == {"n": "42"}


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-100] ^= 0x01
    path.write_bytes(bytes(data))


def _unreadable(path: Path) -> None:
    path.unlink()
    path.mkdir()  # a folder where the file should be: unreadable even for root


def _other_version(path: Path) -> None:
    data = path.read_bytes()
    assert data.count(b'"skillwire": "') == 1
    path.write_bytes(data.replace(b'"skillwire": "', b'"skillwire": "0.0.0-'))


def _parts(path: Path) -> tuple[bytes, dict[str, Any], bytes, bytes]:
    """A snapshot file's magic line, its header, its snapshot section and its walk section."""
    data = path.read_bytes()
    magic_end = data.index(b"\n") + 1
    header_end = data.index(b"\n", magic_end)
    header = json.loads(data[magic_end:header_end])
    section_end = header_end + 1 + header["snapshot"][0]
    return data[:magic_end], header, data[header_end + 1 : section_end], data[section_end:]


def _with_section(path: Path, forged: bytes) -> None:
    """The file with `forged` for its snapshot section, the header's length and checksum to match."""
    magic, header, _, walk_section = _parts(path)
    header["snapshot"] = [len(forged), hashlib.sha256(forged).hexdigest()]
    path.write_bytes(magic + json.dumps(header).encode() + b"\n" + forged + walk_section)


def _forged_path_outside_the_root(path: Path) -> None:
    """A well-formed file, checksums and all, whose first file is `/etc/hostname`: refused as data."""
    roots = json.loads(_parts(path)[2])
    roots[0]["paths"][0] = "/etc/hostname"
    _with_section(path, json.dumps(roots).encode())


DEEP = 100_000  # nesting far past the interpreter's recursion limit: `json` raises RecursionError there


BAD_FILES: dict[str, Callable[[Path], object]] = {
    "a path outside the root": _forged_path_outside_the_root,
    "empty": lambda path: path.write_bytes(b""),
    "truncated": _truncate,
    "one byte flipped": _flip_a_byte,
    "foreign": lambda path: path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100),
    "unreadable": _unreadable,
    "other skillwire version": _other_version,
    "a header nested too deep": lambda path: path.write_bytes(b"skillwire-snapshot\n" + b"[" * DEEP + b"\n"),
    "a section nested too deep": lambda path: _with_section(path, b"[" * DEEP + b"]" * DEEP),
}


@pytest.mark.parametrize("damage", list(BAD_FILES), ids=list(BAD_FILES))
def test_a_bad_snapshot_file_is_one_warning_and_a_scan(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_tree(root, ["alpha", "beta"])
    expected = published(saved_catalog(root, state).snapshot)
    BAD_FILES[damage](state / "digests.sqlite.snapshot")
    caplog.set_level(logging.WARNING, logger="skillwire.catalog")
    warm = catalog_for(root, state)
    assert published(warm.snapshot) == expected
    assert warm.validated  # scanned, not loaded
    warm.wait_for_save(30)
    warnings = [r.getMessage() for r in caplog.records if "not used" in r.getMessage()]
    assert len(warnings) == 1, warnings
    assert "\n" not in warnings[0]
    if damage != "unreadable":  # a folder in the way cannot be replaced; any file can
        assert warm_loaded(root, state)  # the scan saved a good file over the bad one


def test_a_snapshot_is_only_used_for_the_same_limits(tmp_path: Path) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_tree(root, ["alpha"])
    saved_catalog(root, state)
    assert warm_loaded(root, state)  # the same limits load it
    # The file was written for enforce_limits=True (its header says so): a catalog without limits scans.
    unlimited = catalog_for(root, state, enforce_limits=False)
    assert len(unlimited.snapshot) == 1
    assert unlimited.validated


def test_a_snapshot_that_cannot_be_saved_is_one_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "skills"
    make_tree(root, ["alpha"])
    (tmp_path / "not-a-folder").write_text("a file where the cache folder should be\n")
    store = SnapshotStore(tmp_path / "not-a-folder" / "snapshot")
    caplog.set_level(logging.WARNING, logger="skillwire.catalog")
    catalog = SkillCatalog([root], snapshot_store=store)
    assert len(catalog.snapshot) == 1
    catalog.wait_for_save(30)
    assert [r.getMessage() for r in caplog.records if "not saved" in r.getMessage()]


def test_skills_in_code_are_never_served_from_a_snapshot(tmp_path: Path) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_tree(root, ["alpha"])
    first = catalog_for(root, state)
    first.add_files("tools/inline", {"SKILL.md": SKILL_MD.format(name="inline", n=1)})
    assert len(first.snapshot) == 2
    first.wait_for_save(30)
    assert not (state / "digests.sqlite.snapshot").exists()


def test_a_write_cut_short_anywhere_never_loads(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The snapshot is streamed to disk, header last: whatever prefix of it reaches the disk (a crash,
    a full disk, a rename before the data was durable), a start serves it only if it is whole."""
    root, state = tmp_path / "skills", tmp_path / "state"
    make_tree(root, ["alpha", "beta"])
    saved_catalog(root, state)
    path = state / "digests.sqlite.snapshot"
    whole = path.read_bytes()
    assert warm_loaded(root, state)
    caplog.set_level(logging.WARNING, logger="skillwire.catalog")
    for cut in sorted({1, 10, len(whole) // 3, len(whole) // 2, len(whole) - 200, len(whole) - 1}):
        path.write_bytes(whole[:cut])
        assert SnapshotStore(path).load([SkillRoot(root)], True) is None, cut
    # Every byte written but the header's final rewrite (the write's very last step): never loads.
    catalog = saved_catalog(root, tmp_path / "other")
    unfinished = tmp_path / "unfinished"
    with open(unfinished, "wb") as handle:
        key = snapshot_key([SkillRoot(root)], True)
        _write(handle, key, folder_results(catalog), [WalkRecords()], time.time_ns(), finish=False)
    assert len(unfinished.read_bytes()) > len(whole) // 2
    assert SnapshotStore(unfinished).load([SkillRoot(root)], True) is None


def test_the_snapshot_is_written_without_holding_it_whole_in_memory(tmp_path: Path) -> None:
    """Saving streams the file a slice at a time: at its peak it allocates less than the file's size plus
    a half (its column lists and member index); encoding it whole first held the file two to three times
    over, which was 93 MB of a 10,000-skill cold start's peak (issue 25)."""
    import tracemalloc

    root, state = tmp_path / "skills", tmp_path / "state"
    for n in range(1500):
        folder = root / f"team{n % 10}" / f"skill-{n:04d}"
        (folder / "references").mkdir(parents=True)
        (folder / "SKILL.md").write_text(SKILL_MD.format(name=f"skill-{n:04d}", n=n))
        for k in range(6):
            (folder / "references" / f"notes-{k}.md").write_text(f"notes {k} for {n}\n")
    catalog = catalog_for(root, state)
    assert len(catalog.snapshot) == 1500
    catalog.wait_for_save(30)
    size = (state / "digests.sqlite.snapshot").stat().st_size
    assert size > 2_000_000
    records = [WalkRecords()]
    catalog.sources[0].scan(ScanRequest(catalog.digests, True, None, None, records[0]))
    store = SnapshotStore(tmp_path / "again.snapshot")
    key_roots = [SkillRoot(root)]
    tracemalloc.start()
    try:
        store.save(key_roots, True, folder_results(catalog), records, time.time_ns())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert store.load(key_roots, True) is not None
    assert peak < size * 1.5, f"saving a {size:,}-byte snapshot allocated {peak:,} bytes at its peak"


def test_nested_skills_round_trip_and_flat_ones_need_no_file_index(tmp_path: Path) -> None:
    """Files are written in manifest order (a skill's members are consecutive indexes) unless a skill is
    nested in another, whose files are in both manifests; either way the warm catalog is the scan's."""
    from skillwire.catalog.persist import _in_manifest_order

    flat, nested = tmp_path / "flat", tmp_path / "nested"
    make_tree(flat, ["alpha", "alpha-beta", "gamma"])
    make_tree(nested, ["alpha", "alpha-beta", "gamma"])
    inner = nested / "team" / "alpha" / "inner"
    inner.mkdir()
    (inner / "SKILL.md").write_text(SKILL_MD.format(name="inner", n=9))
    os.utime(inner / "SKILL.md", (PAST, PAST))
    os.utime(inner, (PAST, PAST))
    os.utime(nested / "team" / "alpha", (PAST, PAST))
    for root, state in ((flat, tmp_path / "s1"), (nested, tmp_path / "s2")):
        cold = saved_catalog(root, state)
        ordered = _in_manifest_order(folder_results(cold)[0])
        assert (ordered is None) == (root == nested)
        warm = catalog_for(root, state)
        assert published(warm.snapshot) == published(cold.snapshot)
        assert not warm.validated
    assert "skill://team/alpha/inner/SKILL.md" in warm.snapshot.skill_by_uri


@pytest.mark.parametrize("saved", [True, False], ids=["snapshot-saved", "in-memory"])
def test_an_edit_between_the_cold_scan_and_the_arming_is_served(tmp_path: Path, saved: bool) -> None:
    # The window: the scan has run (the snapshot is built) and no watch is armed yet. An edit made
    # then reaches no watch; only the check after arming can see it.
    root, state = tmp_path / "skills", tmp_path / "state"
    make_tree(root, ["alpha", "beta"])
    cold = catalog_for(root, state) if saved else SkillCatalog([root])
    uri = "skill://team/alpha/SKILL.md"
    before = cold.snapshot.files[uri].digest
    assert cold.validated  # a cold start: nothing persisted to validate
    edited = SKILL_MD.format(name="alpha", n=42).encode()
    (root / "team" / "alpha" / "SKILL.md").write_bytes(edited)
    os.utime(root / "team" / "alpha" / "SKILL.md", (PAST, PAST))  # the old mtime: size and ctime tell
    watch_until_announced(cold)
    served = cold.snapshot.files[uri]
    assert served.digest == "sha256:" + hashlib.sha256(edited).hexdigest() != before
    assert served.read() == edited
    frontmatter = cold.snapshot.frontmatter_of(uri)
    assert frontmatter is not None
    assert frontmatter["metadata"] == {"n": "42"}


def test_the_cold_check_of_an_untouched_tree_rescans_nothing(tmp_path: Path) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_tree(root, ["alpha", "beta"])
    cold = catalog_for(root, state)
    before = cold.snapshot
    walk = cold._cold_walk
    assert walk is not None
    walk.scan_started_ns = 2**62  # the racy window out of the way (ctime cannot be set back)
    assert cold._check_cold_walk() is False
    assert cold.snapshot is before  # a rescan swaps in a new snapshot, even an equal one
    assert cold._cold_walk is None  # checked once, then dropped


def walk_of(entries: list[tuple[str, os.stat_result]], started_ns: int = 2**62) -> RecordedWalk:
    records = WalkRecords()
    for path, st in entries:
        records.add(path, pack_stat(st))
    return record_walk([records], started_ns)


def test_the_walk_check_reads_its_records_a_piece_at_a_time_and_holds_none_of_them(tmp_path: Path) -> None:
    # 40,000 records over several 64 KiB pieces (records cut at piece boundaries), one of them a name that
    # is not UTF-8: the check passes on an unchanged disk while holding a piece, not the 40,000 paths.
    plain = tmp_path / ("long-name-" * 8 + ".md")
    plain.write_text("x\n")
    odd = os.path.join(str(tmp_path), os.fsdecode(b"caf\xe9.md"))
    with open(os.fsencode(odd), "wb") as handle:
        handle.write(b"y\n")
    for path in (str(plain), odd):
        os.utime(path, (PAST, PAST))
    entries = [(str(plain), os.lstat(plain))] * 40_000 + [(odd, os.lstat(os.fsencode(odd)))]
    walk = walk_of(entries)
    tracemalloc.start()
    try:
        assert walk.unchanged()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Decoded whole, the paths alone were 40,000 strings of ~130 bytes (about 5 MB) at once.
    assert peak < 1_000_000, peak
    os.utime(os.fsencode(odd), (PAST + 1, PAST + 1))
    assert not walk.unchanged()  # the last record, in the last piece, is still checked


def test_a_walk_section_cut_short_or_padded_is_never_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("a\n")
    os.utime(path, (PAST, PAST))
    walk = walk_of([(str(path), os.lstat(path))] * 3)
    assert walk.unchanged()
    for records in (walk.records[:-4], walk.records + b"\0", b"", b"not zlib"):
        assert not RecordedWalk(walk.scan_started_ns, records).unchanged()
    # Whole records but a path length no file system allows: not a section this version wrote.
    forged = zlib.compress(pack_stat(os.lstat(path)) + struct.pack("<I", 1 << 20) + b"x")
    assert not RecordedWalk(walk.scan_started_ns, forged).unchanged()
    # A path with a NUL byte (no file system path holds one): refused, not a ValueError out of lstat.
    nul = os.fsencode(str(path)) + b"\0"
    forged = zlib.compress(pack_stat(os.lstat(path)) + struct.pack("<I", len(nul)) + nul)
    assert not RecordedWalk(walk.scan_started_ns, forged).unchanged()


def test_files_built_from_columns_are_the_files_init_builds() -> None:
    """`CatalogFile.from_columns` stores each field through its slot (no `__init__` call per file): the
    objects equal, field for field, what the dataclass's own `__init__` makes; a subclass with a
    `__post_init__` still gets it run; columns of different lengths are refused, never half-built."""
    from dataclasses import dataclass, fields

    from skillwire.catalog.snapshot import CatalogFile, MemoryContent

    columns: tuple[list[Any], ...] = (
        ["skill://a/SKILL.md", "skill://a/b.bin"],
        ["sha256:" + "0" * 64, "sha256:" + "1" * 64],
        [12, 0],
        ["text/markdown", "application/octet-stream"],
        [True, False],
        ["/srv/a/SKILL.md", MemoryContent(b"")],
    )
    built = CatalogFile.from_columns(*columns)
    assert built == [CatalogFile(*row) for row in zip(*columns, strict=True)]
    assert [tuple(getattr(f, one.name) for one in fields(f)) for f in built] == list(zip(*columns, strict=True))
    assert all(type(f) is CatalogFile for f in built)
    assert CatalogFile.from_columns([], [], [], [], [], []) == []

    seen: list[str] = []

    @dataclass(frozen=True, slots=True)
    class Checked(CatalogFile):
        def __post_init__(self) -> None:
            seen.append(self.uri)

    assert Checked.from_columns(*columns) == [Checked(*row) for row in zip(*columns, strict=True)]
    assert seen == columns[0] * 2
    with pytest.raises(ValueError, match="different lengths"):
        CatalogFile.from_columns(columns[0], columns[1][:1], *columns[2:])


def test_the_snapshot_section_is_parsed_by_pydantic_core_and_json_refuses_what_neither_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A warm start parses the section with pydantic-core (half of `json.loads`'s CPU); `json` only
    reads the header, and what pydantic-core refuses (the not-UTF-8 test above) or is no JSON at all:
    such a section is refused with `json`'s own error, the reason a warm start always gave."""
    root, state = tmp_path / "skills", tmp_path / "state"
    make_tree(root, ["alpha", "beta"])
    expected = published(saved_catalog(root, state).snapshot)
    path = state / "digests.sqlite.snapshot"
    parsed: list[int] = []
    loads = json.loads

    def counting_loads(text: str | bytes, **kw: Any) -> Any:
        parsed.append(len(text))
        return loads(text, **kw)

    monkeypatch.setattr(json, "loads", counting_loads)  # the module persist.py uses
    warm = catalog_for(root, state)
    assert published(warm.snapshot) == expected
    assert not warm.validated
    data = path.read_bytes()
    header_end = data.index(b"\n", len(b"skillwire-snapshot\n"))
    assert parsed
    assert max(parsed) < header_end, parsed  # the header only
    _with_section(path, b"[not json]")
    caplog.set_level(logging.WARNING, logger="skillwire.catalog")
    assert SnapshotStore(path).load([SkillRoot(root)], True) is None
    assert "(malformed content: JSONDecodeError)" in caplog.text


def folder_results(catalog: SkillCatalog) -> list[ScanResult]:
    """The last scan of each folder root (what a snapshot file saves)."""
    results = [source.last for source in catalog.sources if isinstance(source, FolderSource)]
    assert all(result is not None for result in results)
    return [result for result in results if result is not None]
