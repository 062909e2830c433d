"""The watcher: an edit on disk reaches `skills/get` with only that file rehashed, and connected
clients hear `list_changed` on both wires (a `subscriptions/listen` stream on 2026-07-28, a session
notification on the legacy initialize wire)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client
from mcp.server.mcpserver import MCPServer

from skillwire import SkillCatalog, SkillsExtension
from skillwire.client.requests import get_skill_request, send_raw
from skillwire.server.app import build_server

pytestmark = pytest.mark.anyio

SKILL_MD = "---\nname: {name}\ndescription: A skill for watching.\n---\n\n# {name}\n"


def make_tree(root: Path, names: list[str]) -> None:
    past = 1_600_000_000
    for name in names:
        folder = root / name / "references"
        folder.mkdir(parents=True)
        (root / name / "SKILL.md").write_text(SKILL_MD.format(name=name))
        (folder / "notes.md").write_text(f"notes for {name}\n")
    for path in root.rglob("*"):
        os.utime(path, (past, past))


async def digest_of(client: Client, skill: str, file_uri: str) -> str:
    result = await send_raw(client, get_skill_request(skill))
    return next(str(f["digest"]) for f in result["skill"]["resources"] if f["uri"] == file_uri)


async def wait_for_change(client: Client, skill: str, file_uri: str, old: str) -> str:
    with anyio.fail_after(20):
        while (new := await digest_of(client, skill, file_uri)) == old:
            await anyio.sleep(0.05)
    return new


def server_for(tmp_path: Path) -> tuple[MCPServer, SkillsExtension]:
    make_tree(tmp_path, ["alpha", "beta", "gamma"])
    skills = SkillsExtension(SkillCatalog([tmp_path]))
    return build_server(skills), skills


async def test_edit_is_served_with_only_that_file_rehashed(tmp_path: Path) -> None:
    server, skills = server_for(tmp_path)
    catalog = skills.catalog
    skill, file_uri = "skill://beta/SKILL.md", "skill://beta/references/notes.md"
    async with Client(server) as client, anyio.create_task_group() as group:
        before = await digest_of(client, skill, file_uri)
        group.start_soon(catalog.watch)
        await anyio.sleep(0.5)
        hashed = catalog.digests.hashed
        (tmp_path / "beta" / "references" / "notes.md").write_text("edited notes\n")
        after = await wait_for_change(client, skill, file_uri, before)
        assert after != before
        assert catalog.digests.hashed - hashed == 1  # the edited file, nothing else
        group.cancel_scope.cancel()


async def test_listen_stream_hears_resources_list_changed(tmp_path: Path) -> None:
    server, skills = server_for(tmp_path)
    async with Client(server) as client, anyio.create_task_group() as group:
        group.start_soon(skills.catalog.watch)
        await anyio.sleep(0.5)
        async with client.listen(resources_list_changed=True) as subscription:
            (tmp_path / "gamma" / "references" / "extra.md").write_text("new file\n")
            with anyio.fail_after(20):
                event = await subscription.__aiter__().__anext__()
        assert "ResourcesListChanged" in type(event).__name__
        group.cancel_scope.cancel()


async def test_legacy_session_gets_list_changed_notification(tmp_path: Path) -> None:
    server, skills = server_for(tmp_path)
    received: list[Any] = []
    heard = anyio.Event()

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", message)
        if "list_changed" in str(getattr(root, "method", "")):
            received.append(root)
            heard.set()

    async with (
        Client(server, mode="legacy", message_handler=on_message) as client,
        anyio.create_task_group() as group,
    ):
        assert client.session is not None
        caps = client.server_capabilities
        assert caps is not None
        assert caps.resources is not None
        assert caps.resources.list_changed
        await digest_of(client, "skill://alpha/SKILL.md", "skill://alpha/SKILL.md")  # registers the session
        group.start_soon(skills.catalog.watch)
        await anyio.sleep(0.5)
        (tmp_path / "alpha" / "references" / "notes.md").write_text("changed\n")
        with anyio.fail_after(20):
            await heard.wait()
        assert received
        group.cancel_scope.cancel()
