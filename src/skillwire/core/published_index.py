"""Which published index an answer came from, and the one rule for "older": a replica and `pull` share it.

A published catalog (`catalog/published.py`) names each index by its id, the SHA-256 of its bytes (so
every publish that changes the catalog has a new id), and numbers it: `sequence`, in the index's header
and in the pointer, above the number of the index the pointer named before (the time in seconds, or one
more). A number is never more than `SEQUENCE_AHEAD_LIMIT` seconds ahead of the clock of whoever reads it
(`past_clock`): a publish number is a time, so one far ahead of every clock is a bucket writer's (one write
of 2^53-1 used to make the next publish unreadable and pin every replica and `skills.lock` that took it),
and replicas, publish and `pull` refuse it in one line (`past_clock_line`). An index goes back when its
number is below the one accepted before (`goes_back`); the same number
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
# How far ahead of a reader's clock a publish number may be, in seconds: a day covers the skew between a
# publisher's clock and a replica's and the one-more steps of many publishes in one second, while a
# bucket writer can push the numbering no further ahead than that (publish then continues above it).
SEQUENCE_AHEAD_LIMIT = 86_400
# What an operator runs when the pointer holds a number past the limit (docs/signing.md).
RESET_COMMAND = "skillwire publish --reset-sequence"
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


def sequence_limit(now: float) -> int:
    """The highest sequence an index read at `now` (seconds since the epoch) may carry."""
    return min(MAX_SEQUENCE, int(now) + SEQUENCE_AHEAD_LIMIT)


def past_clock(sequence: int, now: float) -> bool:
    """Whether `sequence` is further ahead of the clock reading `now` than any publish numbers: the bound."""
    return sequence > sequence_limit(now)


def past_clock_line(sequence: int, now: float) -> str:
    """Why a number past the bound is refused (one line, to follow the thing that carries it)."""
    return (
        f"sequence {sequence} is {sequence - int(now):,} s ahead of this machine's clock, past the "
        f"{SEQUENCE_AHEAD_LIMIT:,} s a publish number may be (a bucket writer's number, or a clock set wrong)"
    )


def read_published_index(value: object, *, now: float | None = None) -> PublishedIndex | str:
    """`{"id": "<64 lowercase hex>", "sequence": 0..MAX_SEQUENCE}` as a `PublishedIndex`, or why it is not one
    (one line, quoting nothing it was given: the value may come from a server). With `now` (a server's
    claim read live), a sequence past the clock bound (`past_clock`) is refused too."""
    if not isinstance(value, dict):
        return f"not an object with id and sequence (a JSON {_json_type(value)})"
    index_id, sequence = value.get("id"), value.get("sequence")
    if not isinstance(index_id, str) or _INDEX_ID.fullmatch(index_id) is None:
        return "its id is not a SHA-256 (64 lowercase hex digits)"
    if type(sequence) is not int or not 0 <= sequence <= MAX_SEQUENCE:
        return f"its sequence is not a whole number from 0 to {MAX_SEQUENCE}"
    if now is not None and past_clock(sequence, now):
        return f"its {past_clock_line(sequence, now)}"
    return PublishedIndex(index_id, sequence)


def _json_type(value: object) -> str:
    names = {type(None): "null", bool: "boolean", int: "number", float: "number", str: "string", list: "array"}
    return names.get(type(value), type(value).__name__)
