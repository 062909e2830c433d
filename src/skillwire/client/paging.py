"""Walking a paginated method's pages: one loop, one stop rule, and a truncation always said.

Every paginated call the client makes (`skills/list`, `resources/directory/read`) goes through
`pages()`. It follows `nextCursor` until a page has none (or an empty one, which the SDKs also read as
the end), and otherwise stops early for exactly these reasons, each recorded in `PageWalk.stopped`:
a `nextCursor` that is not a string, a cursor the server already returned (a pagination loop), or the
page cap. The caller adds its own caps (entries on one page, entries in all, seconds) by calling
`walk.stop(reason)`; whatever ends a walk early, `stopped` says so, so no caller can hand back a partial
listing as if it were whole. (`skillwire check` walks pages itself on purpose: it reports each defect
of the server's paging as a finding instead of stopping on it.)
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

FetchPage = Callable[[str | None], Awaitable[dict[str, Any]]]


@dataclass
class PageWalk:
    """How a walk went: pages read, and why it ended early (None when the server said it was done)."""

    max_pages: int
    pages: int = 0
    stopped: str | None = None

    def stop(self, reason: str) -> None:
        """End the walk after the current page, saying why (a cap of the caller's)."""
        if self.stopped is None:
            self.stopped = reason


async def pages(fetch: FetchPage, walk: PageWalk) -> AsyncIterator[dict[str, Any]]:
    """Each page's result in order: `fetch(None)` first, then `fetch(cursor)` while the walk goes on."""
    seen: set[str] = set()
    cursor: str | None = None
    while True:
        result = await fetch(cursor)
        walk.pages += 1
        yield result
        if walk.stopped is not None:
            return
        next_cursor = result.get("nextCursor")
        if next_cursor is None or next_cursor == "":
            return
        if not isinstance(next_cursor, str):
            walk.stop(f"nextCursor is not a string: {next_cursor!r:.60}")
            return
        if next_cursor in seen:
            walk.stop("the server repeated a cursor (a pagination loop)")
            return
        if walk.pages >= walk.max_pages:
            walk.stop(f"stopped after {walk.max_pages} pages")
            return
        seen.add(next_cursor)
        cursor = next_cursor
