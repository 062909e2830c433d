"""`skills/list` results built once per (snapshot, cursor) and reused for every request that asks again.

A snapshot never changes, and `CatalogSnapshot.list_page` is a pure function of the snapshot, the cursor
and the page size, so the page a cursor names is the same dict for every caller of that snapshot until
the snapshot is replaced. Building it (an entry dict and a dict per file, `SkillEntry.to_wire`) was most
of skillwire's own time in a listing; the `mcp` SDK then copies and encodes the result on every request
either way (docs/sdk-upstream.md).

The cache is bounded by the items its pages list (a page's cost is its skills plus their `resources`
items: the dicts it holds), over every snapshot alive: a page that would go over the budget is built per
request as before, and nothing is evicted, so a walk of a catalog larger than the budget keeps its first
pages cached rather than churning through all of them. By default the budget is one whole walk of the
snapshot being listed (at least `MIN_AUTO_ITEMS`): about 200 bytes an item against the ~1.5 KB an item
the snapshot itself holds, so the pages of every catalog fit and cost about a seventh of its memory
(10,000 skills x 10 files: ~21 MB, issue 25), and per-caller views of it share that one walk's budget.
A fixed `max_items` bounds it whatever the catalog's size. A snapshot's pages go with it (weak keys): a
refresh or a dropped per-caller view frees them, and no cached page outlives the catalog it came from.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from skillwire.catalog.snapshot import CatalogSnapshot

__all__: list[str] = []  # internal: SkillsExtension(page_cache_items=...) is the public knob

# The automatic budget never goes below this many items, so a small catalog's per-caller views can all
# keep their pages (what an item costs: docs/measurements.md, server/pages.py).
MIN_AUTO_ITEMS = 22_000


def walk_items(snapshot: CatalogSnapshot) -> int:
    """About what a whole listing of `snapshot` costs in the cache (each listed skill and each file), from
    two lengths: a published snapshot (`catalog.indexed`) builds a skill only when a page asks for it, so
    summing its manifests would build them all. Exact unless skills nest (a shared file is in two
    manifests) or are unlisted (their files are counted too)."""
    return len(snapshot.listed) + len(snapshot.files)


class _Pages:
    __slots__ = ("by_cursor", "items", "walk_items")

    def __init__(self, walk_items: int) -> None:
        self.by_cursor: dict[str | None, dict[str, Any]] = {}
        self.items = 0
        self.walk_items = walk_items  # the automatic budget while this snapshot is listed


class PageCache:
    """Built `skills/list` results by (snapshot, cursor), holding at most `max_items` skills and files
    (None: one whole walk of the snapshot being listed, at least `MIN_AUTO_ITEMS`)."""

    def __init__(self, max_items: int | None = None) -> None:
        if max_items is not None and max_items < 0:
            raise ValueError("max_items must be >= 0 (or None: one whole walk of the catalog)")
        self.max_items = max_items
        self._by_snapshot: weakref.WeakKeyDictionary[CatalogSnapshot, _Pages] = weakref.WeakKeyDictionary()
        # Requests are answered on the event loop, but an embedder may serve one extension from several
        # threads; the budget check and the insert are one step.
        self._lock = threading.Lock()

    def get(self, snapshot: CatalogSnapshot, cursor: str | None) -> dict[str, Any] | None:
        pages = self._by_snapshot.get(snapshot)
        return None if pages is None else pages.by_cursor.get(cursor)

    def put(self, snapshot: CatalogSnapshot, cursor: str | None, result: dict[str, Any], items: int) -> None:
        """Keep `result` (which lists `items` skills and files) if the budget allows; else do nothing."""
        if self.max_items == 0:
            return
        with self._lock:
            pages = self._by_snapshot.get(snapshot)
            if pages is None:
                walk = walk_items(snapshot) if self.max_items is None else 0
                pages = self._by_snapshot[snapshot] = _Pages(walk)
            budget = self.max_items if self.max_items is not None else max(MIN_AUTO_ITEMS, pages.walk_items)
            # Summed, not counted: a snapshot's pages leave with it, and few snapshots live at once
            # (the current one and the per-caller views of it).
            held = sum(other.items for other in self._by_snapshot.values())
            if held + items > budget:
                return
            if cursor not in pages.by_cursor:
                pages.by_cursor[cursor] = result
                pages.items += items

    def held_items(self) -> int:
        """Skills and files listed by every page held now."""
        with self._lock:
            return sum(pages.items for pages in self._by_snapshot.values())
