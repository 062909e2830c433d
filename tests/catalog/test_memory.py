"""What a scan leaves in memory.

The catalog builds a snapshot with the cyclic GC off, and freezes what survives its first build
(`gc.freeze()`), so request-time collections never walk the modules and the first catalog. A scan
must create no reference cycles, and no refresh may freeze another thread's garbage (issue 11:
+34 MB in 300 refreshes under load). These tests hold the catalog to both, and check the
digest cache keeps one compact record per served file, keyed by the scan's own path strings.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import sys
import threading
import time
import weakref
from pathlib import Path

from skillwire import SkillCatalog
from skillwire.catalog.digests import DigestCache, pack_stat


def make_tree(root: Path) -> None:
    past = 1_600_000_000
    for name in ("alpha", "beta", "team/gamma", "team/gamma/nested"):
        folder = root / name / "references"
        folder.mkdir(parents=True, exist_ok=True)
        leaf = name.rsplit("/", 1)[-1]
        (root / name / "SKILL.md").write_text(f"---\nname: {leaf}\ndescription: Skill {leaf}.\n---\n\n# {leaf}\n")
        (folder / "notes.md").write_text(f"notes for {name}\n")
        (folder / "data.bin").write_bytes(bytes(range(256)))
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").write_text("---\nname: other\ndescription: misnamed\n---\n")
    (root / "alpha" / ".skillignore").write_text("*.log\n")
    (root / "alpha" / "debug.log").write_text("ignored\n")
    for path in root.rglob("*"):
        os.utime(path, (past, past))


def cyclic_garbage_after(build: object) -> int:
    """How many unreachable objects in cycles `build()` left behind (frozen ones included)."""
    gc.unfreeze()  # earlier tests' catalogs froze the process's objects too: start from a clean heap
    gc.collect()
    gc.disable()
    try:
        build()  # type: ignore[operator]
        gc.unfreeze()  # the catalog froze what it built; a collection must see it again
        return gc.collect()
    finally:
        gc.enable()


def test_full_and_incremental_scans_leave_no_cyclic_garbage(tmp_path: Path) -> None:
    tree = tmp_path / "skills"
    tree.mkdir()
    make_tree(tree)
    catalog = SkillCatalog([tree], digest_cache=DigestCache(tmp_path / "digests.sqlite"))
    # A first scan in a process imports what scans import lazily (prometheus_client's enums, built
    # once, leave cycles): a one-time cost, not a scan's. Another catalog pays it first, so the scans
    # measured below are still a first full scan and an incremental one, in a process that has scanned.
    warm_up = tmp_path / "warm-up"
    warm_up.mkdir()
    make_tree(warm_up)
    SkillCatalog([warm_up], digest_cache=DigestCache(tmp_path / "warm-up.sqlite")).refresh()

    def full() -> None:
        assert len(catalog.refresh()) == 4  # "broken" is skipped, the rest served

    def incremental() -> None:
        edited = tree / "team" / "gamma" / "references" / "notes.md"
        edited.write_text("edited\n")
        catalog.refresh([str(edited)])

    assert cyclic_garbage_after(full) == 0
    assert cyclic_garbage_after(incremental) == 0
    assert cyclic_garbage_after(full) == 0


class _Cycle:
    """Garbage only the cyclic collector can free, as the SDK's request handling leaves behind."""

    def __init__(self) -> None:
        self.me = self
        self.payload = bytearray(1024)


def test_refreshes_under_load_do_not_freeze_other_threads_garbage(tmp_path: Path) -> None:
    tree = tmp_path / "skills"
    tree.mkdir()
    make_tree(tree)
    catalog = SkillCatalog([tree], digest_cache=DigestCache())
    catalog.refresh()
    made: list[weakref.ref[_Cycle]] = []
    stop = threading.Event()

    def requests() -> None:  # another thread making cyclic garbage while the catalog rebuilds
        while not stop.is_set():
            made.extend(weakref.ref(_Cycle()) for _ in range(20))
            time.sleep(0.0002)

    worker = threading.Thread(target=requests)
    worker.start()
    try:
        edited = tree / "team" / "gamma" / "references" / "notes.md"
        for i in range(150):
            edited.write_text(f"edit {i}\n")
            catalog.refresh([str(edited)] if i % 10 else None)  # watcher refreshes and full rescans
    finally:
        stop.set()
        worker.join()
    try:
        gc.collect()  # an ordinary collection: it cannot reach anything that was frozen
        leaked = sum(1 for ref in made if ref() is not None)
        assert leaked == 0, f"{leaked} of {len(made)} garbage cycles were frozen by refreshes"
    finally:
        gc.unfreeze()
        gc.collect()


def test_only_the_first_build_freezes(tmp_path: Path) -> None:
    tree = tmp_path / "skills"
    tree.mkdir()
    make_tree(tree)
    gc.unfreeze()
    try:
        catalog = SkillCatalog([tree], digest_cache=DigestCache())
        catalog.refresh()
        frozen = gc.get_freeze_count()
        assert frozen > 0  # the imported modules and the first catalog
        edited = tree / "alpha" / "references" / "notes.md"
        garbage: list[_Cycle] = []
        for i in range(30):
            garbage.append(_Cycle())  # alive during the build, garbage after it: never to be frozen
            edited.write_text(f"edit {i}\n")
            catalog.refresh([str(edited)] if i % 3 else None)
            garbage.clear()
        assert gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()
        gc.collect()


def test_digest_cache_keeps_one_record_per_served_file_and_reloads_it(tmp_path: Path) -> None:
    tree = tmp_path / "skills"
    tree.mkdir()
    make_tree(tree)
    store = tmp_path / "digests.sqlite"
    first = SkillCatalog([tree], digest_cache=DigestCache(store))
    served = first.snapshot.files
    # Every served file, plus the skipped skill's SKILL.md (hashed to look up its parsed frontmatter).
    assert first.digests.hashed == len(served) + 1
    assert len(first.digests._memory) == len(served)

    # A file dropped from the catalog leaves the in-memory cache too.
    (tree / "beta" / "references" / "data.bin").unlink()
    first.refresh()
    assert len(first.digests._memory) == len(served) - 1

    again = SkillCatalog([tree], digest_cache=DigestCache(store))
    assert again.digests.hashed == 0
    assert {u: f.digest for u, f in again.snapshot.files.items()} == {
        u: f.digest for u, f in first.snapshot.files.items()
    }
    # Each record is bytes keyed by a path the snapshot serves: no tuple of ints per file.
    live = {f.path for f in again.snapshot.files.values()}
    assert set(again.digests._memory) == live
    assert all(isinstance(record, bytes) and len(record) == 73 for record in again.digests._memory.values())


def test_unusable_rows_in_the_cache_file_cost_a_rehash_not_a_wrong_digest(tmp_path: Path) -> None:
    tree = tmp_path / "skills"
    tree.mkdir()
    make_tree(tree)
    store = tmp_path / "digests.sqlite"
    truth = {u: f.digest for u, f in SkillCatalog([tree], digest_cache=DigestCache(store)).snapshot.files.items()}
    with sqlite3.connect(store) as db:
        db.execute("UPDATE digests SET digest = 'sha256:not-hex' WHERE path LIKE '%alpha%notes.md'")
        db.execute("UPDATE digests SET dev = 'text' WHERE path LIKE '%beta%notes.md'")
        db.execute("UPDATE digests SET digest = 'md5:abc' WHERE path LIKE '%gamma/references/notes.md'")
    reloaded = SkillCatalog([tree], digest_cache=DigestCache(store))
    assert {u: f.digest for u, f in reloaded.snapshot.files.items()} == truth
    assert reloaded.digests.hashed == 3  # exactly the three spoiled rows, hashed again


def test_an_incremental_refresh_forgets_only_files_gone_from_the_rescanned_folder(tmp_path: Path) -> None:
    tree = tmp_path / "skills"
    tree.mkdir()
    make_tree(tree)
    catalog = SkillCatalog([tree], digest_cache=DigestCache())
    served = {f.path for f in catalog.snapshot.files.values()}
    gone = tree / "team" / "gamma" / "references" / "data.bin"
    gone.unlink()
    catalog.refresh([str(gone)])
    assert str(gone) not in catalog.digests._memory
    assert set(catalog.digests._memory) == served - {str(gone)}
    # Nothing else was hashed again: every other record was kept, not rebuilt.
    assert catalog.digests.hashed == len(served) + 1  # + the skipped skill's SKILL.md at the first scan


def test_serve_fixes_the_malloc_mmap_threshold_on_glibc() -> None:
    import platform

    from skillwire.cli.serve import fix_malloc_mmap_threshold

    applied = fix_malloc_mmap_threshold()
    assert applied == (sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc")


def test_hashed_files_waiting_for_the_cache_file_cost_a_path_each(tmp_path: Path) -> None:
    """Between a cold scan's hashing and its one flush, each file waiting to be stored costs about a set
    entry (its record is already in memory): a row object per file was ~440 bytes, 44 MB of a
    100,000-file cold start's peak (issue 25). The flush then stores every one of them."""
    import tracemalloc

    past = 1_600_000_000
    files = []
    for n in range(3000):
        path = tmp_path / "files" / f"f{n:04d}.md"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"file {n}\n")
        os.utime(path, (past, past))
        files.append((str(path), pack_stat(path.stat())))

    def growth(cache: DigestCache) -> int:
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for path, stat in files:
                cache.digest(path, stat)
            return tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()

    in_memory = growth(DigestCache())
    backed = DigestCache(tmp_path / "digests.sqlite")
    with_file = growth(backed)
    per_file = (with_file - in_memory) / len(files)
    assert per_file < 100, f"{per_file:.0f} bytes per file waiting to be stored"
    backed.flush()
    rows = sqlite3.connect(tmp_path / "digests.sqlite").execute("SELECT COUNT(*) FROM digests").fetchone()[0]
    assert rows == len(files)
    again = DigestCache(tmp_path / "digests.sqlite")
    assert all(again.cached(path, stat) is not None for path, stat in files)


def test_the_cache_file_stores_each_row_once(tmp_path: Path) -> None:
    """The digest table is keyed by its primary key alone (WITHOUT ROWID): a rowid table stored every
    path twice, in the table and in its key's index (26 MB instead of 17 MB for 100,000 files, and a
    third more of a cold start's flush)."""
    past = 1_600_000_000
    files = []
    for n in range(3000):
        path = tmp_path / "skills" / f"team{n % 30:02d}" / f"skill-{n:06d}" / "references" / f"file-{n % 10}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"file {n}\n")
        os.utime(path, (past, past))
        files.append((str(path), pack_stat(path.stat())))
    cache = DigestCache(tmp_path / "digests.sqlite")
    for name, stat in files:
        cache.digest(name, stat)
    cache.flush()
    # A row is its path, its "sha256:" digest (71 characters) and five integers (about 24 bytes).
    payload = sum(len(name) + 71 + 24 for name, _ in files)
    size = (tmp_path / "digests.sqlite").stat().st_size
    assert size < 1.5 * payload, f"{size:,} bytes for {payload:,} bytes of rows"  # a rowid table: 2.0×
    again = DigestCache(tmp_path / "digests.sqlite")
    assert all(again.cached(name, stat) is not None for name, stat in files)


def test_a_cold_build_peaks_little_above_what_it_keeps(tmp_path: Path) -> None:
    """A first scan with both caches on (the digest file flushed, the snapshot saved) allocates at its peak
    little more than the catalog it keeps: the walk records are compact, the rows waiting for the cache
    file are freed before the snapshot's tables are built, and the save needs no table from file to
    index. Here 1.39 times what is kept (10.7 vs 7.7 MB; 1.64 before the walk records were compact, 127 vs 86 MB
    at 10,000 skills, issue 25). Forty top-level folders, as a catalog has many more than a scan batch's eight:
    the per-name caches are emptied after each batch, so a batch's names count at the peak, not as kept."""
    import tracemalloc

    from skillwire.catalog.persist import SnapshotStore

    root = tmp_path / "skills"
    # Names no other test uses: the scan's per-name caches (URI segments, MIME types) start empty, so
    # what the build keeps is the same whichever tests ran before in this process.
    for n in range(1500):
        folder = root / f"peak{n % 40:02d}" / f"peak-{n:04d}"
        (folder / "references").mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: peak-{n:04d}\ndescription: Skill {n}.\n---\n\n# {n}\n")
        for k in range(6):
            (folder / "references" / f"peak-notes-{k}.md").write_text(f"notes {k} for {n}\n")
    past = 1_600_000_000
    for path in root.rglob("*"):
        os.utime(path, (past, past))
    # A first scan in a process imports what scans import lazily: paid here, not counted as kept.
    small = tmp_path / "small"
    small.mkdir()
    make_tree(small)
    assert len(SkillCatalog([small], digest_cache=DigestCache(tmp_path / "small.sqlite")).snapshot) > 0
    state = tmp_path / "state"
    catalog = SkillCatalog(
        [root],
        digest_cache=DigestCache(state / "digests.sqlite"),
        snapshot_store=SnapshotStore(state / "digests.sqlite.snapshot"),
    )
    tracemalloc.start()
    try:
        assert len(catalog.snapshot) == 1500  # the first build saves before it returns
        gc.collect()
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (state / "digests.sqlite.snapshot").is_file()
    assert peak < kept * 1.5, f"a cold build kept {kept:,} bytes and peaked at {peak:,}"
