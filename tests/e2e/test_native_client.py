"""Ready for native hosts (issue 20 item 10): a client that behaves as Claude Code 2.1.332's native SEP-2640 client
(tests/support/native_client.py) against `skillwire serve` over stdio and HTTP, `serve s3://` on a real SeaweedFS
store, and a git root.

Each run: `server/discover` at 2026-07-28 and never `initialize`; every request's `_meta` carries the client
capabilities with `io.modelcontextprotocol/skills`; `skills/list` walked with `{cursor}` to the end gives every
skill of the catalog exactly once; `skills/get` of each listed address gives the listed entry; every file read
verifies against the entry's digest and size; a directory read only when `directoryRead: true` is declared; every
SKILL.md is in `resources/list` (how Claude Code's generic resource tool reaches skills). A server below
2026-07-28 gets no `skills/*` request at all.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from support.cli import run_cli
from support.gitserver import WorkRepo
from support.native_client import (
    CAPABILITIES_META,
    EXTENSION,
    NATIVE_VERSION,
    VERSION_META,
    NativeClient,
    NativeRefused,
    manifest_key,
    native_client,
)
from support.seaweed import SeaweedS3
from support.servers import serve_http

LARGE = 2000  # skills in the large catalog
PAGE = 200  # skills per page: the large catalog is 10 pages
SERVERS = Path(__file__).resolve().parents[1] / "servers"
BINARY = bytes(range(256)) * 3  # a file that is not UTF-8: served as a blob


def write_catalog(root: Path, count: int) -> set[str]:
    """`count` skills under ten team folders, each with a reference in a subfolder and a binary asset."""
    uris: set[str] = set()
    for i in range(count):
        team, name = f"team-{i % 10}", f"skill-{i:05d}"
        folder = root / team / name
        (folder / "references").mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Skill number {i} of the generated catalog.\n---\n"
            f"Read references/guide.md first.\n"
        )
        (folder / "references" / "guide.md").write_text(f"# Guide {i}\n\nStep one.\n")
        (folder / "asset.bin").write_bytes(BINARY + i.to_bytes(4, "big"))
        uris.add(f"skill://{team}/{name}/SKILL.md")
    return uris


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "skillwire.cli.main", "serve", "--stdio", *args]


async def walk(native: NativeClient, expected: set[str], *, read_every: int = 1) -> dict[str, Any]:
    """Everything the native client does with a catalog, checked; returns numbers for the caller to assert on."""
    assert native.protocol_version == NATIVE_VERSION
    assert native.settings is not None
    entries, pages = await native.list_skills()
    uris = [entry["uri"] for entry in entries]
    assert len(uris) == len(set(uris)), "a skill came through twice"
    assert set(uris) == expected

    limiter = anyio.Semaphore(8)
    checked = {"got": 0, "read": 0, "bytes": 0}

    async def adopt(index: int, entry: dict[str, Any]) -> None:
        async with limiter:
            got = await native.get_skill(entry["uri"])
            assert got == entry, f"skills/get of {entry['uri']} differs from its listing"
            assert manifest_key(got) == manifest_key(entry)
            checked["got"] += 1
            if index % read_every:
                return
            for resource in entry["resources"]:
                data = await native.read_verified(resource["uri"], entry)
                checked["read"] += 1
                checked["bytes"] += len(data)

    async with anyio.create_task_group() as group:
        for index, entry in enumerate(entries):
            group.start_soon(adopt, index, entry)

    first = sorted(uris)[0]
    root = first.removesuffix("/SKILL.md")
    if native.directory_read:
        children = await native.read_directory(root)
        kinds = {child["uri"]: child.get("mimeType") for child in children}
        assert kinds[root + "/references"] == "inode/directory"
        assert kinds[root + "/SKILL.md"] == "text/markdown"
    else:
        with pytest.raises(NativeRefused):
            await native.read_directory(root)

    listed = set(await native.resource_uris())
    assert expected <= listed, f"{len(expected - listed)} SKILL.md missing from resources/list"
    return {"pages": pages, **checked}


def assert_native_wire(native: NativeClient, *, directory_reads: bool) -> None:
    """What the native client wrote: discover, never initialize, the extension in every request's capabilities."""
    methods = native.methods_sent()
    assert methods[0] == "server/discover"
    assert "initialize" not in methods
    assert ("resources/directory/read" in methods) is directory_reads
    for message in native.sent:
        if "method" not in message or message["method"].startswith("notifications/"):
            continue
        meta = message["params"]["_meta"]
        assert meta[VERSION_META] == NATIVE_VERSION, message["method"]
        assert meta[CAPABILITIES_META]["extensions"] == {EXTENSION: {}}, message["method"]


async def run_native(
    expected: set[str], *, url: str | None = None, command: Sequence[str] | None = None, read_every: int = 1
) -> dict[str, Any]:
    async with native_client(url=url, command=command) as native:
        numbers = await walk(native, expected, read_every=read_every)
        assert_native_wire(native, directory_reads=native.directory_read)
        numbers["directory_read"] = native.directory_read
    return numbers


@pytest.fixture(scope="module")
def large_catalog(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[str], Path]:
    """The catalog, and a digest cache beside which the first start left its snapshot (see the stdio test)."""
    root = tmp_path_factory.mktemp("native-large")
    expected = write_catalog(root / "skills", LARGE)
    digests = root / "cache" / "digests.sqlite"
    digests.parent.mkdir()
    with subprocess.Popen(
        serve_command(str(root / "skills"), "--digest-cache", str(digests), "--no-watch"),
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    ) as first:
        assert first.stderr is not None
        assert first.stdin is not None
        assert b"serving" in first.stderr.readline()
        deadline = time.monotonic() + 60
        while not list(digests.parent.glob(digests.name + ".snapshot-*")):
            assert time.monotonic() < deadline, "the first start wrote no snapshot"
            time.sleep(0.1)
        time.sleep(0.5)  # written to a temporary file and renamed: the name appears when it is whole
        first.stdin.close()
    return root / "skills", expected, digests


@pytest.mark.anyio
async def test_native_client_over_stdio_takes_every_skill_of_a_large_catalog(
    large_catalog: tuple[Path, set[str], Path],
) -> None:
    # Started from the last run's snapshot, as a host's second start is. A cold start answers discover
    # before its scan ends too (tests/e2e/test_stdio_cold_start.py holds that order); this test holds
    # everything after the connection.
    root, expected, digests = large_catalog
    command = serve_command(str(root), "--page-size", str(PAGE), "--digest-cache", str(digests))
    numbers = await run_native(expected, command=command, read_every=4)
    assert numbers["pages"] == LARGE // PAGE
    assert numbers["got"] == LARGE
    assert numbers["read"] == 3 * LARGE // 4
    assert numbers["directory_read"] is True


@pytest.mark.anyio
async def test_native_client_over_http_takes_every_skill_of_a_large_catalog(
    large_catalog: tuple[Path, set[str], Path],
) -> None:
    root, expected, _ = large_catalog
    with serve_http([str(root), "--page-size", str(PAGE), "--no-watch"]) as server:
        # Every skill fetched by address; the files of every tenth read and verified (HTTP is one POST each).
        numbers = await run_native(expected, url=server.url, read_every=10)
    assert numbers["pages"] == LARGE // PAGE
    assert numbers["got"] == LARGE
    assert numbers["read"] == 3 * LARGE // 10


@pytest.mark.anyio
async def test_native_client_sends_no_directory_read_when_it_is_not_declared(tmp_path: Path) -> None:
    expected = write_catalog(tmp_path, 5)
    numbers = await run_native(expected, command=serve_command(str(tmp_path), "--no-directory-read", "--no-watch"))
    assert numbers["directory_read"] is False


@pytest.mark.anyio
async def test_native_client_takes_every_skill_from_an_object_store(seaweedfs: SeaweedS3, tmp_path: Path) -> None:
    expected = write_catalog(tmp_path / "source", 600)
    prefix = "native-" + secrets.token_hex(4)
    # In a thread: the command runs its own event loop.
    published = await anyio.to_thread.run_sync(
        lambda: run_cli("publish", str(tmp_path / "source"), seaweedfs.url(prefix), env=seaweedfs.env)
    )
    assert published.code == 0, published.err
    with serve_http([seaweedfs.url(prefix), "--page-size", "100"], env=seaweedfs.env) as server:
        numbers = await run_native(expected, url=server.url, read_every=5)
    assert numbers["pages"] == 6
    assert numbers["got"] == 600
    assert numbers["directory_read"] is True


@pytest.mark.anyio
async def test_native_client_takes_every_skill_from_a_git_root(tmp_path: Path, own_cache_env: dict[str, str]) -> None:
    repo = WorkRepo(tmp_path / "work", tmp_path / "served" / "skills.git")
    expected = write_catalog(repo.work / "skills", 300)
    commit = repo.commit("catalog")
    repo.push()
    spec = f"git+file://{repo.bare}@{commit}#skills"
    with serve_http([spec, "--page-size", "64", "--no-watch"], env=own_cache_env) as server:
        numbers = await run_native(expected, url=server.url)
    assert numbers["pages"] == 5
    assert numbers["got"] == 300
    assert numbers["read"] == 900


@pytest.mark.anyio
async def test_native_client_refuses_a_server_below_2026_07_28() -> None:
    command = [sys.executable, str(SERVERS / "legacy_only_server.py")]
    async with native_client(command=command) as native:
        assert native.protocol_version == "2025-11-25"
        assert native.settings is not None  # the server does declare the extension
        for attempt in (native.list_skills(), native.get_skill("skill://legacy/hello/SKILL.md")):
            with pytest.raises(NativeRefused, match="2026-07-28 or later"):
                await attempt
        with pytest.raises(NativeRefused):
            await native.read_directory("skill://legacy/hello")
        assert not [m for m in native.methods_sent() if m.startswith("skills/") or m == "resources/directory/read"]
