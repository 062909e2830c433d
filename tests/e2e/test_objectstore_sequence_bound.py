"""A maximal sequence on a real S3-compatible store (SeaweedFS on 127.0.0.1): issue 35, defect 10.

A bucket writer stores an index numbered 2^53-1 and points to it. Before the bound, a replica took it
and was pinned (every honest index after it numbers lower), and the publisher's next publish numbered
2^53, which every replica refuses. Now a publish number is never more than a day ahead of the reader's
clock (`core/published_index.past_clock`): the running replica refuses the index in one line and keeps
serving; `publish` refuses to number after it, naming the one recovery command; `publish
--reset-sequence` numbers from the clock and the replica takes that; a replica whose state file holds
such a number (written before the bound) is not held to it.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from pathlib import Path

import obstore
import pytest

from skillwire.catalog.published import PublishedCatalog, canonical_json
from skillwire.catalog.replica_state import Accepted, write_replica_state
from skillwire.catalog.store import POINTER_KEY, parse_location
from skillwire.core.published_index import MAX_SEQUENCE
from support.calls import healthz, list_uris, wait_for
from support.cli import run_cli
from support.seaweed import SeaweedS3
from support.servers import serve_http


def _skill(root: Path, name: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill {name}.\n---\nBody.\n")


def _forge_maximal(seaweedfs: SeaweedS3, prefix: str) -> str:
    """Re-store the pointer's index numbered 2^53-1 and point to it: one bucket write. Its id."""
    store = seaweedfs.store(prefix)
    pointer = json.loads(bytes(obstore.get(store, POINTER_KEY).bytes()))
    body = bytes(obstore.get(store, pointer["index"]).bytes())
    header, rest = body.split(b"\n", 1)
    forged = canonical_json({**json.loads(header), "sequence": MAX_SEQUENCE}) + b"\n" + rest
    forged_id = hashlib.sha256(forged).hexdigest()
    obstore.put(store, f"indexes/{forged_id}.jsonl", forged)
    moved = {**pointer, "id": forged_id, "index": f"indexes/{forged_id}.jsonl", "sequence": MAX_SEQUENCE}
    obstore.put(store, POINTER_KEY, canonical_json(moved))
    return forged_id


def test_a_maximal_sequence_is_refused_and_reset_by_one_command(seaweedfs: SeaweedS3, tmp_path: Path) -> None:
    prefix = "sequence-" + secrets.token_hex(4)
    root = tmp_path / "skills"
    _skill(root, "alpha")
    _skill(root, "beta")
    done = run_cli("publish", str(root), seaweedfs.url(prefix), env=seaweedfs.env)
    assert done.code == 0, done.err
    state = tmp_path / "replica.json"
    args = [seaweedfs.url(prefix), "--poll", "0.3", "--replica-state", str(state)]
    with serve_http(args, env=seaweedfs.env) as server:
        good = healthz(server.url)["index"]
        accepted = json.loads(state.read_text())["sequence"]
        assert len(list_uris(server.url)) == 2

        _forge_maximal(seaweedfs, prefix)
        wait_for(lambda: healthz(server.url)["stale"], 20, "the index numbered 2^53-1 to be refused")
        report = healthz(server.url)
        assert report["index"] == good  # still the last good index
        error = report["lastError"]
        assert f"sequence {MAX_SEQUENCE} is" in error
        assert "ahead of this machine's clock" in error
        assert "skillwire publish --reset-sequence" in error
        assert "\n" not in error
        assert json.loads(state.read_text())["sequence"] == accepted  # never recorded

        # The publisher does not number after it (2^53: every replica would refuse), in one line.
        _skill(root, "gamma")
        refused = run_cli("publish", str(root), seaweedfs.url(prefix), env=seaweedfs.env)
        assert refused.code != 0
        lines = refused.err.strip().splitlines()
        assert len(lines) == 1, refused.err
        assert f"names sequence {MAX_SEQUENCE} is" in lines[0]
        assert "`skillwire publish --reset-sequence`" in lines[0]

        # The one recovery command: numbered from the clock, and the replica takes it.
        reset = run_cli("publish", "--reset-sequence", str(root), seaweedfs.url(prefix), env=seaweedfs.env)
        assert reset.code == 0, reset.err
        wait_for(lambda: len(list_uris(server.url)) == 3, 20, "the reset index to be served")
        assert not healthz(server.url)["stale"]
        assert accepted <= json.loads(state.read_text())["sequence"] < MAX_SEQUENCE


def test_a_replica_state_holding_a_maximal_number_does_not_pin_the_replica(
    seaweedfs: SeaweedS3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # As a replica before the bound recorded it: every honest index was refused as older from then on.
    for key, value in seaweedfs.env.items():
        monkeypatch.setenv(key, value)
    prefix = "sequence-state-" + secrets.token_hex(4)
    root = tmp_path / "skills"
    _skill(root, "alpha")
    done = run_cli("publish", str(root), seaweedfs.url(prefix), env=seaweedfs.env)
    assert done.code == 0, done.err
    state = tmp_path / "replica.json"
    write_replica_state(state, parse_location(seaweedfs.url(prefix)), Accepted(MAX_SEQUENCE, "0e" * 32))
    catalog = PublishedCatalog(seaweedfs.url(prefix), poll_seconds=0, replica_state=state)
    assert list(catalog.snapshot.skill_by_uri) == ["skill://alpha/SKILL.md"]
    assert catalog.status.failures == 0
    assert json.loads(state.read_text())["sequence"] < MAX_SEQUENCE  # replaced by the index it took
    warned = [r.getMessage() for r in caplog.records if "ahead of this machine's clock" in r.getMessage()]
    assert len(warned) == 1
    assert "not held to it" in warned[0]
