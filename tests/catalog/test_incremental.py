"""A watcher refresh re-walks only the changed top-level folders and must equal a full rescan."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from skillwire.catalog.catalog import FolderSource, SkillCatalog
from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.snapshot import CatalogSnapshot
from support import skills


def write_skill(folder: Path, extra: dict[str, str] | None = None) -> None:
    name = folder.name
    skills.write_skill(folder.parent, name, extra, description=f"Skill {name}.", body=f"Body of {name}.\n")


def directory_listings(snapshot: CatalogSnapshot) -> dict[str, list[dict[str, object]]]:
    """Every directory with its full listing: an incremental refresh reuses skill objects, and with
    them their cached directory indexes, so what they list must match a fresh scan too."""
    listings: dict[str, list[dict[str, object]]] = {}
    for uri in snapshot.directory_uris():
        page = snapshot.directory_page(uri, None, 10_000)
        assert page is not None
        listings[uri] = page.items
    return listings


def state(snapshot: CatalogSnapshot) -> tuple[object, ...]:
    return (
        sorted((s.uri, repr(s.wire)) for s in snapshot.skill_by_uri.values()),
        sorted((f.uri, f.digest, f.size) for f in snapshot.files.values()),
        sorted((k.location, k.reason) for k in snapshot.skipped),
        directory_listings(snapshot),
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    for group in ("team-a", "team-b"):
        for n in range(3):
            write_skill(root / group / f"{group}-s{n}", {"references/r.md": f"ref {group} {n}\n"})
    write_skill(root / "solo", {"notes.md": "solo notes\n"})
    write_skill(root / "solo" / "inner", {"x.md": "inner\n"})
    return root


@pytest.mark.parametrize("prefix", [(), ("acme",)])
def test_incremental_refresh_equals_full_rescan(tree: Path, prefix: tuple[str, ...]) -> None:
    catalog = SkillCatalog([SkillRoot(tree, prefix)])
    directory_listings(catalog.refresh())  # skills kept by the refresh below keep these indexes
    hashed = catalog.digests.hashed

    edited = tree / "team-a" / "team-a-s1" / "references" / "r.md"
    edited.write_text("changed\n")
    write_skill(tree / "team-b" / "team-b-new")  # added
    shutil.rmtree(tree / "team-b" / "team-b-s0")  # removed
    (tree / "solo" / "inner" / "SKILL.md").write_text("---\nname: wrong\ndescription: d\n---\n")  # now invalid
    changed = [
        str(edited),
        str(tree / "team-b" / "team-b-new"),
        str(tree / "team-b" / "team-b-s0"),
        str(tree / "solo" / "inner" / "SKILL.md"),
    ]
    incremental = catalog.refresh(changed)

    # Only the touched files were hashed again (edited file, new SKILL.md, changed inner SKILL.md).
    assert catalog.digests.hashed - hashed == 3
    full = SkillCatalog([SkillRoot(tree, prefix)]).refresh()
    assert state(incremental) == state(full)
    assert any("does not match its folder" in s.reason for s in incremental.skipped)


def test_change_at_the_root_rescans_everything(tree: Path) -> None:
    catalog = SkillCatalog([tree])
    catalog.refresh()
    (tree / ".skillignore").write_text("team-a/\n")
    snapshot = catalog.refresh([str(tree / ".skillignore")])
    assert not any("team-a" in uri for uri in snapshot.skill_by_uri)
    assert state(snapshot) == state(SkillCatalog([tree]).refresh())


def test_untouched_roots_are_reused(tree: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write_skill(other / "lonely")
    catalog = SkillCatalog([tree, other])
    catalog.refresh()
    second = catalog.sources[1]
    assert isinstance(second, FolderSource)
    before = second.last
    os.utime(tree / "solo" / "notes.md")
    catalog.refresh([str(tree / "solo" / "notes.md")])
    assert second.last is before
