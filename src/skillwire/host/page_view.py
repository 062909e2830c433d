"""The catalog page's view of any SEP-2640 server, read through the host library (`skillwire browse`).

Nothing is shown unverified and nothing is read before a page shows it:

- the list and search come from `skills/list` (the client's listing, reused for its `ttlMs`, at least
  `RELIST_SECONDS`), registered in the host's `Registry` and ranked by the host's own search engine
  (`host/search.py`, the bridge's `list_skills`);
- a skill page needs its entry only (from the listing, or `skills/get` for an unlisted one) and its
  `SKILL.md`; a folder page none of the bytes (folders are the manifest's);
- every byte shown or downloaded passes `OriginReader.fetch_verified` (the host's content cache, re-hashed
  on every hit, or the server; then size and digest against the manifest, and `SKILL.md` against the
  entry's frontmatter too). Bytes that fail are never shown: the page says the file was refused, and why.

The signature verdict is the host's (`TrustPolicy.inspect` with the person's trust file, as `ls` and `get`
judge it, `cli/signed.py`); a server's claim about a signature is never shown as a fact. Browsing loads
nothing: no approval is asked or stored, since no skill is activated.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence

from skillwire.catalog.mime import guess_mime_type
from skillwire.client.skills import Listing, SkillsClient
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import SkillNotFound, SkillwireError, VerificationFailed, ViewUnavailable
from skillwire.core.manifest import ManifestFile
from skillwire.core.provenance import read_provenance
from skillwire.core.uri import SKILL_MD, child_name, in_scope, parent_of
from skillwire.core.verify import verify_skill_md
from skillwire.host.host import SkillHost
from skillwire.host.identity import SkillRef
from skillwire.host.mirror.drift import signature_policy
from skillwire.host.search import SkillSearch
from skillwire.host.trust import SignatureCheck, TrustedKey
from skillwire.web.view import (
    FileRead,
    FileRow,
    ListPage,
    SearchAnswer,
    SignatureVerdict,
    SkillFacts,
    SkillSummary,
)

__all__: list[str] = []  # internal: `serve --http` (at /) and `skillwire browse` are the interface

RELIST_SECONDS = 10.0  # a listing is reused this long at least, so paging through it does not re-list


def summary(entry: SkillEntry) -> SkillSummary:
    return SkillSummary(entry.uri, entry.name, entry.description)


def verdict(check: SignatureCheck) -> SignatureVerdict:
    status = "not checked" if check.status == "not checked" else check.status
    return SignatureVerdict(status, check.describe())


class BrowsedCatalog:
    """A `CatalogView` over the server a `SkillHost` knows as `label` (see the module docstring)."""

    def __init__(
        self,
        host: SkillHost,
        label: str,
        client: SkillsClient,
        *,
        keys: tuple[TrustedKey, ...] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.host = host
        self.label = label
        self.client = client
        self.policy, self._trust_label = signature_policy(keys, label)
        self._search = SkillSearch(host.indexable_body, path=None)
        self._clock = clock
        self._listing: tuple[float, Listing, dict[str, int]] | None = None

    async def _guarded(self, call: Callable[[], Awaitable[Listing]]) -> Listing:
        try:
            return await call()
        except SkillwireError as exc:
            raise ViewUnavailable(f"the server's listing could not be read: {exc}") from None

    async def listing(self) -> tuple[Listing, dict[str, int]]:
        now = self._clock()
        if self._listing is not None and self._listing[0] > now:
            return self._listing[1], self._listing[2]
        listing = await self._guarded(self.client.list_skills)
        problems = list(listing.problems)
        self.host.registry.set_origin(self.label, "mcp", listing.entries, problems=problems)
        positions = {entry.uri: at for at, entry in enumerate(listing.entries)}
        keep = max(RELIST_SECONDS, listing.ttl_ms / 1000)
        self._listing = (now + keep, listing, positions)
        return listing, positions

    async def page(self, cursor: str | None, limit: int) -> ListPage:
        listing, positions = await self.listing()
        start = 0
        if cursor is not None:
            if cursor not in positions:
                raise ValueError("not a skill of this listing")
            start = positions[cursor] + 1
        shown = listing.entries[start : start + limit]
        more = start + limit < len(listing.entries)
        return ListPage([summary(e) for e in shown], shown[-1].uri if more and shown else None, len(listing.entries))

    async def search(self, query: str, limit: int) -> SearchAnswer:
        await self.listing()
        ranked = self._search.ranked(self.host.registry, query, limit=limit)
        own = [skill for skill in ranked.skills if skill.ref.origin == self.label]
        return SearchAnswer([summary(skill.entry) for skill in own], ranked.total)

    async def skill(self, uri: str) -> SkillFacts | None:
        listing, positions = await self.listing()
        listed = uri in positions
        if listed:
            entry = listing.entries[positions[uri]]
        else:
            try:
                entry = await self.client.get_skill(uri)
            except SkillNotFound:
                return None
            except SkillwireError as exc:
                raise ViewUnavailable(f"the server's entry for this skill could not be read: {exc}") from None
        root = parent_of(entry.uri) or entry.uri
        rows: Sequence[FileRow] = [
            FileRow(f.uri, f.digest, f.size, guess_mime_type(child_name(f.uri), is_text=False)) for f in entry.files
        ]
        nested = [summary(e) for e in listing.entries if e.uri != entry.uri and in_scope(e.uri, root)]
        inside = None
        folder = parent_of(root)
        while folder is not None and inside is None:
            at = positions.get(f"{folder}/{SKILL_MD}")
            inside = summary(listing.entries[at]) if at is not None else None
            folder = parent_of(folder)
        check = self.policy.inspect(SkillRef(self._trust_label, entry.uri), entry)
        return SkillFacts(
            entry=entry,
            listed=listed,
            files=rows,
            signature=verdict(check),
            provenance=read_provenance(entry),
            published_index=listing.index,
            nested=nested,
            inside=inside,
        )

    async def read(self, facts: SkillFacts, file: FileRow) -> FileRead:
        listed = ManifestFile(file.uri, file.digest, file.size)
        entry = facts.entry

        async def matches_entry(data: bytes) -> None:
            # The SKILL.md a page renders must also be the one the entry describes, as the load path demands.
            verify_skill_md(entry.uri, entry.frontmatter, data, quote=False)

        accept = matches_entry if file.uri == entry.uri else None
        try:
            data = await self.host.reader.fetch_verified(self.label, listed, accept=accept)
        except VerificationFailed as exc:
            return FileRead(None, str(exc))
        except SkillwireError as exc:
            return FileRead(None, f"not read from the server: {exc}")
        return FileRead(data, None)
