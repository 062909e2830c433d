"""`ActiveSkill` holds a narrow reader, not the host (issue 12): built here from an `OriginReader` over a
real local folder scan and two callbacks, with no `SkillHost` at all, every read is still verified."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillwire.catalog.digests import DigestCache
from skillwire.catalog.filesystem import SkillRoot, scan_root
from skillwire.catalog.snapshot import CatalogFile
from skillwire.client.skills import SkillsClient
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import CodeExecutionDenied, UnknownOrigin, UnlistedFile, VerificationFailed
from skillwire.host.active import ActiveSkill
from skillwire.host.identity import SkillRef
from skillwire.host.policy import DenyAll
from skillwire.host.reader import OriginReader
from skillwire.host.registry import OriginKind

SKILL_MD = "---\nname: hello\ndescription: Says hello.\n---\nSee [notes](notes.md).\n"


def no_server(label: str) -> SkillsClient:
    raise UnknownOrigin(f"no MCP server is configured under the label {label!r}")


def local_skill(tmp_path: Path) -> tuple[OriginReader, SkillEntry, Path]:
    folder = tmp_path / "hello"
    folder.mkdir()
    (folder / "SKILL.md").write_text(SKILL_MD)
    (folder / "notes.md").write_text("the notes\n")
    result = scan_root(SkillRoot(tmp_path), DigestCache())
    files: dict[str, CatalogFile] = {file.uri: file for file in result.files}
    reader = OriginReader(server=no_server, local_files=lambda label: files if label == "mine" else None, cache=None)
    return reader, result.skills[0].entry, folder


def not_revoked(ref: SkillRef, new_entry: SkillEntry) -> None:
    raise AssertionError(f"{ref} was revoked, but nothing here refreshes")


def activate(reader: OriginReader, entry: SkillEntry, kind: OriginKind = "local") -> ActiveSkill:
    return ActiveSkill(
        reader,
        SkillRef("mine", entry.uri),
        entry,
        SKILL_MD,
        kind=kind,
        allowed_tools=None,
        policy=DenyAll(),
        on_revoke=not_revoked,
        refused=lambda message: f"{message} (refused here)",
    )


@pytest.mark.anyio
async def test_reads_go_through_the_reader_verified(tmp_path: Path) -> None:
    reader, entry, folder = local_skill(tmp_path)
    skill = activate(reader, entry)
    assert await skill.read_bytes("notes.md") == b"the notes\n"
    with pytest.raises(UnlistedFile):
        await skill.read_bytes("other.md")  # not in the manifest: never read
    (folder / "notes.md").write_text("other notes\n")  # changed after the scan
    with pytest.raises(VerificationFailed, match="changed since it was scanned"):
        await skill.read_bytes("notes.md")


@pytest.mark.anyio
async def test_the_gates_use_the_policy_and_wording_it_was_given(tmp_path: Path) -> None:
    reader, entry, _ = local_skill(tmp_path)
    await activate(reader, entry, kind="local").gate_code_execution("bash")  # local skills need no approval
    with pytest.raises(CodeExecutionDenied, match=r"running 'bash' .* was not approved \(refused here\)"):
        await activate(reader, entry, kind="mcp").gate_code_execution("bash")


def test_a_local_read_of_an_unknown_label_names_it(tmp_path: Path) -> None:
    reader, entry, _ = local_skill(tmp_path)
    with pytest.raises(UnknownOrigin, match="'elsewhere'"):
        reader.read_local("elsewhere", entry.uri)
    assert reader.read_local("mine", entry.uri) == SKILL_MD.encode()


@pytest.mark.anyio
async def test_a_skill_md_is_hashed_once_per_step_and_a_cached_one_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Review 12b: a fetched SKILL.md was hashed by the reader, again by `cache.put`, and a cached one
    # three times (the hit, `put`'s check, `put` re-reading its own copy). Every check goes through
    # core/verify, so counting its hashes of these bytes counts them all (the in-process server's read
    # of its file included).
    from mcp.client import Client

    from skillwire.catalog.catalog import SkillCatalog
    from skillwire.core import verify
    from skillwire.core.manifest import sha256_digest
    from skillwire.host.cache import ContentCache
    from skillwire.host.host import SkillHost
    from skillwire.host.policy import ApproveAll
    from skillwire.server.app import build_server
    from skillwire.server.extension import SkillsExtension

    (tmp_path / "skills" / "hello").mkdir(parents=True)
    (tmp_path / "skills" / "hello" / "SKILL.md").write_text(SKILL_MD)
    hashed: list[bytes] = []
    real = sha256_digest

    def counting(data: bytes) -> str:
        hashed.append(bytes(data))
        return real(data)

    monkeypatch.setattr(verify, "sha256_digest", counting)
    cache = ContentCache(tmp_path / "cache")
    server = build_server(SkillsExtension(SkillCatalog([tmp_path / "skills"])))
    for expected in (3, 1):  # served (the server's read, the reader, the cache's own check), then cached
        async with Client(server) as client, SkillHost(policy=ApproveAll(), cache=cache) as host:
            await host.attach_client("work", client)
            await host.list_skills()
            hashed.clear()
            await host.load("work", "skill://hello/SKILL.md")
            assert hashed.count(SKILL_MD.encode()) == expected
    assert (cache.stats().hits, cache.stats().misses) == (1, 1)
