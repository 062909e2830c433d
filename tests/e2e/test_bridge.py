"""`skillwire bridge` end to end: a real SDK client on the bridge (stdio), two real `skillwire serve` upstreams.

Both protocol eras: `auto` negotiates 2026-07-28 (elicitation travels as an input-required tool
result that the SDK client answers and retries), `legacy` is 2025-11-25 (`elicitation/create`
mid-call). The upstreams hold 311 generated skills together, one name on both.
"""

from __future__ import annotations

import shlex
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client import Client

from servers import free_port, running_http_server
from skillwire.client.skills import SkillsClient
from skillwire.host.approvals import ApprovalStore
from skillwire.host.identity import SkillRef
from skillwire.host.tool_schemas import INSTRUCTIONS, tool_definitions
from support.bridge import SKILLWIRE, Elicitor, bridge_client, generate_skills, text_of, write_skill
from support.servers import RunningServer, serve_http

pytestmark = pytest.mark.anyio
ERAS = [pytest.param("auto", id="2026-07-28"), pytest.param("legacy", id="2025-11-25")]

PDF = "skill://pdf-forms/SKILL.md"
MUTABLE = "skill://mutable-skill/SKILL.md"
ZEBRA = "skill://zebra-care/SKILL.md"
SHARED = "skill://shared-helper/SKILL.md"


@dataclass
class Upstreams:
    a: RunningServer
    b: RunningServer
    a_root: Path
    b_root: Path

    def args(self, approvals: Path, *extra: str) -> list[str]:
        return ["--server", f"a={self.a.url}", "--server", f"b={self.b.url}", "--approvals", str(approvals), *extra]


@pytest.fixture(scope="module")
def upstreams(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstreams]:
    base = tmp_path_factory.mktemp("bridge-upstreams")
    a_root, b_root = base / "a", base / "b"
    generate_skills(a_root, "alpha", 160)
    generate_skills(b_root, "beta", 145)
    write_skill(
        a_root,
        "pdf-forms",
        "Fill PDF forms from a spreadsheet.",
        "Read references/FORMS.md for the field names.",
        {"references/FORMS.md": "Field names: name, date.\n", "references/extra/more.md": "More.\n"},
    )
    write_skill(a_root, "mutable-skill", "A skill whose notes change.", "See notes.md.", {"notes.md": "v1\n"})
    write_skill(a_root, "shared-helper", "The same name on both servers (alpha).", files={"a.md": "from a\n"})
    (a_root / "tool-user").mkdir(parents=True)
    (a_root / "tool-user" / "SKILL.md").write_text(
        "---\nname: tool-user\ndescription: Runs a script.\nallowed-tools: Bash(python:*)\n---\nRun it.\n"
    )
    write_skill(b_root, "shared-helper", "The same name on both servers (beta).", files={"b.md": "from b\n"})
    write_skill(b_root, "zebra-care", "Grooming advice for a xylophonist's zebra.", files={"b.md": "stripes\n"})
    with (
        serve_http([str(a_root), "--no-digest-cache"]) as a,  # watching: the change test edits a file
        serve_http([str(b_root), "--no-digest-cache", "--no-watch"]) as b,
    ):
        yield Upstreams(a, b, a_root, b_root)


async def _own_listing(url: str) -> set[tuple[str, str]]:
    async with Client(url) as client:
        listing = await SkillsClient(client).list_skills(use_cache=False)
    return {(e.uri, e.name) for e in listing.entries}


async def _page_all(client: Client, query: str | None = None) -> list[dict[str, str]]:
    skills: list[dict[str, str]] = []
    cursor: str | None = None
    for _ in range(100):
        arguments = {k: v for k, v in (("query", query), ("cursor", cursor)) if v is not None}
        result = await client.call_tool("list_skills", arguments)
        assert not result.is_error, text_of(result)
        assert result.structured_content is not None
        skills += result.structured_content["skills"]
        cursor = result.structured_content.get("nextCursor")
        if cursor is None:
            return skills
    raise AssertionError("list_skills never stopped paging")


@pytest.mark.parametrize("mode", ERAS)
async def test_tools_paging_query_and_load(upstreams: Upstreams, tmp_path: Path, mode: str) -> None:
    approvals = tmp_path / "approvals.sqlite"
    elicitor = Elicitor()
    async with bridge_client(upstreams.args(approvals), mode=mode, elicitor=elicitor) as client:
        assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
        assert client.session.instructions == INSTRUCTIONS
        tools = {t.name: t for t in (await client.list_tools()).tools}
        expected = {d["name"]: d for d in tool_definitions("mcp")}
        assert set(tools) == {"list_skills", "read_skill", "read_resource"}
        for name, tool in tools.items():
            assert tool.input_schema == expected[name]["inputSchema"]
            assert tool.description == expected[name]["description"]
        assert tools["list_skills"].output_schema is not None
        assert (
            tools["list_skills"].output_schema["properties"]["skills"]
            == (expected["list_skills"]["outputSchema"]["properties"]["skills"])
        )

        # Every skill of both upstreams exactly once across pages, compared with their own skills/list.
        listed = await _page_all(client)
        pairs = [(s["server"], s["uri"]) for s in listed]
        assert len(pairs) == len(set(pairs))
        own_a, own_b = await _own_listing(upstreams.a.url), await _own_listing(upstreams.b.url)
        assert len(own_a) + len(own_b) >= 300
        assert set(pairs) == {("a", uri) for uri, _ in own_a} | {("b", uri) for uri, _ in own_b}
        assert all(s["description"] for s in listed)
        shared = {s["name"] for s in listed if s["uri"] == SHARED}
        assert shared == {"a/shared-helper", "b/shared-helper"}

        # A word of a description finds the skill on the first page.
        found = await client.call_tool("list_skills", {"query": "xylophonist"})
        assert found.structured_content is not None
        assert found.structured_content["skills"][0]["uri"] == ZEBRA

        # read_skill asks once (origin, skill, file count, size), then loads the verified SKILL.md.
        loaded = await client.call_tool("read_skill", {"server": "a", "uri": PDF})
        assert not loaded.is_error, text_of(loaded)
        assert "Read references/FORMS.md for the field names." in text_of(loaded)
        assert len(elicitor.messages) == 1
        prompt = elicitor.messages[0]
        assert 'Name (from the server): "pdf-forms"' in prompt
        assert "'a'" in prompt
        assert "3 files" in prompt
        assert " B in all" in prompt
        with ApprovalStore(approvals) as store:
            assert store.get(SkillRef("a", PDF)) is not None  # a person's approval is persisted

        # The supporting file by the relative path SKILL.md uses, and a directory listing.
        forms = await client.call_tool("read_resource", {"server": "a", "uri": "references/FORMS.md"})
        assert not forms.is_error, text_of(forms)
        assert "Field names: name, date." in text_of(forms)
        directory = await client.call_tool("read_resource", {"server": "a", "uri": "skill://pdf-forms/references"})
        assert not directory.is_error, text_of(directory)
        assert "skill://pdf-forms/references/FORMS.md" in text_of(directory)
        assert "skill://pdf-forms/references/extra" in text_of(directory)

        # Approved once: loading again asks nothing.
        again = await client.call_tool("read_skill", {"server": "a", "uri": PDF})
        assert not again.is_error
        assert len(elicitor.messages) == 1

        # How the question travels: on 2026-07-28 as an input-required tool result (seen here by driving the
        # retry loop by hand), on 2025-11-25 as elicitation/create in the middle of the call.
        raw = await client.session.call_tool("read_skill", {"server": "b", "uri": ZEBRA}, allow_input_required=True)
        if mode == "auto":
            assert isinstance(raw, types.InputRequiredResult)
            assert raw.input_requests is not None
            (request,) = raw.input_requests.values()
            assert isinstance(request, types.ElicitRequest)
            assert '"zebra-care"' in request.params.message
            assert len(elicitor.messages) == 1  # not asked through the callback: the client must retry
        else:
            assert isinstance(raw, types.CallToolResult)
            assert not raw.is_error
            assert '"zebra-care"' in elicitor.messages[-1]


@pytest.mark.parametrize("mode", ERAS)
async def test_declined_elicitation_loads_nothing(upstreams: Upstreams, tmp_path: Path, mode: str) -> None:
    approvals = tmp_path / "approvals.sqlite"
    elicitor = Elicitor(accept=False)
    async with bridge_client(upstreams.args(approvals), mode=mode, elicitor=elicitor) as client:
        result = await client.call_tool("read_skill", {"server": "b", "uri": ZEBRA})
        assert result.is_error
        assert "declined" in text_of(result)
        assert "Grooming" not in text_of(result)
        assert "mcp-content" not in text_of(result)
        assert len(elicitor.messages) == 1
        relative = await client.call_tool("read_resource", {"server": "b", "uri": "b.md"})
        assert relative.is_error  # nothing is active, so no file of the skill can be read either
    with ApprovalStore(approvals) as store:
        assert store.list() == []


async def test_one_prompt_names_allowed_tools_and_grants_them_only_when_ticked(
    upstreams: Upstreams, tmp_path: Path
) -> None:
    approvals = tmp_path / "approvals.sqlite"
    uri = "skill://tool-user/SKILL.md"
    elicitor = Elicitor(content={"approve": True, "allow_tools": True})
    async with bridge_client(upstreams.args(approvals), elicitor=elicitor) as client:
        loaded = await client.call_tool("read_skill", {"server": "a", "uri": uri})
        assert not loaded.is_error, text_of(loaded)
        (prompt,) = elicitor.messages
        assert "Bash(python:*)" in prompt
        schema = elicitor.asked[0].requested_schema  # type: ignore[union-attr]
        assert schema["properties"]["allow_tools"]["default"] is False
        assert 'The user granted its allowed-tools (as the server wrote them): "Bash(python:*)"' in text_of(loaded)
    with ApprovalStore(approvals) as store:
        approval = store.get(SkillRef("a", uri))
        assert approval is not None
        assert approval.allowed_tools == "Bash(python:*)"


@pytest.mark.parametrize("mode", ERAS)
async def test_cross_origin_read_needs_its_own_approval(upstreams: Upstreams, tmp_path: Path, mode: str) -> None:
    approvals = tmp_path / "approvals.sqlite"
    elicitor = Elicitor(answers={"wants to read": False})
    target = "skill://zebra-care/b.md"
    async with bridge_client(upstreams.args(approvals), mode=mode, elicitor=elicitor) as client:
        loaded = await client.call_tool("read_skill", {"server": "a", "uri": PDF})
        assert not loaded.is_error, text_of(loaded)
        refused = await client.call_tool("read_resource", {"server": "b", "uri": target})
        assert refused.is_error
        assert "stripes" not in text_of(refused)
        prompt = elicitor.messages[-1]
        assert "'a'" in prompt
        assert "'b'" in prompt
        assert target in prompt
        elicitor.answers.clear()  # now the person allows it
        allowed = await client.call_tool("read_resource", {"server": "b", "uri": target})
        assert not allowed.is_error, text_of(allowed)
        assert "stripes" in text_of(allowed)
        assert 'origin="b"' in text_of(allowed)
    async with bridge_client(upstreams.args(approvals)) as client:  # a client that cannot ask
        assert not (await client.call_tool("read_skill", {"server": "a", "uri": PDF})).is_error  # approved
        refused = await client.call_tool("read_resource", {"server": "b", "uri": target})
        assert refused.is_error
        assert "stripes" not in text_of(refused)


async def _wait_for_new_digest(url: str, uri: str, old: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        async with Client(url) as client:
            entry = await SkillsClient(client).get_skill(uri, use_cache=False)
        if next(f.digest for f in entry.files if f.uri.endswith("/notes.md")) != old:
            return
        await anyio.sleep(0.2)
    raise AssertionError("the upstream never picked up the change")


async def test_changed_file_after_approval_is_refused(upstreams: Upstreams, tmp_path: Path) -> None:
    approvals = tmp_path / "approvals.sqlite"
    notes = upstreams.a_root / "mutable-skill" / "notes.md"
    async with bridge_client(upstreams.args(approvals), elicitor=Elicitor()) as client:
        loaded = await client.call_tool("read_skill", {"server": "a", "uri": MUTABLE})
        assert not loaded.is_error, text_of(loaded)
        async with Client(upstreams.a.url) as direct:
            entry = await SkillsClient(direct).get_skill(MUTABLE)
        old = next(f.digest for f in entry.files if f.uri.endswith("/notes.md"))
        notes.write_text("v2: changed after approval\n")
        await _wait_for_new_digest(upstreams.a.url, MUTABLE, old)
        read = await client.call_tool("read_resource", {"server": "a", "uri": "notes.md"})
        assert read.is_error
        assert "changed" in text_of(read)
        assert "re-approve" in text_of(read)
        assert "v2" not in text_of(read)
    # A new session sees the new entry: the old approval does not cover it, and the refusal says why.
    async with bridge_client(upstreams.args(approvals)) as client:
        again = await client.call_tool("read_skill", {"server": "a", "uri": MUTABLE})
        assert again.is_error
        assert "needs re-approval" in text_of(again)
        assert "changed skill://mutable-skill/notes.md" in text_of(again)
    # With a client that can ask, the prompt says what changed; approving it binds the new file set.
    elicitor = Elicitor()
    async with bridge_client(upstreams.args(approvals), mode="legacy", elicitor=elicitor) as client:
        reapproved = await client.call_tool("read_skill", {"server": "a", "uri": MUTABLE})
        assert not reapproved.is_error, text_of(reapproved)
        (prompt,) = elicitor.messages
        assert "changed since (file names from the server): changed skill://mutable-skill/notes.md" in prompt
        notes_now = await client.call_tool("read_resource", {"server": "a", "uri": "notes.md"})
        assert "v2: changed after approval" in text_of(notes_now)


async def test_killed_upstream_gives_a_clear_error_and_the_other_keeps_working(
    upstreams: Upstreams, tmp_path: Path
) -> None:
    doomed_root = tmp_path / "c"
    write_skill(doomed_root, "doomed-skill", "Lives on a server that is about to die.")
    approvals = tmp_path / "approvals.sqlite"
    port = free_port()
    serve = [*SKILLWIRE, "serve", str(doomed_root), "--no-digest-cache", "--no-watch", "--http", f"127.0.0.1:{port}"]
    doomed_uri = "skill://doomed-skill/SKILL.md"
    args = [
        "--server",
        f"a={upstreams.a.url}",
        "--server",
        f"c=http://127.0.0.1:{port}/mcp",
        "--approvals",
        str(approvals),
    ]
    # `c` listens before the bridge starts, so the bridge's first connection to it succeeds. Started after
    # the bridge, `c` was unreachable at the bridge's start and still inside its 1 s back-off when a quick
    # start (a quiet machine) made it reachable, so the first listing left it out.
    with ExitStack() as first_life:
        doomed = first_life.enter_context(running_http_server(serve, port, tmp_path / "c-1.log"))
        async with bridge_client(args, elicitor=Elicitor()) as client:
            before = await _page_all(client)
            assert ("c", doomed_uri) in {(s["server"], s["uri"]) for s in before}
            doomed.kill()  # mid-session, without a goodbye
            doomed.wait()
            first_life.close()  # the first life of `c` is over: its port is free for the second

            after = await client.call_tool("list_skills", {})
            assert not after.is_error, text_of(after)
            assert after.structured_content is not None
            (missing,) = after.structured_content["unavailable"]
            assert missing["server"] == "c"
            assert "cannot connect" in missing["reason"]
            assert "Server 'c' is unavailable" in text_of(after)
            servers = {s["server"] for s in await _page_all(client)}
            assert servers == {"a"}

            dead = await client.call_tool("read_skill", {"server": "c", "uri": doomed_uri})
            assert dead.is_error
            assert "server 'c' is unavailable" in text_of(dead)
            assert "not affected" in text_of(dead)
            alive = await client.call_tool("read_skill", {"server": "a", "uri": PDF})
            assert not alive.is_error, text_of(alive)

            # The upstream comes back: the bridge reconnects it (after its short back-off) and lists it again.
            with running_http_server(serve, port, tmp_path / "c-2.log"):
                deadline = time.monotonic() + 30
                while True:
                    listing = await client.call_tool("list_skills", {"query": "die"})
                    assert listing.structured_content is not None
                    if any(s["server"] == "c" for s in listing.structured_content["skills"]):
                        break
                    assert time.monotonic() < deadline, text_of(listing)
                    await anyio.sleep(0.5)
                assert "unavailable" not in listing.structured_content


def _run(command: str) -> subprocess.CompletedProcess[str]:
    words = shlex.split(command)
    assert words[0] == "skillwire"
    return subprocess.run([*SKILLWIRE, *words[1:]], capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.parametrize("mode", ERAS)
async def test_without_elicitation_the_refusal_names_the_approve_command(
    upstreams: Upstreams, tmp_path: Path, mode: str
) -> None:
    approvals = tmp_path / "approvals.sqlite"
    arguments = {"server": "b", "uri": ZEBRA}
    async with bridge_client(upstreams.args(approvals), mode=mode) as client:
        refused = await client.call_tool("read_skill", arguments)
        assert refused.is_error
        text = text_of(refused)
        assert "skillwire approve" in text
        assert "Grooming" not in text
        command = next(line.strip() for line in text.splitlines() if line.strip().startswith("skillwire approve"))
        assert command.endswith(f"b {ZEBRA}")

        done = _run(command + " --yes")
        assert done.returncode == 0, done.stderr
        assert "2 files" in done.stdout
        assert "Approved" in done.stdout

        loaded = await client.call_tool("read_skill", arguments)
        assert not loaded.is_error, text_of(loaded)
        assert "Grooming advice" in text_of(loaded)

        listed = _run(f"skillwire approvals --approvals {shlex.quote(str(approvals))}")
        assert listed.returncode == 0, listed.stderr
        assert f"b  {ZEBRA}" in listed.stdout
        assert "bound to 2 files" in listed.stdout

        revoked = _run(f"skillwire approvals --approvals {shlex.quote(str(approvals))} revoke b {ZEBRA}")
        assert revoked.returncode == 0, revoked.stderr

        again = await client.call_tool("read_skill", arguments)  # revoked: it has to ask again
        assert again.is_error
        assert "skillwire approve" in text_of(again)
