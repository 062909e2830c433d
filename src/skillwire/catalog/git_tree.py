"""A commit's skills read from git's object database: no working tree, nothing written but git's objects.

The one owner of listing a git tree and reading its blobs (docs/architecture.md). `GitTreeSource` is one
git root at one commit: `scan` yields the skills and files served (a `ScanResult`, as a folder's scan
does) and each file's bytes are read on demand by `GitObjects`, one long-lived `git cat-file --batch`.

- **Listing** (`list_tree`): `git ls-tree -r -z` read a piece at a time as git writes it and stopped
  (the process killed) at `MAX_TREE_ENTRIES`, before anything more is read: a tree bomb (a few objects
  naming 10^8 paths) costs at most that many records. Each entry is checked once by the URI rule
  (`core/uri.py` `validate_segment`): a name that cannot be a URI segment (`..`, `.`, empty, a
  backslash or NUL) is never served and is reported.
- **What is never served** (reported with a reason, as a folder's ignored paths): a symlink, a
  submodule (gitlink), a Git LFS pointer, a path the tree names twice (`d` a symlink or file and `d/`
  a folder: neither is served through the other, since nothing is ever written), and everything the
  folder rules hide (the ignore list, `.skillignore`, fail-closed).
- **Limits, before any blob is read**: more than `MAX_SKILLS_PER_ROOT` skills refuses the commit; a
  skill over the SEP's files or bytes (the sizes the tree states) is skipped as a folder's is.
- **Bytes** (`GitObjects.read`): one `git cat-file --batch` per repository, asked for one blob at a time
  and read in pieces of at most 64 KiB, never more than the size the tree states (a blob of another
  size is refused before its body is read); the server checks them against the listed digest with
  `core/verify.py` before serving, as for a file on disk.
- **Digests** are cached by blob id (`DigestCache.cached_blob`): a blob is hashed once, whichever
  commit holds it, and a restart hashes nothing it hashed before.
"""

from __future__ import annotations

import bisect
import codecs
import hashlib
import io
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING

from skillwire.catalog.digests import DigestCache, FileDigest
from skillwire.catalog.filesystem import (
    MAX_SKILL_MD_BYTES,
    MAX_SKILLIGNORE_BYTES,
    SKILLIGNORE,
    Ignored,
    ScanResult,
    SkillRoot,
    WalkResult,
    _mime_of,
    _UriBuilder,
    is_ignored_name,
    release_name_caches,
)
from skillwire.catalog.signatures import _MAX_FILE_BYTES as MAX_SIGNATURES_FILE_BYTES
from skillwire.catalog.signatures import SIGNATURES_FILE
from skillwire.catalog.snapshot import CatalogFile, CatalogSkill, MemoryContent, SkippedSkill
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import GitError, InvalidSkillURI, ServedFileChanged, SkillError
from skillwire.core.fields import publish_problem
from skillwire.core.json import JSONValue
from skillwire.core.manifest import DIGEST_PREFIX, limit_problem
from skillwire.core.skill_md import parse_skill_md
from skillwire.core.uri import SKILL_MD, validate_segment
from skillwire.core.verify import file_matches

if TYPE_CHECKING:
    import pathspec

__all__ = ["MAX_SKILLS_PER_ROOT", "MAX_TREE_ENTRIES", "GitFile", "GitObjects", "GitTreeSource", "TreeEntry"]

# The bounds of one git root (stated in docs/git.md). Entries: every blob, symlink and submodule the
# listing names under SUBDIR; 200,000 is twice the 100,000-file catalogs the folder benchmarks serve,
# and holds the listing to about 60 MB at the worst. Skills: 25,000, two and a half times the largest
# benchmarked catalog.
MAX_TREE_ENTRIES = 200_000
MAX_SKILLS_PER_ROOT = 25_000
LFS_POINTER_HEAD = b"version https://git-lfs.github.com/spec/v1\n"
LFS_POINTER_MAX = 1024  # git-lfs pointers are about 130 bytes; the spec caps them at 1024
_CHUNK = 1 << 16
# No `%(objectsize)`: in a partial clone, asking a missing blob's size makes git fetch that blob alone
# (300 skills took over a minute); sizes are read after the one batched fetch (`blob_sizes`).
_LIST_FORMAT = "%(objectmode) %(objecttype) %(objectname)%x09%(path)"
_REGULAR = ("100644", "100755")
_SYMLINK = "120000"
_GITLINK = "160000"
_TIMEOUT_S = 600.0
_STDERR_SHOWN = 300

RelPath = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """One entry of a commit's tree below SUBDIR: its path there, mode, object id and stated size."""

    rel: RelPath
    mode: str
    oid: str
    size: int  # -1 for what is not a blob (a submodule)


def last_line(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith(("fatal:", "error:", "remote:", "ERROR"))]
    text = (fatal or lines[-1:] or ["git gave no reason"])[0]  # the first fatal line names the cause
    text = "".join(c if c.isprintable() else "?" for c in text)  # a server's words, shown in a terminal
    return text[:_STDERR_SHOWN]


def git_command(repo: Path, *args: str) -> list[str]:
    """`git --git-dir=REPO ARGS` with nothing of the repository's own configuration able to run code."""
    return ["git", f"--git-dir={repo}", *args]


def list_tree(
    repo: Path,
    commit: str,
    subdir: tuple[str, ...],
    env: dict[str, str],
    where: str,
    max_entries: int = MAX_TREE_ENTRIES,
) -> list[TreeEntry]:
    """Every entry of `commit`'s tree under `subdir` (paths relative to it), read as git writes them;
    `GitError` in one line when SUBDIR is not a folder or the tree names more than `max_entries`."""
    prefix = "/".join(subdir)
    args = ["ls-tree", "-r", "-z", "--full-tree", f"--format={_LIST_FORMAT}", commit]
    if prefix:
        kind = _run(git_command(repo, "cat-file", "-t", f"{commit}:{prefix}"), env, where)
        if kind.strip() != b"tree":
            raise GitError(f"{where}: {prefix} is not a folder")
        args += ["--", prefix + "/"]
    cut = len(subdir)
    entries: list[TreeEntry] = []
    process = subprocess.Popen(
        git_command(repo, *args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env
    )
    assert isinstance(process.stdout, io.BufferedReader)
    assert process.stderr is not None
    deadline = time.monotonic() + _TIMEOUT_S
    pending = b""
    try:
        while chunk := process.stdout.read1(_CHUNK):
            records = (pending + chunk).split(b"\0")
            pending = records.pop()
            for record in records:
                entries.append(_entry(record, cut))
            if len(entries) > max_entries:
                raise GitError(
                    f"{where}: the tree names more than {max_entries:,} files under "
                    f"{prefix or 'its top'}; refused (a git root serves at most {max_entries:,})"
                )
            if time.monotonic() > deadline:
                raise GitError(f"{where}: listing the tree took more than {_TIMEOUT_S:.0f} s; refused")
        process.wait()
        if process.returncode != 0:
            raise GitError(f"{where}: {last_line(process.stderr.read(1 << 16))}")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
        process.stderr.close()
    if pending:
        entries.append(_entry(pending, cut))
    return entries


def _entry(record: bytes, cut: int) -> TreeEntry:
    meta, _, raw_path = record.partition(b"\t")
    mode, _, oid = meta.decode("ascii", "replace").split(" ", 2)
    rel = tuple(os.fsdecode(raw_path).split("/"))[cut:]
    return TreeEntry(rel, mode, oid, -1)


def blob_sizes(repo: Path, oids: list[str], env: dict[str, str], where: str) -> dict[str, int]:
    """The size of each blob (one `git cat-file --batch-check`, every blob already in the repository)."""
    if not oids:
        return {}
    command = git_command(repo, "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)")
    out = subprocess.run(
        command,
        input="\n".join(oids).encode("ascii") + b"\n",
        capture_output=True,
        env=env,
        timeout=_TIMEOUT_S,
        check=False,
    ).stdout
    sizes: dict[str, int] = {}
    for line in out.decode("ascii", "replace").splitlines():
        parts = line.split(" ")
        if len(parts) == 3 and parts[1] == "blob" and parts[2].isdigit():
            sizes[parts[0]] = int(parts[2])
    missing = next((oid for oid in oids if oid not in sizes), None)
    if missing is not None:
        raise GitError(f"{where}: the git cache lacks blob {missing}")
    return sizes


def _run(command: list[str], env: dict[str, str], where: str) -> bytes:
    done = subprocess.run(command, capture_output=True, env=env, timeout=_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise GitError(f"{where}: {last_line(done.stderr)}")
    return done.stdout


class GitObjects:
    """One long-lived `git cat-file --batch` on a repository: a blob's bytes on demand, streamed and bounded.

    Thread-safe (one request at a time on the one process). A reply of another type or size than the
    tree stated, or a missing object, is refused before its body is read, and the process is started
    afresh so the next request is not read out of step.
    """

    def __init__(self, repo: Path, env: Callable[[], dict[str, str]]) -> None:
        self.repo = repo
        self._env = env
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def _started(self) -> tuple[IO[bytes], IO[bytes]]:
        process = self._process
        if process is None or process.poll() is not None:
            process = subprocess.Popen(
                git_command(self.repo, "cat-file", "--batch"),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=self._env(),
            )
            self._process = process
        assert process.stdin is not None
        assert process.stdout is not None
        return process.stdin, process.stdout

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            if process.poll() is None:
                process.kill()
            process.wait()
            for pipe in (process.stdin, process.stdout):
                if pipe is not None:
                    pipe.close()

    def close(self) -> None:
        with self._lock:
            self._stop()

    def restart(self) -> None:
        """Start afresh at the next read (after a fetch: the new pack is then certainly seen)."""
        self.close()

    def stream(self, oid: str, size: int) -> Iterator[bytes]:
        """The blob's bytes in pieces of at most 64 KiB; `GitError` when it is not a blob of `size` bytes."""
        with self._lock:
            try:
                stdin, stdout = self._started()
                stdin.write(oid.encode("ascii") + b"\n")
                stdin.flush()
                header = stdout.readline(256)
                parts = header.split()
                if len(parts) != 3 or parts[1] != b"blob" or not parts[2].isdigit():
                    self._stop()
                    raise GitError(f"the git cache lacks blob {oid} ({header[:80].decode('ascii', 'replace').strip()})")
                if int(parts[2]) != size:
                    self._stop()  # never read a body of a size nobody listed
                    raise GitError(f"blob {oid} is {int(parts[2]):,} bytes, the tree said {size:,}")
                left = size
                while left:
                    piece = stdout.read(min(_CHUNK, left))
                    if not piece:
                        self._stop()
                        raise GitError(f"git cat-file stopped in the middle of blob {oid}")
                    left -= len(piece)
                    yield piece
                if stdout.read(1) != b"\n":
                    self._stop()
                    raise GitError(f"git cat-file is out of step after blob {oid}")
            except (OSError, ValueError) as exc:
                self._stop()
                raise GitError(f"git cat-file failed reading blob {oid}: {exc}") from None
            except GeneratorExit:
                self._stop()  # a reader that stopped early leaves the rest of the body in the pipe
                raise

    def read(self, oid: str, size: int) -> bytes:
        return b"".join(self.stream(oid, size))

    def hash(self, oid: str, size: int) -> tuple[FileDigest, bool, bytes | None]:
        """The blob's digest, whether it is a Git LFS pointer, and its bytes when at most 64 KiB."""
        hasher = hashlib.sha256()
        decoder = codecs.getincrementaldecoder("utf-8")()
        decodes = True
        saw_nul = False
        head = b""
        small: list[bytes] = []
        for piece in self.stream(oid, size):
            hasher.update(piece)
            if len(head) < len(LFS_POINTER_HEAD):
                head += piece[: len(LFS_POINTER_HEAD)]
            if size <= _CHUNK:
                small.append(piece)
            saw_nul = saw_nul or b"\0" in piece
            if decodes:
                try:
                    decoder.decode(piece)
                except UnicodeDecodeError:
                    decodes = False
        if decodes:
            try:
                decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                decodes = False
        lfs = size <= LFS_POINTER_MAX and head.startswith(LFS_POINTER_HEAD)
        digest = FileDigest(DIGEST_PREFIX + hasher.hexdigest(), decodes and not saw_nul)
        return digest, lfs, b"".join(small) if size <= _CHUNK else None


# Git files hold no bytes and no path: `content` is this shared empty marker, reads go to `objects`.
IN_GIT = MemoryContent(b"")


@dataclass(frozen=True, slots=True)
class GitFile(CatalogFile):
    """A served file whose bytes are a blob in a git repository's object database."""

    objects: GitObjects
    oid: str

    def read(self) -> bytes:
        try:
            data = self.objects.read(self.oid, self.size)
        except GitError as exc:
            raise ServedFileChanged(f"{self.uri} cannot be read from the git cache: {exc}") from None
        if not file_matches(self, data):  # size, then digest: core/verify.py decides
            raise ServedFileChanged(f"{self.uri} does not match its listed digest in the git cache")
        return data


class GitTreeSource:
    """One git root at one commit, read from the object database (see the module docstring).

    `scan` is what a folder's `scan_root` is for a folder; `walk` what `walk_root` is (for `lint`);
    `read` a blob's bytes. `shown` names where a path is (`git+URL@COMMIT/PATH`) in every message.
    """

    def __init__(
        self,
        repo: Path,
        objects: GitObjects,
        commit: str,
        subdir: tuple[str, ...],
        root: SkillRoot,
        shown: str,
        env: Callable[[], dict[str, str]],
        prefetch: Callable[[list[str]], None] = lambda oids: None,
    ) -> None:
        self.repo = repo
        self._prefetch = prefetch  # brings the listed blobs a partial fetch left out, in one request
        self.objects = objects
        self.commit = commit
        self.subdir = subdir
        self.root = root
        self.base = f"{shown}@{commit[:12]}"
        self._env = env
        self._entries: list[TreeEntry] | None = None
        self._signatures: TreeEntry | None = None  # a `.skillwire-signatures.json` at the top
        self._notes: list[tuple[str, str, Ignored | None]] = []

    def shown(self, rel: RelPath) -> str:
        return "/".join((self.base, *rel)) if rel else self.base

    # -- listing -------------------------------------------------------------------------------------

    def entries(self) -> list[TreeEntry]:
        """The served candidates (regular blobs passing every rule), sorted by path; notes in `notes`."""
        if self._entries is None:
            listed = list_tree(self.repo, self.commit, self.subdir, self._env(), self.base)
            blobs = list(dict.fromkeys(e.oid for e in listed if e.mode in _REGULAR))
            self._prefetch(blobs)
            sizes = blob_sizes(self.repo, blobs, self._env(), self.base)
            sized = [replace(e, size=sizes[e.oid]) if e.mode in _REGULAR else e for e in listed]
            self._entries = self._filter(sized)
        return self._entries

    @property
    def notes(self) -> list[tuple[str, str]]:
        self.entries()
        return [(where, why) for where, why, _ in self._notes]

    def _note(self, rel: RelPath, why: str, kind: Ignored | None = None) -> None:
        self._notes.append((self.shown(rel), why, kind))

    def _filter(self, listed: list[TreeEntry]) -> list[TreeEntry]:
        kept: list[TreeEntry] = []
        paths: dict[RelPath, int] = {}
        ignores: list[TreeEntry] = []
        for entry in listed:
            rel = entry.rel
            problem = _path_problem(rel)
            if problem is not None:
                self._note(rel, f"not served: {problem}")
                continue
            if any(is_ignored_name(part) for part in rel):
                if rel == (SIGNATURES_FILE,) and entry.mode in ("100644", "100755"):
                    self._signatures = entry
                if rel[-1] == SKILLIGNORE and entry.mode in ("100644", "100755"):
                    ignores.append(entry)
                continue  # the ignore list hides it, as in a folder: nothing to say
            paths[rel] = paths.get(rel, 0) + 1
            if entry.mode == _SYMLINK:
                self._note(rel, "symlink: never served from a git root", Ignored.SYMLINK_OUTSIDE)
            elif entry.mode == _GITLINK:
                self._note(rel, "submodule: not fetched (serve its repository as a root of its own)")
            elif entry.mode in ("100644", "100755") and entry.size >= 0:
                kept.append(entry)
            else:
                self._note(rel, f"not served: a tree entry of mode {entry.mode}", Ignored.SPECIAL_FILE)
        # A name the tree holds twice, or as a file (or symlink) and a folder: neither is served, nor anything
        # below it (nothing is ever written, so neither could reach the other, but which one is meant cannot
        # be said; git itself refuses such a tree, so only a crafted one holds it).
        folders = {rel[:cut] for rel in paths for cut in range(1, len(rel))}
        clashing = {rel for rel, count in paths.items() if count > 1 or rel in folders}
        for rel in sorted(clashing):
            self._note(rel, "not served: the tree names this path more than once (as a file and a folder)")
        if clashing:
            kept = [e for e in kept if not any(e.rel[:cut] in clashing for cut in range(1, len(e.rel) + 1))]
        if ignores:
            kept = self._skillignored(kept, ignores)
        kept.sort(key=_by_rel)
        return kept

    def _skillignored(self, kept: list[TreeEntry], ignores: list[TreeEntry]) -> list[TreeEntry]:
        """`kept` without what the `.skillignore` files exclude (as in a folder: the deepest matching file
        decides; an unusable one hides its whole folder)."""
        import pathspec

        specs: dict[RelPath, pathspec.GitIgnoreSpec | None] = {}
        for ignore in ignores:
            base = ignore.rel[:-1]
            problem: str | None = None
            if ignore.size > MAX_SKILLIGNORE_BYTES:
                problem = f"a .skillignore larger than {MAX_SKILLIGNORE_BYTES:,} bytes"
            else:
                try:
                    text = self.objects.read(ignore.oid, ignore.size).decode("utf-8")
                    specs[base] = pathspec.GitIgnoreSpec.from_lines(text.splitlines())
                except UnicodeDecodeError:
                    problem = "a .skillignore that is not UTF-8"
                except (ValueError, GitError) as exc:
                    problem = f"an invalid .skillignore ({exc})"
            if problem is not None:
                specs[base] = None
                self._note(ignore.rel, f"{problem}; its folder is not published", Ignored.UNUSABLE_SKILLIGNORE)
        ordered = sorted(specs, key=len)

        def excluded(rel: RelPath) -> bool:
            for cut in range(1, len(rel) + 1):
                applying = [(b, specs[b]) for b in ordered if len(b) < cut and rel[: len(b)] == b]
                if any(spec is None for _, spec in applying):
                    return True
                for base, spec in reversed(applying):
                    assert spec is not None
                    sub = "/".join(rel[len(base) : cut]) + ("/" if cut < len(rel) else "")
                    verdict = spec.check_file(sub).include
                    if verdict is not None:
                        if verdict:
                            return True
                        break
            return False

        return [e for e in kept if not excluded(e.rel)]

    def signatures(self) -> tuple[str, bytes] | None:
        """Where and what the tree's own `.skillwire-signatures.json` is (`skillwire sign`, committed), if any;
        `GitError` when it is over the signatures file's bound."""
        self.entries()
        entry = self._signatures
        if entry is None:
            return None
        if entry.size > MAX_SIGNATURES_FILE_BYTES:
            raise GitError(f"{self.shown(entry.rel)}: over {MAX_SIGNATURES_FILE_BYTES:,} bytes; not a signatures file")
        return self.shown(entry.rel), self.objects.read(entry.oid, entry.size)

    # -- what `lint` walks ---------------------------------------------------------------------------

    def walk(self) -> WalkResult:
        """The entries as `walk_root` gives a folder's: `real` is the blob id (`read_real` reads it)."""
        entries = self.entries()
        files = [(e.rel, e.oid, e.size) for e in entries]
        skill_dirs = sorted(e.rel[:-1] for e in entries if e.rel[-1] == SKILL_MD)
        ignored = [(where, why) for where, why, _ in self._notes]
        kinds = {where: kind or Ignored.SPECIAL_FILE for where, _, kind in self._notes}
        return WalkResult(files, skill_dirs, ignored, kinds)

    def read_real(self, oid: str, limit: int) -> bytes:
        size = next(e.size for e in self.entries() if e.oid == oid)
        if size > limit:
            raise OSError(f"{size:,} bytes, over {limit:,}")
        return self.objects.read(oid, size)

    # -- scanning ------------------------------------------------------------------------------------

    def scan(self, digests: DigestCache, *, enforce_limits: bool = True) -> ScanResult:
        """The skills and files served from this commit (skills that break a rule skipped with a reason)."""
        entries = self.entries()
        result = ScanResult()
        result.ignored += self.notes
        keys = [e.rel for e in entries]
        skill_dirs = sorted(e.rel[:-1] for e in entries if e.rel[-1] == SKILL_MD)
        if len(skill_dirs) > MAX_SKILLS_PER_ROOT:
            raise GitError(
                f"{self.base}: {len(skill_dirs):,} skills; refused (a git root serves at most {MAX_SKILLS_PER_ROOT:,})"
            )
        root = self.root
        plans: list[tuple[RelPath, list[TreeEntry], dict[str, JSONValue]]] = []
        for skill_dir in skill_dirs:
            members = _members(entries, keys, skill_dir)
            try:
                frontmatter = self._check_skill(skill_dir, members, enforce_limits, digests)
            except (SkillError, GitError) as exc:
                result.skipped.append(SkippedSkill(self.shown(skill_dir), str(exc)))
                continue
            plans.append((skill_dir, members, frontmatter))
        known: dict[str, tuple[FileDigest, bool] | GitError] = {}
        for _, members, _ in plans:
            for member in members:
                if member.oid not in known:
                    try:
                        known[member.oid] = self._digest(member, digests)
                    except GitError as exc:
                        known[member.oid] = exc
        uris = _UriBuilder(root)
        made: dict[RelPath, GitFile] = {}
        for skill_dir, members, frontmatter in plans:
            failed = next((m for m in members if isinstance(known[m.oid], GitError)), None)
            if failed is not None:
                result.skipped.append(SkippedSkill(self.shown(skill_dir), f"cannot read {'/'.join(failed.rel)}"))
                continue
            served: list[GitFile] = []
            for member in members:
                found = known[member.oid]
                assert not isinstance(found, GitError)
                digest, lfs = found
                if lfs:
                    note = (
                        self.shown(member.rel),
                        "Git LFS pointer: the file itself is not in the repository, not served",
                    )
                    if note not in result.ignored:
                        result.ignored.append(note)
                    continue
                file = made.get(member.rel)
                if file is None:
                    file = GitFile(
                        uris.file_uri(member.rel),
                        digest.digest,
                        member.size,
                        _mime_of(member.rel[-1], digest.is_text),
                        digest.is_text,
                        IN_GIT,
                        self.objects,
                        member.oid,
                    )
                    made[member.rel] = file
                served.append(file)
            manifest = tuple(sorted(served, key=lambda f: f.uri))
            skill_md = made[(*skill_dir, SKILL_MD)]
            result.skills.append(CatalogSkill(SkillEntry(skill_md.uri, frontmatter, manifest), self.shown(skill_dir)))
        result.files += made.values()
        release_name_caches()
        return result

    def _digest(self, entry: TreeEntry, digests: DigestCache) -> tuple[FileDigest, bool]:
        cached = digests.cached_blob(entry.oid)
        if cached is not None:
            return cached
        digest, lfs, _ = self.objects.hash(entry.oid, entry.size)
        digests.remember_blob(entry.oid, digest, lfs=lfs)
        return digest, lfs

    def _check_skill(
        self, skill_dir: RelPath, members: list[TreeEntry], enforce_limits: bool, digests: DigestCache
    ) -> dict[str, JSONValue]:
        """Every rule a skill must pass before any of its blobs but SKILL.md is read; its frontmatter."""
        segments = self.root.prefix + skill_dir
        if not segments:
            raise SkillError(
                "SKILL.md sits at the top of the root, so the skill has no path; serve its parent folder "
                "or give the root a prefix ending in the skill's name (=<name>)"
            )
        problem = limit_problem(len(members), sum(m.size for m in members))
        if problem is not None and enforce_limits:
            raise SkillError(f"over the SEP-2640 limits: skill {problem}")
        skill_md = next(m for m in members if m.rel == (*skill_dir, SKILL_MD))
        if skill_md.size > MAX_SKILL_MD_BYTES:
            raise SkillError(f"SKILL.md is {skill_md.size:,} bytes; refusing to parse it")
        cached = digests.cached_blob(skill_md.oid)
        data: bytes | None = None
        if cached is None:
            data = self.objects.read(skill_md.oid, skill_md.size)
            hashed, lfs, _ = _hash_bytes(data)
            digests.remember_blob(skill_md.oid, hashed, lfs=lfs)
            cached = hashed, lfs
        digest = cached[0].digest
        frontmatter = digests.frontmatter(digest)
        if frontmatter is None:
            if data is None:
                data = self.objects.read(skill_md.oid, skill_md.size)
            frontmatter = parse_skill_md(data).frontmatter
            digests.remember_frontmatter(digest, frontmatter)
        unpublishable = publish_problem(frontmatter, segments[-1])
        if unpublishable is not None:
            raise SkillError(unpublishable.message)
        return frontmatter


def _hash_bytes(data: bytes) -> tuple[FileDigest, bool, bytes]:
    from skillwire.catalog.mime import is_utf8_text

    lfs = len(data) <= LFS_POINTER_MAX and data.startswith(LFS_POINTER_HEAD)
    return FileDigest(DIGEST_PREFIX + hashlib.sha256(data).hexdigest(), is_utf8_text(data)), lfs, data


def _path_problem(rel: RelPath) -> str | None:
    """Why a path the tree names cannot be served: the one URI rule (`validate_segment`) on each name."""
    if not rel:
        return "an empty path"
    for part in rel:
        if part in ("", ".", ".."):
            return f"the path component {part!r}"
        try:
            validate_segment(part)
        except InvalidSkillURI as exc:
            return f"the name {part!r} cannot be published in a URI ({exc.reason})"
    return None


def _by_rel(entry: TreeEntry) -> RelPath:
    return entry.rel


def _members(entries: list[TreeEntry], keys: list[RelPath], skill_dir: RelPath) -> list[TreeEntry]:
    if not skill_dir:
        return list(entries)
    lo = bisect.bisect_left(keys, skill_dir)
    hi = bisect.bisect_left(keys, (*skill_dir[:-1], skill_dir[-1] + "\0"))
    return [e for e in entries[lo:hi] if e.rel[: len(skill_dir)] == skill_dir]
