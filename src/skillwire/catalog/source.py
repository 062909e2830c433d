"""`SkillSource`: the one way a place skills come from joins a `SkillCatalog`.

A catalog composes an ordered list of sources and merges their scans (`catalog/merge.py`: a later
source's overlapping skill is skipped with a reason). Three kinds implement it: a folder on disk
(`catalog/catalog.py` `FolderSource`), the skills defined in Python (`catalog/inline.py` `InlineSkills`)
and a git root read from git's object database (`catalog/git_catalog.py` `GitRootSource`). A published
index is not a source: it replaces the whole snapshot at once (`catalog/published.py`).

A source that is fetched from elsewhere (a git root; a published catalog, for the whole catalog) says how it
is doing in one `SourceStatus`: what `/healthz` reports, what the staleness gauges are set from.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from skillwire.catalog.digests import DigestCache
from skillwire.catalog.filesystem import ScanResult, WalkRecords

__all__ = ["ScanRequest", "SkillSource", "SourceScan", "SourceStatus"]


@dataclass(frozen=True)
class ScanRequest:
    """What a catalog asks of each source at a refresh."""

    digests: DigestCache
    enforce_limits: bool
    executor: ThreadPoolExecutor | None
    # Absolute paths a folder watcher reported (None: scan everything). A source none of them is inside
    # may answer with its last scan.
    changed: list[str] | None = None
    # Where a folder's walk records every folder, `.skillignore` and file it saw (the snapshot cache's check).
    record: WalkRecords | None = None


@dataclass(frozen=True)
class SourceScan:
    """A source's scan, and for a scan narrowed by `changed` what it rescanned: the real folder prefixes
    and the paths now served there (the digest cache forgets only those); None after a whole scan."""

    result: ScanResult
    rescanned: tuple[tuple[str, ...], set[str | None]] | None = None


@dataclass
class SourceStatus:
    """How a source fetched from elsewhere is doing: `/healthz`, the staleness gauges and `check` read this.

    `serving` is the id of what is served now, and `serving_kind` says which id it is: a git root's commit,
    or a published index's id (the SHA-256 of the index).
    """

    serving_kind: Literal["commit", "index"]
    location: str = ""  # where it is fetched from, as the operator wrote it (no credentials)
    serving: str | None = None
    loaded_at: float | None = None  # time.time() of the last swap to another commit or index
    checked_at: float | None = None  # time.time() of the last successful look at the origin
    last_error: str | None = None
    failures: int = 0  # consecutive failed looks
    # Each git root (as written) and the commit it serves; empty for a published index.
    commits: dict[str, str] = field(default_factory=dict)

    @property
    def stale(self) -> bool:
        return self.failures > 0


@runtime_checkable
class SkillSource(Protocol):
    """One place skills come from. `SkillCatalog` calls `scan` at every refresh (from one thread at a
    time), `watch_paths` when it arms its folder watcher, and, every `poll_seconds` when that is above 0,
    `poll` in a worker thread: one look at the origin, True when the next `scan` would publish something
    else (it raises, one line, when the origin cannot be read; the last good state stays served)."""

    poll_seconds: float

    def scan(self, request: ScanRequest) -> SourceScan: ...

    def watch_paths(self) -> list[str]: ...

    def poll(self) -> bool: ...

    def status(self) -> SourceStatus | None: ...
