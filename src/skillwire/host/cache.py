"""The on-disk cache of verified MCP skill content, which re-hashes every file on every access.

Requirement 21 ("Cache"): a disk cache MUST either be host-only and immutable or re-hash on every access
(an mtime or a stored label is not verification), MUST sit outside filesystem-skill discovery paths and
stay MCP-origin across restarts, and SHOULD be purged when the server is removed. Requirement 6: cache
paths MUST encode both the origin and the uri, so the origin is recoverable from the path. Requirement 18:
a cached file whose digest still matches needs no refetch. So:

- Every hit is re-hashed against the manifest (`size` and `digest`); a mismatch deletes the file and is a
  miss. Files are also written read-only (0o444) in owner-only (0o700) directories, but that is defence
  in depth, not the check.
- The layout is `<root>/<origin>/<scheme>/<uri segments...>/sha256=<hex>`. Content-addressed per file: a
  new digest is a new file; nothing is ever modified in place (writes go to a temporary file that is
  fsynced and renamed over the final name).
- Each origin, scheme and segment becomes exactly one safe path component (see `encode_component`); a
  component never starts with `.`, so no hidden directory, no `.`/`..`, and no `.<x>/skills` tree can
  appear inside the cache, and no file is ever named `SKILL.md`, so a skills scanner that reached the
  cache anyway would find no skill in it.
- Symlinks are never followed below the root: every directory is opened relative to its parent with
  `O_NOFOLLOW`, and a symlink (or anything else that is not what the cache wrote) is tampering.
- The constructor refuses a root inside (or containing) a skills discovery path.

This module needs the POSIX `*at()` calls (`dir_fd`), which Windows lacks.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import stat
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import platformdirs

from skillwire.core.errors import InvalidSkillURI, SizeMismatch, UnsafeCacheLocation
from skillwire.core.manifest import DIGEST_PREFIX, DIGEST_RE, ManifestFile
from skillwire.core.uri import format_uri, parse_uri
from skillwire.core.verify import file_problem, verify_file
from skillwire.host.discovery import is_inside_discovery_path, path_is_within, skills_discovery_paths
from skillwire.host.identity import validate_origin_label

__all__ = ["ContentCache"]

logger = logging.getLogger("skillwire.host.cache")

CONTENT_FILE_PREFIX = "sha256="  # `=` is always percent-encoded in components, so no segment can look like this
CHUNK_MARK = "~"  # likewise `~`: a component starting with it continues into the next one
_TEMP_PREFIX = ".tmp-"  # a leading `.` is always encoded in components, so temporary names never collide
# File systems allow 255 bytes per name; stay well below it (encoded components are ASCII).
MAX_COMPONENT_LENGTH = 200
_SAFE_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_UPPERCASE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO planted under a content name must not hang the host.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_NEEDED_DIR_FD_CALLS = (os.open, os.mkdir, os.stat, os.unlink, os.rename)


def default_cache_root() -> Path:
    """`<user cache dir>/skillwire/content` (e.g. `~/.cache/skillwire/content`): outside every discovery path."""
    return platformdirs.user_cache_path("skillwire") / "content"


def _percent_encode(text: str, keep: frozenset[str]) -> str:
    return "".join(c if c in keep else "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in text)


def encode_component(text: str) -> str:
    """One decoded URI segment (or scheme) as one file-system-safe name.

    Everything outside `[A-Za-z0-9._-]` is percent-encoded (UTF-8, upper-case hex), and so are a leading
    `.` (no hidden names, never `.` or `..`) and a trailing `.` (Windows drops it). The result is
    non-empty ASCII with no `/`, `\\`, `:`, `%`-ambiguity or control character, and decodes back exactly.
    """
    encoded = _percent_encode(text, _SAFE_CHARACTERS)
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    if encoded.endswith("."):
        encoded = encoded[:-1] + "%2E"
    return encoded


def encode_origin_component(origin: str) -> str:
    """An origin label as a directory name: upper-case letters are percent-encoded too.

    On a case-insensitive file system (macOS, Windows) `Work` and `work` would otherwise share one
    directory, and purging one origin would delete the other's files.
    """
    validate_origin_label(origin)
    return _percent_encode(origin, _SAFE_CHARACTERS - _UPPERCASE)


def _split_long(encoded: str) -> list[str]:
    """Cut an over-long encoded segment into components; all but the last start with `CHUNK_MARK`."""
    pieces: list[str] = []
    while len(encoded) > MAX_COMPONENT_LENGTH:
        cut = MAX_COMPONENT_LENGTH - len(CHUNK_MARK)
        # Never split a `%XX` escape: back up to before a `%` that sits in the last two positions.
        percent = encoded.rfind("%", cut - 2, cut)
        if percent != -1:
            cut = percent
        pieces.append(CHUNK_MARK + encoded[:cut])
        encoded = encoded[cut:]
        if encoded.startswith("."):  # the rest becomes a component of its own: never a hidden name or `..`
            encoded = "%2E" + encoded[1:]
    pieces.append(encoded)
    return pieces


def _join_chunks(components: Sequence[str]) -> list[str] | None:
    """The inverse of `_split_long` over a run of components; None when a chunk has no continuation."""
    joined: list[str] = []
    pending = ""
    for component in components:
        if component.startswith(CHUNK_MARK):
            pending += component[len(CHUNK_MARK) :]
            continue
        joined.append(pending + component)
        pending = ""
    return None if pending else joined


def _decode(component: str) -> str | None:
    try:
        return unquote(component, errors="strict")
    except UnicodeDecodeError:
        return None


def uri_components(origin: str, uri: str) -> list[str]:
    """The directory components (below the root) for the file `uri` of `origin`."""
    parsed = parse_uri(uri)  # raises InvalidSkillURI for anything that is not a strict skill URI
    components = [encode_origin_component(origin), encode_component(parsed.scheme)]
    for segment in parsed.segments:
        components.extend(_split_long(encode_component(segment)))
    return components


def content_file_name(digest: str) -> str:
    if not isinstance(digest, str) or not DIGEST_RE.match(digest):
        raise ValueError(f"digest {digest!r} is not 'sha256:' and 64 lowercase hex characters")
    return CONTENT_FILE_PREFIX + digest[len(DIGEST_PREFIX) :]


@dataclass(frozen=True)
class CacheStats:
    hits: int  # lookups answered from disk, re-hashed and verified
    misses: int  # lookups that returned None, tampered ones included
    tampered: int  # files (or directories) found not to be what the cache wrote, and deleted
    write_errors: int  # `put` calls that could not write (disk full, permissions); the cache is best-effort


def _make_tree_removable(path: str) -> int:
    """Give the owner rwx on every directory of a tree (so it can be deleted); count the content files.

    Unlinking a read-only (0o444) file needs write permission on its directory only, and the cache's
    directories are 0o700; but a tampered tree may hold directories made unreadable or read-only.
    """
    os.chmod(path, stat.S_IRWXU)
    content_files = 0
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                content_files += _make_tree_removable(entry.path)
            elif entry.name.startswith(CONTENT_FILE_PREFIX) and entry.is_file(follow_symlinks=False):
                content_files += 1
    return content_files


def _remove_path(path: str) -> int:
    """Remove a file, symlink or whole directory tree without following symlinks; the content files removed."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return 0
        content_files = _make_tree_removable(path)
        shutil.rmtree(path)  # fd-based on POSIX: never follows a symlink inside the tree
        return content_files
    except FileNotFoundError:
        return 0


class ContentCache:
    """Verified content of MCP-served skill files, keyed by (origin label, file uri, digest)."""

    def __init__(self, root: Path | None = None, *, discovery_paths: Iterable[Path] | None = None) -> None:
        missing = [call.__name__ for call in _NEEDED_DIR_FD_CALLS if call not in os.supports_dir_fd]
        if missing:
            raise OSError(f"ContentCache needs dir_fd support (POSIX *at() calls) for {', '.join(missing)}")
        # Resolved once, so that paths handed back (and `origin_of`) match what is on disk, e.g. on macOS
        # where /var is a symlink to /private/var. Below the root nothing is ever resolved.
        self.root = Path(os.path.abspath(default_cache_root() if root is None else root)).resolve(strict=False)
        paths = skills_discovery_paths() if discovery_paths is None else list(discovery_paths)
        self._refuse_unsafe_root(paths)
        self.hits = 0
        self.misses = 0
        self.tampered = 0
        self.write_errors = 0
        self._counter_lock = threading.Lock()

    def _refuse_unsafe_root(self, discovery_paths: Sequence[Path]) -> None:
        root = str(self.root)
        inside = is_inside_discovery_path(self.root, discovery_paths)
        if inside is not None:
            raise UnsafeCacheLocation(root, str(inside), "it is inside a skills discovery path")
        for path in discovery_paths:
            # An origin or scheme directory below the root could *be* that discovery path (origin `skills`
            # under a root `~/.config/opencode`, say).
            if path_is_within(path, self.root):
                raise UnsafeCacheLocation(root, str(path), "a skills discovery path lies inside it")
        if self.root.name.startswith("."):
            raise UnsafeCacheLocation(
                root, str(self.root / "skills"), "its name starts with '.', so an origin named 'skills' would be"
            )

    # -- paths ----------------------------------------------------------------------------------------------

    def path_for(self, origin: str, uri: str, digest: str) -> Path:
        """Where the content of `uri` from `origin` with this digest lives (whether or not it is cached)."""
        return self.root.joinpath(*uri_components(origin, uri), content_file_name(digest))

    def origin_of(self, path: Path) -> tuple[str, str] | None:
        """The (origin label, canonical file uri) a cache path belongs to, or None when it is not one.

        Accepts a content file path or a uri's directory path. Only paths that the cache itself would
        produce are recognised (the decoded parts must encode back to exactly the same components).
        """
        absolute = Path(os.path.abspath(path))
        for candidate in (absolute, absolute.resolve(strict=False)):
            try:
                relative = candidate.relative_to(self.root)
            except ValueError:
                continue
            return self._decode_components(relative.parts)
        return None

    def _decode_components(self, parts: Sequence[str]) -> tuple[str, str] | None:
        components = list(parts)
        if components and components[-1].startswith(CONTENT_FILE_PREFIX):
            digest = DIGEST_PREFIX + components.pop()[len(CONTENT_FILE_PREFIX) :]
            if not DIGEST_RE.match(digest):
                return None
        if len(components) < 3:  # origin, scheme and at least the authority segment
            return None
        origin, scheme = _decode(components[0]), _decode(components[1])
        encoded_segments = _join_chunks(components[2:])
        if origin is None or scheme is None or encoded_segments is None:
            return None
        segments = [_decode(s) for s in encoded_segments]
        if any(s is None for s in segments):
            return None
        try:
            uri = format_uri(scheme, [s for s in segments if s is not None])
            if uri_components(origin, uri) != components:
                return None
        except (InvalidSkillURI, ValueError):  # a bad label, scheme or segment
            return None
        return origin, uri

    # -- walking without following symlinks -----------------------------------------------------------------

    def _count(self, *, hits: int = 0, misses: int = 0, tampered: int = 0, write_errors: int = 0) -> None:
        with self._counter_lock:
            self.hits += hits
            self.misses += misses
            self.tampered += tampered
            self.write_errors += write_errors

    def _discard(self, components: Sequence[str], reason: str) -> None:
        """Delete an entry that is not what the cache wrote (tampering), and count it."""
        path = str(self.root.joinpath(*components))
        logger.warning("content cache: deleting %s: %s", path, reason)
        self._count(tampered=1)
        try:
            _remove_path(path)
        except OSError as error:
            logger.warning("content cache: could not delete %s: %s", path, error)

    @contextmanager
    def _directory(self, components: Sequence[str], *, create: bool) -> Iterator[int | None]:
        """An fd of `<root>/<components>`, each level opened with O_NOFOLLOW relative to its parent.

        Yields None when a level is missing (and `create` is false). A level that exists but is not a
        plain directory (a symlink, a file) is tampering: it is deleted, then recreated when `create`.
        """
        if create:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            fd = os.open(self.root, _DIRECTORY_FLAGS)
        except FileNotFoundError:
            yield None
            return
        try:
            for depth, name in enumerate(components):
                try:
                    child = os.open(name, _DIRECTORY_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        yield None
                        return
                    child = self._make_directory(fd, name)
                except OSError as error:  # ELOOP (a symlink), ENOTDIR (a file), EACCES (permissions changed)
                    self._discard(components[: depth + 1], f"not a plain directory ({error.strerror})")
                    if not create:
                        yield None
                        return
                    child = self._make_directory(fd, name)
                os.close(fd)
                fd = child
            yield fd
        finally:
            os.close(fd)

    @staticmethod
    def _make_directory(parent_fd: int, name: str) -> int:
        with suppress(FileExistsError):  # another process or thread made it first
            os.mkdir(name, 0o700, dir_fd=parent_fd)
        return os.open(name, _DIRECTORY_FLAGS, dir_fd=parent_fd)

    def _read_verified(
        self, directory_fd: int, components: Sequence[str], name: str, expected: ManifestFile
    ) -> bytes | None:
        """The bytes of `name` when they match `expected`; otherwise None (and a mismatch is deleted)."""
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=directory_fd)
        except FileNotFoundError:
            return None
        except OSError as error:  # ELOOP: a symlink planted under a content name; EACCES: mode changed
            self._discard([*components, name], f"cannot be opened without following links ({error.strerror})")
            return None
        with os.fdopen(fd, "rb") as handle:
            status = os.fstat(handle.fileno())
            if not stat.S_ISREG(status.st_mode):
                problem: str | None = "not a regular file"
                data = b""
            else:
                # Read one byte more than expected, so a grown file is caught without reading it all.
                data = handle.read(expected.size + 1)
                problem = None
        mismatch = file_problem(expected, data) if problem is None else None
        if isinstance(mismatch, SizeMismatch):
            problem = f"its size differs from the manifest's {expected.size} bytes"
        elif mismatch is not None:
            problem = f"does not hash to {expected.digest}"
        if problem is not None:
            self._discard([*components, name], problem)
            return None
        return data

    # -- API --------------------------------------------------------------------------------------------------

    @staticmethod
    def _check_expected(uri: str, expected: ManifestFile) -> str:
        if expected.uri != uri:
            raise ValueError(f"the manifest file is {expected.uri}, not {uri}")
        if not isinstance(expected.size, int) or isinstance(expected.size, bool) or expected.size < 0:
            raise ValueError(f"{uri}: size {expected.size!r} is not a non-negative integer")
        return content_file_name(expected.digest)

    def get(self, origin: str, uri: str, expected: ManifestFile) -> bytes | None:
        """The cached bytes of `uri` from `origin`, re-hashed now against `expected`, or None.

        Never returns bytes that do not match `expected.size` and `expected.digest`: a file that does not
        (changed on disk, a symlink, anything odd) is deleted, counted in `tampered`, and is a miss.
        """
        name = self._check_expected(uri, expected)
        components = uri_components(origin, uri)
        data: bytes | None = None
        try:
            with self._directory(components, create=False) as directory_fd:
                if directory_fd is not None:
                    data = self._read_verified(directory_fd, components, name, expected)
        except OSError as error:  # the cache is an optimisation: an unreadable one is a miss
            logger.warning("content cache: cannot read %s from %s: %s", uri, origin, error)
            data = None
        if data is None:
            self._count(misses=1)
        else:
            self._count(hits=1)
        return data

    def put(self, origin: str, uri: str, data: bytes, expected: ManifestFile) -> None:
        """Store `data` for `uri` from `origin` when it matches `expected`.

        Raises `SizeMismatch` / `DigestMismatch` when it does not (nothing is written). A write that
        fails for file-system reasons is logged and counted in `write_errors`, not raised: the cache only
        saves refetches. The file is written to a temporary name, fsynced, made read-only and renamed
        into place, so a reader never sees a partial file.
        """
        name = self._check_expected(uri, expected)
        verify_file(expected, data)
        components = uri_components(origin, uri)
        try:
            with self._directory(components, create=True) as directory_fd:
                assert directory_fd is not None  # create=True always yields a directory
                if self._read_verified(directory_fd, components, name, expected) is not None:
                    return  # already cached and still intact: content-addressed, nothing to rewrite
                self._write_atomically(directory_fd, name, data)
        except OSError as error:
            logger.warning("content cache: cannot store %s from %s: %s", uri, origin, error)
            self._count(write_errors=1)

    @staticmethod
    def _write_atomically(directory_fd: int, name: str, data: bytes) -> None:
        temporary = _TEMP_PREFIX + secrets.token_hex(8)
        fd = os.open(temporary, _WRITE_FLAGS, 0o600, dir_fd=directory_fd)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fchmod(handle.fileno(), 0o444)  # read-only before it ever appears under its real name
                os.fsync(handle.fileno())
            # POSIX rename replaces the target atomically (`os.replace` is the same call, but is not
            # listed in os.supports_dir_fd).
            os.rename(temporary, name, src_dir_fd=directory_fd, dst_dir_fd=directory_fd)
        except BaseException:
            with suppress(OSError):
                os.unlink(temporary, dir_fd=directory_fd)
            raise
        os.fsync(directory_fd)  # make the rename itself durable

    def purge_origin(self, origin: str) -> int:
        """Delete everything cached for `origin` (the server was removed); returns the content files deleted."""
        return _remove_path(str(self.root / encode_origin_component(origin)))

    def stats(self) -> CacheStats:
        with self._counter_lock:
            return CacheStats(self.hits, self.misses, self.tampered, self.write_errors)
