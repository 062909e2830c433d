"""A snapshot the catalog swapped out is freed, although the first one of a process is frozen (`gc.freeze()`).

Frozen objects are never traversed by the cyclic GC: the first snapshot (scanned, or loaded from the persisted
snapshot file) only goes away by reference counting once a refresh replaces it. A reference cycle through it
would keep the whole first catalog alive for the life of the process; these tests see that it is gone.
"""

from __future__ import annotations

import gc
import os
import weakref
from pathlib import Path

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.persist import SnapshotStore
from support import skills

PAST = 1_600_000_000


def make_skills(root: Path, count: int) -> None:
    for n in range(count):
        files = {"references/notes.md": f"notes {n}\n"}
        skills.write_skill(root / "team", f"skill-{n}", files, description=f"Skill {n}, for release tests.", body="")
    for path in [root, *root.rglob("*")]:
        os.utime(path, (PAST, PAST))


def swapped_out_is_freed(catalog: SkillCatalog, root: Path) -> None:
    first = catalog.snapshot
    assert gc.get_freeze_count() > 0  # the first snapshot of this catalog was frozen
    gone = weakref.ref(first)
    entry = weakref.ref(next(iter(first.skill_by_uri.values())).entry)
    (root / "team" / "skill-0" / "references" / "notes.md").write_text("changed\n")
    del first
    catalog.refresh()  # a full rescan: every skill object is new
    assert gone() is None, "the swapped-out snapshot is still alive"
    assert entry() is None, "an entry of the swapped-out snapshot is still alive"


def test_a_swapped_out_first_snapshot_is_freed(tmp_path: Path) -> None:
    make_skills(tmp_path / "skills", 20)
    gc.unfreeze()  # other tests' catalogs may have frozen first: this catalog's first build freezes again
    try:
        swapped_out_is_freed(SkillCatalog([SkillRoot(tmp_path / "skills")], digest_cache=None), tmp_path / "skills")
    finally:
        gc.unfreeze()


def test_a_swapped_out_persisted_snapshot_is_freed(tmp_path: Path) -> None:
    root, state = tmp_path / "skills", tmp_path / "state"
    make_skills(root, 20)
    state.mkdir()

    def catalog() -> SkillCatalog:
        store = SnapshotStore(state / "digests.sqlite.snapshot")
        return SkillCatalog([SkillRoot(root)], digest_cache=DigestCache(state / "digests.sqlite"), snapshot_store=store)

    scanned = catalog()
    assert scanned.snapshot is not None
    scanned.wait_for_save(30)
    gc.unfreeze()
    try:
        warm = catalog()
        assert len(warm.snapshot) == 20
        assert not warm.validated  # served from the persisted file, frozen without a collection
        swapped_out_is_freed(warm, root)
    finally:
        gc.unfreeze()
