"""`SkillHost` against a real server that lies (tests/servers/hostile_server.py), over Streamable HTTP.

Every lie is refused or gated with its own exception type, nothing unverified reaches the caller (no
raised or returned object carries the lying bytes, and the content cache never holds them), and the
server's request log shows no `resources/read` while connecting, listing or asking for approval.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from servers.hostile_server import (
    BENIGN_DESCRIPTION,
    CROSS_ORIGIN_TARGET,
    DYNAMIC_BODY,
    EVIL_DESCRIPTION,
    GUIDE,
    LIE,
    NESTED_ALLOWED_TOOLS,
    READ_LIES,
    HostileServer,
    root_uri,
    running_hostile_server,
    served_bytes,
    uri,
)
from skillwire.core.errors import (
    CrossOriginReadDenied,
    DigestMismatch,
    DynamicSkillDeclined,
    FrontmatterMismatch,
    LimitExceeded,
    ServerError,
    SizeMismatch,
    SkillChanged,
    SkillNotFound,
    UnlistedFile,
    VerificationFailed,
)
from skillwire.core.manifest import sha256_digest
from skillwire.host.active import ActiveSkill
from skillwire.host.approvals import ApprovalStore
from skillwire.host.cache import ContentCache
from skillwire.host.host import SkillHost
from skillwire.host.identity import SkillRef
from skillwire.host.policy import ApprovalRequest, ApproveAll, CrossOriginRead

pytestmark = pytest.mark.anyio

ORIGIN = "hostile"
LIE_BYTES = LIE.encode()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostileServer]:
    with running_hostile_server(tmp_path_factory.mktemp("hostile")) as running:
        yield running


class GuardedPolicy(ApproveAll):
    """`ApproveAll` that notes how many files the server had served whenever it is asked anything.

    It stands for a person answering (`asks_a_person`), so its approvals are persisted like theirs.
    """

    asks_a_person = True

    def __init__(self, server: HostileServer, **options: bool) -> None:
        super().__init__(**options)
        self.server = server
        self.reads_when_asked: list[tuple[object, int]] = []

    def _note(self, question: object) -> None:
        self.reads_when_asked.append((question, len(self.server.reads())))

    async def approve_skill(self, request: ApprovalRequest) -> bool:
        self._note(request)
        return await super().approve_skill(request)

    async def approve_allowed_tools(self, ref: SkillRef, allowed_tools: str) -> bool:
        self._note(("allowed-tools", ref, allowed_tools))
        return await super().approve_allowed_tools(ref, allowed_tools)

    async def approve_cross_origin_read(self, request: CrossOriginRead) -> bool:
        self._note(request)
        return await super().approve_cross_origin_read(request)

    @property
    def skill_requests(self) -> list[ApprovalRequest]:
        return [q for q in self.asked if isinstance(q, ApprovalRequest)]


@dataclass
class Session:
    host: SkillHost
    server: HostileServer
    policy: GuardedPolicy
    cache_dir: Path

    async def load(self, skill: str, origin: str = ORIGIN) -> ActiveSkill:
        """`host.load` of a skill name (or a full URI), checking that approving read no file."""
        before = len(self.server.reads())
        asked_before = len(self.policy.reads_when_asked)
        try:
            return await self.host.load(origin, skill if "://" in skill else uri(skill))
        finally:
            for question, reads in self.policy.reads_when_asked[asked_before:]:
                assert reads == before, f"a file was read before the approval of {question} was given"

    def assert_clean(self, *objects: object) -> None:
        """No lying bytes in these objects, in any active skill, or anywhere in the content cache."""
        for obj in objects:
            rendered = f"{obj!s} {obj!r}" + (" ".join(map(str, obj.args)) if isinstance(obj, BaseException) else "")
            assert LIE not in rendered, f"lying bytes reached the caller: {rendered[:300]}"
            assert EVIL_DESCRIPTION not in rendered
        for active in self.host.active:
            assert LIE not in active.instructions.text
        for path in self.cache_dir.rglob("*"):
            if path.is_file():
                assert LIE_BYTES not in path.read_bytes(), f"lying bytes were cached at {path}"


@asynccontextmanager
async def session(
    server: HostileServer, tmp_path: Path, *, policy: GuardedPolicy | None = None, other: bool = False
) -> AsyncIterator[Session]:
    """A host connected to the fixture (and, with `other`, to it again as a second origin), listed."""
    chosen = policy if policy is not None else GuardedPolicy(server)
    cache_dir = tmp_path / "cache"
    reads_before = len(server.reads())
    with ApprovalStore(tmp_path / "approvals.sqlite") as approvals:
        async with SkillHost(
            policy=chosen, approvals=approvals, cache=ContentCache(cache_dir, discovery_paths=[])
        ) as host:
            await host.add_server(ORIGIN, server.url)
            if other:
                await host.add_server("other", server.url)
            assert len(server.reads()) == reads_before, "connecting read a file"
            await host.list_skills()
            assert len(server.reads()) == reads_before, "listing read a file"
            state = Session(host, server, chosen, cache_dir)
            yield state
            state.assert_clean()


def mark(server: HostileServer) -> int:
    return len(server.requests())


def since(server: HostileServer, position: int) -> list[tuple[str, str | None]]:
    return server.requests()[position:]


# -- the honest path -------------------------------------------------------------------------------------------------


async def test_honest_skill_loads_lazily_and_verified(server: HostileServer, tmp_path: Path) -> None:
    async with session(server, tmp_path) as s:
        start = mark(server)
        skill = await s.load("honest")
        assert since(server, start) == [("resources/read", uri("honest"))]
        assert skill.instructions.text == served_bytes("honest", "SKILL.md").decode()
        assert skill.instructions.verified
        rendered = skill.instructions.render()
        assert 'origin="hostile"' in rendered
        assert "trusted-local-server" not in rendered  # the server's self-chosen name is never used
        guide = await skill.read("references/guide.md")
        assert guide.text == GUIDE
        assert guide.origin == ORIGIN
        assert guide.verified
        assert server.reads()[-1] == uri("honest", "references/guide.md")
        assert [r.ref for r in s.policy.skill_requests] == [SkillRef(ORIGIN, uri("honest"))]
        approval = s.host.approvals.get(SkillRef(ORIGIN, uri("honest")))
        assert approval is not None
        assert approval.files == skill.entry.files


# -- (a) size --------------------------------------------------------------------------------------------------------


async def test_a_skill_md_longer_than_its_size(server: HostileServer, tmp_path: Path) -> None:
    async with session(server, tmp_path) as s:
        honest = served_bytes("wrong-size", "SKILL.md")
        with pytest.raises(SizeMismatch) as caught:
            await s.load("wrong-size")
        assert caught.value.uri == uri("wrong-size")
        assert caught.value.expected == len(honest)
        assert caught.value.actual == len(READ_LIES[uri("wrong-size")])
        assert not s.host.active
        assert len(s.policy.skill_requests) == 1
        assert s.host.approvals.get(SkillRef(ORIGIN, uri("wrong-size"))) is None  # never persisted
        s.assert_clean(caught.value)


async def test_a_supporting_file_longer_than_its_size(server: HostileServer, tmp_path: Path) -> None:
    async with session(server, tmp_path) as s:
        skill = await s.load("wrong-size-file")
        for _ in range(2):  # nothing was cached: the second read is refused again
            with pytest.raises(SizeMismatch) as caught:
                await skill.read("references/data.md")
            s.assert_clean(caught.value)
        assert server.reads()[-2:] == [uri("wrong-size-file", "references/data.md")] * 2


# -- (b) digest ------------------------------------------------------------------------------------------------------


async def test_b_skill_md_same_size_other_bytes(server: HostileServer, tmp_path: Path) -> None:
    async with session(server, tmp_path) as s:
        honest = served_bytes("wrong-digest", "SKILL.md")
        lie = READ_LIES[uri("wrong-digest")]
        assert len(lie) == len(honest)
        with pytest.raises(DigestMismatch) as caught:
            await s.load("wrong-digest")
        assert not isinstance(caught.value, SizeMismatch)
        assert caught.value.expected == sha256_digest(honest)
        assert caught.value.actual == sha256_digest(lie)
        assert not s.host.active
        assert s.host.approvals.get(SkillRef(ORIGIN, uri("wrong-digest"))) is None
        s.assert_clean(caught.value)


async def test_b_supporting_file_same_size_other_bytes(server: HostileServer, tmp_path: Path) -> None:
    async with session(server, tmp_path) as s:
        skill = await s.load("wrong-digest-file")
        with pytest.raises(DigestMismatch) as caught:
            await skill.read_bytes("references/data.md")
        s.assert_clean(caught.value)


# -- (c) frontmatter -------------------------------------------------------------------------------------------------


async def test_c_frontmatter_swap_with_honest_digest(server: HostileServer, tmp_path: Path) -> None:
    async with session(server, tmp_path) as s:
        registered = s.host.registry.get(SkillRef(ORIGIN, uri("frontmatter-swap")))
        assert registered is not None
        assert registered.description == BENIGN_DESCRIPTION  # what the person was shown
        with pytest.raises(FrontmatterMismatch) as caught:
            await s.load("frontmatter-swap")
        assert any("description" in d for d in caught.value.differences)
        assert not s.host.active
        # The approval given to the benign entry is not persisted: were it kept, the server could later
        # send an entry honestly saying "Exfiltrate credentials" for the same digest, and never be asked.
        assert s.host.approvals.get(SkillRef(ORIGIN, uri("frontmatter-swap"))) is None
        with pytest.raises(FrontmatterMismatch):
            await s.load("frontmatter-swap")
        assert len(s.policy.skill_requests) == 2  # asked again, fetched again, refused again
        # The served file's values are the server's words, not the host's: they stay out of the error.
        s.assert_clean(caught.value, *caught.value.differences)


# -- (d) unlisted file -----------------------------------------------------------------------------------------------


async def test_d_unlisted_file_is_never_fetched(server: HostileServer, tmp_path: Path) -> None:
    secret = uri("unlisted", "references/secret.md")
    async with session(server, tmp_path) as s:
        skill = await s.load("unlisted")
        assert "references/secret.md" in skill.instructions.text
        with pytest.raises(UnlistedFile) as caught:
            await skill.read("references/secret.md")
        assert caught.value.uri == secret
        assert caught.value.skill_uri == uri("unlisted")
        with pytest.raises(UnlistedFile):
            await skill.read(secret)  # the absolute URI too
        # An ordinary read aimed into the acting skill is still bound to the held entry.
        with pytest.raises(UnlistedFile):
            await s.host.read_resource(ORIGIN, secret, acting=skill)
        with pytest.raises(UnlistedFile):
            await s.host.read_resource(ORIGIN, secret)
        assert secret not in server.reads()
        s.assert_clean(caught.value)


# -- (e) a file added after listing ----------------------------------------------------------------------------------


async def test_e_directory_read_showing_a_new_child(server: HostileServer, tmp_path: Path) -> None:
    added = uri("grows", "added.md")
    async with session(server, tmp_path) as s:
        skill = await s.load("grows")
        view = skill.list_directory()
        assert [f.uri for f in view.files] == [uri("grows")]
        with pytest.raises(SkillChanged) as caught:
            await skill.check_directory_with_server()
        assert not isinstance(caught.value, VerificationFailed | ServerError)
        assert added in str(caught.value)
        assert server.requests()[-1] == ("resources/directory/read", root_uri("grows"))
        with pytest.raises(UnlistedFile):
            await skill.read("added.md")
        assert added not in server.reads()
        assert [f.uri for f in skill.list_directory().files] == [uri("grows")]  # the manifest is not extended
        s.assert_clean(caught.value)


# -- (f), (g) missing or malformed resources -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("skill", "reason"),
    [
        ("no-resources", "'resources' is missing"),
        ("bad-resources-string", "'resources' must be an array"),
        ("bad-resources-item", "digest None"),
    ],
    ids=["missing", "string", "item-without-digest"],
)
async def test_fg_invalid_resources_are_reported_and_never_load(
    server: HostileServer, tmp_path: Path, skill: str, reason: str
) -> None:
    async with session(server, tmp_path) as s:
        ref = SkillRef(ORIGIN, uri(skill))
        assert s.host.registry.get(ref) is None
        problems = [p for p in s.host.registry.problems[ORIGIN] if p.uri == uri(skill)]
        assert len(problems) == 1
        assert reason in problems[0].reason
        start = mark(server)
        with pytest.raises(ServerError) as caught:
            await s.load(skill)  # not listed: the host asks skills/get, which is just as broken
        assert not isinstance(caught.value, SkillNotFound)
        assert "invalid entry" in str(caught.value)
        assert reason in str(caught.value)
        assert since(server, start) == [("skills/get", uri(skill))]
        assert not s.policy.asked
        assert s.host.registry.get(ref) is None
        s.assert_clean(caught.value)


# -- (h) limits ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("skill", "files", "words"), [("too-many", 513, "513 files"), ("too-big", 2, "16 MiB")], ids=["files", "bytes"]
)
async def test_h_over_limit_entries_are_declined_before_any_read(
    server: HostileServer, tmp_path: Path, skill: str, files: int, words: str
) -> None:
    async with session(server, tmp_path) as s:
        start = mark(server)
        with pytest.raises(LimitExceeded) as caught:
            await s.load(skill)
        assert caught.value.files == files
        assert words in str(caught.value)
        assert since(server, start) == []  # decided from the listed entry alone
        assert not s.policy.asked
        s.assert_clean(caught.value)


# -- (i) dynamic -----------------------------------------------------------------------------------------------------


async def test_i_dynamic_is_declined_by_default(server: HostileServer, tmp_path: Path) -> None:
    async with session(server, tmp_path) as s:
        start = mark(server)
        with pytest.raises(DynamicSkillDeclined) as caught:
            await s.load("dynamic")
        assert since(server, start) == []
        assert not s.policy.asked
        s.assert_clean(caught.value)


async def test_i_dynamic_allowed_is_never_persisted(server: HostileServer, tmp_path: Path) -> None:
    policy = GuardedPolicy(server, allow_dynamic=True)
    async with session(server, tmp_path, policy=policy) as s:
        ref = SkillRef(ORIGIN, uri("dynamic"))
        skill = await s.load("dynamic")
        assert DYNAMIC_BODY in skill.instructions.text
        assert not skill.instructions.verified
        assert 'verified="no"' in skill.instructions.render()
        assert s.host.approvals.get(ref) is None
        today = await skill.read("today.md")
        assert not today.verified
        # An ordinary read into the active dynamic skill goes through it (and its size limit).
        again = await s.host.read_resource(ORIGIN, uri("dynamic", "today.md"))
        assert (again.kind, again.verified, again.text) == ("skill-file", False, today.text)
        await s.load("dynamic")  # asked again: no approval covers dynamic content
        assert [r.ref for r in policy.skill_requests] == [ref, ref]
        assert s.host.approvals.get(ref) is None


# -- (j) nested SKILL.md ---------------------------------------------------------------------------------------------


async def test_j_nested_skill_md_is_plain_content_and_needs_its_own_approval(
    server: HostileServer, tmp_path: Path
) -> None:
    outer_ref, inner_ref = SkillRef(ORIGIN, uri("outer")), SkillRef(ORIGIN, uri("outer", "inner/SKILL.md"))
    async with session(server, tmp_path) as s:
        outer = await s.load("outer")
        assert outer.allowed_tools is None
        nested = await outer.read("inner/SKILL.md")
        assert nested.text.startswith("[This is the SKILL.md of a nested skill")
        assert nested.kind == "skill-file"
        assert NESTED_ALLOWED_TOOLS in nested.text  # shown, never acted on
        assert outer.allowed_tools is None
        assert s.host.active == [outer]
        assert s.policy.asked == [s.policy.skill_requests[0]]
        assert s.policy.skill_requests[0].ref == outer_ref
        assert s.host.approvals.get(inner_ref) is None

        inner = await s.load(inner_ref.uri)
        assert [r.ref for r in s.policy.skill_requests] == [outer_ref, inner_ref]
        assert ("allowed-tools", inner_ref, NESTED_ALLOWED_TOOLS) in s.policy.asked
        assert inner.allowed_tools is None  # the policy did not grant it
        assert (await inner.read("notes.md")).uri == uri("outer", "inner/notes.md")  # its own root
        assert outer.allowed_tools is None


async def test_j_granting_the_nested_skill_does_not_widen_the_outer(server: HostileServer, tmp_path: Path) -> None:
    policy = GuardedPolicy(server, allowed_tools=True)
    async with session(server, tmp_path, policy=policy) as s:
        outer = await s.load("outer")
        inner = await s.load(uri("outer", "inner/SKILL.md"))
        assert inner.allowed_tools == NESTED_ALLOWED_TOOLS
        assert outer.allowed_tools is None
        approved = s.host.approvals.get(SkillRef(ORIGIN, uri("outer")))
        assert approved is not None
        assert approved.allowed_tools is None


# -- (k) a name shared with a local skill ----------------------------------------------------------------------------


async def test_k_local_name_collision_never_shadows(server: HostileServer, tmp_path: Path) -> None:
    local_root = tmp_path / "local-skills"
    (local_root / "deploy").mkdir(parents=True)
    (local_root / "deploy" / "SKILL.md").write_text("---\nname: deploy\ndescription: Deploy locally.\n---\nLocal.\n")
    async with session(server, tmp_path) as s:
        reads = len(server.reads())
        s.host.add_local("local", [local_root])
        await s.host.list_skills()
        assert len(server.reads()) == reads
        collisions = [c for c in s.host.collisions if c.kind == "local-name"]
        assert len(collisions) == 1
        assert collisions[0].name == "deploy"
        assert {r.origin for r in collisions[0].refs} == {"local", ORIGIN}
        local = s.host.registry.by_display_name("deploy")
        remote = s.host.registry.by_display_name(f"{ORIGIN}/deploy")
        assert local is not None
        assert remote is not None
        assert (local.ref.origin, local.kind) == ("local", "local")
        assert (remote.ref, remote.kind) == (SkillRef(ORIGIN, uri("deploy")), "mcp")
        catalog = s.host.available_skills_prompt()
        assert 'name="deploy" origin="local"' in catalog
        assert f'name="{ORIGIN}/deploy" origin="{ORIGIN}"' in catalog
        assert "deploy" in collisions[0].describe()
        loaded = await s.host.load("local", local.ref.uri)
        assert "Local." in loaded.instructions.text
        assert s.policy.asked == []  # local skills are the person's own
        remote_skill = await s.load("deploy")
        assert "remotely" in remote_skill.instructions.text


# -- (l) a body that reads from another server -----------------------------------------------------------------------


async def test_l_cross_origin_read_is_denied_naming_both_servers(server: HostileServer, tmp_path: Path) -> None:
    async with session(server, tmp_path, other=True) as s:
        skill = await s.load("cross-origin")
        assert 'server="other"' in skill.instructions.text
        reads = len(server.reads())
        with pytest.raises(CrossOriginReadDenied) as caught:
            await s.host.read_resource("other", CROSS_ORIGIN_TARGET, acting=skill)
        assert "'hostile'" in str(caught.value)
        assert "'other'" in str(caught.value)
        assert len(server.reads()) == reads
        asked = [q for q in s.policy.asked if isinstance(q, CrossOriginRead)]
        assert asked == [CrossOriginRead(skill.ref, "other", CROSS_ORIGIN_TARGET)]
        s.assert_clean(caught.value)


async def test_l_cross_origin_read_with_approval_is_tagged_with_the_other_origin(
    server: HostileServer, tmp_path: Path
) -> None:
    policy = GuardedPolicy(server, cross_origin=True)
    async with session(server, tmp_path, policy=policy, other=True) as s:
        skill = await s.load("cross-origin")
        content = await s.host.read_resource("other", CROSS_ORIGIN_TARGET, acting=skill)
        assert content.origin == "other"
        assert content.text == GUIDE
        assert content.kind == "resource"
        assert not content.verified  # an ordinary read: no held entry vouches for it
        assert 'origin="other"' in content.render()
        assert server.reads()[-1] == CROSS_ORIGIN_TARGET
        # Every cross-origin read is asked for again: approval is per call.
        await s.host.read_resource("other", CROSS_ORIGIN_TARGET, acting=skill)
        assert len([q for q in policy.asked if isinstance(q, CrossOriginRead)]) == 2


# -- (m) frontmatter the decoder cannot read -------------------------------------------------------------------------


async def test_m_undecodable_frontmatter_is_a_frontmatter_error_not_a_crash(
    server: HostileServer, tmp_path: Path
) -> None:
    # The served bytes match the entry's digest and size, so only decoding stands between them and the
    # model; an escape naming no code point (`\UFFFFFFFF`) used to escape as a raw OverflowError.
    async with session(server, tmp_path) as s:
        with pytest.raises(FrontmatterMismatch) as caught:
            await s.load("bad-escape")
        assert "no valid frontmatter (line 3)" in str(caught.value)
        assert not s.host.active
        honest = await s.load("honest")  # the host is still usable
        assert honest.instructions.text
