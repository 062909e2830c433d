"""`SkillCatalog`: every source a server publishes (folders on disk, skills in code), one snapshot.

`snapshot` is replaced atomically by `refresh()` (a single reference assignment): a request that
started on the old snapshot finishes on it, and the next one sees the new one. Refreshing re-walks
the folders but hashes only files whose stat changed. `watch()` drives `refresh()` from file-system
events. When two sources would publish into the same skill, the later one is skipped with a reason.
"""

from __future__ import annotations

import functools
import gc
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import anyio

from skillwire._deprecation import warn_renamed
from skillwire.catalog.digests import DigestCache
from skillwire.catalog.filesystem import ScanResult, SkillRoot, WalkRecords, scan_root, uri_for
from skillwire.catalog.git_tree import GitFile
from skillwire.catalog.inline import InlineSkills
from skillwire.catalog.listing import ListingRules
from skillwire.catalog.merge import merge_sources
from skillwire.catalog.persist import Persisted, RecordedWalk, SnapshotStore, record_walk
from skillwire.catalog.signatures import RootSignatures
from skillwire.catalog.snapshot import CatalogSkill, CatalogSnapshot
from skillwire.catalog.source import ScanRequest, SkillSource, SourceScan, SourceStatus
from skillwire.catalog.watcher import watching
from skillwire.core.cursor import DEFAULT_CURSOR_SECRET
from skillwire.core.errors import SkillwireError
from skillwire.core.signing import SIGNATURE_META_KEY
from skillwire.ops.metrics import observe_snapshot, record_reload
from skillwire.ops.tracing import span

__all__ = ["FolderSource", "SkillCatalog"]

logger = logging.getLogger("skillwire.catalog")

Listener = Callable[[CatalogSnapshot, CatalogSnapshot], None]
_P = ParamSpec("_P")
_R = TypeVar("_R")


def _on_inline(method: Callable[Concatenate[InlineSkills, _P], _R]) -> Callable[Concatenate[SkillCatalog, _P], _R]:
    """`SkillCatalog.X` is `InlineSkills.X` on the catalog's `inline`: one definition, its docstring kept."""

    @functools.wraps(method)
    def forward(catalog: SkillCatalog, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return method(catalog.inline, *args, **kwargs)

    return forward


class SkillCatalog:
    """The skills a server publishes: folders on disk (every folder holding a SKILL.md, at any depth),
    skills defined in code (`skill`, `add_folder`, `add_files`, `add_dynamic`), held as an immutable
    snapshot that is swapped atomically when `refresh()` (or the watcher, `watch()`) sees a change.
    Pass it to `SkillsExtension` to serve it.

    Parameters
    ----------
    roots:
        What to publish, in order (a later source's skill overlapping an earlier one's is skipped): folders
        (paths, or `SkillRoot`s for a URI prefix or another scheme, `SkillRoot.parse("./vendor=github://vendor/pack")`)
        and any other `SkillSource` (a git root: `catalog/git_catalog.py`). Skills in code come last.
    digest_cache:
        Where file digests are remembered across restarts (`DigestCache(path)`); by default in memory.
    enforce_limits:
        Skip skills over the SEP's limits (512 files, 16 MiB) with a reason (default) instead of
        serving them.
    cursor_secret:
        The HMAC key of pagination cursors; replicas sharing it continue each other's listings.
    hash_workers:
        Threads hashing files at a scan (default 1; more only helps catalogs of large files).
    snapshot_store:
        Where the snapshot of each full scan is saved (`SnapshotStore(path)`), so that the next
        catalog over the same roots serves it at once and validates it in the background
        (`validate`, run by `watch`); by default nothing is saved. Not used with skills in code.
    listing:
        Which skills `skills/list` lists (`ListingRules`: `--list` / `--unlist` globs, the last match deciding);
        the others are served unlisted, reachable by address. By default every folder skill is listed and a
        skill in code as its `listed=` says.
    """

    # Whether a snapshot of this catalog may declare audience rules of its own (a published index does).
    # Folders never do, so deciding on per-caller views need not scan them first (`ServeOptions.extension`).
    declares_audiences: bool = False

    def __init__(
        self,
        roots: Iterable[SkillRoot | str | os.PathLike[str] | SkillSource] = (),
        *,
        digest_cache: DigestCache | None = None,
        enforce_limits: bool = True,
        cursor_secret: bytes = DEFAULT_CURSOR_SECRET,
        hash_workers: int | None = None,
        snapshot_store: SnapshotStore | None = None,
        listing: ListingRules | None = None,
    ) -> None:
        self.listing = listing if listing is not None else ListingRules()
        self.sources: list[SkillSource] = [_as_source(r) for r in roots]
        # The folder roots (the snapshot cache's key, the signature files' places, `serve`'s summary).
        self.roots: list[SkillRoot] = [s.root for s in self.sources if isinstance(s, FolderSource)]
        # Skills defined in Python (`skill`, `add_files`, ...); any addition drops the cached snapshot.
        self.inline = InlineSkills(on_change=self._drop_snapshot)
        self.digests = digest_cache if digest_cache is not None else DigestCache()
        self.enforce_limits = enforce_limits
        self.cursor_secret = cursor_secret
        # One by default: hashing in the scanning thread. Typical skill files are a few KB, so each
        # hash is mostly interpreter work under the GIL, and a pool made threads wait on each other
        # (100,000 files on 2 cores: 4 threads 26 s, 2 threads 16 s, inline 13 s). More workers pay
        # off only for catalogs of large files, where reads and SHA-256 run with the GIL released.
        self.hash_workers = hash_workers or 1
        self._snapshot: CatalogSnapshot | None = None
        self._refresh_lock = threading.Lock()
        self._listeners: list[Listener] = []
        self._async_listeners: list[Callable[[], Awaitable[None]]] = []
        # False: `watch` only polls the sources that poll (`serve --no-watch --poll N`).
        self.folders_watched = True
        self._gc_frozen_once = False  # the first build freezes what survives it (see `_build`)
        self.snapshot_store = snapshot_store
        # The persisted snapshot being served until `validate` has compared it with the disk.
        self._unvalidated: Persisted | None = None
        # What the first scan's walk saw, until `watch` compares it with the disk once its watches are
        # armed: an edit made between that scan and the arming reaches no watch (see `watch`).
        self._cold_walk: RecordedWalk | None = None
        self._saver: threading.Thread | None = None
        # When the snapshot served was swapped in, and when its folders were last known to match it (a
        # scan, a validation, the watcher alive): what `observe_gauges` exports. A published or git
        # catalog keeps its own in `status` (the times its store or remote was read).
        self._loaded_at: float | None = None
        self._checked_at: float | None = None
        # Each root's publisher signatures (`skillwire sign`), read by the scan of that root and attached
        # to its entries only; `FolderSource.last` keeps the scans unsigned, so a re-sign re-annotates them.
        self.root_signatures = RootSignatures()

    # -- skills defined in Python (see catalog.inline) -------------------------------------------------

    @property
    def code(self) -> InlineSkills:
        """Deprecated: the skills defined in Python are `inline` (the old name said "code")."""
        warn_renamed("SkillCatalog.code", "SkillCatalog.inline")
        return self.inline

    # One definition each: `InlineSkills`' own methods, bound to `self.inline`; it tells the catalog of
    # every addition (`on_change`), so none of them can forget to drop the cached snapshot or lack an
    # argument its siblings have (they did: `skill` kept a stale snapshot and `add_*` had no `scheme=`).
    skill = _on_inline(InlineSkills.skill)
    add_folder = _on_inline(InlineSkills.add_folder)
    add_files = _on_inline(InlineSkills.add_files)
    add_dynamic = _on_inline(InlineSkills.add_dynamic)

    def _drop_snapshot(self) -> None:
        self._snapshot = None

    # -- snapshots -----------------------------------------------------------------------------------

    @property
    def snapshot(self) -> CatalogSnapshot:
        snap = self._snapshot
        if snap is None:
            snap = self._load_persisted()  # None, not an empty snapshot, means "scan"
            if snap is None:
                snap = self.refresh()
        return snap

    @property
    def validated(self) -> bool:
        """False while the snapshot served is a persisted one that `validate` has not checked yet."""
        return self._unvalidated is None

    def _load_persisted(self) -> CatalogSnapshot | None:
        """The snapshot the store holds for these roots, now served unvalidated; None for a scan."""
        store = self.snapshot_store
        if (
            store is None
            or len(self.inline)
            or not self.roots
            or not self._folders_only()
            or not all(r.path.is_dir() for r in self.roots)
        ):
            return None
        with self._refresh_lock:
            if self._snapshot is not None:
                return self._snapshot
            was_enabled = gc.isenabled()
            gc.disable()  # as in `_build`: hundreds of thousands of long-lived objects at once
            try:
                persisted = store.load(self.roots, self.enforce_limits)
                if persisted is None:
                    return None
                pairs = zip(self.roots, persisted.results, strict=True)
                snapshot = self._snapshot_of([self.root_signatures.annotate(root, result) for root, result in pairs])
                if not self._gc_frozen_once:
                    # Frozen without the collection `_build` runs first: nothing has served a request
                    # yet, JSON decoding makes no cycles, and a full collection here (the imported
                    # modules and the whole catalog) was a tenth of a second on the critical path.
                    gc.freeze()
                    self._gc_frozen_once = True
            finally:
                if was_enabled:
                    gc.enable()
            for source, result in zip(self.sources, persisted.results, strict=True):
                assert isinstance(source, FolderSource)  # `_folders_only`
                source.last = result
            self._unvalidated = persisted
            self._snapshot = snapshot
            # Its folders were last read by the scan that saved it; `validate` moves this to now.
            self._loaded_at, self._checked_at = time.time(), persisted.walk.scan_started_ns / 1e9
        self.observe_gauges()
        logger.debug("serving the persisted snapshot %s until it is validated", store.path)
        return snapshot

    def _snapshot_of(self, results: list[ScanResult]) -> CatalogSnapshot:
        """The snapshot of these sources' scans: merged (`merge_sources`), then listed as `listing` decides.
        The rules are applied here, on every build and every persisted load, never saved with a scan, so a
        restart with other rules lists by the new ones."""
        skills, files, skipped, ignored = merge_sources(results)
        listed = self.listing.apply(skills)
        return CatalogSnapshot(listed, files, skipped, ignored=ignored, cursor_secret=self.cursor_secret)

    def validate(self) -> bool:
        """Compare a persisted snapshot being served with the disk (every folder, `.skillignore` and
        file its walk saw, by stat) and rescan when anything differs; whether what is published
        changed. Nothing to do (False) once validated, or when the snapshot came from a scan."""
        persisted = self._unvalidated
        if persisted is None:
            return False
        if persisted.unchanged():
            with self._refresh_lock:
                if self._unvalidated is persisted:
                    self._unvalidated = None
                    self._checked_at = time.time()
            self.observe_gauges()
            logger.debug("the persisted snapshot matches the disk")
            return False
        logger.debug("the folders changed since the persisted snapshot was saved; rescanning")
        return self.reload(None)[1]

    async def validate_and_notify(self) -> None:
        """`validate` in a worker thread; when it changed what is published, tell the async listeners
        (the clients' list-changed notification), exactly as after a watcher refresh."""
        await self._check_and_notify(self.validate, "validating the persisted snapshot")

    def _check_cold_walk(self) -> bool:
        """Compare what the first scan's walk saw with the disk (the check `validate` makes, by stat)
        and rescan when anything differs; whether what is published changed. Once: the walk is dropped."""
        walk, self._cold_walk = self._cold_walk, None
        if walk is None or walk.unchanged():
            return False
        logger.debug("the folders changed between the first scan and the watcher's arming; rescanning")
        return self.reload(None)[1]

    async def _check_and_notify(self, check: Callable[[], bool], what: str) -> None:
        try:
            differs = await anyio.to_thread.run_sync(check)
        except Exception:
            logger.exception("%s failed; rescanning", what)
            differs = (await anyio.to_thread.run_sync(self.reload, None))[1]
        if differs:
            await self._notify_async()

    def wait_for_save(self, timeout: float | None = None) -> None:
        """Block until the snapshot save started by the last full scan has finished (tests, tools)."""
        saver = self._saver
        if saver is not None:
            saver.join(timeout)

    def on_change(self, listener: Listener) -> None:
        """Call `listener(old, new)` after every refresh that changed what is published."""
        self._listeners.append(listener)

    def on_change_async(self, listener: Callable[[], Awaitable[None]]) -> None:
        """Await `listener()` after a watcher-driven refresh changed what is published."""
        self._async_listeners.append(listener)

    def refresh(self, changed: Iterable[str] | None = None) -> CatalogSnapshot:
        """Re-scan and swap in the new snapshot; returns it.

        With `changed` (absolute paths reported by the watcher), only the top-level folders of each
        root that contain a change are walked again and everything else is kept from the last scan,
        so an edit in a 10,000-skill catalog costs a walk of its folder, not of the catalog. A change
        directly in a root (its `.skillignore`, a skill at the root) re-scans that whole root.
        """
        return self.reload(changed)[0]

    def reload(self, changed: Iterable[str] | None) -> tuple[CatalogSnapshot, bool]:
        """`refresh`, and whether what the new snapshot publishes differs from the previous one (or there was
        none). The one hook a catalog that swaps a whole index replaces (`PublishedCatalog`); sources are
        composed, never subclassed in (`catalog/source.py`)."""
        started = time.perf_counter()
        with self._refresh_lock:
            old = self._snapshot
            incremental = changed is not None and old is not None
            try:
                scan = {"skillwire.roots": len(self.roots), "skillwire.incremental": incremental}
                with span("skillwire.scan", **scan) as current:
                    new = self._build(list(changed) if changed is not None and old is not None else None)
                    current.set_attributes(
                        {
                            "skillwire.skills": len(new.skill_by_uri),
                            "skillwire.files": len(new.files),
                            "skillwire.skipped": len(new.skipped),
                        }
                    )
            except Exception:
                record_reload("failed", time.perf_counter() - started)
                raise
            self._snapshot = new
            self._loaded_at = self._checked_at = time.time()
        self.observe_gauges()
        differs = True if old is None else self._announce(old, new)  # nothing published before: news
        record_reload("swapped" if differs else "unchanged", time.perf_counter() - started)
        if old is not None and differs:
            logger.info(
                "reloaded: %d skills, %d files (%d skipped)",
                len(new.skill_by_uri),
                len(new.files),
                len(new.skipped),
                extra={"event": "swap", "skills": len(new.skill_by_uri), "skipped": len(new.skipped)},
            )
        return new, differs

    def freshness(self) -> tuple[float | None, float | None]:
        """When the snapshot served was swapped in and when its source was last read successfully (unix
        times; None: not yet). A published catalog or git roots report their `source_status()` (the store's
        pointer, the remote's branch); folders report their last scan, validation or watcher heartbeat."""
        status = self.source_status()
        if status is not None:
            return status.loaded_at, status.checked_at
        return self._loaded_at, self._checked_at

    def observe_gauges(self) -> None:
        """Export what is served and how fresh it is (`ops.metrics.observe_snapshot`): the one call every
        source kind makes whenever either changes (a swap, a warm start, a validation, every poll or
        heartbeat), and each worker for itself, so a restart from a snapshot never reads 0."""
        snapshot = self._snapshot
        if snapshot is None:
            return
        loaded_at, checked_at = self.freshness()
        observe_snapshot(
            len(snapshot.skill_by_uri),
            len(snapshot.files),
            len(snapshot.skipped),
            loaded_at=loaded_at,
            checked_at=checked_at,
        )

    def _announce(self, old: CatalogSnapshot, new: CatalogSnapshot) -> bool:
        """Tell the listeners when `new` publishes something else than `old`; whether it does."""
        differs = not self.publishes_same(old, new)
        if differs:
            for listener in self._listeners:
                try:
                    listener(old, new)
                except Exception:
                    logger.exception("catalog change listener failed")
        return differs

    def publishes_same(self, old: CatalogSnapshot, new: CatalogSnapshot) -> bool:
        """Whether two snapshots publish the same thing (no `list_changed`); a whole-index catalog compares
        its indexes instead."""
        return _same_published(old, new)

    def _build(self, changed: list[str] | None = None) -> CatalogSnapshot:
        # A scan allocates hundreds of thousands of small long-lived objects; the cyclic GC would walk
        # the growing heap again and again (docs/measurements.md, catalog/catalog.py), so collection is
        # off while the snapshot is built.
        #
        # The first build is also frozen (`gc.freeze()`) right after a collection: at start-up that
        # is the imported modules (~90,000 objects, a 40-120 ms walk per full collection) and the
        # first catalog, which request-time collections then never traverse. Later builds are not
        # frozen. `gc.disable()` is process-wide, so while a build runs the request threads' cyclic
        # garbage piles up uncollected, and a freeze then keeps it for the life of the process: that
        # was issue 11's leak (+34 MB in 300 refreshes, +12% RSS in 20 s of load). Collecting the
        # young generations right before each freeze still let garbage slip in between the two calls
        # under load (+7% in 20 s), and unfreezing everything now and then to reclaim it paused the
        # event loop for 200 ms a time. Without the freeze a refreshed snapshot is just young and
        # then old objects, collected as CPython amortises it (a full collection only once
        # survivors grew by a quarter); measured under tests/e2e/test_load_while_reloading.py.
        freeze = not self._gc_frozen_once
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            snapshot = self._build_snapshot(changed)
            if freeze:
                gc.collect()
                gc.freeze()
                self._gc_frozen_once = True
        finally:
            if was_enabled:
                gc.enable()
        return snapshot

    def _folders_only(self) -> bool:
        return all(isinstance(source, FolderSource) for source in self.sources)

    def _note_missing_roots(self) -> None:
        """Say in one line when a root stops being a folder (its skills go, the other roots stay) or is back."""
        for source in self.sources:
            if not isinstance(source, FolderSource):
                continue
            root = source.root
            missing = not root.path.is_dir()
            if missing and not source.missing:
                source.missing = True
                if self._snapshot is not None:  # at start-up, `serve` reports a missing path itself
                    logger.warning(
                        "root %s is gone; its skills are no longer served, the other roots still are", root.path
                    )
            elif not missing and source.missing:
                source.missing = False
                logger.warning("root %s is back; its skills are served again", root.path)

    def _build_snapshot(self, changed: list[str] | None = None) -> CatalogSnapshot:
        workers = self.hash_workers
        # Only a full scan of folders alone is saved: its walk records validate the whole snapshot.
        persist = self.snapshot_store is not None and changed is None and not len(self.inline) and self._folders_only()
        # The first scan's walk is kept, saved or not, for `watch` to check once it is armed.
        first = changed is None and self._snapshot is None
        records = [WalkRecords() for _ in self.roots]
        walked = iter(records if persist or first else ())  # one per folder root, in order
        started_ns = time.time_ns()
        sources = [*self.sources, self.inline] if len(self.inline) else self.sources
        with ThreadPoolExecutor(workers, thread_name_prefix="skillwire-hash") if workers > 1 else nullcontext() as pool:
            scans: list[SourceScan] = []
            for source in sources:
                record = next(walked, None) if isinstance(source, FolderSource) else None
                request = ScanRequest(self.digests, self.enforce_limits, pool, changed, record)
                scans.append(source.scan(request))
            self._note_missing_roots()
            # Each folder's publisher signatures are attached to its scan here; `FolderSource.last` keeps
            # the scans unsigned, so a re-sign re-annotates them. Other sources' scans are their own.
            results = [
                self.root_signatures.annotate(source.root, scan.result)
                if isinstance(source, FolderSource)
                else scan.result
                for source, scan in zip(sources, scans, strict=True)
            ]
            rescanned = [scan.rescanned for scan in scans if scan.rescanned is not None]
        # Flushed first: the rows hashed since the last flush (90,000 at a 10,000-skill cold start, 6 MB
        # with their frontmatter's JSON) are freed before the snapshot's tables are built. Pruning parsed
        # frontmatter nobody references scans the whole cache file: worth it on a full scan, not on
        # every watcher event.
        self.digests.flush(prune=changed is None)
        save = (
            persist
            and self.snapshot_store is not None
            and not any(s.missing for s in self.sources if isinstance(s, FolderSource))
        )
        walk: RecordedWalk | None = None
        if save and first and self.snapshot_store is not None:
            # The first build, before anything is served: saved here (a few tenths of a second at
            # 10,000 skills), because a server stopped soon after it starts (SIGTERM re-raised by
            # uvicorn ends the process at once) never finished a save in a daemon thread, and its
            # next start scanned again (docs/measurements.md, catalog/catalog.py). Saved before the
            # snapshot's tables are built, and the walk records dropped once written: held to the end of
            # the build, they were 11 MB of a 10,000-skill cold start's peak (issue 25).
            walk = self.snapshot_store.save(self.roots, self.enforce_limits, results, records, started_ns)
            save = False
        if first:
            # Compressed (the saved file's own walk section when there is one) and the records dropped
            # before the tables are built: 48 bytes a record, they were 11 MB of a 10,000-skill peak.
            self._cold_walk = walk if walk is not None else record_walk(records, started_ns)
            records.clear()
        snapshot = self._snapshot_of(results)
        files = snapshot.files.values()
        if changed is not None and len(rescanned) == len(self.sources):
            # Every root was refreshed folder by folder: only the rescanned folders can hold files
            # that went away. Rebuilding the whole in-memory cache per watcher event was 4 MB of
            # churn on 100,000 files.
            for prefixes, fresh in rescanned:
                self.digests.forget(prefixes, keep=fresh)
        else:
            # The two sets are passed, not kept: held to the end of the build, they were 4 MB of a
            # 10,000-skill cold start's peak (the save comes after).
            self.digests.retain(
                {path for f in files if (path := f.path) is not None},
                {f.digest for uri in snapshot.skill_by_uri if (f := snapshot.files.get(uri)) is not None},
            )
        if not self._folders_only():
            # The blob records of the commits served stay in memory; the digest cache's file keeps the rest.
            self.digests.retain_blobs({f.oid for f in snapshot.files.values() if isinstance(f, GitFile)})
        if changed is None:
            self._unvalidated = None  # a full scan is the disk's own answer
        if save and self.snapshot_store is not None:
            # A rescan while serving: in a thread, so the swap and its notification do not wait.
            save_args = (self.roots, self.enforce_limits, results, records, started_ns)
            saver = threading.Thread(
                target=self.snapshot_store.save, args=save_args, name="skillwire-snapshot-save", daemon=True
            )
            self._saver = saver
            saver.start()
        return snapshot

    # -- watching -------------------------------------------------------------------------------------

    def watch_paths(self) -> list[str]:
        return [path for source in self.sources for path in source.watch_paths()]

    def source_status(self) -> SourceStatus | None:
        """How the sources fetched from elsewhere are doing (`/healthz`); None when every source is local.
        Several (git roots) are reported as one: the first one's commit, every commit, the oldest check,
        the first error."""
        statuses = [status for source in self.sources if (status := source.status()) is not None]
        if len(statuses) <= 1:
            return statuses[0] if statuses else None
        first = statuses[0]
        checked = [s.checked_at for s in statuses]
        loaded = [s.loaded_at for s in statuses if s.loaded_at is not None]
        return SourceStatus(
            first.serving_kind,
            location=", ".join(s.location for s in statuses),
            serving=first.serving,
            loaded_at=max(loaded) if loaded else None,
            checked_at=None if None in checked else min(c for c in checked if c is not None),
            last_error=next((s.last_error for s in statuses if s.last_error is not None), None),
            failures=max(s.failures for s in statuses),
            commits={k: v for s in statuses for k, v in s.commits.items()},
        )

    def poll(self) -> bool:
        """One look at every source's origin (blocking), the snapshot rebuilt when one moved; whether what is
        published changed. A source that cannot be read keeps serving its last good state: its failure is
        in `source_status()` and raised once every other source was looked at and swapped in."""
        differs, failure = self._poll_sources()
        if failure is not None:
            raise failure
        return differs

    def _poll_sources(self) -> tuple[bool, Exception | None]:
        moved, failure = False, None
        for source in self.sources:
            try:
                moved = source.poll() or moved
            except Exception as exc:
                failure = failure or exc
        if moved:
            return self.reload(None)[1], failure  # `reload` exports the gauges
        # Every look, moved or not: the README's stale-index alert reads the check time, and /healthz says
        # "checked N s ago" from the same moment.
        self.observe_gauges()
        return False, failure

    async def watch(self, *, stop_event: anyio.Event | None = None, debounce_ms: int = 100) -> None:
        """Refresh whenever a watched folder changes and look at each source's origin every `poll_seconds`
        (a git branch), until cancelled (or `stop_event` is set)."""
        polled = [source.poll_seconds for source in self.sources if source.poll_seconds > 0]
        if not polled:
            await self._watch_folders(stop_event=stop_event, debounce_ms=debounce_ms)
            return
        async with anyio.create_task_group() as group:
            if self.folders_watched and self.watch_paths():
                group.start_soon(functools.partial(self._watch_folders, stop_event=stop_event, debounce_ms=debounce_ms))
            group.start_soon(self._poll_loop, min(polled), stop_event)

    async def _poll_loop(self, seconds: float, stop_event: anyio.Event | None) -> None:
        while stop_event is None or not stop_event.is_set():
            if await wait_or_stop(seconds, stop_event):
                return
            before = self.source_status()
            failing = before is not None and before.failures > 0
            try:
                differs, failure = await anyio.to_thread.run_sync(self._poll_sources)
            except Exception:
                logger.exception("refreshing the catalog after a poll failed; still serving the previous snapshot")
                continue
            status = self.source_status()
            kind, serving = (status.serving_kind, status.serving or "?") if status is not None else ("snapshot", "?")
            if isinstance(failure, SkillwireError):  # one line of its own (an unreachable server, a refused commit)
                age = time.time() - ((status.loaded_at if status is not None else None) or time.time())
                logger.warning("%s; still serving %s %s (since %.0f s)", failure, kind, serving[:12], age)
            elif failure is not None:
                where = status.location if status is not None else "a source"
                logger.error("fetching %s failed; still serving the previous %s", where, kind, exc_info=failure)
            elif failing and status is not None:
                logger.warning("%s is reachable again; serving %s %s", status.location, kind, serving[:12])
            if differs:
                await self._notify_async()

    async def _watch_folders(self, *, stop_event: anyio.Event | None = None, debounce_ms: int = 100) -> None:
        """Refresh whenever a watched folder changes, until cancelled (or `stop_event` is set).

        What is served is compared with the disk meanwhile, by stat: a persisted snapshot
        (`validate_and_notify`), or the first scan's walk (an edit between that scan and the arming
        reaches no watch). The check starts once the watcher is armed, so a change made before arming
        shows in the check and one made after it reaches the watcher.
        """
        if self._unvalidated is not None:
            # A warm start answers first: arming walks every folder (in a worker thread, but holding the
            # GIL between its system calls) and the stat check is a few tenths of a second more, so both
            # wait a moment and the requests waiting at start-up are served from the persisted snapshot.
            await anyio.sleep(_WARM_SETTLE_S)
            check: Callable[[], Coroutine[Any, Any, None]] = self.validate_and_notify
        elif self._cold_walk is not None:
            # A cold start arms at once, as its scan just ran, and then checks that scan.
            check = functools.partial(self._check_and_notify, self._check_cold_walk, "checking the first scan")
        else:
            await self._watch(stop_event, debounce_ms, None)
            return
        armed = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(self._watch, stop_event, debounce_ms, armed)
            await armed.wait()
            group.start_soon(check)

    async def _notify_async(self) -> None:
        for listener in self._async_listeners:
            try:
                await listener()
            except Exception:
                logger.exception("catalog change notification failed")

    async def _watch(self, stop_event: anyio.Event | None, debounce_ms: int, armed: anyio.Event | None) -> None:
        paths = self.watch_paths()
        if not paths:
            if armed is not None:
                armed.set()
            return
        async with watching(paths, debounce_ms=debounce_ms, stop_event=stop_event) as batches:
            if armed is not None:
                armed.set()  # before the batches' first await: see `watching`
            async with anyio.create_task_group() as group:
                group.start_soon(self._heartbeat)
                async for changed in batches:  # None: events were lost, rescan everything
                    try:
                        _, differs = await anyio.to_thread.run_sync(self.reload, changed)
                    except Exception:
                        logger.exception("catalog refresh failed; still serving the previous snapshot")
                        continue
                    if differs:
                        await self._notify_async()
                group.cancel_scope.cancel()  # the watcher stopped: so do its heartbeats

    async def _heartbeat(self) -> None:
        """While the watcher runs, every change reaches a refresh, so the folders are as checked as the
        last batch: the check time moves on every `WATCH_HEARTBEAT_S` (a validated snapshot only; an
        unvalidated one keeps the time its scan read the disk until `validate`). It stops with the
        watcher, so a stale-index alert on `skillwire_index_checked_timestamp_seconds` means the watcher
        died or a refresh hangs."""
        while True:
            if self._unvalidated is None and self._snapshot is not None and not self._refresh_lock.locked():
                self._checked_at = time.time()
                self.observe_gauges()
            await anyio.sleep(WATCH_HEARTBEAT_S)


# How often a watched catalog says its folders were checked (`_heartbeat`): far inside the README's
# stale-index alert (600 s), and about a scrape interval; each beat sets five gauges, nothing more.
WATCH_HEARTBEAT_S = 5.0
# How long a warm start serves before arming its watcher and checking its snapshot (see `watch`).
_WARM_SETTLE_S = 1.0


async def wait_or_stop(seconds: float, stop_event: anyio.Event | None) -> bool:
    """Wait `seconds`, or until `stop_event` is set: True when it was (the poller returns). The one wait of
    every catalog that polls its source (a git branch, an object store's pointer)."""
    with anyio.move_on_after(seconds):
        if stop_event is not None:
            await stop_event.wait()
            return True
        await anyio.sleep_forever()
    return False


def _same_published(old: CatalogSnapshot, new: CatalogSnapshot) -> bool:
    """Whether two snapshots publish the same files (by digest) and the same skills, listed alike and
    signed alike (a re-sign changes what the entries carry: clients are told, as for an edit).

    Runs after every watcher refresh, so it compares dictionaries in place instead of sorting
    100,000 (uri, digest) pairs; an incremental refresh reuses most objects, so `is` settles most.
    """
    if old.files.keys() != new.files.keys() or old.skill_by_uri.keys() != new.skill_by_uri.keys():
        return False
    old_files, old_skills = old.files, old.skill_by_uri
    for uri, file in new.files.items():
        before = old_files[uri]
        if before is not file and before.digest != file.digest:
            return False
    return all(
        (was := old_skills[uri]) is skill or (was.listed == skill.listed and _signature_of(was) == _signature_of(skill))
        for uri, skill in new.skill_by_uri.items()
    )


def _signature_of(skill: CatalogSkill) -> object:
    meta = skill.entry.meta
    return None if meta is None else meta.get(SIGNATURE_META_KEY)


class FolderSource:
    """A folder on disk as a `SkillSource`: every folder holding a SKILL.md below it, at any depth.

    A refresh for watcher events (`ScanRequest.changed`) walks again only the top-level folders holding a
    change and keeps the rest of the last scan, so an edit in a 10,000-skill catalog costs a walk of its
    folder. A change directly in the root (its `.skillignore`, a skill at the root) rescans it whole, and
    so does every refresh while the folder is missing (one that comes back is served from the next one on).
    """

    poll_seconds: float = 0.0  # watched (`watch_paths`), never polled

    def __init__(self, root: SkillRoot) -> None:
        self.root = root
        self.last: ScanResult | None = None  # the last scan: what an incremental refresh starts from
        self.missing = False  # not a folder at the last refresh (`SkillCatalog._note_missing_roots` says so)

    def scan(self, request: ScanRequest) -> SourceScan:
        root, changed, previous = self.root, request.changed, self.last
        only = (
            _affected_top_level(root, changed)
            if changed is not None and previous is not None and not self.missing
            else None
        )
        if previous is not None and only is not None:
            if not only:
                return SourceScan(previous, ((), set()))  # nothing under this root changed
            fresh = scan_root(
                root, request.digests, enforce_limits=request.enforce_limits, executor=request.executor, only=only
            )
            try:
                merged = _replace_subtrees(previous, fresh, root, only)
            except _FullRescanNeeded:
                pass
            else:
                real_base = os.path.realpath(root.path)
                prefixes = tuple(os.path.join(real_base, name) + os.sep for name in only)
                self.last = merged
                return SourceScan(merged, (prefixes, {f.path for f in fresh.files}))
        self.last = scan_root(
            root,
            request.digests,
            enforce_limits=request.enforce_limits,
            executor=request.executor,
            record=request.record,
        )
        return SourceScan(self.last)

    def watch_paths(self) -> list[str]:
        return [str(self.root.path)] if self.root.path.is_dir() else []

    def poll(self) -> bool:
        return False  # the watcher reports changes

    def status(self) -> SourceStatus | None:
        return None


def _as_source(root: SkillRoot | str | os.PathLike[str] | SkillSource) -> SkillSource:
    if isinstance(root, SkillRoot):
        return FolderSource(root)
    if isinstance(root, (str, os.PathLike)):
        return FolderSource(SkillRoot(Path(root)))
    return root


class _FullRescanNeeded(Exception):
    """Raised inside an incremental refresh when only a full scan of the root can be right."""


def _affected_top_level(root: SkillRoot, changed: list[str]) -> frozenset[str] | None:
    """Top-level names under `root` that contain a changed path; None when the whole root must be rescanned."""
    base = os.path.realpath(root.path)
    names: set[str] = set()
    for path in changed:
        candidate = os.path.abspath(path)
        if not candidate.startswith(base + os.sep):
            candidate = os.path.realpath(path)
        if not candidate.startswith(base + os.sep):
            continue
        rel = candidate[len(base) + 1 :].split(os.sep)
        if len(rel) == 1 and not os.path.isdir(candidate):
            return None  # a file directly in the root: its .skillignore, or a skill at the root
        names.add(rel[0])
    return frozenset(names)


def _replace_subtrees(previous: ScanResult, fresh: ScanResult, root: SkillRoot, names: frozenset[str]) -> ScanResult:
    """`previous` with everything under the top-level `names` replaced by `fresh`."""
    if any(skill.entry.path.segments == root.prefix for skill in previous.skills):
        raise _FullRescanNeeded  # a skill at the root lists every file: only a full scan can update it
    # `str.startswith(tuple)` keeps the filter in C: it runs over every file of the catalog per event.
    prefixes = frozenset(uri_for(root, (name,)) for name in names)
    below = tuple(p + "/" for p in prefixes)
    locations = frozenset(os.path.join(str(root.path), name) for name in names)
    below_locations = tuple(p + os.sep for p in locations)

    def uri_inside(uri: str) -> bool:
        return uri.startswith(below) or uri in prefixes

    def location_inside(location: str) -> bool:
        return location.startswith(below_locations) or location in locations

    return ScanResult(
        skills=[s for s in previous.skills if not uri_inside(s.entry.path.root_uri)] + fresh.skills,
        files=[f for f in previous.files if not uri_inside(f.uri)] + fresh.files,
        skipped=[s for s in previous.skipped if not location_inside(s.location)] + fresh.skipped,
        ignored=[i for i in previous.ignored if not location_inside(i[0])] + fresh.ignored,
    )
