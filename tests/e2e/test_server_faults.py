"""Faults (issue 11, standing tests): a full and a read-only cache directory, a corrupted approvals
database, a root that disappears under a running server. Each fails closed with a clear one-line
message and loses nothing: the server keeps serving (other roots, everything it can), nothing cached
before is lost, no half-written file is left behind.

Full and read-only file systems are real: a 64 KiB tmpfs filled to the last byte, and a tmpfs
mounted read-only (this needs root; as another user the read-only case uses a folder without write
permission and the full case is skipped).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.core.errors import ApprovalStoreError
from skillwire.core.manifest import ManifestFile, sha256_digest
from skillwire.host.approvals import ApprovalStore
from skillwire.host.cache import ContentCache
from support import skills
from support.rawhttp import RawSession
from support.servers import serve_http

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False


def skill(root: Path, name: str, body: str = "Body.\n") -> None:
    files = {"references/notes.md": f"notes of {name}\n" * 20}
    skills.write_skill(root, name, files, description=f"The {name} skill.", body=body)


def can_mount() -> bool:
    return ROOT and shutil.which("mount") is not None and shutil.which("umount") is not None


@contextlib.contextmanager
def tmpfs(where: Path, *options: str) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(where)], check=False)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(folder: Path) -> None:
    """Write until the file system says ENOSPC: the next write anywhere on it fails."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for chunk in (4096, 1):  # whole blocks, then the tail of a partial one
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * chunk):
                    pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def full_folder(tmp_path: Path) -> Iterator[Path]:
    if not can_mount():
        pytest.skip("a full file system needs a tmpfs mount (root)")
    with tmpfs(tmp_path / "full", "size=64k") as mounted:
        yield mounted


def read_only_folder(tmp_path: Path) -> Iterator[Path]:
    """Yields a folder twice: writable (to seed it), then read-only; the next `next()` cleans up."""
    if can_mount():
        with tmpfs(tmp_path / "ro", "size=1m") as mounted:
            yield mounted
            subprocess.run(["mount", "-o", "remount,ro", str(mounted)], check=True)
            yield mounted
        return
    folder = tmp_path / "ro"
    folder.mkdir()
    yield folder
    folder.chmod(0o555)
    try:
        yield folder
    finally:
        folder.chmod(0o755)


# -- the server's digest cache ------------------------------------------------------------------------------


def test_a_digest_cache_on_a_full_file_system_serves_everything_and_says_so_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "skills"
    for name in ("alpha", "beta"):
        skill(root, name)
    with full_folder(tmp_path) as full:
        fill(full)
        caplog.set_level(logging.WARNING, logger="skillwire.catalog")
        catalog = SkillCatalog([root], digest_cache=DigestCache(full / "digests.sqlite"))
        snapshot = catalog.snapshot
        catalog.refresh()
        assert set(snapshot.skill_by_uri) == {"skill://alpha/SKILL.md", "skill://beta/SKILL.md"}
        assert snapshot.files["skill://beta/references/notes.md"].read().startswith(b"notes of beta")
        warnings = [r.getMessage() for r in caplog.records if "digest cache" in r.getMessage()]
        assert len(warnings) == 1, warnings
        assert "\n" not in warnings[0]
        assert str(full / "digests.sqlite") in warnings[0]


def test_a_digest_cache_on_a_read_only_file_system_is_still_used_and_nothing_is_lost(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "skills"
    for name in ("alpha", "beta"):
        skill(root, name)
    past = time.time() - 3600  # settled files: their digests are persisted
    for path in root.rglob("*"):
        os.utime(path, (past, past))
    stages = read_only_folder(tmp_path)
    folder = next(stages)
    assert len(SkillCatalog([root], digest_cache=DigestCache(folder / "digests.sqlite")).snapshot.skill_by_uri) == 2
    seeded = (folder / "digests.sqlite").read_bytes()
    folder = next(stages)  # now read-only
    try:
        caplog.set_level(logging.WARNING, logger="skillwire.catalog")
        skill(root, "gamma")  # a new skill whose digests cannot be stored
        cache = DigestCache(folder / "digests.sqlite")
        catalog = SkillCatalog([root], digest_cache=cache)
        assert len(catalog.snapshot.skill_by_uri) == 3
        assert cache.hashed == 2  # only gamma's two files: what was cached before is still used
        assert (folder / "digests.sqlite").read_bytes() == seeded  # nothing lost
        warnings = [r.getMessage() for r in caplog.records if "digest cache" in r.getMessage()]
        assert len(warnings) == 1, warnings
    finally:
        with contextlib.suppress(StopIteration):
            next(stages)


# -- the host's content cache -------------------------------------------------------------------------------


def entry_for(data: bytes, name: str = "notes.md") -> ManifestFile:
    return ManifestFile(f"skill://acme/pdf/{name}", sha256_digest(data), len(data))


def test_a_full_content_cache_keeps_what_it_has_and_leaves_no_partial_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with full_folder(tmp_path) as full:
        cache = ContentCache(full / "cache", discovery_paths=[])
        small = b"kept\n"
        cache.put("work", entry_for(small, "small.md").uri, small, entry_for(small, "small.md"))
        fill(full)
        big = os.urandom(256 * 1024)  # more than the whole file system
        caplog.set_level(logging.WARNING, logger="skillwire.host")
        cache.put("work", entry_for(big).uri, big, entry_for(big))  # must not raise
        assert cache.write_errors == 1
        assert any("cannot store" in r.getMessage() for r in caplog.records)
        assert cache.get("work", entry_for(big).uri, entry_for(big)) is None
        assert cache.get("work", entry_for(small, "small.md").uri, entry_for(small, "small.md")) == small
        leftovers = [p.name for p in (full / "cache").rglob("*") if p.is_file() and p.name.startswith(".")]
        assert leftovers == []


def test_a_read_only_content_cache_serves_what_it_has_and_stores_nothing_without_raising(tmp_path: Path) -> None:
    stages = read_only_folder(tmp_path)
    folder = next(stages)
    cache = ContentCache(folder / "cache", discovery_paths=[])
    kept = b"kept\n"
    cache.put("work", entry_for(kept).uri, kept, entry_for(kept))
    folder = next(stages)
    try:
        cache = ContentCache(folder / "cache", discovery_paths=[])
        assert cache.get("work", entry_for(kept).uri, entry_for(kept)) == kept
        other = b"other\n"
        cache.put("work", entry_for(other, "other.md").uri, other, entry_for(other, "other.md"))
        assert cache.write_errors == 1
        assert cache.get("work", entry_for(kept).uri, entry_for(kept)) == kept
    finally:
        with contextlib.suppress(StopIteration):
            next(stages)


# -- the approvals database ----------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["garbage", "truncated", "zeroed header"])
def test_a_corrupted_approvals_database_fails_closed_in_one_line_and_is_kept(tmp_path: Path, damage: str) -> None:
    from skillwire.host.identity import SkillRef

    path = tmp_path / "approvals.sqlite"
    files = (ManifestFile("skill://acme/pdf/SKILL.md", "sha256:" + "a" * 64, 10),)
    with ApprovalStore(path) as store:
        store.approve(SkillRef("work", "skill://acme/pdf/SKILL.md"), files)
    for leftover in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        leftover.unlink(missing_ok=True)
    data = path.read_bytes()
    damaged = {
        "garbage": os.urandom(len(data)),
        "truncated": data[: len(data) // 3],
        "zeroed header": b"\0" * 100 + data[100:],
    }[damage]
    path.write_bytes(damaged)
    with pytest.raises(ApprovalStoreError) as caught:
        ApprovalStore(path)
    assert "\n" not in str(caught.value)
    assert str(path) in str(caught.value) or caught.value.path == str(path)
    assert path.read_bytes() == damaged  # the evidence is kept, never replaced by an empty store


# -- a root that disappears under a running server -----------------------------------------------------------


def test_a_root_that_disappears_drops_its_skills_and_the_server_keeps_serving_and_watching(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    skill(first, "alpha")
    skill(second, "beta")
    with serve_http([str(first), str(second), "--no-digest-cache"]) as server:
        session = RawSession(server.url)
        listed = {s["uri"] for s in session.call("skills/list", {})["result"]["skills"]}
        assert listed == {"skill://alpha/SKILL.md", "skill://beta/SKILL.md"}
        shutil.rmtree(first)

        def uris() -> set[str]:
            return {s["uri"] for s in session.call("skills/list", {})["result"]["skills"]}

        deadline = time.monotonic() + 20
        while "skill://alpha/SKILL.md" in uris() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert uris() == {"skill://beta/SKILL.md"}
        gone = session.call("resources/read", {"uri": "skill://alpha/references/notes.md"})
        assert gone["error"]["code"] == -32602
        read = session.call("resources/read", {"uri": "skill://beta/references/notes.md"})
        assert read["result"]["contents"][0]["text"].startswith("notes of beta")
        # The watcher survived losing a root: an edit in the other one is still picked up.
        (second / "beta" / "references" / "notes.md").write_text("edited after the loss\n")
        deadline = time.monotonic() + 20
        text = ""
        while time.monotonic() < deadline:
            answer = session.call("resources/read", {"uri": "skill://beta/references/notes.md"})
            text = answer.get("result", {}).get("contents", [{}])[0].get("text", "")
            if text == "edited after the loss\n":
                break
            time.sleep(0.2)
        assert text == "edited after the loss\n"
        log = server.log()
        [said] = [line for line in log.splitlines() if "is gone" in line]
        assert str(first) in said
        # A root that comes back is served again from the next refresh on (here: an edit elsewhere).
        skill(first, "alpha")
        (second / "beta" / "references" / "notes.md").write_text("edited once more\n")
        deadline = time.monotonic() + 20
        while "skill://alpha/SKILL.md" not in uris() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "skill://alpha/SKILL.md" in uris()
        assert server.process.poll() is None
