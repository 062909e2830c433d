"""Catalogs published to object storage: `skillwire publish` writes them, `PublishedCatalog` serves them.

A publish scans the folders with the very rules `serve` applies (it builds a `SkillCatalog` snapshot),
uploads every file under its SHA-256 (`blobs/sha256/<hex>`, only those not there yet), writes one
index object holding every entry and the skip report under a key derived from the index's own bytes
(`indexes/<id>.jsonl`), and only then switches the pointer (`current.json`). A reader that follows
the pointer therefore always finds a complete index whose blobs are all in place; an unchanged
catalog publishes to the same id and uploads nothing.

The index (format `skillwire-index/1`) is JSON Lines of canonical JSON (sorted keys, no spaces, UTF-8):
a header, then one line per skill, sorted by URI:

    {"audiences": [...], "format": "skillwire-index/1", "ignored": [{"path", "reason"}...],
     "skills": <count>, "skipped": [{"location", "reason"}...]}
    {"files": [["SKILL.md", "sha256:<hex>", 1234, "text/markdown", true], ...],
     "frontmatter": {...}, "source": "<folder it came from>", "uri": "skill://acme/x/SKILL.md"}
    ...

Lines, because a reader then parses one skill at a time: parsing a 100,000-skill index whole left
its transient objects spread over the heap, 300 MB of a replica's RSS (926 MB against 611 MB).

Each file is `[path inside the skill (URI-encoded, as in its URI), digest, size, mimeType, is UTF-8
text]`: arrays, because a 100,000-skill catalog has a million of them and keys would double the
index. The pointer is `{"format": "skillwire-pointer/1", "id": "<hex>", "index": "indexes/<hex>.jsonl",
"skills": N, "files": N}`.

A server loads the index named by the pointer (no hashing, no listing of the bucket), checks that
its bytes hash to the id the pointer names, and builds the same immutable `CatalogSnapshot` a folder
catalog serves, whose files read their bytes by digest through a verified cache (`catalog.store`).
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import anyio
import obstore

from skillwire.catalog.audiences import AudienceRules, audience_rules
from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.signatures import SignatureBook
from skillwire.catalog.snapshot import CatalogFile, CatalogSkill, CatalogSnapshot, SkippedSkill
from skillwire.catalog.store import (
    BLOB_PREFIX,
    DEFAULT_CACHE_BYTES,
    IN_STORE,
    INDEX_PREFIX,
    POINTER_KEY,
    BlobReader,
    StoredFile,
    StoreError,
    StoreLocation,
    blob_key,
    describe,
    is_not_found,
    open_store,
    parse_location,
)
from skillwire.core.cursor import DEFAULT_CURSOR_SECRET
from skillwire.core.entry import SkillEntry
from skillwire.core.json import JSONValue
from skillwire.core.manifest import DIGEST_PREFIX
from skillwire.core.signing import SIGNATURE_META_KEY
from skillwire.core.uri import SKILL_MD

if TYPE_CHECKING:
    from obstore.store import ObjectStore

logger = logging.getLogger("skillwire.published")

INDEX_FORMAT = "skillwire-index/1"
POINTER_FORMAT = "skillwire-pointer/1"
_UPLOADS_AT_ONCE = 16


class InvalidIndex(StoreError):
    """The pointer or the index it names is not a usable published catalog."""


# -- writing ---------------------------------------------------------------------------------------------


def canonical_json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def encode_index(index: Mapping[str, Any]) -> bytes:
    """The index document as stored: a header line, then a line per skill (see the module docstring)."""
    header = {key: value for key, value in index.items() if key != "skills"}
    header["skills"] = len(index["skills"])
    # json.dumps escapes every newline inside strings, so a record is always exactly one line.
    return b"\n".join([canonical_json(header), *(canonical_json(skill) for skill in index["skills"])])


class PublishedSnapshot(CatalogSnapshot):
    """A snapshot loaded from an index: also which index, and the audience rules it declares."""

    def __init__(self, *args: Any, index_id: str = "", rules: AudienceRules = (), **options: Any) -> None:
        super().__init__(*args, **options)
        self.index_id = index_id
        self.audience_rules = rules


def build_index(
    snapshot: CatalogSnapshot, audiences: AudienceRules = (), signatures: SignatureBook | None = None
) -> dict[str, Any]:
    """The index document of a snapshot (every skill, listed or not, the skip report, audience rules), with
    each skill's publisher signature in `_meta` when `signatures` holds one that covers it."""
    skills: list[dict[str, Any]] = []
    for uri in sorted(snapshot.skill_by_uri):
        skill = snapshot.skill_by_uri[uri]
        if skill.entry.is_dynamic:
            continue  # generated in code at read time: nothing that could be stored
        root = skill.root_uri + "/"
        files: list[list[object]] = []
        for item in skill.entry.files:
            served = snapshot.files[item.uri]
            files.append([item.uri[len(root) :], item.digest, item.size, served.mime_type, served.is_text])
        record: dict[str, Any] = {"uri": uri, "source": skill.source, "frontmatter": skill.entry.frontmatter}
        record["files"] = files
        if not skill.listed:
            record["listed"] = False
        signature = signatures.signature_for(skill.entry) if signatures else None
        if signature is not None:
            record["_meta"] = {SIGNATURE_META_KEY: signature.to_meta()}
        skills.append(record)
    index: dict[str, Any] = {
        "format": INDEX_FORMAT,
        "skills": skills,
        "skipped": [{"location": s.location, "reason": s.reason} for s in snapshot.skipped],
        "ignored": [{"path": path, "reason": why} for path, why in snapshot.ignored],
    }
    if audiences:
        index["audiences"] = [{"prefix": prefix, "audiences": sorted(names)} for prefix, names in audiences]
    return index


@dataclass(frozen=True)
class PublishResult:
    location: StoreLocation
    index_id: str
    skills: int
    files: int
    uploaded: int  # blobs written by this publish
    uploaded_bytes: int
    present: int  # blobs that were there already
    index_written: bool
    pointer_switched: bool
    skipped: tuple[SkippedSkill, ...]

    def summary(self) -> str:
        changed = "switched to" if self.pointer_switched else "already at"
        line = (
            f"skillwire: published {self.skills} skills, {self.files} files to {self.location}: "
            f"{self.uploaded} blobs uploaded ({self.uploaded_bytes:,} bytes), {self.present} already there; "
            f"{changed} index {self.index_id[:12]}"
        )
        if self.skipped:
            line += f"; {len(self.skipped)} skipped (listed in the index)"
        return line


def scan_for_publish(roots: Sequence[SkillRoot], *, enforce_limits: bool = True) -> CatalogSnapshot:
    """The snapshot `skillwire serve` would build from these folders (same rules, same skips)."""
    return SkillCatalog(roots, digest_cache=DigestCache(), enforce_limits=enforce_limits).snapshot


async def publish(
    snapshot: CatalogSnapshot,
    location: StoreLocation,
    store: ObjectStore | None = None,
    *,
    audiences: AudienceRules = (),
    signatures: SignatureBook | None = None,
) -> PublishResult:
    """Upload what is missing, write the index, then switch the pointer (see the module docstring)."""
    if store is None:
        store = open_store(location, create=True)
    index = build_index(snapshot, audiences, signatures)
    body = encode_index(index)
    index_id = hashlib.sha256(body).hexdigest()
    unique: dict[str, CatalogFile] = {}
    for skill in snapshot.skill_by_uri.values():
        for item in skill.entry.files:
            unique.setdefault(item.digest, snapshot.files[item.uri])
    try:
        present = await _existing_blobs(store)
        missing = [f for digest, f in unique.items() if digest[len(DIGEST_PREFIX) :] not in present]
        uploaded_bytes = await _upload(store, missing)
        index_key = f"{INDEX_PREFIX}{index_id}.jsonl"
        index_written = False
        if not await _exists(store, index_key):
            await obstore.put_async(store, index_key, body)
            index_written = True
        pointer = {
            "format": POINTER_FORMAT,
            "id": index_id,
            "index": index_key,
            "skills": len(index["skills"]),
            "files": len(snapshot.files),
        }
        current = await _read_pointer_id(store)
        switched = current != index_id
        if switched:
            await obstore.put_async(store, POINTER_KEY, canonical_json(pointer))
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(f"publishing to {location} failed: {describe(exc)}") from None
    return PublishResult(
        location,
        index_id,
        len(index["skills"]),
        len(snapshot.files),
        len(missing),
        uploaded_bytes,
        len(unique) - len(missing),
        index_written,
        switched,
        snapshot.skipped,
    )


async def _existing_blobs(store: ObjectStore) -> set[str]:
    """The hex digests already stored: one listing (1,000 keys per request on S3), not a HEAD per file."""
    found: set[str] = set()
    async for chunk in obstore.list(store, BLOB_PREFIX, chunk_size=1000):
        for meta in chunk:
            found.add(meta["path"].rsplit("/", 1)[-1])
    return found


async def _exists(store: ObjectStore, key: str) -> bool:
    try:
        await obstore.head_async(store, key)
    except FileNotFoundError:
        return False
    return True


async def _read_pointer_id(store: ObjectStore) -> str | None:
    try:
        result = await obstore.get_async(store, POINTER_KEY)
        data = json.loads(bytes(await result.bytes_async()))
    except FileNotFoundError:
        return None
    except ValueError:
        return None  # an unreadable pointer is replaced
    value = data.get("id") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


async def _upload(store: ObjectStore, files: list[CatalogFile]) -> int:
    """Upload each file under its digest, a few at a time; its bytes are re-checked against the digest
    as they are read (`CatalogFile.read`), so a file edited during the publish fails it."""
    total = 0
    limiter = anyio.CapacityLimiter(_UPLOADS_AT_ONCE)

    async def one(file: CatalogFile) -> None:
        nonlocal total
        async with limiter:
            data = file.read()
            await obstore.put_async(store, blob_key(file.digest), data)
            total += len(data)

    async with anyio.create_task_group() as group:
        for file in files:
            group.start_soon(one, file)
    return total


# -- reading -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pointer:
    id: str
    index: str
    etag: str | None


def parse_pointer(data: bytes, etag: str | None) -> Pointer:
    try:
        value = json.loads(data)
    except ValueError as exc:
        raise InvalidIndex(f"{POINTER_KEY} is not JSON: {exc}") from None
    if not isinstance(value, dict) or value.get("format") != POINTER_FORMAT:
        raise InvalidIndex(f"{POINTER_KEY} is not a {POINTER_FORMAT} pointer")
    index_id, key = value.get("id"), value.get("index")
    if not isinstance(index_id, str) or len(index_id) != 64 or key != f"{INDEX_PREFIX}{index_id}.jsonl":
        raise InvalidIndex(f"{POINTER_KEY} names no index of the form {INDEX_PREFIX}<sha256>.jsonl")
    return Pointer(index_id, key, etag)


def _field_error(where: str, what: str) -> InvalidIndex:
    return InvalidIndex(f"index: {where}: {what}")


def snapshot_from_index(
    body: bytes, index_id: str, blobs: BlobReader, *, cursor_secret: bytes = DEFAULT_CURSOR_SECRET
) -> CatalogSnapshot:
    """The snapshot an index describes; `InvalidIndex` naming the first thing that is wrong."""
    if hashlib.sha256(body).hexdigest() != index_id:
        raise InvalidIndex(f"{INDEX_PREFIX}{index_id}.jsonl does not hash to its id (truncated or altered)")
    records = _records(body)
    try:
        index = json.loads(next(records))
    except (ValueError, StopIteration) as exc:
        raise InvalidIndex(f"index {index_id[:12]} does not start with a JSON header: {exc}") from None
    if not isinstance(index, dict) or index.get("format") != INDEX_FORMAT:
        raise InvalidIndex(f"index {index_id[:12]} is not a {INDEX_FORMAT} document")
    count = index.get("skills")
    if type(count) is not int or count < 0:
        raise _field_error("skills", "the header must give the number of skill lines")
    loader = _Loader(blobs)
    skills: list[CatalogSkill] = []
    for position, line in enumerate(records):
        try:
            raw = json.loads(line)
        except ValueError as exc:
            raise _field_error(f"skills[{position}]", f"line is not JSON: {exc}") from None
        skills.append(loader.skill(position, raw))  # this line's parsed objects are freed right after
    if len(skills) != count:
        raise _field_error("skills", f"the header announces {count} skill lines, the index holds {len(skills)}")
    files = loader.files
    skipped = [_skipped(i, s) for i, s in enumerate(_list_of(index, "skipped"))]
    ignored = [_ignored(i, s) for i, s in enumerate(_list_of(index, "ignored"))]
    rules = audience_rules(_rule(i, r) for i, r in enumerate(_list_of(index, "audiences")))
    return PublishedSnapshot(
        skills, files.values(), skipped, ignored=ignored, cursor_secret=cursor_secret, index_id=index_id, rules=rules
    )


def _records(body: bytes) -> Iterator[bytes]:
    """The lines of an index, one slice at a time (never a second copy of the whole body)."""
    start = 0
    while start < len(body):
        end = body.find(b"\n", start)
        if end < 0:
            end = len(body)
        yield body[start:end]
        start = end + 1


def _rule(position: int, raw: object) -> tuple[str, list[str]]:
    if not isinstance(raw, dict) or not isinstance(raw.get("prefix"), str) or "://" not in raw["prefix"]:
        raise _field_error(f"audiences[{position}]", "must be {prefix: a URI prefix, audiences: [...]}")
    names = raw.get("audiences")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise _field_error(f"audiences[{position}]", "audiences must be a non-empty list of strings")
    return raw["prefix"], names


def _list_of(index: Mapping[str, object], key: str) -> list[object]:
    value = index.get(key, [])
    if not isinstance(value, list):
        raise _field_error(key, "must be an array")
    return cast(list[object], value)


def _skipped(position: int, raw: object) -> SkippedSkill:
    if not isinstance(raw, dict) or not isinstance(raw.get("location"), str) or not isinstance(raw.get("reason"), str):
        raise _field_error(f"skipped[{position}]", "must be {location, reason} strings")
    return SkippedSkill(raw["location"], raw["reason"])


def _ignored(position: int, raw: object) -> tuple[str, str]:
    if not isinstance(raw, dict) or not isinstance(raw.get("path"), str) or not isinstance(raw.get("reason"), str):
        raise _field_error(f"ignored[{position}]", "must be {path, reason} strings")
    return raw["path"], raw["reason"]


class _Loader:
    """Builds the snapshot's skills and files from an index's records, one pass, checked as it goes.

    Written for a million file records: the checks are plain type tests, error messages are built
    only on failure, and the strings a catalog repeats (MIME types, digests of files that share
    content) are kept once (measured on 100,000 skills x 10 files: about 150 MB less).
    """

    def __init__(self, blobs: BlobReader) -> None:
        self.blobs = blobs
        self.files: dict[str, StoredFile] = {}
        self.strings: dict[str, str] = {}

    def skill(self, position: int, raw: object) -> CatalogSkill:
        if type(raw) is not dict:
            raise _field_error(f"skills[{position}]", "must be an object")
        uri, frontmatter, raw_files = raw.get("uri"), raw.get("frontmatter"), raw.get("files")
        source = raw.get("source")
        # The index hashed to the id its pointer names, so its URIs are what `publish` wrote (canonical,
        # from a scan); a full parse of each (a fifth of the load) would only catch a foreign writer's bug.
        if type(uri) is not str or not uri.endswith("/" + SKILL_MD) or "://" not in uri or "/../" in uri:
            raise _field_error(f"skills[{position}]", f"uri {uri!r} is not a SKILL.md URI")
        if type(frontmatter) is not dict or type(frontmatter.get("name")) is not str:
            raise _field_error(f"skills[{position}] ({uri})", "frontmatter must be an object with a name")
        if type(raw_files) is not list or not raw_files:
            raise _field_error(f"skills[{position}] ({uri})", "files must be a non-empty array")
        root = uri[: -len(SKILL_MD)]
        manifest = [self.file(position, number, uri, root, item) for number, item in enumerate(raw_files)]
        if not any(f.uri == uri for f in manifest):
            raise _field_error(f"skills[{position}] ({uri})", "files do not include the skill's SKILL.md")
        meta = raw.get("_meta")  # a publisher signature travels with the entry (core/signing.py)
        entry = SkillEntry(
            uri,
            cast(dict[str, JSONValue], frontmatter),
            tuple(manifest),
            meta=cast(dict[str, JSONValue], meta) if type(meta) is dict else None,
        )
        return CatalogSkill(entry, source if type(source) is str else uri, listed=raw.get("listed", True) is not False)

    def file(self, position: int, number: int, skill_uri: str, root: str, item: object) -> StoredFile:
        if type(item) is not list or len(item) != 5:
            raise self._bad(position, number, skill_uri, "must be [path, digest, size, mimeType, isText]")
        path, digest, size, mime, is_text = item
        if type(path) is not str or not path or path[0] == "/" or (".." in path and ".." in path.split("/")):
            raise self._bad(position, number, skill_uri, f"path {path!r} is not a relative path inside the skill")
        # Length and prefix only, for the same reason as URIs; a wrong digest fails every read of its file.
        if type(digest) is not str or len(digest) != 71 or not digest.startswith(DIGEST_PREFIX):
            raise self._bad(position, number, skill_uri, f"digest {digest!r} is not sha256:<64 hex>")
        if type(size) is not int or size < 0:
            raise self._bad(position, number, skill_uri, f"size {size!r} is not a non-negative integer")
        if type(mime) is not str or type(is_text) is not bool:
            raise self._bad(position, number, skill_uri, "mimeType must be a string and isText a boolean")
        file_uri = root + path
        known = self.files.get(file_uri)
        if known is not None:  # a nested skill's file, also in its enclosing skill's manifest
            if known.digest != digest:
                raise self._bad(position, number, skill_uri, f"{file_uri} is listed twice with different digests")
            return known
        strings = self.strings
        made = self.files[file_uri] = StoredFile(
            file_uri,
            strings.setdefault(digest, digest),
            size,
            strings.setdefault(mime, mime),
            is_text,
            IN_STORE,
            self.blobs,
        )
        return made

    @staticmethod
    def _bad(position: int, number: int, skill_uri: str, what: str) -> InvalidIndex:
        return _field_error(f"skills[{position}].files[{number}] ({skill_uri})", what)


@dataclass
class StoreStatus:
    """What `/healthz` reports: whether a snapshot is served, which index, and how fresh."""

    index_id: str | None = None
    loaded_at: float | None = None  # time.time() of the last index swap
    checked_at: float | None = None  # time.time() of the last successful look at the pointer
    last_error: str | None = None
    failures: int = 0  # consecutive failed polls


class PublishedCatalog(SkillCatalog):
    """A `SkillCatalog` whose snapshot comes from a published index instead of folders on disk.

    `refresh()` looks at the pointer (conditionally, by ETag) and swaps in a new snapshot only when it
    names another index; any failure raises and leaves the current snapshot in place. `watch()` polls
    every `poll_seconds` and logs failures, so a server keeps serving its last good snapshot while the
    store is down or a broken index is published, and picks up the next good one when it can.
    """

    def __init__(
        self,
        location: StoreLocation | str,
        *,
        poll_seconds: float = 30.0,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        cursor_secret: bytes = DEFAULT_CURSOR_SECRET,
        store: ObjectStore | None = None,
    ) -> None:
        super().__init__((), cursor_secret=cursor_secret)
        self.location = parse_location(location) if isinstance(location, str) else location
        self.store = store if store is not None else open_store(self.location)
        self.blobs = BlobReader(self.store, self.location, max_bytes=cache_bytes)
        self.poll_seconds = poll_seconds
        self.status = StoreStatus()
        self._pointer: Pointer | None = None

    def watch_paths(self) -> list[str]:
        return []

    def _fetch_pointer(self) -> Pointer | None:
        """The pointer, or None when it has not changed since the last look (HTTP 304 on its ETag)."""
        etag = self._pointer.etag if self._pointer is not None else None
        try:
            result = obstore.get(self.store, POINTER_KEY, options={"if_none_match": etag} if etag else None)
            data = bytes(result.bytes())
        except FileNotFoundError:
            raise StoreError(f"{self.location} has no {POINTER_KEY}: nothing was published there yet") from None
        except Exception as exc:
            if type(exc).__name__ == "NotModifiedError":
                return None
            raise StoreError(f"{self.location} is unreachable: {describe(exc)}") from None
        return parse_pointer(data, result.meta.get("e_tag"))

    def _load_index(self, pointer: Pointer) -> CatalogSnapshot:
        try:
            body = bytes(obstore.get(self.store, pointer.index).bytes())
        except Exception as exc:
            if is_not_found(exc):
                missing = f"{POINTER_KEY} names {pointer.index}, which {self.location} does not hold"
                raise InvalidIndex(missing) from None
            raise StoreError(f"{self.location} is unreachable: {describe(exc)}") from None
        # As for a folder scan (see SkillCatalog._build): no cyclic GC while a million objects are made,
        # and the survivors frozen so request-time collections never walk them.
        gc.collect()
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            snapshot = snapshot_from_index(body, pointer.id, self.blobs, cursor_secret=self.cursor_secret)
        finally:
            if was_enabled:
                gc.enable()
        gc.freeze()
        return snapshot

    def _refresh(self, changed: Iterable[str] | None) -> tuple[CatalogSnapshot, bool]:
        with self._refresh_lock:
            old = self._snapshot
            try:
                pointer = self._fetch_pointer()
                if pointer is not None and (old is None or self._pointer is None or pointer.id != self._pointer.id):
                    new = self._load_index(pointer)
                else:
                    new = None
            except StoreError as exc:
                self.status.last_error = str(exc)
                self.status.failures += 1
                raise
            now = time.time()
            self.status.checked_at = now
            self.status.last_error = None
            self.status.failures = 0
            if pointer is not None:
                self._pointer = pointer  # a new ETag for the same index is remembered too
            if new is None:
                assert old is not None  # the first look always loads
                return old, False
            self._snapshot = new
            self.status.index_id = pointer.id if pointer is not None else None
            self.status.loaded_at = now
        if old is None:
            return new, True
        return new, self._announce(old, new)

    async def watch(self, *, stop_event: anyio.Event | None = None, debounce_ms: int = 100) -> None:
        """Poll the pointer every `poll_seconds` until cancelled (or `stop_event` is set)."""
        if self.poll_seconds <= 0:
            return
        while stop_event is None or not stop_event.is_set():
            with anyio.move_on_after(self.poll_seconds):
                if stop_event is not None:
                    await stop_event.wait()
                    return
                await anyio.sleep_forever()
            before, failing = self.status.index_id, self.status.failures > 0
            try:
                _, differs = await anyio.to_thread.run_sync(self._refresh, None)
            except StoreError as exc:
                age = time.time() - (self.status.loaded_at or time.time())
                logger.warning("%s; still serving index %s (loaded %.0f s ago)", exc, (before or "?")[:12], age)
                continue
            except Exception:
                logger.exception("refreshing from %s failed; still serving the previous snapshot", self.location)
                continue
            if failing:
                shown = (self.status.index_id or "?")[:12]
                logger.warning("%s is reachable again; serving index %s", self.location, shown)
            if self.status.index_id != before:
                logger.info("now serving index %s from %s", (self.status.index_id or "?")[:12], self.location)
            if not differs:
                continue
            for listener in self._async_listeners:
                try:
                    await listener()
                except Exception:
                    logger.exception("catalog change notification failed")
