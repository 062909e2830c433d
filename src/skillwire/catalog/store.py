"""Where a published catalog lives (`s3://BUCKET/PREFIX` or `file://DIR`) and how its blobs are read.

Layout under the location's prefix (see `catalog.published` for what the objects hold):

    blobs/sha256/<hex>     every published file, keyed by the SHA-256 of its bytes
    indexes/<id>.json      one index per distinct catalog, `id` the SHA-256 of the index's own bytes
    current.json           the pointer readers follow; a publish writes it last

The client is obstore (Rust `object_store` behind an async Python API). It reads the standard AWS
environment itself (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
`AWS_SESSION_TOKEN`, `AWS_REGION`, `AWS_ALLOW_HTTP`), so the same command works against AWS S3,
MinIO, R2, GCS's S3 API and SeaweedFS; `catalog.aws_credentials` adds the profiles of the shared
files `~/.aws/credentials` and `~/.aws/config`, `credential_process` included. Retries and timeouts
are kept short: a server must notice an unreachable store in seconds (and go on serving its last
snapshot), not after obstore's default three minutes of retrying. obstore is imported on first use
only: a server of folders never loads it (15 ms and 10 MB of its start).

Every blob leaves `BlobReader` only after its bytes were hashed and matched the digest the index
published; a blob that does not match is refused and never cached.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from skillwire.catalog.snapshot import CatalogFile, MemoryContent
from skillwire.core.errors import BlobUnavailable, StoreError
from skillwire.core.manifest import DIGEST_PREFIX
from skillwire.core.verify import file_matches
from skillwire.ops.metrics import metrics

if TYPE_CHECKING:
    from obstore.store import ObjectStore

POINTER_KEY = "current.json"
INDEX_PREFIX = "indexes/"
BLOB_PREFIX = "blobs/sha256/"
DEFAULT_CACHE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class StoreLocation:
    """A parsed `s3://BUCKET/PREFIX` or `file://DIR`."""

    scheme: str  # "s3" or "file"
    bucket: str  # empty for file://
    prefix: str  # key prefix inside the bucket, or the directory for file://, without a trailing "/"

    def __str__(self) -> str:
        if self.scheme == "file":
            return f"file://{self.prefix}"
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"


def is_store_url(text: str) -> bool:
    return text.startswith(("s3://", "file://"))


def parse_location(text: str) -> StoreLocation:
    """`s3://BUCKET[/PREFIX]` or `file://DIR` (`file:///abs/dir` or `file://relative/dir`)."""
    if text.startswith("s3://"):
        bucket, _, prefix = text[len("s3://") :].partition("/")
        if not bucket:
            raise StoreError(f"{text!r} names no bucket; write s3://BUCKET/PREFIX")
        prefix = prefix.strip("/")
        if any(part in ("", ".", "..") for part in prefix.split("/")) and prefix:
            raise StoreError(f"{text!r}: the prefix has an empty, '.' or '..' segment")
        return StoreLocation("s3", bucket, prefix)
    if text.startswith("file://"):
        path = unquote(text[len("file://") :])
        if not path:
            raise StoreError(f"{text!r} names no directory; write file:///ABSOLUTE/DIR or file://RELATIVE/DIR")
        return StoreLocation("file", "", str(Path(path).resolve()))
    raise StoreError(f"{text!r} is not an object-store location; write s3://BUCKET/PREFIX or file://DIR")


def open_store(location: StoreLocation, *, create: bool = False, timeout_seconds: float = 10.0) -> ObjectStore:
    """An obstore client for `location`; with `create`, a missing file:// directory is made."""
    from obstore.store import LocalStore, S3Store

    allow_http = os.environ.get("AWS_ALLOW_HTTP", "").strip().lower() in ("1", "true", "yes")
    endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT") or ""
    if location.scheme == "s3" and endpoint.lower().startswith("http://") and not allow_http:
        raise StoreError(
            f"{location}: the endpoint {endpoint} is plain HTTP, which is refused unless AWS_ALLOW_HTTP=true "
            "is set (or use an https:// endpoint)"
        )
    if location.scheme == "file":
        directory = Path(location.prefix)
        if create:
            directory.mkdir(parents=True, exist_ok=True)
        elif not directory.is_dir():
            raise StoreError(f"{location}: no such directory")
        return LocalStore(prefix=directory)
    from skillwire.catalog.aws_credentials import s3_settings
    from skillwire.core.errors import AwsCredentialsError

    try:
        aws = s3_settings(os.environ)  # the shared files' profile, and its credential_process if any
    except AwsCredentialsError as exc:
        raise StoreError(f"{location}: {exc}") from None
    return S3Store(
        location.bucket,
        prefix=location.prefix or None,
        config=aws.config or None,  # type: ignore[arg-type]
        credential_provider=aws.credential_provider,
        # Client options given here replace those obstore read from the environment, so the one
        # environment setting among them is carried over.
        client_options={
            "allow_http": allow_http,
            "connect_timeout": timedelta(seconds=min(timeout_seconds, 3.0)),
            "timeout": timedelta(seconds=timeout_seconds),
        },
        retry_config={
            "max_retries": 2,
            "retry_timeout": timedelta(seconds=timeout_seconds),
            "backoff": {"init_backoff": timedelta(milliseconds=100), "max_backoff": timedelta(seconds=1), "base": 2},
        },
    )


def describe(exc: BaseException) -> str:
    """One line for a store failure: obstore's messages carry a multi-line debug dump after the first."""
    from skillwire.catalog.aws_credentials import provider_failure

    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    first = provider_failure(first) or first  # a failed credential_process says what failed itself
    return first if len(first) <= 300 else first[:297] + "..."


_S3_CODE = re.compile(r"<Code>([A-Za-z]+)</Code>")
_S3_REGION = re.compile(r"<Region>([a-z0-9-]+)</Region>|expecting '([a-z0-9-]+)'")


def store_failure(location: StoreLocation, exc: BaseException) -> str:
    """One line an operator can act on: the bucket and the cause, from the store's own error code.

    obstore's message is the HTTP exchange and the XML error body; the body's `<Code>` says which of
    the usual mistakes it is (no such bucket, unknown key id, wrong secret, refused by a policy, the
    bucket in another region). Anything else keeps obstore's first line, cut to 300 characters."""
    text = str(exc)
    bucket = f"bucket {location.bucket!r}" if location.scheme == "s3" else str(location)
    found = _S3_CODE.search(text)
    code = found.group(1) if found else ""
    if "builder error" in text and "http://" in text:
        return (
            f"{location}: the endpoint is plain HTTP, which is refused unless AWS_ALLOW_HTTP=true is set "
            "(or use an https:// endpoint)"
        )
    if "169.254.169.254" in text or "169.254.170.2" in text:
        return (
            f"{location}: no credentials: the instance metadata service was asked and refused; set "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"
        )
    if code == "NoSuchBucket":
        return f"{location}: {bucket} does not exist on this store (check the name, or AWS_ENDPOINT_URL)"
    if code == "InvalidAccessKeyId":
        return f"{location}: wrong credentials: the store does not know this access key id (AWS_ACCESS_KEY_ID)"
    if code == "SignatureDoesNotMatch":
        return f"{location}: wrong credentials: the secret key does not match the access key id (AWS_SECRET_ACCESS_KEY)"
    if code in ("AuthorizationHeaderMalformed", "PermanentRedirect", "IllegalLocationConstraintException"):
        region = _S3_REGION.search(text)
        expected = next((g for g in region.groups() if g), None) if region else None
        where = f"; it is in {expected}: set AWS_REGION={expected}" if expected else "; set AWS_REGION to its region"
        return f"{location}: wrong region for {bucket}{where}"
    if code == "AccessDenied" or type(exc).__name__ == "PermissionDeniedError":
        return f"{location}: access denied: these credentials may not read {bucket} (the store's policy refused it)"
    return f"{location} is unreachable: {describe(exc)}"


def blob_key(digest: str) -> str:
    return BLOB_PREFIX + digest[len(DIGEST_PREFIX) :]


def is_not_found(exc: BaseException) -> bool:
    return isinstance(exc, FileNotFoundError)


class BlobReader:
    """Reads published files by digest through a size-bounded in-memory LRU cache.

    In memory rather than on disk: a cached blob was verified when it entered, and bytes in this
    process cannot change under it, so a cache hit needs no re-hash; a disk cache would have to be
    hashed again on every read to keep "bytes served = bytes hashed". Blobs larger than a quarter of
    the cache are served but not kept, so one big file cannot flush everything else.
    """

    def __init__(self, store: ObjectStore, location: StoreLocation, *, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.store = store
        self.location = location
        self.max_bytes = max_bytes
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cached_bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self._reads = metrics().store_reads  # hit | miss | error: the cache hit ratio on /metrics

    def cached(self, digest: str) -> bytes | None:
        with self._lock:
            data = self._cache.get(digest)
            if data is not None:
                self._cache.move_to_end(digest)
                self.hits += 1
        if data is not None:
            self._reads.labels("hit").inc()
        return data

    def _remember(self, digest: str, data: bytes) -> None:
        if len(data) > self.max_bytes // 4:
            return
        with self._lock:
            if digest in self._cache:
                return
            self._cache[digest] = data
            self._cached_bytes += len(data)
            while self._cached_bytes > self.max_bytes and self._cache:
                _, evicted = self._cache.popitem(last=False)
                self._cached_bytes -= len(evicted)

    def _verified(self, file: CatalogFile, data: bytes) -> bytes:
        if not file_matches(file, data):  # size, then digest: core/verify.py decides
            raise BlobUnavailable(
                f"{file.uri}: the object store's {blob_key(file.digest)} does not match the published digest "
                f"({len(data)} bytes, {file.size} expected); refusing to serve corrupt bytes"
            )
        self.misses += 1
        self._reads.labels("miss").inc()
        self._remember(file.digest, data)
        return data

    def _unavailable(self, file: CatalogFile, exc: BaseException) -> BlobUnavailable:
        self._reads.labels("error").inc()
        if is_not_found(exc):
            return BlobUnavailable(f"{file.uri}: {blob_key(file.digest)} is missing from {self.location}")
        return BlobUnavailable(f"{file.uri}: not in the local cache: {store_failure(self.location, exc)}")

    async def read_async(self, file: CatalogFile) -> bytes:
        import obstore

        data = self.cached(file.digest)
        if data is not None:
            return data
        try:
            result = await obstore.get_async(self.store, blob_key(file.digest))
            if result.meta["size"] != file.size:
                # Refused before the body is read: a blob of the wrong size cannot match, and may be huge.
                raise BlobUnavailable(
                    f"{file.uri}: the object store's {blob_key(file.digest)} is {result.meta['size']} bytes, "
                    f"{file.size} published; refusing to serve it"
                )
            body = bytes(await result.bytes_async())
        except BlobUnavailable:
            raise
        except Exception as exc:  # obstore raises builtin OSErrors and its own BaseError tree
            raise self._unavailable(file, exc) from None
        return self._verified(file, body)

    def read(self, file: CatalogFile) -> bytes:
        import obstore

        data = self.cached(file.digest)
        if data is not None:
            return data
        try:
            result = obstore.get(self.store, blob_key(file.digest))
            if result.meta["size"] != file.size:
                raise BlobUnavailable(
                    f"{file.uri}: the object store's {blob_key(file.digest)} is {result.meta['size']} bytes, "
                    f"{file.size} published; refusing to serve it"
                )
            body = bytes(result.bytes())
        except BlobUnavailable:
            raise
        except Exception as exc:
            raise self._unavailable(file, exc) from None
        return self._verified(file, body)


# Published files hold no bytes of their own: `content` is this shared empty marker, and reads go
# through the file's `BlobReader`.
IN_STORE = MemoryContent(b"")


@dataclass(frozen=True, slots=True)
class StoredFile(CatalogFile):
    """A published file whose bytes live in the object store, under its digest."""

    blobs: BlobReader

    def read(self) -> bytes:
        return self.blobs.read(self)

    async def read_async(self) -> bytes:
        return await self.blobs.read_async(self)


def stored_file(uri: str, digest: str, size: int, mime_type: str, is_text: bool, blobs: BlobReader) -> StoredFile:
    return StoredFile(uri, digest, size, mime_type, is_text, IN_STORE, blobs)
