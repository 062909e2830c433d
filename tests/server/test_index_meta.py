"""`skills/list` says which published index it answers from (`_meta[INDEX_META_KEY]`: id and sequence) on every
page, for a replica of a published catalog (a `file://` store here: the same `PublishedCatalog` and
`IndexedSnapshot` as `serve s3://`), in per-caller views too, and never for a folder catalog. Read back
through skillwire's own client over the real SDK in memory, so the key the server writes is the key the
client reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp.client import Client

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.catalog.published import PublishedCatalog, publish
from skillwire.catalog.store import POINTER_KEY, parse_location
from skillwire.client.skills import Listing, SkillsClient
from skillwire.core.protocol import INDEX_META_KEY
from skillwire.core.published_index import PublishedIndex
from skillwire.server.app import build_server
from skillwire.server.extension import SkillsExtension
from skillwire.server.visibility import PerCallerSkills
from support.calls import send

pytestmark = pytest.mark.anyio


def _skill(root: Path, name: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill {name}.\n---\nBody.\n")


async def _listing(skills: SkillsExtension) -> tuple[Listing, list[dict[str, object]]]:
    async with Client(build_server(skills)) as client:
        listing = await SkillsClient(client).list_skills()
        raw = [await send(client, "skills/list"), await send(client, "skills/list", {"cursor": None})]
        cursor = raw[0].get("nextCursor")
        if isinstance(cursor, str):
            raw.append(await send(client, "skills/list", {"cursor": cursor}))
        return listing, raw


async def test_a_replica_names_its_index_on_every_page_and_a_folder_catalog_names_none(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    for name in ("alpha", "beta", "gamma"):
        _skill(root, name)
    folder = SkillCatalog([root], digest_cache=DigestCache())
    location = parse_location(f"file://{tmp_path / 'store'}")
    await publish(folder.snapshot, location)
    pointer = json.loads((tmp_path / "store" / POINTER_KEY).read_bytes())
    assert pointer["sequence"] > 0

    replica = PublishedCatalog(str(location), poll_seconds=0)
    listing, pages = await _listing(SkillsExtension(replica, page_size=2))
    assert listing.pages == 2
    assert listing.index == PublishedIndex(pointer["id"], pointer["sequence"])
    assert listing.index_problem is None
    assert len(pages) == 3  # the first page (twice: once built, once from the page cache) and the second
    for page in pages:
        meta = page["_meta"]
        assert isinstance(meta, dict)
        assert meta[INDEX_META_KEY] == {"id": pointer["id"], "sequence": pointer["sequence"]}

    # A caller's view of the index is the same index.
    view, _ = await _listing(PerCallerSkills(replica, audiences_of=lambda _: frozenset()))
    assert view.index == listing.index

    plain, pages = await _listing(SkillsExtension(folder, page_size=2))
    assert len(plain.entries) == 3
    assert (plain.index, plain.index_problem) == (None, None)
    assert all(INDEX_META_KEY not in page.get("_meta", {}) for page in pages)  # type: ignore[operator]


async def test_a_new_publish_is_named_by_its_new_id_and_higher_sequence(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    _skill(root, "alpha")
    location = parse_location(f"file://{tmp_path / 'store'}")
    await publish(SkillCatalog([root], digest_cache=DigestCache()).snapshot, location)
    replica = PublishedCatalog(str(location), poll_seconds=0)
    first, _ = await _listing(SkillsExtension(replica))
    _skill(root, "beta")
    await publish(SkillCatalog([root], digest_cache=DigestCache()).snapshot, location)
    await anyio.to_thread.run_sync(replica.refresh)
    second, _ = await _listing(SkillsExtension(replica))
    assert first.index is not None
    assert second.index is not None
    assert second.index.id != first.index.id
    assert second.index.sequence > first.index.sequence
