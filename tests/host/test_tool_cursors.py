"""`list_skills` cursors are MAC'd with a secret of the install's, and a cursor's fields pass the checks a
fresh request's do (issue 35, defect 9). Before, the key was the codec's public default: anyone could write a
cursor, one carrying a 2,900-character query past the 500-character limit, say.

Real `SkillHost`, `Registry` and `SkillTools` (no servers: the registry is set the way a listing sets it);
the secret file is a real file under the test's own config directory.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from skillwire.core.cursor import DEFAULT_CURSOR_SECRET, encode_cursor
from skillwire.core.entry import SkillEntry
from skillwire.core.manifest import ManifestFile
from skillwire.host.host import SkillHost
from skillwire.host.tool_cursors import SECRET_ENV, default_secret_path, install_secret
from skillwire.host.tools import SkillTools

pytestmark = pytest.mark.anyio
DIGEST = "sha256:" + "1" * 64


def entry(name: str) -> SkillEntry:
    uri = f"skill://{name}/SKILL.md"
    return SkillEntry(uri, {"name": name, "description": f"Notes about {name}."}, (ManifestFile(uri, DIGEST, 1),))


def fill(host: SkillHost) -> None:
    host.registry.set_origin("a", "mcp", [entry(f"notes-{i:02d}") for i in range(6)])


@pytest.fixture(autouse=True)
def own_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(SECRET_ENV, raising=False)
    return tmp_path / "config"


async def test_a_cursor_written_with_the_public_key_is_refused() -> None:
    forged = encode_cursor("list_skills", {"k": "query", "q": "notes " * 480, "at": 0, "cat": "x:0"})
    async with SkillHost() as host:
        fill(host)
        tools = SkillTools(host, page_size=2)
        result = await tools.call("list_skills", {"cursor": forged})
    assert result.is_error
    assert result.text.startswith("Invalid cursor: it is not one list_skills issued")


async def test_a_cursor_of_the_right_key_is_still_held_to_a_fresh_requests_limits() -> None:
    secret = b"shared by configuration"
    long_query = "notes " * 480  # 2,880 characters; a fresh request may send 500
    async with SkillHost() as host:
        fill(host)
        tools = SkillTools(host, page_size=2, cursor_secret=secret)
        fresh = await tools.call("list_skills", {"query": long_query})
        assert fresh.is_error
        token = tools._listing._catalog_token()
        carried = encode_cursor("list_skills", {"k": "query", "q": long_query, "at": 2, "cat": token}, secret=secret)
        result = await tools.call("list_skills", {"cursor": carried})
    assert result.is_error
    assert result.text == fresh.text  # the same refusal, word for word


async def test_the_install_secret_is_made_once_with_mode_0600_and_continues_cursors_across_processes() -> None:
    async with SkillHost() as host:
        fill(host)
        first = await SkillTools(host, page_size=2).call("list_skills", {})
        cursor = first.structured["nextCursor"] if first.structured else None
        assert isinstance(cursor, str)
        path = default_secret_path()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        # Another SkillTools (a bridge started per call reads the same file) continues the browse.
        second = await SkillTools(host, page_size=2).call("list_skills", {"cursor": cursor})
    assert not second.is_error, second.text
    assert second.structured is not None
    assert [s["uri"] for s in second.structured["skills"]] == ["skill://notes-02/SKILL.md", "skill://notes-03/SKILL.md"]
    assert install_secret() != DEFAULT_CURSOR_SECRET


async def test_replicas_share_cursors_by_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SECRET_ENV, "one secret for every replica")
    async with SkillHost() as one, SkillHost() as other:
        fill(one)
        fill(other)
        first = await SkillTools(one, page_size=2).call("list_skills", {})
        cursor = first.structured["nextCursor"] if first.structured else None
        continued = await SkillTools(other, page_size=2).call("list_skills", {"cursor": cursor})
    assert not continued.is_error, continued.text
    assert not default_secret_path().exists()  # configured: no file made


def test_a_secret_file_others_can_read_is_not_used(caplog: pytest.LogCaptureFixture) -> None:
    path = default_secret_path()
    path.parent.mkdir(parents=True)
    path.write_text("ab" * 32 + "\n")
    os.chmod(path, 0o644)
    with caplog.at_level(logging.WARNING, logger="skillwire.host.tools"):
        first, second = install_secret(), install_secret()
    assert bytes.fromhex("ab" * 32) not in (first, second)
    assert first != second  # a process's own, each time: nothing shared through a file others can read
    assert "only its owner may read it (0600)" in caplog.text


def test_a_symlinked_secret_file_is_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.key"
    target.write_text("cd" * 32 + "\n")
    os.chmod(target, 0o600)
    path = default_secret_path()
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    assert install_secret() != bytes.fromhex("cd" * 32)
