"""`SkillHost`: skills from many MCP servers and local folders, loaded only through one path.

    async with SkillHost(policy=my_policy) as host:
        await host.add_server("work", "https://skills.example.com/mcp")
        await host.list_skills()                     # skills/list on each server: no file is read
        skill = await host.load("work", "skill://acme/billing/refunds/SKILL.md")
        context.append(skill.instructions.render())  # origin-tagged, verified
        text = await skill.read("references/policy.md")

The load path is the only way a skill becomes active: the entry (from the listing, or `skills/get`
for a skill the listing did not show) → `resources` present and well-formed → the load decision
(`host/load.py` `plan_load`: dynamic declined unless allowed → limits checked from the entry → the
trust policy → the approval, bound to the exact {uri, digest} set and verified signer; a changed set
revokes it and asks again with the diff) → `SKILL.md` fetched (cache first) and checked for size,
digest and frontmatter field by field → `ActiveSkill`. Connecting, listing and approving
fetch no file.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Self

import anyio
from mcp.client import Client

from skillwire._deprecation import warn_renamed
from skillwire.catalog.digests import DigestCache
from skillwire.catalog.filesystem import ScanResult, SkillRoot, scan_root
from skillwire.catalog.snapshot import CatalogFile
from skillwire.client.bounds import WireBounds
from skillwire.client.limits import ClientLimits
from skillwire.client.skills import EntryProblem, Listing, SkillsClient
from skillwire.core.entry import SkillEntry
from skillwire.core.errors import (
    ApprovalDenied,
    ConnectionLost,
    CrossOriginReadDenied,
    FrontmatterMismatch,
    LimitExceeded,
    ServerError,
    SkillNotFound,
    SkillwireError,
    UnknownOrigin,
    UnlistedFile,
)
from skillwire.core.manifest import MAX_BYTES_PER_SKILL
from skillwire.core.verify import skill_md_mismatch
from skillwire.host.active import ActiveSkill
from skillwire.host.approvals import ApprovalStore
from skillwire.host.cache import ContentCache, default_cache_root
from skillwire.host.discovery import skills_discovery_paths
from skillwire.host.framing import TaggedContent
from skillwire.host.gate import cross_origin_read
from skillwire.host.identity import SkillRef
from skillwire.host.load import Approved, Ask, Refused, approval_set, plan_load
from skillwire.host.origins import LocalOrigin, ServerOrigin, server_origin
from skillwire.host.policy import DenyAll, Policy
from skillwire.host.prompt import available_skills_prompt
from skillwire.host.reader import OriginReader
from skillwire.host.registry import Collision, OriginKind, RegisteredSkill, Registry
from skillwire.host.trust import TrustPolicy
from skillwire.ops.tracing import span

__all__ = ["SkillHost", "SkillSession"]

logger = logging.getLogger("skillwire.host")


def _first_cause(exc: BaseException) -> str:
    """The innermost first error of (nested) exception groups, on one line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _leaves(group: BaseExceptionGroup[BaseException], *, cancellations: bool = False) -> list[BaseException]:
    """Every exception inside a (nested) exception group, in order; cancellations only if asked."""
    found: list[BaseException] = []
    for error in group.exceptions:
        if isinstance(error, BaseExceptionGroup):
            found += _leaves(error, cancellations=cancellations)
        elif cancellations or not isinstance(error, anyio.get_cancelled_exc_class()):
            found.append(error)
    return found


@dataclass
class _Connection:
    origin: ServerOrigin
    client: Client
    skills: SkillsClient


@dataclass
class _LocalSkills:
    origin: LocalOrigin
    files: dict[str, CatalogFile] = field(default_factory=dict)  # uri -> the scanned file
    # Sources that are not folders (a git root read from git's objects, catalog/git_tree.py): each scans itself.
    sources: tuple[LocalSource, ...] = ()


# Scans skills that are not in a folder on disk (a git root read from its objects), with the host's digest cache.
LocalSource = Callable[[DigestCache], ScanResult]

NO_POLICY = (
    "SkillHost was created without a policy, so it refuses every load; pass one: "
    "SkillHost(policy=MyPolicy()) asking the person (see skillwire.Policy), or policy=ApproveAll() "
    "for servers you trust completely"
)


class SkillSession:
    """One conversation's loaded skills, over the origins, registry, approvals and cache of a `SkillHost`.

    Which skills are loaded decides what a relative path means and which reads cross origins
    (`host/gate.py`), so two conversations served by one host must not share them: the bridge over HTTP
    gives each MCP session its own (`SkillHost.session()`), so one session's load can never open or
    close another's gate. What a person approved is the host's (its `ApprovalStore`), shared by all.
    `SkillHost.load`, `SkillHost.read_resource` and `SkillHost.active` are the host's default session's.
    """

    def __init__(self, host: SkillHost) -> None:
        self.host = host
        self.active: list[ActiveSkill] = []

    async def load(self, origin: str, uri: str) -> ActiveSkill:
        """`SkillHost.load` (the one load path), the skill then active in this session only.

        Loading a skill this session already holds supersedes the earlier `ActiveSkill` (closed, then dropped):
        a session holds one per skill, so a model that reads one skill again and again grows nothing, and a
        session's memory is bounded by the skills it loads. The origins loaded stay the same, so the
        cross-origin gate (`host/gate.py`) sees exactly what it saw before."""
        skill = await self.host.activate(origin, uri)
        for earlier in [held for held in self.active if held.ref == skill.ref]:
            earlier.close()
            self.active.remove(earlier)
        self.active.append(skill)
        return skill

    async def read_resource(self, origin: str, uri: str, *, acting: ActiveSkill | None = None) -> TaggedContent:
        """`SkillHost.read_resource` as this session's loaded skills decide it."""
        return await self.host.read_in(self.active, origin, uri, acting=acting)

    def close(self) -> None:
        """End the session: its skills stop being active (their approvals stay)."""
        for skill in self.active:
            skill.close()
        self.active.clear()


class SkillHost:
    """Skills from many MCP servers and local folders, discovered, approved, verified and loaded
    through one load path (`load`). Use it as an async context manager: leaving the block closes every
    connection, and an exception raised inside the block comes out as itself (never wrapped in an
    `ExceptionGroup` by the SDK's task groups), so `except UnlistedFile:` around the block works.

    Parameters
    ----------
    policy:
        Decides what loads: `approve_skill`, `approve_allowed_tools`, `approve_cross_origin_read`,
        `approve_code_execution` (see `Policy`). Your application's policy should ask the person.
        Without one every load is refused with `ApprovalDenied` saying no policy was given.
        `ApproveAll()` approves everything (tests, fully trusted servers); `DenyAll()` refuses all.
    approvals:
        Where approvals are remembered, bound to each skill's exact `{uri, digest}` set:
        `ApprovalStore(path)` keeps them across runs; without one they are kept in memory for this host
        only. Only an approval from a policy with `asks_a_person` is written to it.
    cache:
        The verified-content cache (`ContentCache(root)`); by default one under the user cache
        directory. Every hit is re-hashed before it is used.
    use_cache:
        False: no content cache at all (every read goes to the server).
    trust:
        The rule for publisher signatures (`TrustPolicy`: `"off"` by default, `"warn"` or `"require"`
        with the trusted keys).
    """

    def __init__(
        self,
        *,
        policy: Policy | None = None,
        approvals: ApprovalStore | None = None,
        cache: ContentCache | None = None,
        use_cache: bool = True,
        trust: TrustPolicy | None = None,
    ) -> None:
        self.policy: Policy = policy if policy is not None else DenyAll()
        # Publisher signatures (host/trust.py): off unless the application sets a policy.
        self.trust = trust if trust is not None else TrustPolicy()
        self._policy_given = policy is not None  # a refusal then says why: no policy, not the person
        # No store given: approvals live in memory with this host. The user-wide file (or any other) is
        # the embedding application's explicit choice, never a side effect of constructing a host.
        self._owns_approvals = approvals is None
        self.approvals = approvals if approvals is not None else ApprovalStore.in_memory()
        chosen_cache = (cache if cache is not None else ContentCache()) if use_cache else None
        self.registry = Registry()
        self._servers: dict[str, _Connection] = {}
        self._local: dict[str, _LocalSkills] = {}
        self._stack = contextlib.AsyncExitStack()
        # The loaded skills of each conversation (SkillSession); the host's own calls use the default one.
        self._sessions: weakref.WeakSet[SkillSession] = weakref.WeakSet()
        self._default_session = SkillSession(self)
        self._sessions.add(self._default_session)
        self.active: list[ActiveSkill] = self._default_session.active
        # Every read of an origin's bytes, for the load path and each ActiveSkill (host/reader.py).
        self.reader = OriginReader(
            server=lambda label: self._server(label).skills,
            local_files=self._local_files,
            cache=chosen_cache,
        )

    @property
    def default_session(self) -> SkillSession:
        """The conversation `load`, `read_resource` and `active` belong to."""
        return self._default_session

    @property
    def cache(self) -> ContentCache | None:
        """The verified-content cache, the one its reads use (None with `use_cache=False`)."""
        return self.reader.cache

    async def __aenter__(self) -> Self:
        await self._stack.__aenter__()
        return self

    def session(self) -> SkillSession:
        """A new conversation over this host: its own loaded skills, the host's origins and approvals."""
        session = SkillSession(self)
        self._sessions.add(session)
        return session

    def _every_active(self) -> list[ActiveSkill]:
        return [skill for session in list(self._sessions) for skill in session.active]

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for skill in self._every_active():
            skill.close()
        try:
            await self._stack.__aexit__(exc_type, exc, tb)
        except BaseExceptionGroup as group:
            # The SDK's client task groups wrap whatever crosses them, the block's own exception
            # included. The caller must see the documented type, not a group of groups.
            errors = _leaves(group)
            if exc is not None and any(error is exc for error in _leaves(group, cancellations=True)):
                others = [error for error in errors if error is not exc]
                if others:
                    logger.warning("closing the host's connections also failed: %r", others)
                return  # `exc` propagates as itself
            if len(errors) == 1:
                raise errors[0] from group
            raise
        finally:
            if self._owns_approvals:
                self.approvals.close()

    def _refused(self, message: str) -> str:
        """A refusal's message, saying when the reason is that no policy was given at all."""
        return message if self._policy_given else f"{message}: {NO_POLICY}"

    # -- origins ----------------------------------------------------------------------------------------------

    async def add_server(
        self,
        label: str,
        target: str | Sequence[str],
        *,
        headers: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 (a setting of the connection, not a deadline of this call)
        limits: ClientLimits | None = None,
    ) -> SkillsClient:
        """Connect to an MCP server under a host-assigned label. Connecting sends no skills request.

        `timeout` is the seconds to wait for each answer (default `ClientLimits.timeout`, 30 s);
        `limits` sets every bound at once (bytes of an answer, pages and entries of a listing).
        A server that cannot be reached raises `ConnectionLost`; the host and its other origins go on.
        """
        chosen = limits if limits is not None else ClientLimits()
        if timeout is not None:
            chosen = replace(chosen, timeout=timeout)
        return await self.add_origin(server_origin(label, target, headers=headers, env=env, limits=chosen))

    async def add_origin(self, origin: ServerOrigin) -> SkillsClient:
        if origin.label in self._servers or origin.label in self._local:
            raise ValueError(f"an origin labelled {origin.label!r} already exists")
        try:
            skills = await self._stack.enter_async_context(origin.connect())
        except (SkillwireError, ValueError):
            raise
        except Exception as exc:  # the SDK's task groups wrap the real cause; name it on one line
            raise ConnectionLost(f"cannot connect: {_first_cause(exc)}", origin=origin.label) from exc
        self._servers[origin.label] = _Connection(origin, skills.client, skills)
        return skills

    async def attach_client(
        self, label: str, client: Client | SkillsClient, *, bounds: WireBounds | None = None
    ) -> SkillsClient:
        """Use an already-connected `mcp` client (in-process servers, custom transports), or a `SkillsClient`
        opened with `skillwire.client.connection` (which keeps its limits and guarded transports).

        A client you built yourself has only the timeouts and entry caps: its bytes never pass through
        skillwire. Build it over `WireBounds` transports and pass `bounds` to have every answer's bytes
        bounded as for `add_server` (see `skillwire.client.bounds`)."""
        if label in self._servers or label in self._local:
            raise ValueError(f"an origin labelled {label!r} already exists")
        if bounds is not None:
            if isinstance(client, SkillsClient):
                raise ValueError("a SkillsClient keeps its own bounds; pass bounds only with an mcp Client")
            if not bounds.transports:
                raise ValueError("no transport was made from these WireBounds: build the Client over them")
            if bounds.attached:
                raise ValueError("these WireBounds belong to another connection: one WireBounds per Client")
            bounds.attached = True
            bounds.budget.connected = True  # the handshake is done: faults stay with their request
        if isinstance(client, SkillsClient):
            skills = client
        else:
            skills = SkillsClient(client, origin=label, budget=bounds.budget if bounds is not None else None)
        self._servers[label] = _Connection(ServerOrigin(label, url="inproc://" + label), skills.client, skills)
        return skills

    def add_local(
        self, label: str = "local", paths: Sequence[Path] | None = None, *, sources: Sequence[LocalSource] = ()
    ) -> None:
        """Local skill folders; by default the Agent Skills discovery paths that exist here. `sources`
        scan skills that are not in a folder (a git root: `GitTreeSource.scan`)."""
        chosen = tuple(paths) if paths is not None else tuple(p for p in skills_discovery_paths() if p.is_dir())
        origin = LocalOrigin(label, chosen)
        if label in self._servers or label in self._local:
            raise ValueError(f"an origin labelled {label!r} already exists")
        self._local[label] = _LocalSkills(origin, sources=tuple(sources))
        self._scan_local(label)

    async def remove_origin(self, label: str) -> None:
        """Forget an origin: its registry entries, its approvals and its cached files."""
        self._servers.pop(label, None)
        self._local.pop(label, None)
        self.registry.remove_origin(label)
        self.approvals.purge_origin(label)
        if self.cache is not None:
            self.cache.purge_origin(label)
        for skill in self._every_active():
            if skill.ref.origin == label:
                skill.close()

    def detach(self, label: str) -> None:
        """Drop a server's connection but keep its approvals, cached files and registry entries.

        For a supervisor that reconnects a failed upstream (the bridge): it attaches the new connection
        under the same label with `attach_client`, and nothing the person approved is lost.
        """
        self._servers.pop(label, None)

    def origins(self) -> list[str]:
        return [*self._servers, *self._local]

    def search_index_path(self) -> Path | None:
        """Where the search index (`host/search.py`) keeps its rows between runs, or None (in memory).

        Beside the default verified-content cache (`<user cache>/skillwire/search/`), one file per set of
        origin labels, so hosts over different catalogs do not rewrite each other's rows (sharing one would
        still be correct: rows are keyed by digest and synced in a transaction). None with `use_cache=False`
        or a cache root of the caller's, whose directory is theirs, not a place for other files.
        """
        cache = self.reader.cache
        if cache is None or cache.root != default_cache_root().resolve(strict=False):
            return None
        labels = "\x1f".join(sorted(self.origins())).encode("utf-8", "surrogatepass")
        return cache.root.parent / "search" / f"{hashlib.blake2b(labels, digest_size=8).hexdigest()}.sqlite"

    def _local_files(self, label: str) -> dict[str, CatalogFile] | None:
        local = self._local.get(label)
        return local.files if local is not None else None

    def _server(self, label: str) -> _Connection:
        connection = self._servers.get(label)
        if connection is None:
            raise UnknownOrigin(f"no MCP server is configured under the label {label!r}")
        return connection

    # -- discovery ------------------------------------------------------------------------------------------------

    def _scan_local(self, label: str) -> None:
        local = self._local[label]
        entries: list[SkillEntry] = []
        dirs: dict[str, Path] = {}
        problems: list[EntryProblem] = []
        cache = DigestCache()
        results = [scan_root(SkillRoot(path), cache) for path in local.origin.paths]
        results += [scan(cache) for scan in local.sources]
        for index, result in enumerate(results):
            for skill in result.skills:
                entries.append(skill.entry)
                if index < len(local.origin.paths):  # a folder on disk; a git root's skills have none
                    dirs[skill.entry.uri] = Path(skill.source)
            for file in result.files:
                local.files[file.uri] = file
            problems += [EntryProblem(0, 0, s.location, s.reason) for s in result.skipped]
        self.registry.set_origin(label, "local", entries, problems=problems, local_dirs=dirs)

    async def list_skills(self, *, refresh: bool = False) -> list[RegisteredSkill]:
        """Every skill of every origin (skills/list on each server; reads no file).

        The servers are listed concurrently, each within its own limits (timeout per request, caps
        on the whole listing): a server that hangs, breaks or lies costs its own listing only. Its
        failure is in `registry.problems[label]`, and the skills it listed before stay registered.
        """
        outcomes: dict[str, Listing | ServerError] = {}

        async def list_one(label: str, skills: SkillsClient) -> None:
            try:
                outcomes[label] = await skills.list_skills(use_cache=not refresh)
            except ServerError as exc:
                outcomes[label] = exc

        async with anyio.create_task_group() as group:
            for label, connection in self._servers.items():
                if connection.skills.declared:
                    group.start_soon(list_one, label, connection.skills)
        for label, outcome in outcomes.items():
            if isinstance(outcome, ServerError):
                logger.warning("%s: listing failed: %s", label, outcome)
                self.registry.problems[label] = (EntryProblem(0, -1, None, f"listing failed: {outcome}"),)
                continue
            problems = list(outcome.problems)
            if outcome.stopped_early:
                problems.append(EntryProblem(outcome.pages, -1, None, outcome.stopped_early))
            self.registry.set_origin(label, "mcp", outcome.entries, problems=problems)
        if refresh:
            for label in self._local:
                self._scan_local(label)
        return list(self.registry)

    @property
    def collisions(self) -> tuple[Collision, ...]:
        return self.registry.collisions

    def available_skills_prompt(self, *, budget_chars: int = 8000) -> str:
        """The `<available_skills>` text for the model's context: name, description, origin and uri of
        every registered skill, within a size budget (`host/prompt.py` says how it shortens)."""
        return available_skills_prompt(self.registry, budget_chars=budget_chars)

    def catalog(self, *, budget_chars: int = 8000) -> str:
        """Deprecated name of `available_skills_prompt` ("catalog" is the server's `SkillCatalog`)."""
        warn_renamed("SkillHost.catalog()", "SkillHost.available_skills_prompt()")
        return self.available_skills_prompt(budget_chars=budget_chars)

    # -- the load path ----------------------------------------------------------------------------------------------

    async def load(self, origin: str, uri: str) -> ActiveSkill:
        """Load one skill: the only way a skill becomes active. See the module docstring for the steps.

        The skill is then active in the host's default session (`active`); `session().load` loads into
        another conversation's."""
        return await self._default_session.load(origin, uri)

    async def activate(self, origin: str, uri: str) -> ActiveSkill:
        """The load path itself, for `SkillSession.load`: the skill, active in no session yet."""
        ref = SkillRef(origin, uri)
        if origin in self._local:
            return self._load_local(ref)
        registered = self.registry.get(ref)
        if registered is not None:
            entry = registered.entry
        else:
            # Absent from the listing (or never listed): the server confirms the skill with skills/get.
            entry = await self.reader.get_entry(ref)
        plan = plan_load(
            ref, entry, allow_dynamic=self.policy.allow_dynamic, trust=self.trust, approvals=self.approvals.get
        )
        if isinstance(plan, Refused):
            raise plan.error
        if plan.signature.error is not None:  # only under `warn`: `require` refused above
            logger.warning("%s: loading anyway (trust mode 'warn'): %s", ref, plan.signature.error)
        allowed_tools, new_approval = await self._approve(ref, entry, plan)
        skill_md = await self._fetch_skill_md(ref, entry)
        if new_approval and getattr(self.policy, "asks_a_person", False) is True:
            # Persisted only now that SKILL.md verified: an approval given to an entry whose SKILL.md then
            # failed (its frontmatter, say) must not survive to cover that digest under another entry.
            # And only a person's: an automatic yes covers this load alone (see host/policy.py).
            self.approvals.approve(ref, plan.bound, allowed_tools=allowed_tools)
        active = self._activate(ref, entry, skill_md, kind="mcp", allowed_tools=allowed_tools)
        if registered is None:
            # Confirmed by skills/get and loaded: now the registry (and the catalog) knows it too.
            self.registry.add(RegisteredSkill(ref, "mcp", entry))
        return active

    async def _approve(self, ref: SkillRef, entry: SkillEntry, plan: Approved | Ask) -> tuple[str | None, bool]:
        """Apply the plan: the approved `allowed-tools` grant, if any, and whether it is a new approval to
        persist once SKILL.md has been verified (never for dynamic content)."""
        if isinstance(plan, Approved):
            return plan.allowed_tools, False
        if plan.previous is not None:
            # The stored approval is for another set (a file, or the signer, changed): revoke it now, whatever
            # the person answers (ApprovalStore.check deletes it in one transaction).
            self.approvals.check(ref, plan.bound)
        with span("skillwire.approval", **{"skillwire.origin": ref.origin, "skillwire.kind": "skill"}) as current:
            approved = await self.policy.approve_skill(plan.request)
            current.set_attribute("skillwire.outcome", "granted" if approved else "refused")
        if not approved:
            diff = plan.changed
            raise ApprovalDenied(
                self._refused(
                    f"{ref}: loading was not approved" + (f" (it changed: {diff.describe()})" if diff else "")
                ),
                changed=plan.previous is not None,
            )
        if entry.is_dynamic:
            return None, False  # a persisted approval must never cover dynamic content: asked every time
        grant: str | None = None
        if plan.allowed_tools is not None and await self.policy.approve_allowed_tools(ref, plan.allowed_tools):
            grant = plan.allowed_tools
        return grant, True

    async def _fetch_skill_md(self, ref: SkillRef, entry: SkillEntry) -> str:
        async def matches_entry(data: bytes) -> None:
            # The served file's own words (values, parse errors quoting it) stay out of the exception, which
            # may reach the model unframed; they are logged for the operator instead.
            # Off the event loop: decoding is linear and bounded, but other servers' requests must not wait on it.
            _, mismatch = await anyio.to_thread.run_sync(skill_md_mismatch, entry.frontmatter, data)
            if mismatch is not None:
                logger.warning("%s: the served SKILL.md does not match the entry: %s", ref, "; ".join(mismatch.details))
                raise FrontmatterMismatch(ref.uri, mismatch.fields)

        if entry.is_dynamic:
            data = await self.reader.fetch_unverified(ref.origin, ref.uri)
            if len(data) > MAX_BYTES_PER_SKILL:
                raise LimitExceeded(f"{ref}: dynamic SKILL.md is over {MAX_BYTES_PER_SKILL:,} bytes")
            await matches_entry(data)
        else:
            listed = entry.file(ref.uri)
            assert listed is not None  # from_wire guarantees SKILL.md is listed
            # Cached only once it matches the frontmatter too: that is part of verifying it.
            data = await self.reader.fetch_verified(ref.origin, listed, accept=matches_entry)
        return data.decode("utf-8")

    def indexable_body(self, skill: RegisteredSkill) -> str | None:
        """The skill's SKILL.md text if this host already holds it verified, else None; never fetches.

        For the search index (`host/search.py`): a local skill's file is read like any local read
        (checked against the scan), an upstream skill's only from the verified content cache (where a
        `read_skill` or `pull` left it; a cache hit is re-hashed). Fetching every SKILL.md from a server
        to index it would make the first query cost a round trip per skill.
        """
        try:
            if skill.ref.origin in self._local:
                return self.reader.read_local(skill.ref.origin, skill.ref.uri).decode("utf-8", "replace")
            cache = self.reader.cache
            listed = None if skill.entry.is_dynamic else skill.entry.file(skill.ref.uri)
            if cache is None or listed is None:
                return None
            data = cache.get(skill.ref.origin, skill.ref.uri, listed)
        except (SkillwireError, OSError):
            return None  # not verifiable now: indexed without its body, as if never read
        return data.decode("utf-8", "replace") if data is not None else None

    def _load_local(self, ref: SkillRef) -> ActiveSkill:
        registered = self.registry.get(ref)
        if registered is None:
            raise SkillNotFound(f"no local skill {ref.uri} under {ref.origin!r}")
        data = self.reader.read_local(ref.origin, ref.uri)
        return self._activate(ref, registered.entry, data.decode("utf-8", "replace"), kind="local", allowed_tools=None)

    def _activate(
        self, ref: SkillRef, entry: SkillEntry, skill_md: str, *, kind: OriginKind, allowed_tools: str | None
    ) -> ActiveSkill:
        return ActiveSkill(
            self.reader,
            ref,
            entry,
            skill_md,
            kind=kind,
            allowed_tools=allowed_tools,
            policy=self.policy,
            on_revoke=self._revoke,
            refused=self._refused,
        )

    # -- revocation ----------------------------------------------------------------------------------------------------

    def _revoke(self, ref: SkillRef, new_entry: SkillEntry) -> None:
        # A different set revokes the stored approval (the signer is part of the set: host/trust.py).
        self.approvals.check(ref, approval_set(self.trust, ref, new_entry))
        self.registry.add(RegisteredSkill(ref, "mcp", new_entry))

    # -- ordinary reads (not loads) ---------------------------------------------------------------

    async def read_resource(self, origin: str, uri: str, *, acting: ActiveSkill | None = None) -> TaggedContent:
        """An ordinary `resources/read` (a SKILL.md read this way is not a load), in the default session.

        A file of an active skill of that origin is served verified from the held entry. While a skill of
        another origin is loaded, a read outside the loaded skills of `origin` needs per-call approval
        naming both servers (`host/gate.py`); so does any read for an explicit `acting` skill of another
        origin.
        """
        return await self._default_session.read_resource(origin, uri, acting=acting)

    async def read_in(
        self, active: Sequence[ActiveSkill], origin: str, uri: str, *, acting: ActiveSkill | None = None
    ) -> TaggedContent:
        """`read_resource` for a session whose loaded skills are `active` (`SkillSession.read_resource`)."""
        request = cross_origin_read(active, origin, uri, acting=acting)
        if request is not None:
            with span("skillwire.approval", **{"skillwire.origin": origin, "skillwire.kind": "read"}) as current:
                allowed = await self.policy.approve_cross_origin_read(request)
                current.set_attribute("skillwire.outcome", "granted" if allowed else "refused")
            if not allowed:
                raise CrossOriginReadDenied(self._refused(request.describe() + "; not approved"))
        for skill in reversed(active):
            if skill.active and skill.ref.origin == origin and uri in {f.uri for f in skill.entry.files}:
                return await skill.read(uri)
        for skill in reversed(active):
            if skill.active and skill.ref.origin == origin and skill.path.file_path_of(uri) is not None:
                if skill.entry.is_dynamic:
                    return await skill.read(uri)  # counted against the dynamic size limit
                # Inside an active skill but not in its held entry: an unlisted file, never fetched.
                raise UnlistedFile(uri, skill.ref.uri)
        if origin in self._local:
            # Local folders hold skills only, and a file of one is read once the skill is loaded (above).
            raise SkillNotFound(
                f"{uri} is a file of no loaded skill of {origin!r} (local skill folders serve only their skills' "
                "files, once the skill is loaded)"
            )
        skills = self._server(origin).skills
        try:
            content = await skills.read_skill_uri(uri)
        except SkillNotFound:
            # Not a resource; it may be a directory. Directory reads go to resources/directory/read
            # (only when the server declared it), and what they list is shown, never loaded.
            if not skills.directory_read:
                raise
            items = await skills.read_directory(uri)
            lines = [f"{i.uri}{'/ (directory)' if i.is_directory else ''}" for i in items]
            if items.stopped is not None:
                lines.append(f"(the listing was cut short: {items.stopped})")
            return TaggedContent(origin, uri, "\n".join(lines) or "(empty directory)", kind="directory", verified=False)
        try:
            text = content.data.decode("utf-8")
        except UnicodeDecodeError:
            text = f"[binary resource, {len(content.data)} bytes, {content.mime_type or 'unknown type'}]"
        return TaggedContent(origin, uri, text, kind="resource", verified=False, raw=content.data)
