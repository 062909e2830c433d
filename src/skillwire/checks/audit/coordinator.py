"""The audit's order: capabilities, the listing, then gets, reads, `resources/list` and directory
reads concurrently; `audit()` is the entry point.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import groupby
from typing import Any, cast

import anyio

from skillwire.checks.audit.directories import DirectoryChecks
from skillwire.checks.audit.listing import ListingChecks
from skillwire.checks.audit.reads import ReadChecks, _read_request
from skillwire.checks.audit.records import AuditResult, HostKeeps, Item, Reply, SkillRecord
from skillwire.checks.audit.rules import SERVER, Progress, Send
from skillwire.checks.audit.state import AuditState
from skillwire.checks.findings import Finding
from skillwire.client.requests import get_skill_request
from skillwire.core.fields import entry_refusal
from skillwire.core.host_limits import CLAUDE_CODE, HostLimits, entry_size, host_cut


def host_keeps(entries: list[tuple[int, int, object]], limits: HostLimits = CLAUDE_CODE) -> HostKeeps:
    """What a host with `limits` keeps of the listing walked (page, index, raw entry): the entries a host takes
    (`core/fields.entry_refusal` finds nothing), measured and cut by `core/host_limits`."""
    valid: list[tuple[int, str, int]] = [
        (page, str(cast(Mapping[str, Any], raw)["uri"]), entry_size(cast(Mapping[str, Any], raw)))
        for page, _, raw in entries
        if entry_refusal(raw) is None
    ]
    pages = [[size for _, _, size in group] for _, group in groupby(valid, key=lambda v: v[0])]
    cut = host_cut(limits, pages)
    return HostKeeps(cut, len(valid), sum(size for _, _, size in valid), [uri for _, uri, _ in valid[cut.kept :]])


class Auditor:
    """One audit of one server: the steps in order over one `AuditState`, then the findings sorted."""

    def __init__(
        self,
        send: Send,
        capabilities: Mapping[str, Any],
        *,
        protocol_version: str | None = None,
        concurrency: int = 8,
        timeout: float = 30.0,
        max_pages: int = 1000,
        max_extra_directories: int = 1000,
        progress: Progress | None = None,
        nonce: str | None = None,
    ) -> None:
        self.state = AuditState(
            send,
            capabilities,
            protocol_version=protocol_version,
            concurrency=concurrency,
            timeout=timeout,
            max_pages=max_pages,
            max_extra_directories=max_extra_directories,
            progress=progress,
            nonce=nonce,
        )
        self.listing = ListingChecks(self.state)
        self.reads = ReadChecks(self.state, self.listing)
        self.directories = DirectoryChecks(self.state)

    # -- the whole audit -------------------------------------------------------------------------------------

    async def run(self) -> AuditResult:
        settings = self.listing.check_capabilities()
        if settings is not None:
            entries = await self.listing.walk_list()
            if entries is not None:
                self.state.stats.host = host_keeps(entries)
                self.listing.check_listing(entries)
                self.state.stats.skills = len(self.state.skills)
                self.state.stats.skill_uris = [s.label for s in self.state.skills.values()]
                await self._probe(directory_read=self.state.stats.directory_read)
        return AuditResult(self._sorted(), self.state.stats)

    def _sorted(self) -> list[Finding]:
        order = {uri: i for i, uri in enumerate(sorted({f.skill or "" for f in self.state.findings} - {SERVER}))}
        return sorted(
            self.state.findings,
            key=lambda f: (
                f.skill != SERVER,
                order.get(f.skill or "", -1),
                f.severity != "failure",
                f.rule,
                f.uri or "",
                f.message,
            ),
        )

    # -- 3./4. everything else, concurrently -----------------------------------------------------------------------

    async def _probe(self, *, directory_read: bool) -> None:
        files: dict[str, list[tuple[SkillRecord, Item | None]]] = {}  # canon -> who lists it (None: SKILL.md only)
        for skill in self.state.skills.values():
            for item in skill.items or ():
                files.setdefault(item.canon, []).append((skill, item))
            if skill.path is not None and skill.canon not in skill.item_canons():
                files.setdefault(skill.canon, []).append((skill, None))  # its SKILL.md, for the frontmatter
        gets = [s for s in self.state.skills.values() if s.path is not None]
        first = next((s for s in self.state.skills.values() if s.path is not None and s.items is not None), None)
        self.state.expect(len(gets) + len(files) + 2 + (1 if first else 0))
        get_replies: dict[str, Reply] = {}
        reads: dict[str, tuple[str, Reply]] = {}

        async def get(skill: SkillRecord) -> None:
            get_replies[skill.canon] = await self.state.request(get_skill_request(skill.label))

        async def read(canon: str, uri: str) -> None:
            reads[canon] = (uri, await self.state.request(_read_request(uri)))

        async with anyio.create_task_group() as group:
            for skill in gets:
                group.start_soon(get, skill)
            for canon, owners in files.items():
                owner, listed = owners[0]
                group.start_soon(read, canon, listed.uri if listed is not None else owner.label)
            group.start_soon(self.reads.probe_unknown_skill)
            group.start_soon(self.reads.probe_unknown_files, first)
            group.start_soon(self.reads.check_resources_list)
            if directory_read:
                group.start_soon(self.directories.check_directories, first)
        self.reads.check_gets(gets, get_replies)
        self.state.stats.files_read = len(reads)
        for canon, owners in files.items():
            uri, reply = reads[canon]
            self.reads.check_file(uri, reply, owners)


async def audit(
    send: Send,
    capabilities: Mapping[str, Any],
    *,
    protocol_version: str | None = None,
    concurrency: int = 8,
    request_timeout: float = 30.0,
    max_pages: int = 1000,
    progress: Progress | None = None,
    nonce: str | None = None,
) -> AuditResult:
    """Audit one server (see the module docstring); `send` sends one raw request."""
    auditor = Auditor(
        send,
        capabilities,
        protocol_version=protocol_version,
        concurrency=concurrency,
        timeout=request_timeout,
        max_pages=max_pages,
        progress=progress,
        nonce=nonce,
    )
    return await auditor.run()
