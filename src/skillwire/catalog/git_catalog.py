"""`GitCatalog`: a `SkillCatalog` whose roots may be git repositories at a ref (`catalog/git.py`).

Each git root is resolved and fetched before the first scan, and its commit's tree is then read from
git's object database (`catalog/git_tree.py`: no working tree, every folder rule applies). Each entry then
carries `_meta["io.skillwire/source"]` = `{"repository", "commit", "ref", "path"}` (and
`"signedBy"` when the commit's signature was required and verified), so a host, `skillwire get`,
`pull` and a published index can all say which commit a skill came from.

Following (`watch`, every `poll_seconds`): a root whose ref is a branch (or the remote's HEAD) is
resolved again; a new commit is fetched, listed and scanned into a new snapshot, which replaces
the old one in one assignment (as every refresh does), and clients are told `list_changed`. A page is
always answered from one snapshot, so every listing page is wholly one commit's catalog, and a cursor
is a keyset on URIs, so a client paging across a swap never sees a skill twice. A fetch that fails (the
server down, a commit that does not verify) keeps the last good commit, says so in the log and in
`status` (`/healthz`), and is tried again at the next poll. A tag or a full commit id is never resolved
again once served: a pinned root never moves.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio

from skillwire.catalog.catalog import SkillCatalog, wait_or_stop
from skillwire.catalog.filesystem import ScanResult, SkillRoot, WalkRecords
from skillwire.catalog.git import (
    PROVENANCE_META_KEY,
    GitCache,
    GitError,
    GitSource,
    Resolved,
    commit_signer,
    is_git_spec,
)
from skillwire.catalog.git_tree import GitFile, GitTreeSource
from skillwire.catalog.signatures import SignatureBook
from skillwire.catalog.snapshot import CatalogSnapshot
from skillwire.core.errors import SigningError
from skillwire.core.json import JSONValue
from skillwire.ops.metrics import metrics
from skillwire.core.uri import DEFAULT_SCHEME

__all__ = ["GitCatalog", "GitRootSpec"]

logger = logging.getLogger("skillwire.git")


@dataclass(frozen=True)
class GitRootSpec:
    """A git root as written on a command line: `git+URL@REF#SUBDIR`, then optionally `=PREFIX`."""

    source: GitSource
    prefix: tuple[str, ...] = ()
    scheme: str = DEFAULT_SCHEME

    @classmethod
    def parse(cls, spec: str) -> GitRootSpec:
        repository, sep, target = spec.partition("=")
        source = GitSource.parse(repository)
        if not sep:
            return cls(source)
        # The prefix follows the folders' rules exactly (SkillRoot.parse validates it).
        placed = SkillRoot.parse("." + sep + target)
        return cls(source, placed.prefix, placed.scheme)


def parse_root(spec: str) -> SkillRoot | GitRootSpec:
    """A folder root or a git root, as every command that takes roots reads them."""
    return GitRootSpec.parse(spec) if is_git_spec(spec) else SkillRoot.parse(spec)


@dataclass
class GitStatus:
    """What `/healthz` reports for a catalog of git roots (the same fields as a published catalog's)."""

    index_id: str | None = None  # the commit served (of the first git root; `commits` has them all)
    commits: dict[str, str] = field(default_factory=dict)  # root as written -> commit served
    loaded_at: float | None = None
    checked_at: float | None = None
    last_error: str | None = None
    failures: int = 0


@dataclass
class _GitRoot:
    spec: GitRootSpec
    cache: GitCache
    resolved: Resolved | None = None
    tree: GitTreeSource | None = None
    signed_by: str | None = None
    refused: str | None = None  # the commit the branch names that the rollback rule refused (said once)

    @property
    def commit(self) -> str | None:
        return self.tree.commit if self.tree is not None else None


class GitCatalog(SkillCatalog):
    """Folders and git repositories, served as one catalog (see the module docstring).

    Parameters beyond `SkillCatalog`'s: `poll_seconds` (0: never look again), `trusted_commit_keys`
    (OpenSSH public key lines; when given, a commit is served only if it carries an SSH signature by
    one of them), `cache_dir` (default: `git/` under the user cache directory), `rollback_rule` (a followed
    branch only moves forward, remembered across restarts: `serve`'s; `accept_older_commit` lifts it).
    """

    def __init__(
        self,
        roots: Iterable[SkillRoot | GitRootSpec],
        *,
        poll_seconds: float = 30.0,
        trusted_commit_keys: Sequence[str] | None = None,
        cache_dir: Path | None = None,
        rollback_rule: bool = False,
        accept_older_commit: bool = False,
        **options: Any,
    ) -> None:
        given = list(roots)
        # Each git root keeps a placeholder path: it is read from git's objects, never from a folder.
        placeholders = [
            r if isinstance(r, SkillRoot) else SkillRoot(Path(os.devnull), r.prefix, r.scheme) for r in given
        ]
        super().__init__(placeholders, **options)
        self.poll_seconds = poll_seconds
        self.trusted_commit_keys = None if trusted_commit_keys is None else tuple(trusted_commit_keys)
        self._git: dict[int, _GitRoot] = {
            index: _GitRoot(root, GitCache(root.source, cache_dir))
            for index, root in enumerate(given)
            if isinstance(root, GitRootSpec)
        }
        self.status = GitStatus()
        self.rollback_rule = rollback_rule
        self.accept_older_commit = accept_older_commit
        self.folders_watched = True  # False: `watch` only polls the git roots (`serve --no-watch --poll N`)
        self._scanned: dict[int, str] = {}  # root index -> the commit its last scan result is of
        self.location = ", ".join(str(g.spec.source) for g in self._git.values())  # /healthz's "source"

    @property
    def git_roots(self) -> list[GitRootSpec]:
        return [g.spec for g in self._git.values()]

    def commits(self) -> dict[str, str]:
        """Each git root (as written) and the commit it serves."""
        return {str(g.spec.source): g.tree.commit for g in self._git.values() if g.tree is not None}

    # -- fetching ------------------------------------------------------------------------------------

    def load(self) -> None:
        """Fetch and list every git root; `GitError` (one line) when one cannot be served.
        Nothing is scanned: the first `snapshot` does that."""
        self._update(first=True)
        self.status.loaded_at = self.status.checked_at = time.time()

    def _update(self, *, first: bool = False) -> bool:
        """Bring each git root to its ref's commit; whether any root now serves another commit.
        Raises on the first root that fails, leaving every root as it was."""
        planned: dict[int, tuple[GitTreeSource, Resolved, str | None]] = {}
        for index, root in self._git.items():
            if root.tree is not None and root.resolved is not None and not root.resolved.moves:
                continue  # a tag or a commit: never looked up again
            with root.cache.locked():
                resolved = root.cache.resolve()
                current = root.commit
                if current is not None and resolved.commit in (current, root.refused):
                    continue  # unchanged, or a commit refused already (said once, in one line)
                commit = root.cache.fetch(resolved)
                if current is not None and commit == current:
                    continue
                if self.rollback_rule and resolved.moves:
                    commit = self._forward_only(root, resolved, commit, current)
                    if current is not None and commit == current:
                        continue
                signer = self._check_signature(root, commit)
                placed = SkillRoot(Path(os.devnull), root.spec.prefix, root.spec.scheme)
                tree = root.cache.tree(commit, placed)
                tree.entries()  # listed (and bounded) now: a tree over the bounds fails this update whole
                planned[index] = (tree, replace(resolved, commit=commit), signer)
        for index, (tree, resolved, signer) in planned.items():
            root = self._git[index]
            if self.rollback_rule and resolved.moves:
                with root.cache.locked():
                    root.cache.remember_served(tree.commit)  # what the next start compares with
            old = root.commit
            root.tree, root.resolved, root.signed_by = tree, resolved, signer
            if old is not None and not first:
                logger.info("%s: now serving commit %s (was %s)", root.spec.source, tree.commit[:12], old[:12])
        self.status.commits = self.commits()
        first_root = next(iter(self._git.values()), None)
        if first_root is not None and first_root.tree is not None:
            self.status.index_id = first_root.tree.commit
        return bool(planned)

    def _forward_only(self, root: _GitRoot, resolved: Resolved, commit: str, current: str | None) -> str:
        """The rollback rule (as a published index's, core/published_index.py `goes_back`): a followed branch
        moves only to a commit that has the one served before in its history, this run's or, at a start,
        the last run's (`GitCache.last_served`). Anything else (an older commit replayed by a force-push,
        another history) is refused in one line unless `accept_older_commit`; at a start the commit served
        before is served again, while running the current one stays."""
        previous = current if current is not None else root.cache.last_served()
        if previous is None or previous == commit or self.accept_older_commit:
            return commit
        if root.cache.descends(resolved, commit, previous):
            return commit
        refusal = (
            f"{root.spec.source}: commit {commit[:12]} does not descend from commit {previous[:12]} served "
            "before: a followed branch never goes back or to another history (serve --accept-older-commit "
            "to take it on purpose)"
        )
        if current is not None or not root.cache.has_commit(previous):
            root.refused = resolved.commit
            raise GitError(refusal)
        logger.warning("%s; serving commit %s again", refusal, previous[:12])
        self.status.last_error = refusal
        return previous

    def _check_signature(self, root: _GitRoot, commit: str) -> str | None:
        if self.trusted_commit_keys is None:
            return None
        try:
            sha256 = len(commit) == 64  # a SHA-256 repository's commit signs in `gpgsig-sha256`
            return commit_signer(root.cache.commit_object(commit), self.trusted_commit_keys, sha256=sha256)
        except GitError as exc:
            raise GitError(f"{root.spec.source} at {commit[:12]}: {exc} (--require-signed-commit)") from None

    def poll(self) -> bool:
        """One look at every followed ref (blocking); whether what is published changed.
        On failure the last good commit stays served, the failure is in `status`, and it raises."""
        try:
            moved = self._update()
        except GitError as exc:
            self.status.last_error = str(exc)
            self.status.failures += 1
            raise
        self.status.checked_at = time.time()
        self.status.last_error = None
        self.status.failures = 0
        # Every successful look, moved or not: the README's stale-index alert reads this gauge, and /healthz
        # says "checked N s ago" from the same moment.
        metrics().index_checked.set(self.status.checked_at)
        if not moved:
            return False
        self.status.loaded_at = time.time()
        return self._refresh(None)[1]

    @property
    def follows(self) -> bool:
        """Whether any git root follows a branch (polling can change what is served)."""
        return any(g.resolved is None or g.resolved.moves for g in self._git.values())

    # -- scanning ------------------------------------------------------------------------------------

    def _load_persisted(self) -> None:
        return None  # a commit's tree is listed once per process; its blobs' digests are cached by blob id

    def _scan_root(
        self,
        index: int,
        changed: list[str] | None,
        pool: ThreadPoolExecutor | None,
        record: WalkRecords | None = None,
    ) -> tuple[ScanResult, Any]:
        root = self._git.get(index)
        if root is None:
            return super()._scan_root(index, changed, pool, record)
        if root.tree is None:
            raise GitError(f"{root.spec.source} was not fetched yet (GitCatalog.load)")
        previous = self._root_results[index] if len(self._root_results) == len(self.roots) else None
        if changed is not None and previous is not None and self._scanned.get(index) == root.tree.commit:
            return previous, ((), set())  # a commit's tree never changes: a folder watcher's event is elsewhere
        result = root.tree.scan(self.digests, enforce_limits=self.enforce_limits)
        self._scanned[index] = root.tree.commit
        return _annotate(result, root), None

    def _build_snapshot(self, changed: list[str] | None = None) -> CatalogSnapshot:
        snapshot = super()._build_snapshot(changed)
        # The blob records of the commits served stay in memory; the digest cache's file keeps the rest.
        self.digests.retain_blobs({f.oid for f in snapshot.files.values() if isinstance(f, GitFile)})
        return snapshot

    def folder_roots(self) -> list[SkillRoot]:
        """The roots that are folders (a git root has no folder: it is read from git's objects)."""
        return [root for index, root in enumerate(self.roots) if index not in self._git]

    def add_signatures(self, book: SignatureBook) -> None:
        """Add each git tree's own committed `.skillwire-signatures.json` (`SigningError` when unusable)."""
        for tree in self.trees():
            try:
                found = tree.signatures()
            except GitError as exc:
                raise SigningError(str(exc)) from None
            if found is None:
                continue
            where, data = found
            try:
                raw = json.loads(data.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as exc:
                raise SigningError(f"{where}: unreadable signatures file ({exc})") from None
            book.add(Path(where), raw)

    def trees(self) -> list[GitTreeSource]:
        """The tree each git root serves now (what `lint` and `sign` read)."""
        return [g.tree for g in self._git.values() if g.tree is not None]

    def watch_paths(self) -> list[str]:
        return [str(r.path) for i, r in enumerate(self.roots) if i not in self._git and r.path.is_dir()]

    async def watch(self, *, stop_event: anyio.Event | None = None, debounce_ms: int = 100) -> None:
        """Watch the folder roots (as `SkillCatalog` does) and poll the followed git refs."""
        async with anyio.create_task_group() as group:
            if self.folders_watched and self.watch_paths():
                group.start_soon(lambda: SkillCatalog.watch(self, stop_event=stop_event, debounce_ms=debounce_ms))
            # A pinned root is looked at too (nothing is fetched for it): its check time then stays current.
            if self.poll_seconds > 0 and self._git:
                group.start_soon(self._poll_loop, stop_event)

    async def _poll_loop(self, stop_event: anyio.Event | None) -> None:
        while stop_event is None or not stop_event.is_set():
            if await wait_or_stop(self.poll_seconds, stop_event):
                return
            failing = self.status.failures > 0
            try:
                differs = await anyio.to_thread.run_sync(self.poll)
            except GitError as exc:
                age = time.time() - (self.status.loaded_at or time.time())
                logger.warning(
                    "%s; still serving commit %s (since %.0f s)", exc, (self.status.index_id or "?")[:12], age
                )
                continue
            except Exception:
                logger.exception("fetching %s failed; still serving the previous commit", self.location)
                self.status.failures += 1
                continue
            if failing:
                logger.warning(
                    "%s is reachable again; serving commit %s", self.location, (self.status.index_id or "?")[:12]
                )
            if differs:
                await self._notify_async()


def _annotate(result: ScanResult, root: _GitRoot) -> ScanResult:
    """The scan of a commit's tree with each entry's provenance."""
    tree = root.tree
    assert tree is not None
    source = root.spec.source
    subdir = "/".join(source.subdir)
    skills = []
    for skill in result.skills:
        rel = skill.source[len(tree.base) + 1 :] if skill.source.startswith(tree.base + "/") else ""
        path = "/".join(p for p in (subdir, rel) if p)
        provenance: dict[str, JSONValue] = {
            "repository": source.shown,
            "commit": tree.commit,
            "ref": source.ref,
            "path": path,
        }
        if root.signed_by is not None:
            provenance["signedBy"] = root.signed_by
        meta: dict[str, JSONValue] = {**(skill.entry.meta or {}), PROVENANCE_META_KEY: provenance}
        skills.append(replace(skill, entry=replace(skill.entry, meta=meta)))
    return ScanResult(skills=skills, files=result.files, skipped=result.skipped, ignored=result.ignored)
