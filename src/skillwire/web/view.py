"""What the catalog page reads: a small read-only protocol, `CatalogView`, and the plain facts it returns.

Two implementations exist and the page never knows which one it renders: `server/page_view.py` over a
served catalog (answered from the same per-caller snapshot every wire method uses, so what a caller may see
is decided once, in `server/visibility.py`), and `host/page_view.py` over any SEP-2640 server through the
host library (every byte shown verified against its digest, read only when a page shows it).

Everything here came from a server or a file, so every string is untrusted: the renderer (`web/render.py`)
is the one place that turns it into HTML. A view states facts in its own words (`SignatureVerdict.text`,
`FileRead.refused`); it never passes a server's sentence off as one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from skillwire.core.entry import SkillEntry
from skillwire.core.provenance import Provenance
from skillwire.core.published_index import PublishedIndex

__all__: list[str] = []  # internal: `serve --http` (at /) and `skillwire browse` are the interface


@dataclass(frozen=True, slots=True)
class SkillSummary:
    """One line of the list: the skill's `SKILL.md` URI, its name and description as the entry says."""

    uri: str
    name: str
    description: str
    listed: bool = True  # a search may find a skill the listing leaves out (reachable by its URI)


@dataclass(frozen=True)
class ListPage:
    """A page of listed skills in `skills/list` order, the keyset cursor of the next one, and how many
    listed skills the caller may see in all."""

    skills: Sequence[SkillSummary]
    next_cursor: str | None
    count: int


@dataclass(frozen=True)
class SearchAnswer:
    """Skills ranked for a query (best first) and how many matched in all."""

    skills: Sequence[SkillSummary]
    matched: int


@dataclass(frozen=True, slots=True)
class FileRow:
    """One file of a skill's manifest, with the MIME type the view knows for it."""

    uri: str
    digest: str
    size: int
    mime_type: str


@dataclass(frozen=True)
class SignatureVerdict:
    """The reader's own verdict on a publisher signature, in its own words (`text`), never the server's."""

    status: Literal["verified", "valid", "unsigned", "invalid", "untrusted", "not checked"]
    text: str


@dataclass(frozen=True)
class SkillFacts:
    """Everything a skill page shows, except file bytes (read one by one with `CatalogView.read`)."""

    entry: SkillEntry
    listed: bool
    files: Sequence[FileRow]
    signature: SignatureVerdict
    # What the entry says it came from (`core/provenance.py`): a Provenance, None, or why it is not one.
    provenance: Provenance | str | None
    published_index: PublishedIndex | None
    nested: Sequence[SkillSummary] = ()
    inside: SkillSummary | None = None  # the skill this one is nested in, when the caller may see it


@dataclass(frozen=True)
class FileRead:
    """A file's bytes, verified against its digest, or why they were refused (and none are shown)."""

    data: bytes | None
    refused: str | None = None
    mime_type: str | None = field(default=None)


@dataclass(frozen=True)
class InstallTarget:
    """How a person's host reaches the catalog: a label for it and its MCP endpoint URL."""

    name: str
    url: str


class CatalogView(Protocol):
    """One caller's read-only view of one catalog. A skill the caller may not see does not exist here:
    `skill` answers None exactly as for a URI nothing serves, and it is in no page, count or search."""

    async def page(self, cursor: str | None, limit: int) -> ListPage:
        """Listed skills after `cursor` (None: from the start). `ValueError` for a cursor not issued here."""
        ...

    async def search(self, query: str, limit: int) -> SearchAnswer:
        """Listed skills ranked for `query` by the catalog's search engine."""
        ...

    async def skill(self, uri: str) -> SkillFacts | None:
        """The skill whose `SKILL.md` URI is `uri` (listed or not), or None."""
        ...

    async def read(self, facts: SkillFacts, file: FileRow) -> FileRead:
        """The bytes of one file of the skill, verified against `file.digest`, or refused with the reason."""
        ...
