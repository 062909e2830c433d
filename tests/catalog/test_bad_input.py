"""Bad input, one defect per test: each broken skill is skipped with a precise reason while every other
skill in the same root is still served. Then hostile requests against an in-process server: each gets
JSON-RPC -32602 with `data.uri`, nothing outside the roots is opened, and the server keeps working."""

from __future__ import annotations

import base64
import builtins
import hashlib
import os
import shutil
import threading
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError

from skillwire.catalog import digests as digests_module
from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.digests import DigestCache
from skillwire.catalog.filesystem import SkillRoot
from skillwire.catalog.snapshot import CatalogSnapshot
from skillwire.server.extension import SkillsExtension
from support.calls import send, send_error
from support.skills import skill_md, write_file, write_skill

INVALID_PARAMS = -32602
CANARY = "TOP-SECRET-CANARY-7f3a"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"


def root_with_good_skill(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    write_skill(root, "good", {"ref.md": "good reference"})
    return root


def assert_only_bad_skipped(snapshot: CatalogSnapshot, root: Path, bad: str, reason: str) -> None:
    """`good` is served in full; `bad` is skipped for `reason` and publishes nothing at all."""
    assert "skill://good/SKILL.md" in snapshot.skill_by_uri
    assert snapshot.files["skill://good/ref.md"].read() == b"good reference"
    assert f"skill://{bad}/SKILL.md" not in snapshot.skill_by_uri
    assert not any(uri.startswith(f"skill://{bad}/") for uri in snapshot.files)
    [skip] = snapshot.skipped
    assert skip.location == str(root / bad)
    assert reason in skip.reason, skip.reason


# -- broken SKILL.md files -------------------------------------------------------------------------------

SKILL_MD_DEFECTS: list[tuple[str, str | bytes, str]] = [
    ("no-frontmatter", "# Just markdown\n\nNo frontmatter here.\n", "does not start with a YAML frontmatter block"),
    ("bad-yaml", "---\nname: bad-yaml\ndescription: [unclosed\n---\n", "invalid YAML"),
    ("duplicate-key", "---\nname: duplicate-key\ndescription: a\ndescription: b\n---\n", "duplicate key 'description'"),
    ("not-closed", "---\nname: not-closed\ndescription: d\n# body, no closing line\n", "never closed"),
    ("name-mismatch", skill_md("another-name"), "does not match its folder 'name-mismatch'"),
    ("missing-name", "---\ndescription: No name.\n---\n", "frontmatter has no 'name'"),
    ("missing-description", "---\nname: missing-description\n---\n", "frontmatter has no 'description'"),
    ("long-description", skill_md("long-description", "x" * 1025), "1025 characters long; the limit is 1024"),
    ("My_Skill", skill_md("My_Skill"), "may contain only lowercase"),
    ("not-utf8", b"---\nname: not-utf8\ndescription: caf\xe9\n---\n", "not valid UTF-8"),
    ("empty-description", skill_md("empty-description", "''"), "description must not be empty"),
    ("list-frontmatter", "---\n- name\n- description\n---\n", "must be a YAML mapping"),
    # Agent Skills metadata maps strings to strings; the TypeScript SDK's host drops the whole listing otherwise.
    (
        "list-metadata",
        "---\nname: list-metadata\ndescription: d\nmetadata:\n  trigger-keywords: [pdf, forms]\n---\n",
        "metadata.trigger-keywords must be a string (Agent Skills metadata values are strings), not a list",
    ),
    (
        "number-metadata",
        "---\nname: number-metadata\ndescription: d\nmetadata:\n  version: 1.10\n---\n",
        "metadata.version must be a string (Agent Skills metadata values are strings), not the number 1.1",
    ),
    ("null-metadata", "---\nname: null-metadata\ndescription: d\nmetadata:\n---\n", "metadata must be a mapping"),
]


@pytest.mark.parametrize(("folder", "content", "reason"), SKILL_MD_DEFECTS, ids=[c[0] for c in SKILL_MD_DEFECTS])
def test_broken_skill_md_is_skipped_with_its_reason(
    tmp_path: Path, folder: str, content: str | bytes, reason: str
) -> None:
    root = root_with_good_skill(tmp_path)
    write_file(root / folder / "SKILL.md", content)
    write_file(root / folder / "extra.md", "never published")
    assert_only_bad_skipped(SkillCatalog([root]).snapshot, root, folder, reason)


def test_description_of_exactly_1024_characters_is_served(tmp_path: Path) -> None:
    root = root_with_good_skill(tmp_path)
    write_file(root / "edge" / "SKILL.md", skill_md("edge", "x" * 1024))
    snapshot = SkillCatalog([root]).snapshot
    assert snapshot.skill_by_uri["skill://edge/SKILL.md"].entry.description == "x" * 1024
    assert snapshot.skipped == ()


# -- limits -----------------------------------------------------------------------------------------------


def test_over_512_files_is_skipped(tmp_path: Path) -> None:
    root = root_with_good_skill(tmp_path)
    write_skill(root, "crowded", {f"f/{i:03}.md": "x" for i in range(512)})  # 513 with SKILL.md
    write_skill(root, "full", {f"f/{i:03}.md": "x" for i in range(511)})  # exactly 512: allowed
    snapshot = SkillCatalog([root]).snapshot
    assert len(snapshot.skill_by_uri["skill://full/SKILL.md"].entry.files) == 512
    assert_only_bad_skipped(snapshot, root, "crowded", "has 513 files; the limit is 512")


def _sparse(path: Path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)


def test_over_16_mib_total_is_skipped(tmp_path: Path) -> None:
    root = root_with_good_skill(tmp_path)
    heavy = write_skill(root, "heavy")
    _sparse(heavy / "a.bin", 8 * 1024 * 1024)
    _sparse(heavy / "b.bin", 8 * 1024 * 1024)  # with SKILL.md: 16 MiB + a few bytes
    assert_only_bad_skipped(SkillCatalog([root]).snapshot, root, "heavy", "the limit is 16,777,216 bytes")


def test_exactly_16_mib_total_is_served(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    edge = write_skill(root, "edge")
    _sparse(edge / "fill.bin", 16 * 1024 * 1024 - (edge / "SKILL.md").stat().st_size)
    entry = SkillCatalog([root]).snapshot.skill_by_uri["skill://edge/SKILL.md"].entry
    assert entry.total_size == 16 * 1024 * 1024


def test_limits_can_be_lifted(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    heavy = write_skill(root, "heavy")
    _sparse(heavy / "a.bin", 16 * 1024 * 1024)
    snapshot = SkillCatalog([root], enforce_limits=False).snapshot
    entry = snapshot.skill_by_uri["skill://heavy/SKILL.md"].entry
    assert entry.total_size > 16 * 1024 * 1024
    assert entry.limit_problem() is not None


def test_a_missing_root_is_reported_and_the_other_roots_are_served(tmp_path: Path) -> None:
    root = root_with_good_skill(tmp_path)
    missing = tmp_path / "does-not-exist"
    snapshot = SkillCatalog([missing, root]).snapshot
    assert list(snapshot.skill_by_uri) == ["skill://good/SKILL.md"]
    [skip] = snapshot.skipped
    assert (skip.location, skip.reason) == (str(missing), "not a directory")


def test_a_300_mb_file_skips_its_skill_without_being_hashed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = root_with_good_skill(tmp_path)
    huge = write_skill(root, "huge")
    _sparse(huge / "dump.bin", 300 * 1024 * 1024)
    hashed: list[str] = []
    real_hash_file = digests_module.hash_file

    def spy(path: str, expected_size: int, *rest: Any) -> tuple[digests_module.FileDigest, int]:
        hashed.append(path)
        return real_hash_file(path, expected_size, *rest)

    monkeypatch.setattr(digests_module, "hash_file", spy)
    cache = DigestCache()
    started = time.perf_counter()
    snapshot = SkillCatalog([root], digest_cache=cache).snapshot
    elapsed = time.perf_counter() - started
    assert_only_bad_skipped(snapshot, root, "huge", "totals 314,572,8")
    assert "the limit is 16,777,216 bytes" in snapshot.skipped[0].reason
    assert not any(p.startswith(str(huge)) for p in hashed)  # not even the skipped skill's SKILL.md
    assert cache.hashed == 2  # the good skill's two files, nothing else
    assert elapsed < 1.0


# -- symlinks and special files ---------------------------------------------------------------------------


def test_symlink_to_a_file_outside_the_root_is_never_served_nor_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened: list[str]
) -> None:
    outside = write_file(tmp_path / "outside" / "secret.txt", CANARY)
    root = root_with_good_skill(tmp_path)
    folder = write_skill(root, "linker", {"ok.md": "ok"})
    os.symlink(outside, folder / "leak.txt")
    os.symlink("../../outside/secret.txt", folder / "relative-leak.txt")
    hashed: list[str] = []
    real_hash_file = digests_module.hash_file

    def spy(path: str, expected_size: int, *rest: Any) -> tuple[digests_module.FileDigest, int]:
        hashed.append(path)
        return real_hash_file(path, expected_size, *rest)

    monkeypatch.setattr(digests_module, "hash_file", spy)
    snapshot = SkillCatalog([root]).snapshot
    assert {f.uri for f in snapshot.skill_by_uri["skill://linker/SKILL.md"].entry.files} == {
        "skill://linker/SKILL.md",
        "skill://linker/ok.md",
    }
    assert str(outside) not in hashed
    assert not [p for p in opened if os.path.realpath(p) == str(outside.resolve())]
    assert any(p.endswith("ok.md") for p in opened)  # the spy does see what the scan opens
    for f in snapshot.files.values():
        assert CANARY.encode() not in f.read()
    ignored = dict(snapshot.ignored)
    assert ignored[str(folder / "leak.txt")] == "symlink whose target is outside the root"
    assert ignored[str(folder / "relative-leak.txt")] == "symlink whose target is outside the root"
    assert CANARY not in repr(snapshot.ignored) + repr(snapshot.skipped)


def test_symlink_inside_the_root_to_a_file_inside_the_root_is_served(tmp_path: Path) -> None:
    root = root_with_good_skill(tmp_path)
    folder = write_skill(root, "linker", {"shared/data.md": "shared data"})
    os.symlink("shared/data.md", folder / "alias.md")
    os.symlink(root / "good" / "ref.md", folder / "from-good.md")
    snapshot = SkillCatalog([root]).snapshot
    alias = snapshot.files["skill://linker/alias.md"]
    assert alias.read() == b"shared data"
    assert alias.digest == "sha256:" + hashlib.sha256(b"shared data").hexdigest()
    assert snapshot.files["skill://linker/from-good.md"].read() == b"good reference"
    assert snapshot.skipped == ()


def test_symlink_to_an_ignored_file_inside_the_root_is_not_served(tmp_path: Path) -> None:
    root = root_with_good_skill(tmp_path)
    folder = write_skill(root, "linker", {".env": f"API_KEY={CANARY}", ".git/config": CANARY})
    os.symlink(".env", folder / "config.txt")
    os.symlink(".git/config", folder / "git.txt")
    snapshot = SkillCatalog([root]).snapshot
    assert {f.uri for f in snapshot.skill_by_uri["skill://linker/SKILL.md"].entry.files} == {"skill://linker/SKILL.md"}
    for f in snapshot.files.values():
        assert CANARY.encode() not in f.read()
    ignored = dict(snapshot.ignored)
    assert ignored[str(folder / "config.txt")] == "symlink whose target is on the ignore list"
    assert ignored[str(folder / "git.txt")] == "symlink whose target is on the ignore list"


def test_symlinked_directory_and_dangling_symlink_are_reported(tmp_path: Path) -> None:
    root = root_with_good_skill(tmp_path)
    folder = write_skill(root, "linker")
    os.symlink(root / "good", folder / "dir-link")
    os.symlink(folder / "missing.md", folder / "dangling.md")
    snapshot = SkillCatalog([root]).snapshot
    assert {f.uri for f in snapshot.skill_by_uri["skill://linker/SKILL.md"].entry.files} == {"skill://linker/SKILL.md"}
    ignored = dict(snapshot.ignored)
    assert ignored[str(folder / "dir-link")] == "symlinked directory (not followed)"
    assert ignored[str(folder / "dangling.md")] == "dangling symlink"


def _scan_with_timeout(catalog: SkillCatalog, seconds: float = 10.0) -> CatalogSnapshot:
    """Scan in a thread, so a scan that blocks (e.g. opening a FIFO) fails the test instead of hanging."""
    box: list[CatalogSnapshot] = []
    worker = threading.Thread(target=lambda: box.append(catalog.refresh()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "the scan blocked"
    return box[0]


def test_fifo_inside_a_skill_does_not_block_and_is_reported(tmp_path: Path) -> None:
    root = root_with_good_skill(tmp_path)
    folder = write_skill(root, "piped", {"ok.md": "ok"})
    os.mkfifo(folder / "pipe")
    os.symlink("pipe", folder / "pipe-link")
    snapshot = _scan_with_timeout(SkillCatalog([root]))
    assert {f.uri for f in snapshot.skill_by_uri["skill://piped/SKILL.md"].entry.files} == {
        "skill://piped/SKILL.md",
        "skill://piped/ok.md",
    }
    ignored = dict(snapshot.ignored)
    assert ignored[str(folder / "pipe")] == "not a regular file (FIFO, socket or device)"
    assert ignored[str(folder / "pipe-link")] == "not a regular file (FIFO, socket or device)"
    assert "skill://good/SKILL.md" in snapshot.skill_by_uri


def test_fifo_named_skillignore_does_not_block_and_hides_its_folder(tmp_path: Path) -> None:
    root = root_with_good_skill(tmp_path)
    folder = write_skill(root, "piped", {"secret.md": CANARY})
    os.mkfifo(folder / ".skillignore")
    snapshot = _scan_with_timeout(SkillCatalog([root]))
    assert list(snapshot.skill_by_uri) == ["skill://good/SKILL.md"]
    assert not any(uri.startswith("skill://piped/") for uri in snapshot.files)
    reason = dict(snapshot.ignored)[str(folder / ".skillignore")]
    assert reason == "a .skillignore that is not a regular file; its folder is not published"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("!\n", "an invalid .skillignore (Invalid git pattern: '!')"),
        ("[z-a]\n", "an invalid .skillignore (bad character range"),
        (b"caf\xe9\n", "a .skillignore that is not UTF-8"),
    ],
    ids=["bare-negation", "bad-range", "not-utf8"],
)
def test_unusable_skillignore_fails_closed_without_breaking_the_catalog(
    tmp_path: Path, content: str | bytes, reason: str
) -> None:
    root = root_with_good_skill(tmp_path)
    folder = write_skill(root, "guarded", {".secrets.txt": CANARY})
    write_file(folder / ".skillignore", content)
    snapshot = SkillCatalog([root]).snapshot
    assert list(snapshot.skill_by_uri) == ["skill://good/SKILL.md"]  # the rest of the root is still served
    assert not any(uri.startswith("skill://guarded/") for uri in snapshot.files)
    shown = dict(snapshot.ignored)[str(folder / ".skillignore")]
    assert shown.startswith(reason)
    assert shown.endswith("its folder is not published")


def test_skillignore_symlinked_out_of_the_root_is_not_followed(tmp_path: Path) -> None:
    outside = write_file(tmp_path / "outside" / "ignore", "nothing\n")
    root = root_with_good_skill(tmp_path)
    folder = write_skill(root, "linked")
    os.symlink(outside, folder / ".skillignore")
    snapshot = SkillCatalog([root]).snapshot
    assert "skill://linked/SKILL.md" not in snapshot.skill_by_uri
    reason = dict(snapshot.ignored)[str(folder / ".skillignore")]
    assert reason.startswith("a .skillignore that is a symlink out of the root")


def test_skill_md_at_the_top_of_a_root_without_a_prefix(tmp_path: Path) -> None:
    root = root_with_good_skill(tmp_path)
    write_file(root / "SKILL.md", skill_md("skills"))
    snapshot = SkillCatalog([root]).snapshot
    assert list(snapshot.skill_by_uri) == ["skill://good/SKILL.md"]
    assert snapshot.files["skill://good/ref.md"].read() == b"good reference"
    [skip] = snapshot.skipped
    assert skip.location == str(root)
    assert "SKILL.md sits at the top of the root" in skip.reason
    assert "prefix" in skip.reason  # the reason says how to fix it
    # With a prefix ending in its name, the same folder is a skill (and `good` is nested inside it).
    fixed = SkillCatalog([SkillRoot(root, prefix=("skills",))]).snapshot
    assert sorted(fixed.skill_by_uri) == ["skill://skills/SKILL.md", "skill://skills/good/SKILL.md"]


def test_a_skill_whose_function_raises_is_skipped(tmp_path: Path) -> None:
    root = root_with_good_skill(tmp_path)
    catalog = SkillCatalog([root])
    catalog.add_files("acme/fine", {"SKILL.md": skill_md("fine")})

    @catalog.skill("acme/broken")
    def broken() -> Path:
        raise RuntimeError("database is down")

    snapshot = catalog.snapshot
    assert sorted(snapshot.skill_by_uri) == ["skill://acme/fine/SKILL.md", "skill://good/SKILL.md"]
    [skip] = snapshot.skipped
    assert skip.location == "code:skill://acme/broken"
    assert "raised RuntimeError('database is down')" in skip.reason


def test_unreadable_subdirectory_is_reported_not_fatal(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every directory")
    root = root_with_good_skill(tmp_path)
    locked = write_skill(root, "locked") / "private"
    locked.mkdir()
    locked.chmod(0)
    try:
        snapshot = SkillCatalog([root]).snapshot
    finally:
        locked.chmod(0o755)
    assert "skill://locked/SKILL.md" in snapshot.skill_by_uri
    assert any(path == str(locked) for path, _ in snapshot.ignored)


# -- hostile requests against an in-process server ---------------------------------------------------------


def decoded(content: Mapping[str, Any]) -> bytes:
    if "text" in content:
        return str(content["text"]).encode("utf-8")
    return base64.b64decode(content["blob"])


class Served:
    """A tiny skills tree next to canary files that a path traversal would reach."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "skills"
        write_skill(self.root, "pdf-processing", {"notes.md": "Use pdftotext.", "assets/logo.png": PNG})
        for i in range(3):
            write_skill(self.root, f"extra-{i}", {"more.md": f"extra {i}"})
        write_file(base / "etc" / "passwd", CANARY)
        write_file(base / "secret.txt", CANARY)
        write_file(self.root / "pdf-processing" / ".env", CANARY)
        os.symlink(base / "secret.txt", self.root / "pdf-processing" / "leak.txt")
        self.catalog = SkillCatalog([self.root])
        self.extension = SkillsExtension(self.catalog, page_size=2, directory_page_size=1)
        self.server = MCPServer("hostile-test")
        self.extension.attach(self.server)


@pytest.fixture
def served(tmp_path: Path) -> Served:
    return Served(tmp_path)


@pytest.fixture
async def client(served: Served) -> AsyncIterator[Client]:
    async with Client(served.server) as connected:
        yield connected


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path opened through os.open or open() while the test runs."""
    paths: list[str] = []
    real_os_open, real_open = os.open, builtins.open

    def spy_os_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        paths.append(os.fsdecode(path))
        return real_os_open(path, flags, *args, **kwargs)

    def spy_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, (str, bytes, os.PathLike)):
            paths.append(os.fsdecode(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy_os_open)
    monkeypatch.setattr(builtins, "open", spy_open)
    return paths


async def assert_healthy(client: Client) -> None:
    listing = await send(client, "skills/list", {})
    assert [s["uri"] for s in listing["skills"]] == ["skill://extra-0/SKILL.md", "skill://extra-1/SKILL.md"]
    skill = (await send(client, "skills/get", {"uri": "skill://pdf-processing/SKILL.md"}))["skill"]
    digests = {r["uri"]: r["digest"] for r in skill["resources"]}
    read = await send(client, "resources/read", {"uri": "skill://pdf-processing/notes.md"})
    [content] = read["contents"]
    assert content["text"] == "Use pdftotext."
    assert digests[content["uri"]] == "sha256:" + hashlib.sha256(b"Use pdftotext.").hexdigest()


HOSTILE_READ_URIS = [
    "skill://pdf-processing/../../etc/passwd",
    "skill://pdf-processing/../../secret.txt",
    "skill://../secret.txt",
    "skill://pdf-processing/%2e%2e/%2e%2e/etc/passwd",
    "skill://pdf-processing/%2E%2E/%2E%2E/secret.txt",
    "skill://pdf-processing/..%2F..%2Fsecret.txt",
    "skill://pdf-processing/assets%2Flogo.png",
    "skill://pdf-processing/notes.md%00",
    "skill://pdf-processing/notes.md%00.png",
    "skill://pdf-processing/notes.md\x00",
    "skill://pdf-processing\\..\\..\\secret.txt",
    "skill://pdf-processing/..\\..\\secret.txt",
    "skill://pdf-processing/notes.md%5C..%5C..%5Csecret.txt",
    "skill://pdf-processing/notes.md?raw=1",
    "skill://pdf-processing/notes.md#frag",
    "skill://pdf-processing/",
    "skill://pdf-processing/notes.md/",
    "skill://pdf-processing//notes.md",
    "skill:///etc/passwd",
    "skill://pdf-processing/./notes.md",
    "skill://pdf-processing/notes.md%zz",
    "skill://pdf-processing/.env",
    "skill://pdf-processing/leak.txt",
    "skill://pdf-processing/%2eenv",
    "SKILL://pdf-processing/../../secret.txt",
]


@pytest.mark.anyio
@pytest.mark.parametrize("uri", HOSTILE_READ_URIS)
async def test_hostile_resources_read_is_refused(client: Client, served: Served, opened: list[str], uri: str) -> None:
    error = await send_error(client, "resources/read", {"uri": uri})
    assert error.code == INVALID_PARAMS
    assert isinstance(error.data, dict)
    assert error.data["uri"] == uri
    assert CANARY not in error.message
    root = os.path.realpath(served.root)
    outside = [p for p in opened if not os.path.realpath(p).startswith(root + os.sep)]
    assert outside == [], f"opened outside the root: {outside}"
    await assert_healthy(client)
    assert any(p.endswith("notes.md") for p in opened)  # the spy does see the files that are read


@pytest.mark.anyio
async def test_ignored_and_escaping_files_never_show_up(client: Client) -> None:
    skill = (await send(client, "skills/get", {"uri": "skill://pdf-processing/SKILL.md"}))["skill"]
    assert {r["uri"] for r in skill["resources"]} == {
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/notes.md",
        "skill://pdf-processing/assets/logo.png",
    }
    children: list[str] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"uri": "skill://pdf-processing"}
        if cursor is not None:
            params["cursor"] = cursor
        page = await send(client, "resources/directory/read", params)
        children += [item["uri"] for item in page["resources"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert children == [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/assets",
        "skill://pdf-processing/notes.md",
    ]


@pytest.mark.anyio
async def test_forged_skills_list_cursors_are_refused(client: Client) -> None:
    first = await send(client, "skills/list", {})
    real = first["nextCursor"]
    assert isinstance(real, str)
    directory = await send(client, "resources/directory/read", {"uri": "skill://pdf-processing"})
    resources = await send(client, "resources/list", {})
    body, mac = real.split(".")
    forged = [
        base64.urlsafe_b64encode(os.urandom(24)).decode(),
        base64.urlsafe_b64encode(b'[1,"skill://pdf-processing/SKILL.md"]').decode().rstrip("=") + ".AAAAAAAAAAAAAAAA",
        ("A" if body[0] != "A" else "B") + body[1:] + "." + mac,  # one character changed in the payload
        body + "." + ("A" if mac[0] != "A" else "B") + mac[1:],  # one character changed in the MAC
        real + "=",
        directory["nextCursor"],
        resources["nextCursor"],
        "",
        "💥." + mac,
    ]
    for cursor in forged:
        error = await send_error(client, "skills/list", {"cursor": cursor})
        assert error.code == INVALID_PARAMS, cursor
        assert "cursor" in error.message
        await assert_healthy(client)
    # The genuine cursor still works.
    second = await send(client, "skills/list", {"cursor": real})
    assert [s["uri"] for s in second["skills"]] == ["skill://extra-2/SKILL.md", "skill://pdf-processing/SKILL.md"]


@pytest.mark.anyio
async def test_forged_cursors_on_the_other_listings_are_refused(client: Client) -> None:
    listing = await send(client, "skills/list", {})
    for method, params in (
        ("resources/list", {"cursor": listing["nextCursor"]}),
        ("resources/list", {"cursor": "not-a-cursor"}),
        ("resources/directory/read", {"uri": "skill://pdf-processing", "cursor": listing["nextCursor"]}),
    ):
        error = await send_error(client, method, params)
        assert error.code == INVALID_PARAMS
        await assert_healthy(client)
    # A directory cursor is bound to its directory.
    page = await send(client, "resources/directory/read", {"uri": "skill://pdf-processing"})
    error = await send_error(
        client, "resources/directory/read", {"uri": "skill://extra-0", "cursor": page["nextCursor"]}
    )
    assert error.code == INVALID_PARAMS


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("skill://no-such-skill/SKILL.md", "serves no skill at skill://no-such-skill/SKILL.md"),
        ("skill://pdf-processing/notes.md", "a skill is named by its SKILL.md URI"),
        ("skill://pdf-processing", "a skill is named by its SKILL.md URI"),
        ("skill://../x/SKILL.md", "dot segment"),
        ("skill://pdf-processing/%2e%2e/SKILL.md", "dot segment"),
        ("skill://pdf-processing/SKILL.md?x=1", "query"),
        ("skill://pdf-processing/SKILL.md/", "trailing"),
        ("not a uri", "scheme"),
        ("github://pdf-processing/SKILL.md", "serves no skill"),
    ],
)
async def test_skills_get_on_what_is_not_a_served_skill(client: Client, uri: str, message: str) -> None:
    error = await send_error(client, "skills/get", {"uri": uri})
    assert error.code == INVALID_PARAMS
    assert message in error.message
    assert isinstance(error.data, dict)
    assert error.data["uri"] == uri
    await assert_healthy(client)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("skill://pdf-processing/SKILL.md", "Not a directory"),
        ("skill://pdf-processing/assets/logo.png", "Not a directory"),
        ("skill://pdf-processing/missing", "No such directory"),
        ("skill://nowhere", "No such directory"),
        ("skill://pdf-processing/assets/", "trailing"),
        ("skill://pdf-processing/..", "dot segment"),
    ],
)
async def test_directory_read_on_what_is_not_a_directory(client: Client, uri: str, message: str) -> None:
    error = await send_error(client, "resources/directory/read", {"uri": uri})
    assert error.code == INVALID_PARAMS
    assert message in error.message
    assert isinstance(error.data, dict)
    assert error.data["uri"] == uri
    await assert_healthy(client)


@pytest.mark.anyio
async def test_malformed_params_are_invalid_params(client: Client) -> None:
    for method, params in (
        ("skills/get", {}),
        ("skills/get", {"uri": 42}),
        ("resources/directory/read", {}),
        ("skills/list", {"cursor": 7}),
    ):
        error = await send_error(client, method, params)
        assert error.code == INVALID_PARAMS, (method, params)
        await assert_healthy(client)


@pytest.mark.anyio
async def test_a_file_changed_after_the_snapshot_is_not_served_under_the_old_digest(
    client: Client, served: Served
) -> None:
    uri = "skill://pdf-processing/notes.md"
    old = (await send(client, "skills/get", {"uri": "skill://pdf-processing/SKILL.md"}))["skill"]
    old_digest = {r["uri"]: r["digest"] for r in old["resources"]}[uri]
    notes = served.root / "pdf-processing" / "notes.md"
    notes.write_text("Use pdfminer.")  # same length, different bytes

    with pytest.raises(MCPError) as info:
        await send(client, "resources/read", {"uri": uri})
    assert "changed" in info.value.error.message
    assert isinstance(info.value.error.data, dict)
    assert info.value.error.data["uri"] == uri

    new = (await send(client, "skills/get", {"uri": "skill://pdf-processing/SKILL.md"}))["skill"]
    new_digest = {r["uri"]: r["digest"] for r in new["resources"]}[uri]
    assert new_digest != old_digest
    assert new_digest == "sha256:" + hashlib.sha256(b"Use pdfminer.").hexdigest()
    [content] = (await send(client, "resources/read", {"uri": uri}))["contents"]
    assert decoded(content) == b"Use pdfminer."


@pytest.mark.anyio
async def test_a_file_deleted_or_grown_after_the_snapshot_is_not_served(client: Client, served: Served) -> None:
    folder = served.root / "pdf-processing"
    (folder / "notes.md").unlink()
    with pytest.raises(MCPError):
        await send(client, "resources/read", {"uri": "skill://pdf-processing/notes.md"})
    skill = (await send(client, "skills/get", {"uri": "skill://pdf-processing/SKILL.md"}))["skill"]
    assert "skill://pdf-processing/notes.md" not in {r["uri"] for r in skill["resources"]}
    error = await send_error(client, "resources/read", {"uri": "skill://pdf-processing/notes.md"})
    assert error.code == INVALID_PARAMS  # no longer served at all

    logo = folder / "assets" / "logo.png"
    with open(logo, "ab") as handle:
        handle.write(b"appended")
    with pytest.raises(MCPError):
        await send(client, "resources/read", {"uri": "skill://pdf-processing/assets/logo.png"})
    [content] = (await send(client, "resources/read", {"uri": "skill://pdf-processing/assets/logo.png"}))["contents"]
    assert decoded(content) == PNG + b"appended"


@pytest.mark.anyio
async def test_a_skill_removed_from_disk_disappears_after_refresh(client: Client, served: Served) -> None:
    shutil.rmtree(served.root / "extra-0")
    served.catalog.refresh()
    error = await send_error(client, "skills/get", {"uri": "skill://extra-0/SKILL.md"})
    assert error.code == INVALID_PARAMS
    error = await send_error(client, "resources/read", {"uri": "skill://extra-0/more.md"})
    assert error.code == INVALID_PARAMS
    listing = await send(client, "skills/list", {})
    assert "skill://extra-0/SKILL.md" not in [s["uri"] for s in listing["skills"]]
