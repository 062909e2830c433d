"""Which of a server's skills a mirror writes: the entries named (each by `skills/get` or a unique name), or
every listed one. One rule for `pull --to` and `pull --for HOST`:

- a named skill the server does not have, or answers badly for, is `Unselected` (the others go on);
- with no names, the listing's malformed entries are `Unselected` (`malformed`), and the selection is
  `complete` only when the whole listing came through with nothing malformed, so an absent skill means the
  server no longer serves it (pruning, `new`, `gone upstream` depend on that);
- a URI listed twice is written once: its first entry, in the listing's order.

Failures are data (what, why, which kind); the command line words them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from skillwire.client.skills import Listing, SkillsClient
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import ServerError, SkillNotFound
from skillwire.host.resolve import resolve_entry


@dataclass(frozen=True)
class Unselected:
    """A skill asked for (or listed) that has no usable entry."""

    what: str  # the name or URI as asked, or the entry's URI (or its place) in the listing
    reason: str  # raw text (it may quote the server): escape it where it is shown
    malformed: bool = False  # a listing entry that is not a valid skill entry


@dataclass
class Selection:
    entries: list[SkillEntry] = field(default_factory=list)
    failed: list[Unselected] = field(default_factory=list)
    complete: bool = False  # the whole listing, nothing malformed or cut off
    stopped_early: str | None = None  # why the listing was cut off (`Listing.stopped_early`)
    listed_nothing: bool = False  # the server listed no skill at all


async def select_entries(client: SkillsClient, refs: Sequence[str], listing: Listing | None = None) -> Selection:
    """The entries for `refs`, or every listed one when there are none (from `listing` when given: the one a
    caller already judged, since a second listing could come from another replica). A name or URI becomes an
    entry by `resolve.resolve_entry` (an ambiguous name raises `AmbiguousName`: nothing is selected)."""
    selection = Selection()
    found: list[SkillEntry] = []
    if refs:
        for ref in refs:
            try:
                found.append(await resolve_entry(client, ref))
            except (SkillNotFound, ServerError) as exc:
                selection.failed.append(Unselected(ref, str(exc)))
    else:
        listing = listing if listing is not None else await client.list_skills()
        found = list(listing.entries)
        for problem in listing.problems:
            where = problem.uri or f"page {problem.page}, entry {problem.index}"
            selection.failed.append(Unselected(where, f"malformed entry: {problem.reason}", malformed=True))
        selection.stopped_early = listing.stopped_early
        selection.complete = not listing.stopped_early and not listing.problems
        selection.listed_nothing = not found and not listing.problems
    unique: dict[str, SkillEntry] = {}
    for entry in found:
        unique.setdefault(entry.uri, entry)
    selection.entries = list(unique.values())
    return selection
