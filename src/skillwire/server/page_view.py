"""The catalog page's view of a served catalog (`web/view.py`'s `CatalogView`), for `serve --http` at `/`.

Every answer comes from the snapshot the wire would answer the same caller from:
`SkillsExtension.caller_snapshot(token)` (the catalog's snapshot, or `PerCallerSkills`' view of it for the
token's audiences: `server/visibility.py` is the one rule). A hidden skill is not in that snapshot, so it is
in no page, count or search answer, and its page answers as an unknown URI does. Entries are the ones
`skills/*` send (publisher signature included, `entry_as_served`); bytes are read exactly as
`resources/read` reads them (`CatalogFile.read` re-checks the published digest).

The signature verdict is this server's own check of the signature it sends (`core/signing.verify_entry`):
whether it verifies over this manifest, and by which key. Whether to trust that key is each host's
decision, and the page says so rather than naming a publisher.
"""

from __future__ import annotations

import bisect
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import anyio
from mcp.server.auth.provider import AccessToken, TokenVerifier

from skillwire.catalog.snapshot import CatalogSkill, CatalogSnapshot
from skillwire.catalog.store import StoredFile
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import (
    BlobUnavailable,
    InvalidCursor,
    InvalidSkillURI,
    ServedFileChanged,
    SignatureError,
    SignatureMissing,
)
from skillwire.core.provenance import read_provenance
from skillwire.core.signing import verify_entry
from skillwire.core.uri import SKILL_MD, canonical_uri, in_scope, parent_of
from skillwire.server.extension import SkillsExtension
from skillwire.web.view import FileRead, FileRow, ListPage, SearchAnswer, SignatureVerdict, SkillFacts, SkillSummary

if TYPE_CHECKING:
    from skillwire.server.search_tool import SkillFinder

__all__: list[str] = []  # internal: `serve --http` (at /) and `skillwire browse` are the interface

_BIG_FILE = 256 * 1024  # read in a worker thread above this, as resources/read does


def summary(skill: CatalogSkill) -> SkillSummary:
    return SkillSummary(skill.uri, skill.entry.name, skill.entry.description, skill.listed)


def served_verdict(entry: SkillEntry) -> SignatureVerdict:
    """This server's own check of the signature it sends with `entry` (see the module docstring)."""
    try:
        signer = verify_entry(entry)
    except SignatureMissing:
        return SignatureVerdict("unsigned", "not signed")
    except SignatureError:
        return SignatureVerdict("invalid", "a publisher signature that does not verify over this manifest")
    return SignatureVerdict(
        "valid",
        f"signed: the signature verifies over this manifest, made by the key {signer.fingerprint}; "
        "whether that key is a publisher you trust is your host's decision (`skillwire trust`)",
    )


class _SortedURIs:
    """Each snapshot's skill URIs sorted (for nested skills by prefix), built once per snapshot."""

    def __init__(self) -> None:
        self._by_snapshot: weakref.WeakKeyDictionary[CatalogSnapshot, list[str]] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def of(self, snapshot: CatalogSnapshot) -> list[str]:
        found = self._by_snapshot.get(snapshot)
        if found is None:
            found = sorted(snapshot.skill_by_uri)
            with self._lock:
                self._by_snapshot[snapshot] = found
        return found


class ServedCatalogView:
    """One caller's `CatalogView` over one snapshot (see the module docstring)."""

    def __init__(
        self,
        skills: SkillsExtension,
        snapshot: CatalogSnapshot,
        finder: Callable[[], SkillFinder],
        sorted_uris: _SortedURIs,
    ) -> None:
        self.skills = skills
        self.snapshot = snapshot
        self._finder = finder
        self._sorted = sorted_uris

    async def page(self, cursor: str | None, limit: int) -> ListPage:
        try:
            page, next_cursor = self.snapshot.list_page(cursor, limit)
        except InvalidCursor as exc:
            raise ValueError(str(exc)) from None
        return ListPage([summary(s) for s in page], next_cursor, len(self.snapshot.listed))

    async def search(self, query: str, limit: int) -> SearchAnswer:
        # The first query of a new index builds it (a second or so at 10,000 skills): off the event loop.
        found, matched = await anyio.to_thread.run_sync(self._finder().ranked_skills, self.snapshot, query, limit)
        return SearchAnswer([summary(s) for s in found], matched)

    def _find(self, uri: str) -> CatalogSkill | None:
        by_uri = self.snapshot.skill_by_uri
        skill = by_uri.get(uri)
        if skill is None:
            try:
                skill = by_uri.get(canonical_uri(uri))
            except InvalidSkillURI:
                return None
        return skill

    def _nested(self, skill: CatalogSkill) -> list[SkillSummary]:
        uris = self._sorted.of(self.snapshot)
        below = skill.root_uri + "/"
        at = bisect.bisect_left(uris, below)
        found: list[SkillSummary] = []
        while at < len(uris) and in_scope(uris[at], skill.root_uri):
            if uris[at] != skill.uri:
                found.append(summary(self.snapshot.skill_by_uri[uris[at]]))
            at += 1
        return found

    def _inside(self, skill: CatalogSkill) -> SkillSummary | None:
        folder = parent_of(skill.root_uri)
        while folder is not None:
            outer = self.snapshot.skill_by_uri.get(f"{folder}/{SKILL_MD}")
            if outer is not None:
                return summary(outer)
            folder = parent_of(folder)
        return None

    async def skill(self, uri: str) -> SkillFacts | None:
        skill = self._find(uri)
        if skill is None:
            return None
        entry = self.skills.entry_as_served(skill)
        files = self.snapshot.files
        rows: Sequence[FileRow] = [
            FileRow(f.uri, f.digest, f.size, getattr(files.get(f.uri), "mime_type", "application/octet-stream"))
            for f in entry.files
        ]
        return SkillFacts(
            entry=entry,
            listed=skill.listed,
            files=rows,
            signature=served_verdict(entry),
            provenance=read_provenance(entry),
            published_index=self.snapshot.published_index,
            nested=self._nested(skill),
            inside=self._inside(skill),
        )

    async def read(self, facts: SkillFacts, file: FileRow) -> FileRead:
        served = self.snapshot.files.get(file.uri)
        if served is None:  # facts and bytes come from one snapshot: a file it lists, it serves
            return FileRead(None, "this file is no longer served; reload the skill's page")
        try:
            if isinstance(served, StoredFile):
                data = await served.read_async()
            elif served.size > _BIG_FILE:
                data = await anyio.to_thread.run_sync(served.read)
            else:
                data = served.read()
        except (ServedFileChanged, BlobUnavailable, OSError):
            return FileRead(None, "the file changed on the server since it was published; reload the page")
        return FileRead(data, None, served.mime_type)


class ServedPages:
    """The page's `view_for`: a token (or none) -> that caller's view, as the wire decides it.

    With a `verifier` (`serve --tokens`) a missing or unknown token gets None (the page asks for one);
    the audiences of a known one are what `skills.audiences_of` makes of it, as on the wire."""

    def __init__(self, skills: SkillsExtension, verifier: TokenVerifier | None = None) -> None:
        self.skills = skills
        self.verifier = verifier
        self._finder = skills.finder
        self._sorted = _SortedURIs()

    @property
    def finder(self) -> SkillFinder:
        """find_skills' finder (its engine and index, `server/search_tool.py`), which the search box ranks with;
        a server without the tool (`--no-search-tool`) gets one of its own, in memory, at its first search (so
        the engine is imported only then, as the extension defers it)."""
        if self._finder is None:
            from skillwire.server.search_tool import SkillFinder

            skills = self.skills
            self._finder = SkillFinder(lambda: skills.catalog.snapshot, skills.request_snapshot)
        return self._finder

    async def view_for(self, token: str | None) -> ServedCatalogView | None:
        access: AccessToken | None = None
        if self.verifier is not None:
            if not token:
                return None
            access = await self.verifier.verify_token(token)
            if access is None:
                return None
        snapshot = await self.skills.caller_snapshot(access)
        return ServedCatalogView(self.skills, snapshot, lambda: self.finder, self._sorted)
