"""`OriginReader`: the bytes of a host's origins, verified before anyone sees them.

What `SkillHost`'s load path and every `ActiveSkill` read through, instead of the host itself (which
made `host/active.py` and `host/host.py` import each other). It knows three things: how to reach an
origin (a server's `SkillsClient`, or the files a local folder scan found), the content cache, and
`core/verify.py`, which decides whether bytes are the listed file.

- A listed file of a server comes from the cache (re-hashed on every hit) or from the server, and is
  returned only when its size and digest match the manifest; then (a server's bytes, once they pass
  the caller's own check if it gives one) it is cached.
- A local file is read like a server reads a served file (`CatalogFile.read`: never through a
  symlink, never blocking on a FIFO, checked against the scan's digest), so one replaced since the
  scan raises `VerificationFailed` instead of being used.
- A dynamic skill's content has no digest: `fetch_unverified` is the only unverified read.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from skillwire.catalog.snapshot import CatalogFile
from skillwire.client.skills import DirectoryListing, SkillsClient
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import ServedFileChanged, UnknownOrigin, VerificationFailed
from skillwire.core.manifest import ManifestFile
from skillwire.core.verify import verify_file
from skillwire.host.cache import ContentCache
from skillwire.host.identity import SkillRef
from skillwire.ops.tracing import span


class OriginReader:
    """Verified reads from a host's origins (see the module docstring).

    `server` returns the connected client of a server label (raising `UnknownOrigin` for any other
    label); `local_files` returns a local origin's scanned files by URI, or None when the label is
    not a local origin. Both are looked up on every read, so origins added or removed later count.
    """

    def __init__(
        self,
        *,
        server: Callable[[str], SkillsClient],
        local_files: Callable[[str], Mapping[str, CatalogFile] | None],
        cache: ContentCache | None,
    ) -> None:
        self._server = server
        self._local_files = local_files
        self.cache = cache

    async def get_entry(self, ref: SkillRef, *, use_cache: bool = True) -> SkillEntry:
        """The skill's current entry (`skills/get`; `use_cache=False` asks the server again)."""
        return await self._server(ref.origin).get_skill(ref.uri, use_cache=use_cache)

    async def fetch_verified(
        self, origin: str, listed: ManifestFile, *, accept: Callable[[bytes], Awaitable[None]] | None = None
    ) -> bytes:
        """Bytes of a listed file, from the cache (re-hashed) or the origin, checked against the manifest.

        `accept` is one more check the bytes must pass (it raises to refuse them) before a server's bytes
        are cached: the load path's SKILL.md must match its entry's frontmatter too. A cache hit is
        returned without being stored again: it was checked when it was stored and is re-hashed now.
        """
        local = self._local_files(origin) is not None
        cached: bytes | None = None
        attributes: dict[str, str | int] = {"skillwire.origin": origin, "skillwire.bytes": listed.size}
        with span("skillwire.verify", **attributes) as current:
            if local:
                current.set_attribute("skillwire.source", "local")
                data = self.read_local(origin, listed.uri)
            elif self.cache is not None and (cached := self.cache.get(origin, listed.uri, listed)) is not None:
                current.set_attribute("skillwire.source", "cache")  # re-hashed by the cache: verified too
                data = cached
            else:
                current.set_attribute("skillwire.source", "server")
                content = await self._server(origin).read_skill_uri(listed.uri, size=listed.size)
                data = content.data
            if cached is None:
                verify_file(listed, data)
        if accept is not None:
            await accept(data)
        if self.cache is not None and not local and cached is None:
            self.cache.put(origin, listed.uri, data, listed)  # a no-op for bytes it already holds intact
        return data

    async def fetch_unverified(self, origin: str, uri: str) -> bytes:
        """A dynamic skill's bytes: there is no digest to check them against (the caller bounds them)."""
        return (await self._server(origin).read_skill_uri(uri)).data

    async def read_directory(self, origin: str, uri: str) -> DirectoryListing:
        return await self._server(origin).read_directory(uri)

    def read_local(self, origin: str, uri: str) -> bytes:
        """A local skill file's bytes, only if it is still the regular file the scan hashed."""
        files = self._local_files(origin)
        if files is None:
            raise UnknownOrigin(f"no local skills folder is configured under the label {origin!r}")
        try:
            return files[uri].read()
        except ServedFileChanged:
            raise VerificationFailed(
                uri, "the local file changed since it was scanned; list the skills again"
            ) from None
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise VerificationFailed(uri, f"the local file can no longer be read safely ({reason})") from None
