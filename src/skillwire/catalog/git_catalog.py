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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.filesystem import ScanResult, SkillRoot
from skillwire.catalog.git import (
    PROVENANCE_META_KEY,
    GitCache,
    GitError,
    GitSource,
    Resolved,
    commit_signer,
    is_git_spec,
)
from skillwire.catalog.git_tree import GitTreeSource
from skillwire.catalog.signatures import SignatureBook
from skillwire.catalog.source import ScanRequest, SourceScan, SourceStatus
from skillwire.core.errors import SigningError
from skillwire.core.json import JSONValue
from skillwire.core.uri import DEFAULT_SCHEME

__all__ = ["GitCatalog", "GitRootSource", "GitRootSpec", "read_git_root"]

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


class GitRootSource:
    """One git root as a `SkillSource` (catalog/source.py): `load` fetches the commit its ref names, `scan`
    reads that commit's tree from git's objects, `poll` looks at a followed branch again (a tag or a full
    commit id is never looked up again once served), and `status` says which commit is served and whether
    the last look failed. With `rollback_rule` a followed branch only moves forward, remembered in the
    cache across restarts; with `trusted_commit_keys` a commit is served only when signed by one of them."""

    def __init__(
        self,
        spec: GitRootSpec,
        *,
        poll_seconds: float = 30.0,
        trusted_commit_keys: Sequence[str] | None = None,
        cache_dir: Path | None = None,
        rollback_rule: bool = False,
        accept_older_commit: bool = False,
    ) -> None:
        self.spec = spec
        self.cache = GitCache(spec.source, cache_dir)
        self.poll_seconds = poll_seconds
        self.trusted_commit_keys = None if trusted_commit_keys is None else tuple(trusted_commit_keys)
        self.rollback_rule = rollback_rule
        self.accept_older_commit = accept_older_commit
        self.resolved: Resolved | None = None
        self.tree: GitTreeSource | None = None
        self.signed_by: str | None = None
        self.refused: str | None = None  # the commit the branch names that the rollback rule refused (said once)
        self._state = SourceStatus("commit", location=str(spec.source))
        self._last: tuple[str, ScanResult] | None = None  # the commit last scanned, and its scan

    @property
    def commit(self) -> str | None:
        return self.tree.commit if self.tree is not None else None

    @property
    def follows(self) -> bool:
        """Whether the ref is a branch (or the remote's HEAD): polling can change what is served."""
        return self.resolved is None or self.resolved.moves

    def load(self) -> None:
        """Fetch and list the commit the ref names; `GitError` (one line) when it cannot be served.
        Nothing is scanned: the catalog's first snapshot does that."""
        self._update(first=True)
        self._state.loaded_at = self._state.checked_at = time.time()

    def _update(self, *, first: bool = False) -> bool:
        """Bring the root to its ref's commit; whether it now serves another commit. Raises, leaving the root
        as it was, when the commit cannot be fetched, goes back, or lacks a trusted signature."""
        if self.tree is not None and self.resolved is not None and not self.resolved.moves:
            return False  # a tag or a commit: never looked up again
        with self.cache.locked():
            resolved = self.cache.resolve()
            current = self.commit
            if current is not None and resolved.commit in (current, self.refused):
                return False  # unchanged, or a commit refused already (said once, in one line)
            commit = self.cache.fetch(resolved)
            if current is not None and commit == current:
                return False
            if self.rollback_rule and resolved.moves:
                commit = self._forward_only(resolved, commit, current)
                if current is not None and commit == current:
                    return False
            signer = self._check_signature(commit)
            placed = SkillRoot(Path(os.devnull), self.spec.prefix, self.spec.scheme)
            tree = self.cache.tree(commit, placed)
            tree.entries()  # listed (and bounded) now: a tree over the bounds fails this update whole
            if self.rollback_rule and resolved.moves:
                self.cache.remember_served(tree.commit)  # what the next start compares with
        self.tree, self.resolved, self.signed_by = tree, replace(resolved, commit=commit), signer
        if current is not None and not first:
            logger.info("%s: now serving commit %s (was %s)", self.spec.source, tree.commit[:12], current[:12])
        self._state.serving = tree.commit
        self._state.commits = {str(self.spec.source): tree.commit}
        return True

    def _forward_only(self, resolved: Resolved, commit: str, current: str | None) -> str:
        """The rollback rule (as a published index's, core/published_index.py `goes_back`): a followed branch
        moves only to a commit that has the one served before in its history, this run's or, at a start,
        the last run's (`GitCache.last_served`). Anything else (an older commit replayed by a force-push,
        another history) is refused in one line unless `accept_older_commit`; at a start the commit served
        before is served again, while running the current one stays."""
        previous = current if current is not None else self.cache.last_served()
        if previous is None or previous == commit or self.accept_older_commit:
            return commit
        if self.cache.descends(resolved, commit, previous):
            return commit
        refusal = (
            f"{self.spec.source}: commit {commit[:12]} does not descend from commit {previous[:12]} served "
            "before: a followed branch never goes back or to another history (serve --accept-older-commit "
            "to take it on purpose)"
        )
        if current is not None or not self.cache.has_commit(previous):
            self.refused = resolved.commit
            raise GitError(refusal)
        logger.warning("%s; serving commit %s again", refusal, previous[:12])
        self._state.last_error = refusal
        return previous

    def _check_signature(self, commit: str) -> str | None:
        if self.trusted_commit_keys is None:
            return None
        try:
            sha256 = len(commit) == 64  # a SHA-256 repository's commit signs in `gpgsig-sha256`
            return commit_signer(self.cache.commit_object(commit), self.trusted_commit_keys, sha256=sha256)
        except GitError as exc:
            raise GitError(f"{self.spec.source} at {commit[:12]}: {exc} (--require-signed-commit)") from None

    # -- the `SkillSource` protocol ------------------------------------------------------------------

    def poll(self) -> bool:
        """One look at the ref (blocking); whether another commit is now served. On failure the last good
        commit stays served, the failure is in `status`, and it raises."""
        try:
            moved = self._update()
        except Exception as exc:
            self._state.last_error = str(exc) if isinstance(exc, GitError) else self._state.last_error
            self._state.failures += 1
            raise
        self._state.checked_at = time.time()
        self._state.last_error = None
        self._state.failures = 0
        # The catalog exports the new check time (`SkillCatalog.observe_gauges`, the gauges' one writer).
        if moved:
            self._state.loaded_at = time.time()
        return moved

    def scan(self, request: ScanRequest) -> SourceScan:
        tree = self.tree
        if tree is None:
            raise GitError(f"{self.spec.source} was not fetched yet (GitRootSource.load)")
        last = self._last
        if last is not None and last[0] == tree.commit:
            # A commit's tree never changes: a folder watcher's event is elsewhere, and a rescan of folders
            # keeps this root's scan.
            return SourceScan(last[1], ((), set()) if request.changed is not None else None)
        result = _annotate(tree.scan(request.digests, enforce_limits=request.enforce_limits), self)
        self._last = (tree.commit, result)
        return SourceScan(result)

    def watch_paths(self) -> list[str]:
        return []  # read from git's objects, never from a folder

    def status(self) -> SourceStatus:
        return self._state


class GitCatalog(SkillCatalog):
    """Folders and git repositories, served as one catalog (see the module docstring): a `SkillCatalog`
    whose git roots are `GitRootSource`s, built and loaded in one call. Nothing of `SkillCatalog` is
    replaced: following a branch is the catalog's own polling of its sources.

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
        def source(root: SkillRoot | GitRootSpec) -> SkillRoot | GitRootSource:
            if isinstance(root, SkillRoot):
                return root
            return GitRootSource(
                root,
                poll_seconds=poll_seconds,
                trusted_commit_keys=trusted_commit_keys,
                cache_dir=cache_dir,
                rollback_rule=rollback_rule,
                accept_older_commit=accept_older_commit,
            )

        super().__init__([source(root) for root in roots], **options)

    @property
    def git_sources(self) -> list[GitRootSource]:
        return [source for source in self.sources if isinstance(source, GitRootSource)]

    @property
    def git_roots(self) -> list[GitRootSpec]:
        return [source.spec for source in self.git_sources]

    def commits(self) -> dict[str, str]:
        """Each git root (as written) and the commit it serves."""
        return {str(g.spec.source): g.commit for g in self.git_sources if g.commit is not None}

    def load(self) -> None:
        """Fetch and list every git root; `GitError` (one line) when one cannot be served.
        Nothing is scanned: the first `snapshot` does that."""
        for source in self.git_sources:
            source.load()

    @property
    def follows(self) -> bool:
        """Whether any git root follows a branch (polling can change what is served)."""
        return any(source.follows for source in self.git_sources)

    def folder_roots(self) -> list[SkillRoot]:
        """The roots that are folders (a git root has no folder: it is read from git's objects)."""
        return list(self.roots)

    def add_signatures(self, book: SignatureBook) -> None:
        """Add each git tree's own committed `.skillwire-signatures.json` (`SigningError` when unusable)."""
        for tree in self.trees():
            add_tree_signatures(book, tree)

    def trees(self) -> list[GitTreeSource]:
        """The tree each git root serves now (what `lint` and `sign` read)."""
        return [g.tree for g in self.git_sources if g.tree is not None]


def add_tree_signatures(book: SignatureBook, tree: GitTreeSource) -> None:
    """Add a git tree's own committed `.skillwire-signatures.json` (`SigningError` when unusable)."""
    try:
        found = tree.signatures()
    except GitError as exc:
        raise SigningError(str(exc)) from None
    if found is None:
        return
    where, data = found
    try:
        raw = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise SigningError(f"{where}: unreadable signatures file ({exc})") from None
    book.add(Path(where), raw)


def read_git_root(root: GitRootSpec) -> GitTreeSource:
    """One git root fetched once and read at the commit its ref names, never followed: what `lint` and the
    bridge's `--local` read. Raises `GitError` (one line) when it cannot be served."""
    source = GitRootSource(root, poll_seconds=0)
    source.load()
    assert source.tree is not None  # `load` raises otherwise
    return source.tree


def _annotate(result: ScanResult, root: GitRootSource) -> ScanResult:
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
