"""`core/published_index.py`: what a `skills/list` result's `_meta[INDEX_META_KEY]` may hold, and the one rule
for "older" (`goes_back`) that a replica and `skillwire pull` both apply.

The value comes from a server, so every shape that is not `{"id": <64 lowercase hex>, "sequence": <0 ..
MAX_SEQUENCE>}` is refused with a reason that quotes none of it.
"""

from __future__ import annotations

import pytest

from skillwire.core.published_index import (
    MAX_SEQUENCE,
    SEQUENCE_AHEAD_LIMIT,
    PublishedIndex,
    goes_back,
    past_clock,
    read_published_index,
    sequence_limit,
)

ID = "ab" * 32


def test_a_well_formed_claim_is_read() -> None:
    assert read_published_index({"id": ID, "sequence": 7}) == PublishedIndex(ID, 7)
    assert read_published_index({"id": ID, "sequence": 0, "later": "ignored"}) == PublishedIndex(ID, 0)
    assert read_published_index({"id": ID, "sequence": MAX_SEQUENCE}) == PublishedIndex(ID, MAX_SEQUENCE)
    assert PublishedIndex(ID, 7).to_json() == {"id": ID, "sequence": 7}
    assert PublishedIndex(ID, 7).describe() == f"index {ID[:12]} (sequence 7)"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (None, "not an object with id and sequence (a JSON null)"),
        ([ID, 7], "not an object with id and sequence (a JSON array)"),
        ("\x1b[31mred", "not an object with id and sequence (a JSON string)"),
        ({"sequence": 7}, "its id is not a SHA-256"),
        ({"id": ID.upper(), "sequence": 7}, "its id is not a SHA-256"),
        ({"id": ID[:-1], "sequence": 7}, "its id is not a SHA-256"),
        ({"id": ID + "\n", "sequence": 7}, "its id is not a SHA-256"),
        ({"id": 12, "sequence": 7}, "its id is not a SHA-256"),
        ({"id": ID}, "its sequence is not a whole number"),
        ({"id": ID, "sequence": True}, "its sequence is not a whole number"),
        ({"id": ID, "sequence": 7.0}, "its sequence is not a whole number"),
        ({"id": ID, "sequence": "7"}, "its sequence is not a whole number"),
        ({"id": ID, "sequence": -1}, "its sequence is not a whole number"),
        ({"id": ID, "sequence": MAX_SEQUENCE + 1}, "its sequence is not a whole number"),
        ({"id": ID, "sequence": 10**400}, "its sequence is not a whole number"),
    ],
)
def test_anything_else_is_refused_in_one_line_that_quotes_nothing(value: object, reason: str) -> None:
    found = read_published_index(value)
    assert isinstance(found, str)
    assert found.startswith(reason)
    assert "\n" not in found
    assert "\x1b" not in found
    assert "red" not in found


def test_only_a_lower_number_goes_back() -> None:
    assert goes_back(4, 5)
    assert not goes_back(5, 5)  # the same number: the same index
    assert not goes_back(6, 5)
    assert goes_back(0, 1)


@pytest.mark.parametrize("ahead", [SEQUENCE_AHEAD_LIMIT + 1, 10 * SEQUENCE_AHEAD_LIMIT, MAX_SEQUENCE - 1_796_000_000])
def test_a_claim_past_the_clock_bound_is_refused_when_read_live(ahead: int) -> None:
    # Issue 35, defect 10: a server answering 2**53 - 1 was recorded and then refused every honest replica.
    now = 1_796_000_000.5
    claim = {"id": ID, "sequence": int(now) + ahead}
    found = read_published_index(claim, now=now)
    assert isinstance(found, str)
    assert found.startswith(f"its sequence {int(now) + ahead} is {ahead:,} s ahead of this machine's clock")
    assert "\n" not in found
    assert read_published_index(claim) == PublishedIndex(ID, int(now) + ahead)  # a stored record: parsed only


def test_the_bound_is_the_clock_plus_the_stated_limit() -> None:
    now = 1_796_000_000.9
    assert sequence_limit(now) == 1_796_000_000 + SEQUENCE_AHEAD_LIMIT
    assert not past_clock(1_796_000_000 + SEQUENCE_AHEAD_LIMIT, now)
    assert past_clock(1_796_000_001 + SEQUENCE_AHEAD_LIMIT, now)
    assert sequence_limit(MAX_SEQUENCE) == MAX_SEQUENCE
    at = read_published_index({"id": ID, "sequence": sequence_limit(now)}, now=now)
    assert at == PublishedIndex(ID, sequence_limit(now))
