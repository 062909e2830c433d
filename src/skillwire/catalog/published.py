"""Catalogs published to object storage: `skillwire publish` writes them, `PublishedCatalog` serves them.

A publish scans the folders with the very rules `serve` applies (it builds a `SkillCatalog` snapshot),
uploads every file under its SHA-256 (`blobs/sha256/<hex>`, only those not there yet), writes one
index object holding every entry and the skip report under a key derived from the index's own bytes
(`indexes/<id>.jsonl`), and only then switches the pointer (`current.json`). A reader that follows
the pointer therefore always finds a complete index whose blobs are all in place; an unchanged
catalog publishes to the same id and uploads nothing.

The index (format `skillwire-index/2`, described in `catalog.indexed`) is JSON Lines: a header
holding the skip report, the audience rules and the tables every skill shares (each distinct digest
once, as hex, and the MIME types), then one line per skill sorted by URI, each starting with its URI,
its files as `[path, digest index, size, mimeType index, isText]`. Lines, so that a replica reads
only each line's URI at load and a skill's record when a request needs it; the URI first, so that
reading it needs no JSON parse; tables, because a 100,000-skill catalog has a million file records
and most of an inline record was its 71-character digest (the index went from 142 MB to 65 MB).

Format 1 (until this version: a line per skill of canonical JSON with the digest and MIME type
inline, `{"files": [[path, "sha256:<hex>", size, mimeType, isText]...], "frontmatter", "source",
"uri"}`) is still served, built whole at load as before (5.4 s and 420 MB on 100,000 skills x 10
files, against 0.4 s and 80 MB), so replicas of this version can roll out before the catalog is
republished; `publish` writes format 2 only.

The pointer is `{"format": "skillwire-pointer/1", "id": "<hex>", "index": "indexes/<hex>.jsonl",
"skills": N, "files": N, "sequence": N}`.

Every publish that changes the catalog numbers its index above the index the pointer named: the time
in seconds, or one more than the pointer's number if that is higher, and never past the clock bound
(`core/published_index.past_clock`: a pointer numbered that far ahead is refused, and `publish
--reset-sequence` numbers from the clock instead). The number is `sequence` in the
index's header (covered by the index's address) and in the pointer (so a replica can refuse without
downloading; the header must agree). A replica remembers the highest sequence it accepted in a small
state file (`replica_state`) and refuses a pointer switched back to an older index with one line
naming both numbers, keeping the last good snapshot; after a restart it serves the index it accepted
last rather than the older one. This stops a bucket writer replaying an older index object (every
index ever published stays in the bucket); it does not stop one who writes a new index with a
higher number, which only a signature over the index could (docs/signing.md says what is covered).

A server streams the index named by the pointer (no hashing of files, no listing of the bucket),
checks that its bytes hash to the id the pointer names, and serves an `IndexedSnapshot`: the
`CatalogSnapshot` interface over the index's lines, whose files read their bytes by digest through a
verified cache (`catalog.store`).
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio
import obstore

from skillwire.catalog.audiences import AudienceRules, audience_rules
from skillwire.catalog.catalog import SkillCatalog, wait_or_stop
from skillwire.catalog.digests import DigestCache
from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.index_fields import RecordLoader, check_line_key, field_error
from skillwire.catalog.index_receive import receive
from skillwire.catalog.indexed import (
    INDEX_FORMAT_1,
    INDEX_FORMAT_2,
    IndexedSnapshot,
    indexed_snapshot,
)
from skillwire.catalog.indexed import (
    PublishedSnapshot as PublishedSnapshot,
)
from skillwire.catalog.listing import ListingRules
from skillwire.catalog.replica_state import Accepted, read_replica_state, write_replica_state
from skillwire.catalog.signatures import SignatureBook
from skillwire.catalog.snapshot import CatalogFile, CatalogSkill, CatalogSnapshot, SkippedSkill
from skillwire.catalog.source import SourceStatus
from skillwire.catalog.store import (
    BLOB_PREFIX,
    DEFAULT_CACHE_BYTES,
    INDEX_PREFIX,
    POINTER_KEY,
    BlobReader,
    StoreLocation,
    blob_key,
    is_not_found,
    open_store,
    parse_location,
    store_failure,
)
from skillwire.core.cursor import DEFAULT_CURSOR_SECRET
from skillwire.core.errors import InvalidAudienceRule, InvalidIndex, StoreError
from skillwire.core.manifest import DIGEST_PREFIX
from skillwire.core.provenance import PROVENANCE_META_KEY
from skillwire.core.published_index import (
    MAX_SEQUENCE,
    RESET_COMMAND,
    goes_back,
    past_clock,
    past_clock_line,
    sequence_limit,
)
from skillwire.core.signing import SIGNATURE_META_KEY
from skillwire.core.uri import is_absolute, parent_of
from skillwire.ops.metrics import metrics, record_reload
from skillwire.ops.tracing import span

if TYPE_CHECKING:
    from obstore.store import ObjectStore

logger = logging.getLogger("skillwire.published")

INDEX_FORMAT = INDEX_FORMAT_2  # what `publish` writes
POINTER_FORMAT = "skillwire-pointer/1"
_UPLOADS_AT_ONCE = 16


# -- writing ---------------------------------------------------------------------------------------------


def canonical_json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def encode_index(index: Mapping[str, Any]) -> bytes:
    """The index document (`build_index`) as stored, in format 2 (see `catalog.indexed`).

    Deterministic, so an unchanged catalog encodes to the same bytes and so the same id: tables in
    order of first use, every JSON value canonical (sorted keys), the fields of a line in a fixed order.
    """
    digests: dict[str, int] = {}
    mimes: dict[str, int] = {}
    file_uris: set[str] = set()
    lines: list[bytes] = []
    for skill in index["skills"]:
        uri = skill["uri"]
        root = (parent_of(uri) or uri) + "/"
        files = []
        for path, digest, size, mime, is_text in skill["files"]:
            file_uris.add(root + path)
            # The digest's hex only: the table is a string of 64 hex digits per digest.
            number = digests.setdefault(digest[len(DIGEST_PREFIX) :], len(digests))
            files.append([path, number, size, mimes.setdefault(mime, len(mimes)), is_text])
        # The URI first, then the listed flag, so a reader finds both without parsing the line;
        # json.dumps escapes every newline inside strings, so a record is always exactly one line.
        parts = [b'{"uri":', canonical_json(uri)]
        if skill.get("listed", True) is False:
            parts.append(b',"listed":false')
        parts += [b',"files":', canonical_json(files), b',"frontmatter":', canonical_json(skill["frontmatter"])]
        parts += [b',"source":', canonical_json(skill["source"])]
        if "_meta" in skill:
            parts += [b',"_meta":', canonical_json(skill["_meta"])]
        parts.append(b"}")
        lines.append(b"".join(parts))
    header = {key: value for key, value in index.items() if key != "skills"}
    header.update(
        format=INDEX_FORMAT_2,
        skills=len(lines),
        files=len(file_uris),
        digests="".join(digests),
        mimeTypes=list(mimes),
    )
    return b"\n".join([canonical_json(header), *lines])


def build_index(
    snapshot: CatalogSnapshot, audiences: AudienceRules = (), signatures: SignatureBook | None = None
) -> dict[str, Any]:
    """The index document of a snapshot (every skill, listed or not, the skip report, audience rules), with
    each skill's publisher signature in `_meta` when `signatures` holds one that covers it or the scan
    attached its root's own (`catalog/signatures.RootSignatures`), and the
    repository and commit it came from when it was scanned from a git root (`catalog/git_catalog.py`)."""
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
        meta: dict[str, Any] = {}
        provenance = (skill.entry.meta or {}).get(PROVENANCE_META_KEY)
        if provenance is not None:
            meta[PROVENANCE_META_KEY] = provenance  # the repository and commit it was published from
        signature = signatures.signature_for(skill.entry) if signatures else None
        if signature is not None:
            meta[SIGNATURE_META_KEY] = signature.to_meta()
        elif SIGNATURE_META_KEY in (skill.entry.meta or {}):
            # Its root's own signatures file, applied by the scan (catalog/signatures.RootSignatures).
            meta[SIGNATURE_META_KEY] = (skill.entry.meta or {})[SIGNATURE_META_KEY]
        if meta:
            record["_meta"] = meta
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
    unlisted: int = 0  # skills in the index but not in skills/list (`--unlist`): served by address

    def summary(self) -> str:
        changed = "switched to" if self.pointer_switched else "already at"
        line = (
            f"skillwire: published {self.skills} skills, {self.files} files to {self.location}: "
            f"{self.uploaded} blobs uploaded ({self.uploaded_bytes:,} bytes), {self.present} already there; "
            f"{changed} index {self.index_id[:12]}"
        )
        if self.unlisted:
            line += f"; {self.unlisted} unlisted (served by address, not in skills/list)"
        if self.skipped:
            line += f"; {len(self.skipped)} skipped (listed in the index)"
        return line


def scan_for_publish(
    roots: Sequence[SkillRoot], *, enforce_limits: bool = True, listing: ListingRules | None = None
) -> CatalogSnapshot:
    """The snapshot `skillwire serve` would build from these folders (same rules, same skips, listed as
    `listing` decides: the index carries each skill's flag)."""
    return SkillCatalog(roots, digest_cache=DigestCache(), enforce_limits=enforce_limits, listing=listing).snapshot


async def publish(
    snapshot: CatalogSnapshot,
    location: StoreLocation,
    store: ObjectStore | None = None,
    *,
    audiences: AudienceRules = (),
    signatures: SignatureBook | None = None,
    reset_sequence: bool = False,
) -> PublishResult:
    """Upload what is missing, write the index, then switch the pointer (see the module docstring).

    `reset_sequence` numbers the index from the clock whatever the pointer's number: the recovery from a
    pointer numbered past the clock bound (`core/published_index.past_clock`), which publish otherwise
    refuses, since every replica would refuse the index numbered after it."""
    if store is None:
        store = open_store(location, create=True)
    try:
        current, current_sequence = await _read_pointer(store)
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(f"cannot publish: {store_failure(location, exc)}") from None
    now = time.time()
    index = build_index(snapshot, audiences, signatures)
    # The same catalog under the same number is the same index (nothing to switch); any change is one higher.
    index["sequence"] = int(now) if reset_sequence else current_sequence
    body = encode_index(index)
    index_id = hashlib.sha256(body).hexdigest()
    if index_id != current and not reset_sequence:
        # Above the pointer's number and at least the time in seconds: a pointer a bucket writer rolled back
        # to an old, low number cannot make the next real publish number below what replicas accepted.
        index["sequence"] = max(current_sequence + 1, int(now))
        if index["sequence"] > sequence_limit(now):
            raise StoreError(
                f"{POINTER_KEY} in {location} names {past_clock_line(current_sequence, now)}; every replica would "
                f"refuse the index numbered after it: `{RESET_COMMAND}` numbers this one from the clock"
            )
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
            "sequence": index["sequence"],
        }
        switched = current != index_id
        if switched:
            await obstore.put_async(store, POINTER_KEY, canonical_json(pointer))
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(f"cannot publish: {store_failure(location, exc)}") from None
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
        len(snapshot) - len(snapshot.listed),
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


async def _read_pointer(store: ObjectStore) -> tuple[str | None, int]:
    """The id and sequence of the index the pointer names ((None, 0) when there is none or it is unreadable:
    an unreadable pointer is replaced, and numbering starts again from what replicas will then refuse)."""
    try:
        result = await obstore.get_async(store, POINTER_KEY)
        data = json.loads(bytes(await result.bytes_async()))
    except FileNotFoundError:
        return None, 0
    except ValueError:
        return None, 0
    if not isinstance(data, dict):
        return None, 0
    value, sequence = data.get("id"), data.get("sequence", 0)
    if type(sequence) is not int or sequence < 0:
        sequence = 0
    return (value if isinstance(value, str) else None), sequence


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

_INDEX_CHUNK = 1 << 20
# The largest index a replica loads: 100,000 skills x 10 files is a 65 MB index (format 2), so this is
# room for about a million skills; a store announcing more is refused instead of being allocated.
DEFAULT_MAX_INDEX_BYTES = 1 << 30


def _store_chunks(stream: Iterable[Any], location: StoreLocation) -> Iterator[bytes | memoryview]:
    """The index's chunks as the store sends them; a failure mid-way is the store's, said in one line."""
    try:
        for chunk in stream:
            yield memoryview(chunk)
    except Exception as exc:
        raise StoreError(store_failure(location, exc)) from None


@dataclass(frozen=True)
class Pointer:
    id: str
    index: str
    etag: str | None
    sequence: int = 0  # the publisher's number of that index (0: published before indexes were numbered)


def _sequence_of(value: object, where: str) -> int:
    if value is None:
        return 0
    # Bounded as a client reads it (core/published_index.py): a number clients refuse is refused here first.
    if type(value) is not int or not 0 <= value <= MAX_SEQUENCE:
        raise InvalidIndex(f"{where}: 'sequence' must be a whole number from 0 to {MAX_SEQUENCE}, not {value!r:.40}")
    now = time.time()
    if past_clock(value, now):
        # Taken, it would pin this replica: every honest index after it numbers lower.
        raise InvalidIndex(f"{where}: {past_clock_line(value, now)}; the publisher recovers with `{RESET_COMMAND}`")
    return value


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
    return Pointer(index_id, key, etag, _sequence_of(value.get("sequence"), POINTER_KEY))


def snapshot_from_index(
    body: bytes, index_id: str, blobs: BlobReader, *, cursor_secret: bytes = DEFAULT_CURSOR_SECRET
) -> CatalogSnapshot:
    """The snapshot an index describes; `InvalidIndex` naming the first thing that is wrong."""
    return load_index([body], len(body), index_id, blobs, cursor_secret=cursor_secret)


def load_index(
    chunks: Iterable[bytes | memoryview],
    size: int,
    index_id: str,
    blobs: BlobReader,
    *,
    cursor_secret: bytes = DEFAULT_CURSOR_SECRET,
    max_bytes: int = DEFAULT_MAX_INDEX_BYTES,
    sequence: int | None = None,
) -> CatalogSnapshot:
    """The snapshot of an index streamed in `chunks` (`size` bytes): an `IndexedSnapshot` for format 2,
    a snapshot built whole for format 1. An index over `max_bytes` is refused before anything is
    allocated for it (the size is the store's word, so it bounds the buffer, not the stream: `receive`
    refuses a stream longer than announced). With `sequence` (the pointer's), the header must carry
    the same number: the pointer's is what a replica checks first, the header's is the verified one."""
    if type(size) is not int or size < 0 or size > max_bytes:
        raise InvalidIndex(
            f"{INDEX_PREFIX}{index_id}.jsonl is {size!r} bytes, over the {max_bytes:,} this replica accepts "
            "(PublishedCatalog(max_index_bytes=))"
        )
    received = receive(chunks, size)
    if received.sha256 != index_id:
        raise InvalidIndex(f"{INDEX_PREFIX}{index_id}.jsonl does not hash to its id (truncated or altered)")
    try:
        index = json.loads(received.header)
    except ValueError as exc:
        raise InvalidIndex(f"index {index_id[:12]} does not start with a JSON header: {exc}") from None
    form = index.get("format") if isinstance(index, dict) else None
    if form not in (INDEX_FORMAT_1, INDEX_FORMAT_2):
        raise InvalidIndex(f"index {index_id[:12]} is not a {INDEX_FORMAT_2} (or {INDEX_FORMAT_1}) document")
    numbered = _sequence_of(index.get("sequence"), f"index {index_id[:12]}")
    if sequence is not None and numbered != sequence:
        raise InvalidIndex(
            f"index {index_id[:12]} carries sequence {numbered}, but {POINTER_KEY} says {sequence} (the pointer was "
            "edited, or the index was not written by skillwire publish)"
        )
    skipped = [_skipped(i, s) for i, s in enumerate(_list_of(index, "skipped"))]
    ignored = [_ignored(i, s) for i, s in enumerate(_list_of(index, "ignored"))]
    try:
        # Canonicalised as on the command line: a foreign writer's `SKILL://secret` still hides skill://secret.
        rules = audience_rules(_rule(i, r) for i, r in enumerate(_list_of(index, "audiences")))
    except InvalidAudienceRule as exc:
        raise field_error("audiences", str(exc)) from None
    if form == INDEX_FORMAT_2:
        return indexed_snapshot(
            index,
            received.rest,
            index_id,
            blobs,
            skipped=skipped,
            ignored=ignored,
            rules=rules,
            cursor_secret=cursor_secret,
            sequence=numbered,
        )
    logger.warning(
        "index %s is in format %s: built whole at load (slow and large at fleet scale); "
        "republish it with this skillwire to serve it from its lines",
        index_id[:12],
        INDEX_FORMAT_1,
    )
    count = index.get("skills")
    if type(count) is not int or count < 0:
        raise field_error("skills", "the header must give the number of skill lines")
    loader = RecordLoader(blobs)
    skills: list[CatalogSkill] = []
    for position, line in enumerate(_records(received.rest)):
        try:
            raw = json.loads(line)
        except ValueError as exc:
            raise field_error(f"skills[{position}]", f"line is not JSON: {exc}") from None
        skill = loader.skill(position, raw)  # this line's parsed objects are freed right after
        # As in format 2 (`index_records.parse_records`): another spelling of a skill, or the same URI
        # again, would list the skill twice.
        check_line_key(position, skill.uri, skills[-1].uri if skills else "")
        skills.append(skill)
    if len(skills) != count:
        raise field_error("skills", f"the header announces {count} skill lines, the index holds {len(skills)}")
    return PublishedSnapshot(
        skills,
        loader.files.values(),
        skipped,
        ignored=ignored,
        cursor_secret=cursor_secret,
        index_id=index_id,
        sequence=numbered,
        rules=rules,
    )


def _records(body: bytearray) -> Iterator[bytearray]:
    """The lines of a format-1 index after its header, one slice at a time."""
    start = 0
    while start < len(body):
        end = body.find(b"\n", start)
        if end < 0:
            end = len(body)
        yield body[start:end]
        start = end + 1


def _rule(position: int, raw: object) -> tuple[str, list[str]]:
    if not isinstance(raw, dict) or not isinstance(raw.get("prefix"), str) or not is_absolute(raw["prefix"]):
        raise field_error(f"audiences[{position}]", "must be {prefix: a URI prefix, audiences: [...]}")
    names = raw.get("audiences")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise field_error(f"audiences[{position}]", "audiences must be a non-empty list of strings")
    return raw["prefix"], names


def _list_of(index: Mapping[str, object], key: str) -> list[object]:
    value = index.get(key, [])
    if not isinstance(value, list):
        raise field_error(key, "must be an array")
    return cast(list[object], value)


def _skipped(position: int, raw: object) -> SkippedSkill:
    if not isinstance(raw, dict) or not isinstance(raw.get("location"), str) or not isinstance(raw.get("reason"), str):
        raise field_error(f"skipped[{position}]", "must be {location, reason} strings")
    return SkippedSkill(raw["location"], raw["reason"])


def _ignored(position: int, raw: object) -> tuple[str, str]:
    if not isinstance(raw, dict) or not isinstance(raw.get("path"), str) or not isinstance(raw.get("reason"), str):
        raise field_error(f"ignored[{position}]", "must be {path, reason} strings")
    return raw["path"], raw["reason"]


class PublishedCatalog(SkillCatalog):
    """A `SkillCatalog` whose snapshot comes from a published index instead of folders on disk.

    `refresh()` looks at the pointer (conditionally, by ETag) and swaps in a new snapshot only when it
    names another index; any failure raises and leaves the current snapshot in place. `watch()` polls
    every `poll_seconds` and logs failures, so a server keeps serving its last good snapshot while the
    store is down or a broken index is published, and picks up the next good one when it can.

    With `replica_state` (a file), the highest index sequence accepted is remembered there, and a
    pointer naming an older index is refused (one line with both numbers; `/healthz` stale), also
    after a restart, which then serves the index accepted last. `accept_older=True` takes the
    pointer's index whatever its number (a deliberate roll back) and records it as the new highest.
    """

    declares_audiences = True  # an index's `audiences` (see `SkillCatalog.declares_audiences`)

    def __init__(
        self,
        location: StoreLocation | str,
        *,
        poll_seconds: float = 30.0,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        cursor_secret: bytes = DEFAULT_CURSOR_SECRET,
        store: ObjectStore | None = None,
        max_index_bytes: int = DEFAULT_MAX_INDEX_BYTES,
        replica_state: Path | None = None,
        accept_older: bool = False,
    ) -> None:
        super().__init__((), cursor_secret=cursor_secret)
        self.max_index_bytes = max_index_bytes
        self.replica_state = replica_state
        self.accept_older = accept_older
        # The last index refused, and why: a pointer left on it is not downloaded again every poll.
        self._refused: tuple[str, InvalidIndex] | None = None
        self.location = parse_location(location) if isinstance(location, str) else location
        self.store = store if store is not None else open_store(self.location)
        self.blobs = BlobReader(self.store, self.location, max_bytes=cache_bytes)
        self.poll_seconds = poll_seconds
        self.status = SourceStatus("index", location=str(self.location))
        self._pointer: Pointer | None = None
        self.accepted = read_replica_state(replica_state, self.location) if replica_state is not None else None
        if self.accepted is not None and past_clock(self.accepted.sequence, time.time()):
            # Recorded by a replica that still took such numbers: no honest index can ever be above it.
            logger.warning(
                "%s records an accepted %s: not held to it; the next index accepted replaces it",
                replica_state,
                past_clock_line(self.accepted.sequence, time.time()),
            )
            self.accepted = None
        self._state_warned = False

    def watch_paths(self) -> list[str]:
        return []

    def source_status(self) -> SourceStatus:
        return self.status

    def _fetch_pointer(self) -> Pointer | None:
        """The pointer, or None when it has not changed since the last look (HTTP 304 on its ETag)."""
        etag = self._pointer.etag if self._pointer is not None else None
        try:
            result = obstore.get(self.store, POINTER_KEY, options={"if_none_match": etag} if etag else None)
            data = bytes(result.bytes())
        except FileNotFoundError as exc:
            if "NoSuchBucket" in str(exc):
                raise StoreError(store_failure(self.location, exc)) from None
            raise StoreError(
                f"{self.location} has no {POINTER_KEY}: nothing was published there yet{_git_hint(self.location)}"
            ) from None
        except Exception as exc:
            if type(exc).__name__ == "NotModifiedError":
                return None
            raise StoreError(store_failure(self.location, exc)) from None
        return parse_pointer(data, result.meta.get("e_tag"))

    def _load_index(self, pointer: Pointer) -> CatalogSnapshot:
        # As for a folder scan (see SkillCatalog._build): no cyclic GC while the snapshot is made, and
        # the survivors frozen so request-time collections never walk them.
        gc.collect()
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            try:
                if self._refused is not None and self._refused[0] == pointer.id:
                    raise self._refused[1]  # the same immutable index (named by its hash): the same answer
                result = obstore.get(self.store, pointer.index)
                size = result.meta["size"]
                # Streamed: the index is held once, in the buffer the snapshot keeps (catalog.indexed).
                chunks = _store_chunks(result.stream(min_chunk_size=_INDEX_CHUNK), self.location)
                try:
                    snapshot = load_index(
                        chunks,
                        size,
                        pointer.id,
                        self.blobs,
                        cursor_secret=self.cursor_secret,
                        max_bytes=self.max_index_bytes,
                        sequence=pointer.sequence,
                    )
                except InvalidIndex as exc:
                    self._refused = (pointer.id, exc)
                    raise
            except StoreError:
                raise
            except Exception as exc:
                if is_not_found(exc):
                    missing = f"{POINTER_KEY} names {pointer.index}, which {self.location} does not hold"
                    raise InvalidIndex(missing) from None
                raise StoreError(store_failure(self.location, exc)) from None
        finally:
            if was_enabled:
                gc.enable()
        gc.freeze()
        return snapshot

    def publishes_same(self, old: CatalogSnapshot, new: CatalogSnapshot) -> bool:
        # Comparing two indexed snapshots file by file would build every record of both; their lines
        # and tables compare as bytes instead. Any difference there (a source, a MIME type, an
        # audience rule) counts as a change: a spurious list_changed costs a client one re-list.
        if isinstance(old, IndexedSnapshot) and isinstance(new, IndexedSnapshot):
            return old.audience_rules == new.audience_rules and old.records.same_content(new.records)
        if isinstance(old, IndexedSnapshot) or isinstance(new, IndexedSnapshot):
            return False  # a change of index format: notify rather than build every record to compare
        return super().publishes_same(old, new)

    def _older_than_accepted(self, pointer: Pointer) -> InvalidIndex | None:
        """The refusal of a pointer naming an index numbered below the one this replica accepted last."""
        accepted = self.accepted
        if accepted is None or self.accept_older or not goes_back(pointer.sequence, accepted.sequence):
            return None
        return InvalidIndex(
            f"{POINTER_KEY} names index {pointer.id[:12]} with sequence {pointer.sequence}, older than sequence "
            f"{accepted.sequence} (index {accepted.index_id[:12]}) this replica already accepted: refusing to go "
            "back (serve --accept-older-index to roll back on purpose)"
        )

    def _remember(self, pointer: Pointer) -> None:
        """Record the accepted index as the newest (a failure to write is one warning: serving goes on)."""
        accepted = self.accepted
        if not self.accept_older and accepted is not None and goes_back(pointer.sequence, accepted.sequence):
            return
        self.accepted = Accepted(pointer.sequence, pointer.id)
        if self.replica_state is None or accepted == self.accepted:
            return
        try:
            write_replica_state(self.replica_state, self.location, self.accepted)
        except OSError as exc:
            if not self._state_warned:
                logger.warning(
                    "%s: cannot record the accepted index sequence (%s); a restart will not remember it",
                    self.replica_state,
                    exc.strerror or exc,
                )
                self._state_warned = True

    def reload(self, changed: Iterable[str] | None) -> tuple[CatalogSnapshot, bool]:
        started = time.perf_counter()
        m = metrics()
        with self._refresh_lock:
            old = self._snapshot
            held_back: InvalidIndex | None = None  # a roll back refused at start: the accepted index is served
            try:
                # The location is the operator's (s3://bucket/prefix, no credentials); the index id a hash.
                with span("skillwire.store.fetch", **{"skillwire.store": str(self.location)}) as current:
                    pointer = self._fetch_pointer()
                    if pointer is not None and (old is None or self._pointer is None or pointer.id != self._pointer.id):
                        older = self._older_than_accepted(pointer)
                        if older is not None and (old is not None or self.accepted is None):
                            raise older
                        if older is not None and self.accepted is not None:
                            # A restart onto a rolled-back pointer: the index accepted last is still in the
                            # bucket (indexes are never deleted) and is checked like any other.
                            held_back = older
                            accepted = self.accepted
                            key = f"{INDEX_PREFIX}{accepted.index_id}.jsonl"
                            pointer = Pointer(accepted.index_id, key, None, accepted.sequence)
                        new = self._load_index(pointer)
                    else:
                        new = None
                    current.set_attribute("skillwire.index.changed", new is not None)
            except (StoreError, InvalidIndex) as exc:
                self.status.last_error = str(exc)
                self.status.failures += 1
                m.poll_failures.inc()
                record_reload("failed", time.perf_counter() - started)
                raise
            now = time.time()
            self.status.checked_at = now
            self.status.last_error = None if held_back is None else str(held_back)
            self.status.failures = 0 if held_back is None else 1
            if held_back is not None and pointer is not None:
                logger.warning("%s; serving index %s, accepted last, instead", held_back, pointer.id[:12])
            if pointer is not None:
                self._pointer = pointer  # a new ETag for the same index is remembered too
            if new is None:
                assert old is not None  # the first look always loads
                self.observe_gauges()  # the pointer was read: the check time moves on every poll
                record_reload("unchanged", time.perf_counter() - started)
                return old, False
            assert pointer is not None
            self._remember(pointer)
            self._snapshot = new
            self.status.serving = pointer.id
            self.status.loaded_at = now
        self.observe_gauges()
        differs = True if old is None else self._announce(old, new)
        record_reload("swapped" if differs else "unchanged", time.perf_counter() - started)
        return new, differs

    async def watch(self, *, stop_event: anyio.Event | None = None, debounce_ms: int = 100) -> None:
        """Poll the pointer every `poll_seconds` until cancelled (or `stop_event` is set)."""
        if self.poll_seconds <= 0:
            return
        while stop_event is None or not stop_event.is_set():
            if await wait_or_stop(self.poll_seconds, stop_event):
                return
            before, failing = self.status.serving, self.status.failures > 0
            try:
                _, differs = await anyio.to_thread.run_sync(self.reload, None)
            except StoreError as exc:
                age = time.time() - (self.status.loaded_at or time.time())
                logger.warning("%s; still serving index %s (loaded %.0f s ago)", exc, (before or "?")[:12], age)
                continue
            except Exception:
                logger.exception("refreshing from %s failed; still serving the previous snapshot", self.location)
                continue
            if failing:
                shown = (self.status.serving or "?")[:12]
                logger.warning("%s is reachable again; serving index %s", self.location, shown)
            if self.status.serving != before:
                shown = (self.status.serving or "?")[:12]
                logger.info(
                    "now serving index %s from %s",
                    shown,
                    self.location,
                    extra={"event": "swap", "index": self.status.serving, "skills": len(self.snapshot.skill_by_uri)},
                )
            if not differs:
                continue
            await self._notify_async()


def _git_hint(location: StoreLocation) -> str:
    """For a `file://` location that is a git repository: the `git+file://` root the person likely meant."""
    from skillwire.catalog.git import as_git_root, is_git_repository

    if location.scheme != "file" or not is_git_repository(Path(location.prefix)):
        return ""
    return f"; it is a git repository: serve {as_git_root(Path(location.prefix))}[@BRANCH][#SUBDIR]"
