"""One lazy, self-healing connection per upstream MCP server, so one dead upstream never stops the others.

An upstream is connected the first time a tool call needs it. Before each use it is probed (`ping`,
or `server/discover` on 2026-07-28, which has no ping; a localhost round trip costs about a
millisecond); a failed probe, or a connection whose task ended (a stdio server that exited), is torn
down and connected again. When connecting fails, the reason is
kept and reported for a short, growing back-off, so a host asking for every page of `list_skills`
does not wait on a hung upstream again and again.

Each connection lives in its own task: the SDK's client holds task groups and cancel scopes, which
must be entered and left in one task, while tool calls arrive in tasks of their own.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import CONNECTION_CLOSED
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skillwire.client.connection import plain_http_answer, refused_credentials
from skillwire.client.skills import EntryProblem, SkillsClient
from skillwire.core.errors import UpstreamUnavailable
from skillwire.core.protocol import EXTENSION_ID
from skillwire.host.host import SkillHost
from skillwire.host.origins import ServerOrigin
from skillwire.ops.metrics import set_upstream_up
from skillwire.ops.tracing import span

logger = logging.getLogger("skillwire.bridge")

REQUEST_TIMEOUT_SECONDS = 30.0  # connecting, one listing, or one tool call's upstream work
PROBE_TIMEOUT_SECONDS = 5.0
CONNECT_FLOOR_SECONDS = 15.0
FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 10.0  # a restarted upstream is noticed within this


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe_failure(origin: ServerOrigin, exc: BaseException, http_status: int | None = None) -> str:
    """One line saying why talking to `origin` failed (never a traceback). `http_status`: the last HTTP error
    status seen while connecting (the SDK turns a 401 into a bare JSON-RPC error that carries none)."""
    leaf = _leaf(exc)
    where = origin.url if origin.url is not None else f"`{' '.join(origin.command or ())}`"
    kind = type(leaf).__name__
    status = getattr(getattr(leaf, "response", None), "status_code", None)
    status = status if isinstance(status, int) else http_status
    refused = None if status is None else refused_credentials(status, origin.headers)
    if refused is not None:
        return f"{where} {refused}"
    if isinstance(leaf, FileNotFoundError) and origin.command is not None:
        return f"cannot start {where}: command not found"
    if isinstance(leaf, MCPError):
        if leaf.code == CONNECTION_CLOSED:
            return f"{where} closed the connection"
        return f"{where} answered with an error: {leaf.message}"
    if (plain := plain_http_answer(leaf, origin.url)) is not None:
        return f"{where} {plain}"
    if kind == "ConnectError":
        return f"cannot connect to {where} (is it running?)"
    if "Timeout" in kind:
        return f"{where} did not answer in time"
    if isinstance(status, int):
        return f"{where} answered HTTP {status}"
    text = str(leaf).strip().splitlines()[0] if str(leaf).strip() else ""
    return f"{where}: {kind}" + (f": {text}" if text else "")


async def _probe(client: Client) -> None:
    """The cheapest request that proves the server still answers, in either protocol era."""
    version = client.protocol_version
    if version in MODERN_PROTOCOL_VERSIONS:
        await client.session.send_discover(version)  # 2026-07-28 removed ping
    else:
        await client.session.send_ping()


@dataclass
class _Upstream:
    origin: ServerOrigin
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    skills: SkillsClient | None = None
    scope: anyio.CancelScope | None = None
    done: anyio.Event | None = None
    error: str | None = None
    retry_at: float = 0.0
    backoff: float = FIRST_BACKOFF_SECONDS


class Upstreams:
    """The bridge's upstream servers, attached to `host` while connected (use as an async context manager)."""

    def __init__(
        self,
        host: SkillHost,
        origins: Sequence[ServerOrigin],
        *,
        timeout: float = REQUEST_TIMEOUT_SECONDS,
    ) -> None:
        self.host = host
        self._upstreams = {o.label: _Upstream(o) for o in origins}
        for label in self._upstreams:  # every configured upstream has a series, down until connected
            set_upstream_up(label, False)
        self.timeout = timeout
        # Connecting may start a process (a stdio upstream imports its whole stack first), so it gets at
        # least CONNECT_FLOOR_SECONDS even when requests are held to less.
        self.connect_timeout = max(timeout, CONNECT_FLOOR_SECONDS)
        self.probe_timeout = min(PROBE_TIMEOUT_SECONDS, timeout)
        self._group: anyio.abc.TaskGroup | None = None
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> Self:
        await self._stack.__aenter__()
        self._group = await self._stack.enter_async_context(anyio.create_task_group())
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        for upstream in self._upstreams.values():
            if upstream.scope is not None:
                upstream.scope.cancel()
        await self._stack.__aexit__(exc_type, exc, tb)

    def labels(self) -> list[str]:
        return list(self._upstreams)

    def __contains__(self, label: object) -> bool:
        return label in self._upstreams

    def origin(self, label: str) -> ServerOrigin:
        return self._upstreams[label].origin

    # -- connecting -------------------------------------------------------------------------------------------

    async def ensure(self, label: str) -> SkillsClient:
        """The connected upstream `label`, connecting or reconnecting it; raises `UpstreamUnavailable`."""
        upstream = self._upstreams[label]
        async with upstream.lock:
            if upstream.skills is not None:
                if await self._alive(upstream):
                    return upstream.skills
                logger.info("upstream %s stopped answering; reconnecting", label)
                await self._teardown(upstream)
            if upstream.error is not None and time.monotonic() < upstream.retry_at:
                raise UpstreamUnavailable(label, upstream.error)
            try:
                skills = await self._connect(upstream)
            except UpstreamUnavailable as exc:
                upstream.error = exc.reason
                upstream.retry_at = time.monotonic() + upstream.backoff
                upstream.backoff = min(upstream.backoff * 2, MAX_BACKOFF_SECONDS)
                raise
            upstream.error, upstream.backoff = None, FIRST_BACKOFF_SECONDS
            set_upstream_up(label, True)
            return skills

    async def ensure_all(self) -> dict[str, str]:
        """Connect every upstream concurrently; returns the reason of each one that is unavailable.

        An unavailable upstream's skills leave the host's registry (with the reason as a problem), so a
        listing never shows skills that cannot be loaded.
        """
        failed: dict[str, str] = {}

        async def one(label: str) -> None:
            try:
                await self.ensure(label)
            except UpstreamUnavailable as exc:
                failed[label] = exc.reason

        async with anyio.create_task_group() as group:
            for label in self._upstreams:
                group.start_soon(one, label)
        for label, reason in failed.items():
            self.mark_unavailable(label, reason)
        return failed

    async def prefetch_listings(self) -> dict[str, str]:
        """List every connected upstream concurrently, each within the timeout; returns the ones that failed.

        The listing lands in each client's cache (for the server's ttlMs), where the host's own relisting
        finds it. An upstream that hangs or fails here is torn down and its skills reported missing, so
        one broken server can neither stall nor break the listing of the others.
        """
        failed: dict[str, str] = {}

        async def one(upstream: _Upstream) -> None:
            skills = upstream.skills
            if skills is None:
                return
            try:
                attributes = {"skillwire.upstream": upstream.origin.label, "skillwire.tool": "list_skills"}
                with span("skillwire.bridge.upstream", **attributes), anyio.fail_after(self.timeout):
                    await skills.list_skills()
            except TimeoutError:
                failed[upstream.origin.label] = f"it did not answer skills/list within {self.timeout:g} s"
            except Exception as exc:
                failed[upstream.origin.label] = f"its skills/list failed: {describe_failure(upstream.origin, exc)}"

        async with anyio.create_task_group() as group:
            for upstream in self._upstreams.values():
                group.start_soon(one, upstream)
        for label, reason in failed.items():
            await self.drop(label, reason)
        return failed

    async def drop(self, label: str, reason: str) -> None:
        """Tear down a connection that failed a request; it is reconnected (after the back-off) when next used."""
        upstream = self._upstreams[label]
        async with upstream.lock:
            await self._teardown(upstream)
            upstream.error = reason
            upstream.retry_at = time.monotonic() + upstream.backoff
            upstream.backoff = min(upstream.backoff * 2, MAX_BACKOFF_SECONDS)
        self.mark_unavailable(label, reason)

    def mark_unavailable(self, label: str, reason: str) -> None:
        self.host.registry.set_origin(label, "mcp", [], problems=[EntryProblem(0, -1, None, f"unavailable: {reason}")])

    async def check(self, label: str) -> str | None:
        """After a failed call: None when `label` still answers, else why not (and it is torn down)."""
        upstream = self._upstreams[label]
        async with upstream.lock:
            if upstream.skills is None:
                return upstream.error or "not connected"
            if await self._alive(upstream):
                return None
            await self._teardown(upstream)
            upstream.error = "it stopped answering (it will be reconnected on the next call)"
            return upstream.error

    async def _alive(self, upstream: _Upstream) -> bool:
        if upstream.skills is None or upstream.done is None or upstream.done.is_set():
            return False
        try:
            with anyio.fail_after(self.probe_timeout):
                await _probe(upstream.skills.client)
        except Exception as exc:
            logger.info("ping of upstream %s failed: %s", upstream.origin.label, describe_failure(upstream.origin, exc))
            return False
        return True

    async def _connect(self, upstream: _Upstream) -> SkillsClient:
        assert self._group is not None, "use Upstreams as an async context manager"
        origin = upstream.origin
        ready = anyio.Event()
        done = anyio.Event()
        scope = anyio.CancelScope()
        connected: list[SkillsClient] = []
        failure: list[BaseException] = []
        statuses: list[int] = []

        async def record(response: Any) -> None:
            if response.status_code >= 400:
                statuses.append(response.status_code)

        async def own() -> None:
            # The connection's whole life, in this one task; any failure ends only this upstream.
            try:
                with scope:
                    async with origin.connect(on_http_response=record) as client:  # guarded, the origin's limits
                        connected.append(client)
                        ready.set()
                        await anyio.sleep_forever()
            except Exception as exc:
                failure.append(exc)
                if connected:
                    logger.info("upstream %s disconnected: %s", origin.label, describe_failure(origin, exc))
            finally:
                if upstream.done is done:  # this connection was the upstream's current one: it is gone now
                    set_upstream_up(origin.label, False)
                done.set()
                ready.set()

        self._group.start_soon(own)
        with anyio.move_on_after(self.connect_timeout):
            await ready.wait()
        if not connected:
            scope.cancel()
            with anyio.move_on_after(5):
                await done.wait()
            if failure:
                status = statuses[-1] if statuses else None
                raise UpstreamUnavailable(origin.label, describe_failure(origin, failure[0], status))
            raise UpstreamUnavailable(origin.label, f"it did not connect within {self.connect_timeout:g} s")
        client = connected[0]
        self.host.detach(origin.label)
        skills = await self.host.attach_client(origin.label, client)
        upstream.skills, upstream.scope, upstream.done = skills, scope, done
        if not skills.declared:
            await self._teardown(upstream)
            raise UpstreamUnavailable(origin.label, f"the server does not offer skills (no {EXTENSION_ID} extension)")
        return skills

    async def _teardown(self, upstream: _Upstream) -> None:
        # The one place a connection ends on purpose (a failed probe or request, a drop, a server without
        # skills); a connection that ends by itself (a stdio upstream exited) is marked down in `own`.
        set_upstream_up(upstream.origin.label, False)
        self.host.detach(upstream.origin.label)
        upstream.skills = None
        if upstream.scope is not None:
            upstream.scope.cancel()
        if upstream.done is not None:
            with anyio.move_on_after(5):
                await upstream.done.wait()
        upstream.scope = upstream.done = None
