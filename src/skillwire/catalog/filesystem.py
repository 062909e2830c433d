"""Skills from folders on disk: discovery at any depth, ignore rules, symlink and special-file policy.

A skill is any directory holding a regular file named exactly `SKILL.md`, at any depth (a skill
inside another skill is published on its own *and* its files stay in the enclosing skill's
manifest). The URI of every file follows from where it sits: `<scheme>://<prefix>/<relative path>`.

What is never served: names on the ignore list (`.git`, `.env*`, editor swap files, ...), anything a
gitignore-style `.skillignore` excludes (it applies to the folder it sits in and below), symlinks
whose target leaves the root, symlinked directories (no loops, no duplicates), and anything that is
not a regular file (FIFOs, sockets, devices are never opened). A skill that breaks a rule is skipped
with a precise reason; the rest are served.
"""

from __future__ import annotations

import bisect
import contextlib
import fnmatch
import functools
import itertools
import logging
import operator
import os
import re
import stat
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from skillwire.catalog.digests import DigestCache, FileDigest, pack_stat, stat_identity
from skillwire.catalog.mime import guess_mime_type
from skillwire.catalog.safe_open import read_regular
from skillwire.catalog.snapshot import CatalogFile, CatalogSkill, SkippedSkill
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import InvalidSkillURI, SkillError
from skillwire.core.fields import publish_problem
from skillwire.core.json import JSONValue
from skillwire.core.manifest import limit_problem
from skillwire.core.skill_md import parse_skill_md
from skillwire.core.uri import (
    DEFAULT_SCHEME,
    SKILL_MD,
    encode_segment,
    format_uri,
    is_absolute,
    parse_uri,
    validate_segment,
)
from skillwire.core.verify import file_mismatches

if TYPE_CHECKING:
    # Imported where a `.skillignore` is parsed: a start serving a persisted snapshot walks nothing.
    import pathspec

__all__ = ["SkillRoot"]

logger = logging.getLogger(__name__)

IGNORED_NAMES = frozenset(
    {
        ".git",
        ".skillwire-signatures.json",  # catalog/signatures.py: a catalog's publisher signatures, never served
        ".hg",
        ".svn",
        ".DS_Store",
        "Thumbs.db",
        "desktop.ini",
        "__pycache__",
        "node_modules",
        ".skillignore",
    }
)
IGNORED_GLOBS = (
    # editor and OS debris
    "*.swp", "*.swo", "*.swx", "*~", ".#*", "#*#", "*.pyc", ".*.un~",
    # skillwire's own temporary folders (an interrupted `skillwire pull` may leave one behind)
    ".skillwire-*",
    # secrets that sit next to code by habit: never publish them by accident
    ".env", ".env.*", ".envrc", ".netrc", ".npmrc", ".pypirc", "*.pem", "id_rsa*", "id_ed25519*", "id_ecdsa*",
)  # fmt: skip
SKILLIGNORE = ".skillignore"
# A SKILL.md larger than this is not parsed (its frontmatter would be absurd); the skill is skipped.
MAX_SKILL_MD_BYTES = 16 * 1024 * 1024
MAX_SKILLIGNORE_BYTES = 1024 * 1024

RelPath = tuple[str, ...]


class WalkRecords:
    """(path, `pack_stat`) of every folder a walk entered, `.skillignore` it read and file it found: what
    validating a persisted snapshot needs (see catalog.persist).

    Held from the walk until the snapshot is saved, so kept compact: the paths (the scan's own strings,
    shared with the files it serves) in one list and the packed stats in one `bytearray`, 48 bytes a
    record. A `(path, bytes)` tuple per record was 144 bytes, 17 MB of a 10,000-skill cold start's peak
    (issue 25).
    """

    __slots__ = ("paths", "stats")

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.stats = bytearray()  # `STAT_BYTES` per path, in the same order

    def add(self, path: str, packed: bytes) -> None:
        self.paths.append(path)
        self.stats += packed

    def __len__(self) -> int:
        return len(self.paths)


_IGNORED_GLOBS_RE = re.compile("|".join(fnmatch.translate(p) for p in IGNORED_GLOBS))


def is_ignored_name(name: str) -> bool:
    return name in IGNORED_NAMES or _IGNORED_GLOBS_RE.match(name) is not None


# The walk asks once per entry, and a catalog repeats the same few file names in every skill.
_is_ignored_cached = functools.lru_cache(maxsize=65536)(is_ignored_name)


@dataclass(frozen=True)
class SkillRoot:
    """A folder to publish, optionally under a URI prefix (`acme/tools`) and another scheme."""

    path: Path
    prefix: tuple[str, ...] = ()
    scheme: str = DEFAULT_SCHEME

    @classmethod
    def parse(cls, spec: str) -> SkillRoot:
        """`PATH` or `PATH=<scheme>://<prefix>` or `PATH=<prefix>` (as written on the command line)."""
        path, sep, target = spec.partition("=")
        if not sep:
            return cls(Path(path))
        if is_absolute(target):
            parsed = parse_uri(target)
            return cls(Path(path), parsed.segments, parsed.scheme)
        prefix = tuple(s for s in target.strip("/").split("/") if s)
        for segment in prefix:
            validate_segment(segment)
        return cls(Path(path), prefix)


class Ignored(StrEnum):
    """Why the walk left a path out (what `skillwire lint` turns into a rule id)."""

    UNREADABLE_DIRECTORY = "unreadable-directory"
    UNUSABLE_SKILLIGNORE = "unusable-skillignore"  # fail closed: its whole folder is left out
    CANNOT_STAT = "cannot-stat"
    SYMLINK_OUTSIDE = "symlink-outside"
    SYMLINK_TO_IGNORED = "symlink-to-ignored"
    DANGLING_SYMLINK = "dangling-symlink"
    SYMLINKED_DIRECTORY = "symlinked-directory"
    SPECIAL_FILE = "special-file"


@dataclass(slots=True)
class _Found:
    rel: RelPath
    real: str
    size: int
    stat: bytes  # `pack_stat`: a scan holds one per file, and an `os.stat_result` is a dozen objects


@dataclass
class ScanResult:
    skills: list[CatalogSkill] = field(default_factory=list)
    files: list[CatalogFile] = field(default_factory=list)
    skipped: list[SkippedSkill] = field(default_factory=list)
    ignored: list[tuple[str, str]] = field(default_factory=list)  # (path, why)


class _Walker:
    def __init__(
        self,
        root: SkillRoot,
        result: ScanResult,
        record: WalkRecords | None = None,
        sizes: dict[int, int] | None = None,
    ) -> None:
        self.root = root
        self.base = os.path.realpath(root.path)
        self.result = result
        self.files: list[_Found] = []
        self.skill_dirs: list[RelPath] = []
        self.kinds: dict[str, Ignored] = {}  # reported path -> why, as data (the sentence is for people)
        # (path, `pack_stat`) of each folder entered and `.skillignore` read, when the caller keeps
        # them to validate a persisted snapshot (catalog.persist); the files found are added after.
        self.record = record
        # One int object per distinct file size, shared by every file of that size: CPython caches
        # only the ints up to 256, and a served file keeps its size for the life of the server, while a
        # few thousand sizes repeat across a big catalog (docs/measurements.md, catalog/filesystem.py).
        self.sizes: dict[int, int] = {} if sizes is None else sizes

    def _inside(self, real: str) -> bool:
        return real == self.base or real.startswith(self.base + os.sep)

    def walk(self, only: frozenset[str] | None = None) -> None:
        self._walk(self.base, (), (), only)

    def _walk(
        self,
        directory: str,
        rel: RelPath,
        specs: tuple[tuple[RelPath, pathspec.GitIgnoreSpec], ...],
        only: frozenset[str] | None = None,
    ) -> None:
        if self.record is not None:
            # Before the listing: an entry added after this stat moves the folder's mtime past it.
            with contextlib.suppress(OSError):  # the scandir below reports it
                self.record.add(directory, pack_stat(os.stat(directory)))
        try:
            entries = list(os.scandir(directory))  # order does not matter: files are sorted once, later
        except OSError as exc:
            self._report(directory, Ignored.UNREADABLE_DIRECTORY, f"unreadable directory: {exc.strerror}")
            return
        names = [e.name for e in entries]
        if SKILLIGNORE in names:
            spec_or_problem = self._skillignore(os.path.join(directory, SKILLIGNORE))
            if isinstance(spec_or_problem, str):
                # Fail closed: what the file meant to hide cannot be known, so nothing here is published.
                shown = os.path.join(str(self.root.path), *rel, SKILLIGNORE)
                self._report(shown, Ignored.UNUSABLE_SKILLIGNORE, f"{spec_or_problem}; its folder is not published")
                return
            specs = (*specs, (rel, spec_or_problem))
        files = self.files
        shared_size = self.sizes.setdefault
        for entry, name in zip(entries, names, strict=True):
            # The ignore list first: a name it hides costs neither a path tuple nor a stat call.
            if (only is not None and name not in only) or _is_ignored_cached(name):
                continue
            if not specs and entry.is_file(follow_symlinks=False):
                # The common case inline (what `_visit` would do for a regular file under no
                # `.skillignore`): a call per file was a tenth of a warm scan's walk.
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    pass  # `_visit` reports it
                else:
                    if stat.S_ISREG(st.st_mode):
                        path = (*rel, name)
                        size = st.st_size
                        files.append(_Found(path, entry.path, shared_size(size, size), pack_stat(st)))
                        if name == SKILL_MD:
                            self.skill_dirs.append(rel)
                        continue
            self._visit(entry, (*rel, name), specs)

    def _skillignore(self, path: str) -> pathspec.GitIgnoreSpec | str:
        """The parsed `.skillignore` at `path`, or why it cannot be used (never blocks on a FIFO)."""
        real = os.path.realpath(path)
        if not self._inside(real):
            return "a .skillignore that is a symlink out of the root"
        if self.record is not None:
            with contextlib.suppress(OSError):  # the open below reports it
                self.record.add(real, pack_stat(os.stat(real)))
        try:
            fd = os.open(real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError as exc:
            return f"an unreadable .skillignore ({exc.strerror})"
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return "a .skillignore that is not a regular file"
            data = handle.read(MAX_SKILLIGNORE_BYTES + 1)
        if len(data) > MAX_SKILLIGNORE_BYTES:
            return f"a .skillignore larger than {MAX_SKILLIGNORE_BYTES:,} bytes"
        import pathspec

        try:
            return pathspec.GitIgnoreSpec.from_lines(data.decode("utf-8").splitlines())
        except UnicodeDecodeError:
            return "a .skillignore that is not UTF-8"
        except (ValueError, re.error) as exc:  # GitIgnorePatternError is a ValueError
            return f"an invalid .skillignore ({exc})"

    def _excluded(self, rel: RelPath, is_dir: bool, specs: tuple[tuple[RelPath, pathspec.GitIgnoreSpec], ...]) -> bool:
        # As in git: the deepest .skillignore with a matching pattern decides, so `!keep.log` in a skill
        # folder re-includes a file that `*.log` in a parent folder excludes.
        for base, spec in reversed(specs):
            sub = "/".join(rel[len(base) :]) + ("/" if is_dir else "")
            verdict = spec.check_file(sub).include
            if verdict is not None:
                return verdict
        return False

    def _ignore(self, rel: RelPath, kind: Ignored, why: str) -> None:
        # The display path is built only for what is reported, not for every entry walked.
        self._report(os.path.join(str(self.root.path), *rel), kind, why)

    def _report(self, shown: str, kind: Ignored, why: str) -> None:
        self.result.ignored.append((shown, why))
        self.kinds[shown] = kind

    def _visit(
        self, entry: os.DirEntry[str], rel: RelPath, specs: tuple[tuple[RelPath, pathspec.GitIgnoreSpec], ...]
    ) -> None:
        # A folder is known from the directory read itself (d_type): no stat call, which was a
        # fifth of a warm scan's system calls. Where the file system gives no type, `is_dir` stats.
        if entry.is_dir(follow_symlinks=False):
            if not (specs and self._excluded(rel, True, specs)):
                self._walk(entry.path, rel, specs)
            return
        try:
            lst = entry.stat(follow_symlinks=False)
        except OSError as exc:
            self._ignore(rel, Ignored.CANNOT_STAT, f"cannot stat: {exc.strerror}")
            return
        real = entry.path
        st = lst
        if stat.S_ISLNK(lst.st_mode):
            real = os.path.realpath(entry.path)
            if not self._inside(real):
                self._ignore(rel, Ignored.SYMLINK_OUTSIDE, "symlink whose target is outside the root")
                return
            # A link must not republish what the ignore list hides (`notes.txt -> .env`).
            if any(is_ignored_name(part) for part in os.path.relpath(real, self.base).split(os.sep)):
                self._ignore(rel, Ignored.SYMLINK_TO_IGNORED, "symlink whose target is on the ignore list")
                return
            try:
                st = os.stat(real)
            except OSError:
                self._ignore(rel, Ignored.DANGLING_SYMLINK, "dangling symlink")
                return
            if stat.S_ISDIR(st.st_mode):
                self._ignore(rel, Ignored.SYMLINKED_DIRECTORY, "symlinked directory (not followed)")
                return
        if stat.S_ISDIR(st.st_mode):
            if not self._excluded(rel, True, specs):
                self._walk(real, rel, specs)
            return
        if not stat.S_ISREG(st.st_mode):
            self._ignore(rel, Ignored.SPECIAL_FILE, "not a regular file (FIFO, socket or device)")
            return
        if specs and self._excluded(rel, False, specs):
            return
        self.files.append(_Found(rel, real, self.sizes.setdefault(st.st_size, st.st_size), pack_stat(st)))
        if rel[-1] == SKILL_MD:
            self.skill_dirs.append(rel[:-1])


@dataclass(frozen=True)
class WalkResult:
    """What `scan_root` would consider serving under a root, found without opening any file but
    `.skillignore`s: `files` are `(relative path, real path, size in bytes)` of every regular
    file that passes the ignore rules, sorted; `skill_dirs` hold a `SKILL.md`; `ignored` is `(path, why)`,
    and `kinds` says, for each of those paths, which rule left it out."""

    files: list[tuple[RelPath, str, int]]
    skill_dirs: list[RelPath]
    ignored: list[tuple[str, str]]
    kinds: dict[str, Ignored]


def walk_root(root: SkillRoot) -> WalkResult:
    """Apply the server's discovery and ignore rules to `root` (used by `skillwire lint`)."""
    result = ScanResult()
    walker = _Walker(root, result)
    walker.walk()
    files = sorted(((f.rel, f.real, f.size) for f in walker.files), key=lambda item: item[0])
    return WalkResult(files, sorted(walker.skill_dirs), result.ignored, walker.kinds)


def scan_root(
    root: SkillRoot,
    cache: DigestCache,
    *,
    enforce_limits: bool = True,
    executor: ThreadPoolExecutor | None = None,
    only: frozenset[str] | None = None,
    record: WalkRecords | None = None,
) -> ScanResult:
    """Scan a root; with `only`, just those top-level entries (see `SkillCatalog` incremental refresh).
    With `record`, append what validating a persisted snapshot needs (see `_Walker.record`).

    A whole root is scanned a few top-level folders at a time: no skill spans two of them (unless a
    skill sits at the root itself, which is scanned in one go), so the result is the same, and the
    per-file bookkeeping of a scan is held for one batch instead of the whole catalog (on 100,000
    files, about 70 MB less at the peak).
    """
    sizes: dict[int, int] = {}  # shared by every batch (see `_Walker.sizes`)
    if only is not None or not root.path.is_dir():
        return _scan_batch(root, cache, enforce_limits, executor, only, record, sizes)
    try:
        names = sorted(entry.name for entry in os.scandir(root.path))
    except OSError:
        names = []
    if SKILL_MD in names or len(names) <= _TOP_LEVEL_BATCH:
        return _scan_batch(root, cache, enforce_limits, executor, None, record, sizes)
    result = ScanResult()
    for start in range(0, len(names), _TOP_LEVEL_BATCH):
        batch = frozenset(names[start : start + _TOP_LEVEL_BATCH])
        part = _scan_batch(root, cache, enforce_limits, executor, batch, record, sizes)
        result.skills += part.skills
        result.files += part.files
        result.skipped += part.skipped
        result.ignored += part.ignored
    # Every batch reads the root's own .skillignore: a problem with it is reported by each.
    result.ignored = list(dict.fromkeys(result.ignored))
    return result


_TOP_LEVEL_BATCH = 8


def _scan_batch(
    root: SkillRoot,
    cache: DigestCache,
    enforce_limits: bool,
    executor: ThreadPoolExecutor | None,
    only: frozenset[str] | None,
    record: WalkRecords | None = None,
    sizes: dict[int, int] | None = None,
) -> ScanResult:
    result = ScanResult()
    if not root.path.is_dir():
        result.skipped.append(SkippedSkill(str(root.path), "not a directory"))
        return result
    walker = _Walker(root, result, record, sizes)
    walker.walk(only)
    if record is not None:
        record.paths += [f.real for f in walker.files]
        record.stats += b"".join([f.stat for f in walker.files])
    found = sorted(walker.files, key=_by_rel)
    keys = [f.rel for f in found]
    plans: list[tuple[RelPath, list[_Found], dict[str, JSONValue], FileDigest]] = []

    for skill_dir in sorted(walker.skill_dirs):
        location = os.path.join(str(root.path), *skill_dir) if skill_dir else str(root.path)
        members = _members(found, keys, skill_dir)
        try:
            frontmatter, skill_md_digest = _check_skill(root, skill_dir, members, enforce_limits, cache)
        except SkillError as exc:
            result.skipped.append(SkippedSkill(location, str(exc)))
            continue
        except Exception as exc:  # a bug reading one skill must not stop the scan of all the others
            logger.exception("unexpected error while checking %s", location)
            result.skipped.append(SkippedSkill(location, f"unexpected error while checking this skill: {exc!r}"))
            continue
        plans.append((skill_dir, members, frontmatter, skill_md_digest))

    # A file of a nested skill is also a member of the enclosing one: each is hashed once.
    wanted = {f.rel: f for _, members, _, _ in plans for f in members}

    def hash_batch(batch: list[_Found]) -> list[tuple[RelPath, FileDigest | Exception]]:
        # Only misses are hashed (below); a file that cannot be is its exception: only its skill is skipped.
        return list(zip([f.rel for f in batch], cache.hash_many([(f.real, f.stat) for f in batch]), strict=True))

    # Cache hits are dictionary look-ups: only misses are worth a thread hand-off, and those go in
    # batches, because handing one small file to a thread costs about as much as hashing it.
    digests: dict[RelPath, FileDigest] = {}
    misses: list[_Found] = []
    cached = cache.cached
    for item in wanted.values():
        known = cached(item.real, item.stat)
        if known is None:
            misses.append(item)
        else:
            digests[item.rel] = known
    outcomes: Iterable[tuple[RelPath, FileDigest | Exception]]
    if executor is not None and len(misses) > 64:
        batches = [misses[i : i + 64] for i in range(0, len(misses), 64)]
        outcomes = (outcome for batch_result in executor.map(hash_batch, batches) for outcome in batch_result)
    else:
        outcomes = hash_batch(misses)
    failures: dict[RelPath, Exception] = {}
    for rel, outcome in outcomes:
        if isinstance(outcome, Exception):
            failures[rel] = outcome
        else:
            digests[rel] = outcome
    # A SKILL.md's digest as `_check_skill` found it, whose string the frontmatter cache keeps as its key:
    # the look-up above made an equal string of its own, and a served file would keep a second copy.
    for skill_dir, _, _, skill_md_digest in plans:
        skill_md_rel = (*skill_dir, SKILL_MD)
        if digests.get(skill_md_rel) == skill_md_digest:
            digests[skill_md_rel] = skill_md_digest

    # The skills whose every file was hashed, and their files, each once: a file of a nested skill is
    # also a member of the enclosing one, and one object serves as its item in both manifests and as
    # what the snapshot reads it from. The same `_Found` under a rel in both, so `update` keeps one.
    served: list[tuple[RelPath, list[_Found], dict[str, JSONValue], str]] = []
    found_by_rel: dict[RelPath, _Found] = {}
    for skill_dir, members, frontmatter, _ in plans:
        location = os.path.join(str(root.path), *skill_dir) if skill_dir else str(root.path)
        broken = [f for f in members if f.rel in failures] if failures else None
        if broken:
            first = broken[0]
            result.skipped.append(SkippedSkill(location, f"cannot read {'/'.join(first.rel)}: {failures[first.rel]}"))
            continue
        served.append((skill_dir, members, frontmatter, location))
        found_by_rel.update(zip(map(_by_rel, members), members, strict=True))
    rels, kept = list(found_by_rel), list(found_by_rel.values())
    kept_digests = [digests[rel] for rel in rels]
    file_uri = _UriBuilder(root).file_uri
    # A column at a time (`CatalogFile.from_columns`): an `__init__` call per file is a cold scan's cost per file.
    made = dict(
        zip(
            rels,
            CatalogFile.from_columns(
                list(map(file_uri, rels)),
                [d.digest for d in kept_digests],
                [f.size for f in kept],
                [_mime_of(rel[-1], d.is_text) for rel, d in zip(rels, kept_digests, strict=True)],
                [d.is_text for d in kept_digests],
                [f.real for f in kept],
            ),
            strict=True,
        )
    )
    for skill_dir, members, frontmatter, location in served:
        manifest = tuple(sorted([made[f.rel] for f in members], key=_by_uri))
        # The manifest's own SKILL.md URI, not the same text made again (one string per skill, held for good).
        entry = SkillEntry(made[(*skill_dir, SKILL_MD)].uri, frontmatter, manifest)
        result.skills.append(CatalogSkill(entry, location))
    result.files += made.values()
    # The names this batch asked about are not asked again by the next one (a skill's folder name is its own).
    release_name_caches()
    return result


class _UriBuilder:
    """URIs of paths under one root, each built from its parent folder's URI, so a folder name is
    encoded once per scan instead of once per file below it (the same text as `uri_for`).

    A class rather than a recursive closure: a closure that calls itself is a reference cycle, and
    the catalog freezes what a scan leaves behind without a cyclic collection (see `SkillCatalog`).
    """

    def __init__(self, root: SkillRoot) -> None:
        self.root = root
        self.known: dict[RelPath, str] = {}

    def uri(self, rel: RelPath) -> str:
        cached = self.known.get(rel)
        if cached is None:
            parent = rel[:-1]
            cached = self.uri(parent) + "/" + encode_segment(rel[-1]) if parent else uri_for(self.root, rel)
            self.known[rel] = cached
        return cached

    def file_uri(self, rel: RelPath) -> str:
        """`uri(rel)` without remembering it: a file's URI is asked for once, only folders' repeat."""
        parent = rel[:-1]
        if not parent:
            return self.uri(rel)
        folder = self.known.get(parent)
        if folder is None:
            folder = self.uri(parent)
        return folder + "/" + encode_segment(rel[-1])


def uri_for(root: SkillRoot, rel: RelPath) -> str:
    """The URI of a path relative to a root: `<scheme>://<prefix>/<rel>`, each segment encoded once.

    The first segment is the authority when the root has no prefix, so it takes the reg-name set.
    """
    if root.prefix:
        return format_uri(root.scheme, root.prefix) + "/" + "/".join(encode_segment(part) for part in rel)
    head = encode_segment(rel[0], authority=True)
    return f"{root.scheme}://" + "/".join((head, *(encode_segment(part) for part in rel[1:])))


def _members(found: list[_Found], keys: list[RelPath], skill_dir: RelPath) -> list[_Found]:
    if not skill_dir:
        return list(found)
    lo = bisect.bisect_left(keys, skill_dir)
    hi = bisect.bisect_left(keys, (*skill_dir[:-1], skill_dir[-1] + "\0"))
    return [f for f in found[lo:hi] if f.rel[: len(skill_dir)] == skill_dir]


@functools.lru_cache(maxsize=65536)
def _segment_problem(segment: str) -> str | None:
    # Cached: every file repeats its folders' names, and a 100,000-file catalog has few distinct ones.
    try:
        validate_segment(segment)
    except InvalidSkillURI as exc:
        return exc.reason
    return None


_by_uri = operator.attrgetter("uri")
_by_rel = operator.attrgetter("rel")


def release_name_caches() -> None:
    """Empty the per-name caches a batch's walk filled (ignore rules, segment checks, MIME types, segment
    encoding): they help within a batch, where every skill repeats the same file names, and afterwards
    held each name walked, a skill's folder name being one of its own (3.5 MB at 10,000 skills, at the
    peak of a cold start, issue 25)."""
    for cached in (_is_ignored_cached, _segment_problem, _mime_of, encode_segment, validate_segment):
        cached.cache_clear()


@functools.lru_cache(maxsize=65536)
def _mime_of(file_name: str, is_text: bool) -> str:
    # Cached by the whole name: every skill repeats the same few file names.
    return "text/markdown" if file_name == SKILL_MD else guess_mime_type(file_name, is_text=is_text)


def _check_skill(
    root: SkillRoot, skill_dir: RelPath, members: list[_Found], enforce_limits: bool, cache: DigestCache
) -> tuple[dict[str, JSONValue], FileDigest]:
    """Every rule a skill folder must pass before anything in it is hashed; returns its frontmatter and
    its SKILL.md's digest."""
    segments = root.prefix + skill_dir
    if not segments:
        raise SkillError(
            "SKILL.md sits at the top of the root, so the skill has no path; serve its parent folder "
            "or give the root a prefix ending in the skill's name (PATH=<name>)"
        )
    # Each distinct name once (a skill's files repeat its folders' names); only when one is bad are
    # the files walked in order, to name the first file that holds it.
    if set(map(_segment_problem, set(itertools.chain.from_iterable(map(_by_rel, members))))) != {None}:
        for f in members:
            for part in f.rel:
                problem = _segment_problem(part)
                if problem is not None:
                    raise SkillError(f"file {'/'.join(f.rel)!r} cannot be published in a URI: {problem}")
    total = sum(f.size for f in members)
    problem = limit_problem(len(members), total)
    if problem is not None and enforce_limits:
        raise SkillError(f"over the SEP-2640 limits: skill {problem}")
    skill_md = next(f for f in members if f.rel == (*skill_dir, SKILL_MD))
    if skill_md.size > MAX_SKILL_MD_BYTES:
        raise SkillError(f"SKILL.md is {skill_md.size:,} bytes; refusing to parse it")
    try:
        # Parsing YAML costs far more than hashing a SKILL.md, so the decoded frontmatter is cached by
        # the file's digest: a restart or reload parses only SKILL.md files whose bytes changed.
        # Hashed here, before the skill's other files; the bytes hashed are returned when it was not cached.
        found, data = cache.digest_and_bytes(skill_md.real, skill_md.stat, MAX_SKILL_MD_BYTES)
        digest = found.digest
        fm = cache.frontmatter(digest)
        if fm is None:
            if data is None:
                # The very file the walk found, opened without blocking: a FIFO or symlink swapped in since
                # the walk is refused (issue 11: a blocking open() here hung `serve`).
                data = read_regular(skill_md.real, skill_md.size, identity=stat_identity(skill_md.stat))
                if file_mismatches(SKILL_MD, skill_md.size, digest, data):
                    raise SkillError("SKILL.md changed while it was being read; it will be picked up on the next scan")
            fm = parse_skill_md(data).frontmatter  # NotASkill / FrontmatterError carry the precise reason
            cache.remember_frontmatter(digest, fm)
    except OSError as exc:
        raise SkillError(f"cannot read SKILL.md: {exc.strerror or exc}") from None
    unpublishable = publish_problem(fm, segments[-1])
    if unpublishable is not None:
        raise SkillError(unpublishable.message)
    # The digest cache's own dict, not a copy: entries are immutable, and the cache keeps the frontmatter
    # of every SKILL.md served, so a copy would hold each skill's frontmatter twice.
    return fm, found
