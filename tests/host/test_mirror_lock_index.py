"""`skills.lock`'s `index` (the newest published index a pull took skills from) and the pull's decision
(`index_verdict`): refused when the server's sequence is lower (the replica's own rule,
`core.published_index.goes_back`), taken with `--allow-older`, recorded when newer or first seen, and the
record left alone when the server names no index. Read back, a lock's `index` is checked like the
server's claim: garbage is a one-line `LockError`.
"""

from __future__ import annotations

import json

import pytest

from skillwire.core.errors import LockError
from skillwire.core.published_index import MAX_SEQUENCE, SEQUENCE_AHEAD_LIMIT, PublishedIndex
from skillwire.host.mirror.lock import IndexVerdict, Lock, index_verdict, older_index_line

OLD = PublishedIndex("0a" * 32, 4)
NEW = PublishedIndex("0b" * 32, 5)
OTHER = PublishedIndex("0c" * 32, 5)  # another index under the same number (another bucket, say)
NOW = 1_796_000_000.0  # the reader's clock: the sequences above are far below it


def test_the_lock_records_the_index_after_selection_and_reads_it_back() -> None:
    lock = Lock("http://127.0.0.1:1/mcp", "all", index=NEW)
    text = lock.to_text()
    assert list(json.loads(text)) == ["version", "origin", "selection", "index", "skills"]
    assert json.loads(text)["index"] == {"id": NEW.id, "sequence": 5}
    assert Lock.from_text(text, "skills.lock").index == NEW


def test_a_lock_without_an_index_has_no_key_and_reads_as_none() -> None:
    text = Lock("http://127.0.0.1:1/mcp").to_text()
    assert "index" not in json.loads(text)
    assert Lock.from_text(text, "skills.lock").index is None


@pytest.mark.parametrize(
    "value", [None, 5, {"id": NEW.id}, {"id": "zz" * 32, "sequence": 5}, {"id": NEW.id, "sequence": -1}]
)
def test_a_lock_whose_index_is_garbage_is_refused_in_one_line(value: object) -> None:
    data = json.loads(Lock("http://127.0.0.1:1/mcp").to_text())
    data["index"] = value
    with pytest.raises(LockError, match=r"skills.lock is not a usable skills.lock \(index: ") as info:
        Lock.from_text(json.dumps(data), "skills.lock")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("locked", "served", "allow", "expected"),
    [
        (None, None, False, IndexVerdict(None)),  # a folder server, a first pull: as before
        (NEW, None, False, IndexVerdict(NEW)),  # a server that names none leaves the record as it was
        (None, OLD, False, IndexVerdict(OLD)),  # first seen: recorded
        (OLD, NEW, False, IndexVerdict(NEW)),  # newer: recorded
        (NEW, NEW, False, IndexVerdict(NEW)),  # the same
        (NEW, OTHER, False, IndexVerdict(OTHER)),  # another id at the same number is not older
        (NEW, OLD, False, IndexVerdict(NEW, older=True, refused=True)),  # back: refused, record kept
        (NEW, OLD, True, IndexVerdict(OLD, older=True)),  # back, as asked: taken and recorded
        (OTHER, PublishedIndex("0d" * 32, 3), False, IndexVerdict(OTHER, older=True, refused=True)),
    ],
)
def test_the_decision(
    locked: PublishedIndex | None, served: PublishedIndex | None, allow: bool, expected: IndexVerdict
) -> None:
    assert index_verdict(locked, served, allow_older=allow, now=NOW) == expected


def test_a_locked_number_past_the_clock_bound_no_longer_refuses_honest_replicas() -> None:
    # Issue 35, defect 10: a lock that once recorded 2**53 - 1 from one server refused every honest
    # replica afterwards (every real number is lower). A number that far ahead of the clock is no publish.
    pinned = PublishedIndex("0e" * 32, MAX_SEQUENCE)
    honest = PublishedIndex("0f" * 32, int(NOW))
    verdict = index_verdict(pinned, honest, allow_older=False, now=NOW)
    assert verdict.record == honest
    assert not verdict.refused
    assert not verdict.older
    assert verdict.dropped is not None
    assert f"sequence {MAX_SEQUENCE} is" in verdict.dropped
    assert "ahead of this machine's clock" in verdict.dropped
    # At the bound it still counts (a day ahead is a clock skew, not garbage).
    ahead = PublishedIndex("0e" * 32, int(NOW) + SEQUENCE_AHEAD_LIMIT)
    assert index_verdict(ahead, honest, allow_older=False, now=NOW).refused


def test_the_line_names_both_indexes_and_both_sequences() -> None:
    line = older_index_line(OLD, NEW, "out/skills.lock")
    assert line == (
        f"the server serves index {OLD.id[:12]} (sequence 4), older than index {NEW.id[:12]} (sequence 5) "
        "recorded in out/skills.lock"
    )
