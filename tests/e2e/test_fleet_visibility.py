"""Per-caller catalogs through a real `skillwire serve` (issue 19, defects 1, 10, 11, 12).

- A hidden skill nested inside a visible one (`pub/inner`, `--audience skill://pub/inner=team`), served
  from folders and from SeaweedFS (`serve s3://`, the audiences in the published index): a caller
  without `team` gets `pub` without any of `inner`'s files, unsigned, and every spelling of an inner
  URI answers as a path that never existed; the team gets `pub` whole and signed.
- `--audience SKILL://secret=team` on `serve` hides `skill://secret` as `skill://secret=team` does.
- A tokens file naming one token twice stops `serve` at start with one line.
- `/healthz` of a server with tokens says ready, index and stale, never how many skills it holds.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from servers import free_port
from skillwire.core.manifest import sha256_digest
from skillwire.core.signing import SIGNATURE_META_KEY
from support.calls import call, call_error, healthz, list_uris, wait_for
from support.cli import run_cli
from support.seaweed import SeaweedS3
from support.servers import RunningServer, serve_http

TEAM = "team-" + secrets.token_hex(8)
OUTSIDER = "outsider-" + secrets.token_hex(8)
INNER_NOTES = "the inner notes, for the team only\n"
PUB_FILES = {"skill://pub/SKILL.md", "skill://pub/guide.md"}
INNER_FILES = {"skill://pub/inner/SKILL.md", "skill://pub/inner/notes.md"}


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def make_tree(root: Path) -> None:
    write(root / "pub" / "SKILL.md", "---\nname: pub\ndescription: The public skill.\n---\nSee guide.md.\n")
    write(root / "pub" / "guide.md", "the public guide\n")
    write(root / "pub" / "inner" / "SKILL.md", "---\nname: inner\ndescription: The team's skill.\n---\nInner.\n")
    write(root / "pub" / "inner" / "notes.md", INNER_NOTES)
    write(root / "secret" / "plans" / "SKILL.md", "---\nname: plans\ndescription: Plans.\n---\nPlans.\n")


def tokens_file(folder: Path, entries: list[dict[str, object]] | None = None) -> Path:
    path = folder / "tokens.json"
    default = [
        {"client": "team", "sha256": hashlib.sha256(TEAM.encode()).hexdigest(), "audiences": ["team"]},
        {"client": "outsider", "token": OUTSIDER, "audiences": []},
    ]
    path.write_text(json.dumps({"tokens": entries if entries is not None else default}))
    return path


def sign(root: Path, folder: Path) -> None:
    key = folder / "publisher"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "p", "-f", str(key)], check=True)
    done = subprocess.run(
        [sys.executable, "-m", "skillwire.cli.main", "sign", str(root), "--key", str(key)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fleet")
    make_tree(folder / "skills")
    sign(folder / "skills", folder)
    tokens_file(folder)
    return folder


@pytest.fixture(scope="module")
def folder_server(tree: Path) -> Iterator[RunningServer]:
    args = [str(tree / "skills"), "--tokens", str(tree / "tokens.json"), "--no-watch", "--no-digest-cache"]
    args += ["--audience", "skill://pub/inner=team", "--audience", "SKILL://%73ecret=team"]
    with serve_http(args) as server:
        yield server


@pytest.fixture(scope="module")
def store_server(tree: Path, seaweedfs: SeaweedS3) -> Iterator[RunningServer]:
    prefix = "fleet-" + secrets.token_hex(4)
    rules = ["--audience", "skill://pub/%69nner=team", "--audience", "SKILL://secret=team"]
    published = run_cli("publish", str(tree / "skills"), seaweedfs.url(prefix), *rules, env=seaweedfs.env)
    assert published.code == 0, published.err
    args = [seaweedfs.url(prefix), "--tokens", str(tree / "tokens.json"), "--no-watch"]
    with serve_http(args, env=seaweedfs.env) as server:
        yield server


@pytest.fixture(params=["folder", "store"])
def server(request: pytest.FixtureRequest) -> RunningServer:
    found: RunningServer = request.getfixturevalue(f"{request.param}_server")
    return found


def test_the_parent_of_a_hidden_nested_skill_is_shown_without_its_files_and_unsigned(server: RunningServer) -> None:
    pub = call(server.url, "skills/get", {"uri": "skill://pub/SKILL.md"}, token=OUTSIDER)["skill"]
    assert {r["uri"] for r in pub["resources"]} == PUB_FILES
    assert SIGNATURE_META_KEY not in (pub.get("_meta") or {})
    listing = call(server.url, "resources/directory/read", {"uri": "skill://pub"}, token=OUTSIDER)
    assert {r["uri"] for r in listing["resources"]} == PUB_FILES
    every = json.dumps([call(server.url, "skills/list", token=OUTSIDER), listing, pub])
    assert "inner" not in every
    assert sha256_digest(INNER_NOTES.encode()) not in every
    for uri in ("skill://pub/inner/notes.md", "skill://pub/%69nner/notes.md", "SKILL://pub/inner/notes.md"):
        hidden = call_error(server.url, "resources/read", {"uri": uri}, token=OUTSIDER).error
        missing = call_error(server.url, "resources/read", {"uri": uri.replace("nner", "mpty")}, token=OUTSIDER).error
        assert hidden.code == missing.code
        assert hidden.message.replace("nner", "mpty") == missing.message
    # The team sees the parent whole, with the publisher's signature that covers all of it.
    whole = call(server.url, "skills/get", {"uri": "skill://pub/SKILL.md"}, token=TEAM)["skill"]
    assert {r["uri"] for r in whole["resources"]} == PUB_FILES | INNER_FILES
    assert SIGNATURE_META_KEY in whole["_meta"]
    read = call(server.url, "resources/read", {"uri": "skill://pub/inner/notes.md"}, token=TEAM)
    assert read["contents"][0]["text"] == INNER_NOTES


def test_a_non_canonical_audience_prefix_hides_what_it_names(server: RunningServer) -> None:
    assert "skill://secret/plans/SKILL.md" not in list_uris(server.url, token=OUTSIDER)
    assert "skill://secret/plans/SKILL.md" in list_uris(server.url, token=TEAM)


def test_healthz_with_tokens_says_ready_and_index_but_not_the_catalog_size(server: RunningServer) -> None:
    report = healthz(server.url)
    assert report["ready"] is True
    assert "skills" not in report
    assert "files" not in report
    assert "lastError" not in report
    if "index" in report:  # a published catalog: which index, and whether it is stale
        assert len(report["index"]) == 64
        assert report["stale"] is False


def test_a_tokens_file_naming_one_token_twice_stops_serve_in_one_line(tree: Path, tmp_path: Path) -> None:
    twice = tokens_file(
        tmp_path,
        [
            {"client": "ci", "token": "same", "audiences": []},
            {"client": "admin", "token": "same", "audiences": ["team"]},
        ],
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "skillwire.cli.main",
            "serve",
            str(tree / "skills"),
            "--tokens",
            str(twice),
            "--http",
            f"127.0.0.1:{free_port()}",
            "--no-watch",
            "--no-digest-cache",
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "skillwire: error: tokens[1] ('admin') has the same token as tokens[0] ('ci'); list each token once"
    ]


def test_a_bucket_writers_bad_line_keeps_the_last_good_snapshot(tmp_path: Path) -> None:
    """Defect 6: an index whose one line names `../../s0/references/r.md` was swapped in, then every
    skills/list answered -32603 and /healthz still said ready and fresh. Now it is refused before the
    swap: the replica serves the last good index and /healthz says stale, with the reason."""
    make_tree(tmp_path / "skills")
    store = tmp_path / "store"
    published = run_cli("publish", str(tmp_path / "skills"), f"file://{store}", "-q")
    assert published.code == 0, published.err
    pointer = json.loads((store / "current.json").read_text())
    good = (store / pointer["index"]).read_bytes()
    header, *lines = good.split(b"\n")
    bad_lines = [line.replace(b'["guide.md",', b'["../../s0/references/r.md",') for line in lines]
    assert bad_lines != lines
    bad = b"\n".join([header, *bad_lines])
    bad_id = hashlib.sha256(bad).hexdigest()
    (store / "indexes" / f"{bad_id}.jsonl").write_bytes(bad)
    with serve_http([f"file://{store}", "--poll", "0.3"]) as server:
        before = list_uris(server.url)
        (store / "current.json").write_text(json.dumps({**pointer, "id": bad_id, "index": f"indexes/{bad_id}.jsonl"}))
        wait_for(lambda: healthz(server.url)["stale"], 20, "the bad index to be refused")
        report = healthz(server.url)
        assert report["ready"] is True
        assert report["index"] == pointer["id"]  # still the last good one
        assert "../../s0/references/r.md" in report["lastError"]
        assert "is not a canonical relative path inside the skill" in report["lastError"]
        assert list_uris(server.url) == before  # every page still answers
        got = call(server.url, "skills/get", {"uri": "skill://pub/SKILL.md"})["skill"]
        assert "skill://pub/guide.md" in {r["uri"] for r in got["resources"]}


def test_serve_names_each_skill_an_edit_leaves_unsigned_after_a_warm_start_and_a_live_edit(tree: Path) -> None:
    """After a signed skill was edited, a start from the last run's snapshot counted it signed and the
    check that followed dropped its signature silently; so did a live edit. Each now names the skill."""
    root = tree / "warm" / "skills"
    make_tree(root)
    sign(root, tree / "warm")
    cache = ["--digest-cache", str(tree / "warm" / "digests.sqlite")]
    with serve_http([str(root), *cache]) as first:
        assert "carry a publisher signature" in first.startup_log
    wait_for(lambda: any((tree / "warm").glob("digests.sqlite.snapshot-*")), 20, "the snapshot file")
    (root / "pub" / "guide.md").write_text("edited while no server ran\n")
    with serve_http([str(root), *cache]) as warm:
        assert "from the last run's snapshot" in warm.startup_log
        wait_for(lambda: "skill://pub/SKILL.md changed since it was signed" in warm.log(), 30, "the warm check")
        assert "is now served unsigned (sign again)" in warm.log()
        # A live edit of another signed skill is named too.
        (root / "secret" / "plans" / "SKILL.md").write_text("---\nname: plans\ndescription: Edited.\n---\nP.\n")
        wait_for(lambda: "skill://secret/plans/SKILL.md changed since it was signed" in warm.log(), 30, "a live edit")
