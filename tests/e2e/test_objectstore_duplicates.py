"""A published index that names one skill twice, on a real S3-compatible store (SeaweedFS on 127.0.0.1).

Issue 35, defect 13: a bucket writer copies one skill line so the index holds it twice (header count
raised to match, the index stored under its own hash, the pointer switched to it). The running replica
refuses that index whole with one line naming the repeated URI, `/healthz` says stale with that line,
and `skills/list` keeps answering from the last good index, each skill once.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from pathlib import Path

import obstore

from skillwire.catalog.published import canonical_json
from skillwire.catalog.store import POINTER_KEY
from support.calls import healthz, list_uris, wait_for
from support.cli import run_cli
from support.seaweed import SeaweedS3
from support.servers import serve_http


def _skill(root: Path, name: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: Skill {name}.\n---\nBody.\n")


def test_an_index_naming_a_skill_twice_is_refused_and_the_last_good_one_served(
    seaweedfs: SeaweedS3, tmp_path: Path
) -> None:
    prefix = "duplicates-" + secrets.token_hex(4)
    root = tmp_path / "skills"
    for name in ("alpha", "beta", "gamma"):
        _skill(root, name)
    done = run_cli("publish", str(root), seaweedfs.url(prefix), env=seaweedfs.env)
    assert done.code == 0, done.err
    store = seaweedfs.store(prefix)
    pointer = json.loads(bytes(obstore.get(store, POINTER_KEY).bytes()))
    body = bytes(obstore.get(store, pointer["index"]).bytes())
    header, rest = body.split(b"\n", 1)
    lines = rest.split(b"\n")
    assert len(lines) == 3
    # The beta line twice, in place (so the lines still look sorted), the count raised to match.
    doubled = [lines[0], lines[1], lines[1], lines[2]]
    sequence = pointer["sequence"] + 1  # numbered as a newer publish would be
    forged = canonical_json({**json.loads(header), "skills": 4, "sequence": sequence}) + b"\n" + b"\n".join(doubled)
    forged_id = hashlib.sha256(forged).hexdigest()

    with serve_http([seaweedfs.url(prefix), "--poll", "0.3"], env=seaweedfs.env) as server:
        good = list_uris(server.url)
        assert good == [f"skill://{n}/SKILL.md" for n in ("alpha", "beta", "gamma")]
        obstore.put(store, f"indexes/{forged_id}.jsonl", forged)
        forged_pointer = {**pointer, "id": forged_id, "index": f"indexes/{forged_id}.jsonl", "skills": 4}
        forged_pointer["sequence"] = sequence
        obstore.put(store, POINTER_KEY, canonical_json(forged_pointer))
        wait_for(lambda: healthz(server.url)["stale"], 20, "the index naming beta twice to be refused")
        report = healthz(server.url)
        assert report["index"] == pointer["id"]  # the last good index, still served
        error = report["lastError"]
        assert "skills[2] (skill://beta/SKILL.md)" in error, error
        assert "each URI once" in error
        assert "\n" not in error
        assert list_uris(server.url) == good  # each skill once
