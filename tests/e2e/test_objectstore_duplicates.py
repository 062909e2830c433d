"""A published index that names one skill twice, on a real S3-compatible store (SeaweedFS on 127.0.0.1).

Issue 35, defect 13: a bucket writer copies one skill line so the index holds it twice (header count
raised to match, the index stored under its own hash, the pointer switched to it). The running replica
refuses that index whole with one line naming the repeated URI, `/healthz` says stale with that line,
and `skills/list` keeps answering from the last good index, each skill once. The exact repeat in format
2 was already refused on the old main; a format-1 index naming the skill under a second spelling was
swapped in and listed it twice (that test fails on the old main).
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


def test_a_format_1_index_naming_a_skill_under_two_spellings_is_refused(seaweedfs: SeaweedS3, tmp_path: Path) -> None:
    # Format 1 (still served, for replicas rolling out before a republish) compared only the URI text:
    # `skill://beta/...` and `skill://%62eta/...` were two lines, both swapped in, beta listed twice.
    prefix = "duplicates-v1-" + secrets.token_hex(4)
    root = tmp_path / "skills"
    for name in ("alpha", "beta"):
        _skill(root, name)
    done = run_cli("publish", str(root), seaweedfs.url(prefix), env=seaweedfs.env)
    assert done.code == 0, done.err
    store = seaweedfs.store(prefix)
    pointer = json.loads(bytes(obstore.get(store, POINTER_KEY).bytes()))
    body = bytes(obstore.get(store, pointer["index"]).bytes())
    header = json.loads(body.split(b"\n", 1)[0])
    digest = "sha256:" + header["digests"][64:128]  # beta's SKILL.md (the second line's digest)
    sequence = pointer["sequence"] + 1

    def line(uri: str) -> bytes:
        record = {"files": [["SKILL.md", digest, 50, "text/markdown", True]], "frontmatter": {"name": "beta"}}
        return canonical_json({**record, "source": "s", "uri": uri})

    lines = sorted([line("skill://beta/SKILL.md"), line("skill://%62eta/SKILL.md")])
    forged = canonical_json({"format": "skillwire-index/1", "skills": 2, "sequence": sequence}) + b"\n"
    forged += b"\n".join(lines)
    forged_id = hashlib.sha256(forged).hexdigest()
    with serve_http([seaweedfs.url(prefix), "--poll", "0.3"], env=seaweedfs.env) as server:
        good = list_uris(server.url)
        assert good == ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]
        obstore.put(store, f"indexes/{forged_id}.jsonl", forged)
        moved = {**pointer, "id": forged_id, "index": f"indexes/{forged_id}.jsonl", "sequence": sequence}
        obstore.put(store, POINTER_KEY, canonical_json(moved))
        wait_for(lambda: healthz(server.url)["stale"], 20, "the index naming beta twice to be refused")
        report = healthz(server.url)
        assert report["index"] == pointer["id"]
        assert "skill://%62eta/SKILL.md" in report["lastError"]
        assert "the uri is not canonical" in report["lastError"]
        assert list_uris(server.url) == good
