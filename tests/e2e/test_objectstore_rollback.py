"""Roll back protection on a real S3-compatible store (SeaweedFS on 127.0.0.1): a published index is numbered,
and a replica refuses a pointer switched back to an older index, keeping the last good snapshot.

The attack is a bucket writer replaying an index that was validly published earlier (every index ever
published stays in the bucket, under its own hash): the pointer is rewritten to the old pointer's bytes.
The replica names both sequence numbers in one line, `/healthz` says stale with the reason, and a restart
remembers the number (its state file) and serves the index it accepted last.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import obstore
import pytest
from obstore.store import S3Store

from skillwire.catalog.published import PublishedCatalog
from skillwire.catalog.store import POINTER_KEY
from skillwire.core.errors import InvalidIndex
from support.calls import healthz, list_uris, wait_for
from support.cli import run_cli
from support.seaweed import SeaweedS3
from support.servers import serve_http


def _skill(root: Path, name: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill {name}.\n---\nBody.\n")


def _publish(seaweedfs: SeaweedS3, root: Path, prefix: str) -> None:
    done = run_cli("publish", str(root), seaweedfs.url(prefix), env=seaweedfs.env)
    assert done.code == 0, done.err


def _pointer(store: S3Store) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(bytes(obstore.get(store, POINTER_KEY).bytes()))
    return value


@pytest.fixture
def aws_env(seaweedfs: SeaweedS3, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for key, value in seaweedfs.env.items():
        monkeypatch.setenv(key, value)
    return seaweedfs.env


@pytest.fixture
def two_publishes(seaweedfs: SeaweedS3, tmp_path: Path) -> tuple[str, S3Store, bytes, Path]:
    """A prefix published twice: (prefix, a client of the bucket, the first pointer's bytes, the folder)."""
    prefix = "rollback-" + secrets.token_hex(4)
    root = tmp_path / "skills"
    _skill(root, "alpha")
    _skill(root, "beta")
    _publish(seaweedfs, root, prefix)
    store = seaweedfs.store(prefix)
    first = bytes(obstore.get(store, POINTER_KEY).bytes())
    _skill(root, "gamma")  # the publisher adds a skill (and, say, fixes a bad one): the second index
    _publish(seaweedfs, root, prefix)
    return prefix, store, first, root


def test_each_changing_publish_numbers_its_index_higher(
    seaweedfs: SeaweedS3, two_publishes: tuple[str, S3Store, bytes, Path]
) -> None:
    prefix, store, first, root = two_publishes
    old, new = json.loads(first), _pointer(store)
    assert new["sequence"] > old["sequence"] > 0
    header = json.loads(bytes(obstore.get(store, new["index"]).bytes()).split(b"\n", 1)[0])
    assert header["sequence"] == new["sequence"]  # inside the index, so covered by its address
    _publish(seaweedfs, root, prefix)  # unchanged: the same index, the same number, the pointer untouched
    assert _pointer(store) == new


def test_a_replica_refuses_an_older_index_and_keeps_serving(
    aws_env: dict[str, str], two_publishes: tuple[str, S3Store, bytes, Path], tmp_path: Path, seaweedfs: SeaweedS3
) -> None:
    prefix, store, first, root = two_publishes
    current = _pointer(store)
    catalog = PublishedCatalog(seaweedfs.url(prefix), poll_seconds=0, replica_state=tmp_path / "state.json")
    good = catalog.snapshot
    assert len(good.skill_by_uri) == 3

    obstore.put(store, POINTER_KEY, first)  # the replay
    old = json.loads(first)
    with pytest.raises(InvalidIndex) as refused:
        catalog.refresh()
    message = str(refused.value)
    assert f"sequence {old['sequence']}" in message
    assert f"sequence {current['sequence']}" in message
    assert "\n" not in message
    assert catalog.snapshot is good
    assert catalog.status.failures == 1
    assert catalog.status.last_error == message
    assert catalog.status.serving == current["id"]

    # A pointer claiming a high number for the old index: the index's own header says otherwise.
    obstore.put(store, POINTER_KEY, json.dumps({**old, "sequence": current["sequence"] + 10}).encode())
    with pytest.raises(InvalidIndex, match=rf"carries sequence {old['sequence']}, but current.json says"):
        catalog.refresh()
    assert catalog.snapshot is good

    # The publisher's next publish numbers above what replicas accepted even from the rolled-back pointer.
    obstore.put(store, POINTER_KEY, first)
    _skill(root, "delta")
    _publish(seaweedfs, root, prefix)
    assert len(catalog.refresh().skill_by_uri) == 4
    assert catalog.status.failures == 0

    # A deliberate roll back is possible when told.
    obstore.put(store, POINTER_KEY, first)
    told = PublishedCatalog(
        seaweedfs.url(prefix), poll_seconds=0, replica_state=tmp_path / "state.json", accept_older=True
    )
    assert len(told.snapshot.skill_by_uri) == 2
    assert json.loads((tmp_path / "state.json").read_text())["sequence"] == old["sequence"]


def test_serve_refuses_going_back_and_remembers_it_across_a_restart(
    seaweedfs: SeaweedS3, two_publishes: tuple[str, S3Store, bytes, Path], tmp_path: Path
) -> None:
    prefix, store, first, _ = two_publishes
    current = _pointer(store)
    old = json.loads(first)
    state = tmp_path / "replica.json"
    args = [seaweedfs.url(prefix), "--poll", "0.3", "--replica-state", str(state)]
    with serve_http(args, env=seaweedfs.env) as server:
        assert len(list_uris(server.url)) == 3
        assert json.loads(state.read_text())["sequence"] == current["sequence"]
        obstore.put(store, POINTER_KEY, first)  # the replay
        wait_for(lambda: healthz(server.url)["stale"], 20, "the older index to be refused")
        report = healthz(server.url)
        assert report["index"] == current["id"]  # still the last good index
        assert f"sequence {old['sequence']}" in report["lastError"]
        assert f"sequence {current['sequence']}" in report["lastError"]
        assert len(list_uris(server.url)) == 3
        refusals = [line for line in server.log().splitlines() if "refusing to go back" in line]
        assert refusals
        assert all(f"sequence {old['sequence']}" in line for line in refusals)

    # A restart with the pointer still rolled back: the accepted index is served, stale, with the reason.
    with serve_http(args, env=seaweedfs.env) as restarted:
        report = healthz(restarted.url)
        assert report["index"] == current["id"]
        assert report["stale"] is True
        assert f"sequence {old['sequence']}" in report["lastError"]
        assert len(list_uris(restarted.url)) == 3
    # Without its state file a replica has nothing to compare with: it follows the pointer (documented).
    with serve_http([*args[:-1], str(tmp_path / "fresh.json")], env=seaweedfs.env) as forgetful:
        assert len(list_uris(forgetful.url)) == 2
