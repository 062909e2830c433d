"""Which published index an answer came from, and the one rule for "older": a replica and `pull` share it.

A published catalog (`catalog/published.py`) names each index by its id, the SHA-256 of its bytes (so
every publish that changes the catalog has a new id), and numbers it: `sequence`, in the index's header
and in the pointer, above the number of the index the pointer named before (the time in seconds, or one
more). An index goes back when its number is below the one accepted before (`goes_back`); the same number
is the same index, since publish never gives two different indexes of one catalog one number. The id
says which index, never whether it is newer: two ids are two indexes, and only their numbers order them.

Two parties apply the rule. A replica (`PublishedCatalog`) compares the pointer's number with the highest
it accepted (its state file, `catalog/replica_state.py`). A server answering from an index says which in
the `skills/list` result's `_meta[INDEX_META_KEY]` (`{"id", "sequence"}`); the client reads it
(`read_published_index`: the server's word, so types and bounds are checked) and `skillwire pull`
compares it with the index recorded in `skills.lock` (`host/mirror/lock.py`, `index_verdict`), so a
rolled-back pointer or a replica left behind is refused by the client too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PublishedIndex"]

# Whole numbers a JSON reader in any language keeps exactly (JavaScript's Number.MAX_SAFE_INTEGER): a
# number past it is garbage, not an index published in the year 285 million.
MAX_SEQUENCE = 2**53 - 1
_INDEX_ID = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class PublishedIndex:
    """One published index: `id`, the SHA-256 (hex) of its bytes, and `sequence`, its publisher's number."""

    id: str
    sequence: int

    def to_json(self) -> dict[str, str | int]:
        return {"id": self.id, "sequence": self.sequence}

    def describe(self) -> str:
        return f"index {self.id[:12]} (sequence {self.sequence})"


def goes_back(sequence: int, accepted: int) -> bool:
    """Whether an index numbered `sequence` is older than the one numbered `accepted` taken before: the rule."""
    return sequence < accepted


def read_published_index(value: object) -> PublishedIndex | str:
    """`{"id": "<64 lowercase hex>", "sequence": 0..MAX_SEQUENCE}` as a `PublishedIndex`, or why it is not one
    (one line, quoting nothing it was given: the value may come from a server)."""
    if not isinstance(value, dict):
        return f"not an object with id and sequence (a JSON {_json_type(value)})"
    index_id, sequence = value.get("id"), value.get("sequence")
    if not isinstance(index_id, str) or _INDEX_ID.fullmatch(index_id) is None:
        return "its id is not a SHA-256 (64 lowercase hex digits)"
    if type(sequence) is not int or not 0 <= sequence <= MAX_SEQUENCE:
        return f"its sequence is not a whole number from 0 to {MAX_SEQUENCE}"
    return PublishedIndex(index_id, sequence)


def _json_type(value: object) -> str:
    names = {type(None): "null", bool: "boolean", int: "number", float: "number", str: "string", list: "array"}
    return names.get(type(value), type(value).__name__)
