"""What a replica of a published catalog remembers across restarts: the newest index it accepted.

A pointer numbered below `Accepted.sequence` is a rollback (docs/signing.md: a bucket writer switching
the pointer back to an older, validly published index); `PublishedCatalog` refuses it and, after a
restart, serves the index recorded here instead of the older one the pointer names. The file is one
small JSON object per store location, replaced atomically.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from skillwire.catalog.store import StoreLocation
from skillwire.core.errors import StoreError

__all__: list[str] = []  # internal: PublishedCatalog's state (serve s3:// --replica-state)


REPLICA_STATE_FORMAT = "skillwire-replica/1"


@dataclass(frozen=True)
class Accepted:
    """The newest index a replica accepted: its sequence and id (what `replica_state` holds)."""

    sequence: int
    index_id: str


def read_replica_state(path: Path, location: StoreLocation) -> Accepted | None:
    """The accepted index recorded in `path` (None when there is no file yet); `StoreError` for a file
    that is not one, or that belongs to another location: refusing is safer than forgetting the number."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"{path}: the replica's state cannot be read ({exc.strerror or exc})") from None
    fix = "delete it to start again from the index the pointer names"
    try:
        value = json.loads(raw) if len(raw) <= 64 * 1024 else None
    except ValueError:
        value = None
    if not isinstance(value, dict) or value.get("format") != REPLICA_STATE_FORMAT:
        raise StoreError(f"{path} is not a {REPLICA_STATE_FORMAT} replica state file; {fix}")
    if value.get("location") != str(location):
        raise StoreError(
            f"{path} is the state of a replica of {value.get('location')!r:.200}, not of {location}; {fix}"
        )
    sequence, index_id = value.get("sequence"), value.get("index")
    if type(sequence) is not int or sequence < 0 or not isinstance(index_id, str) or len(index_id) != 64:
        raise StoreError(f"{path} holds no usable sequence and index; {fix}")
    return Accepted(sequence, index_id)


def write_replica_state(path: Path, location: StoreLocation, accepted: Accepted) -> None:
    """Record `accepted` (a temporary file renamed over the old one, so a crash leaves one whole file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {
        "format": REPLICA_STATE_FORMAT,
        "location": str(location),
        "sequence": accepted.sequence,
        "index": accepted.index_id,
    }
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(json.dumps(body, sort_keys=True).encode() + b"\n")
    os.replace(temporary, path)
