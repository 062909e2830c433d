"""The bridge's MCP server: the host's three model tools over every configured upstream.

Tools are `list_skills`, `read_skill` and `read_resource` with `SkillTools`' own schemas (list_skills
also declares its `outputSchema` and returns `structuredContent`), and the server's `instructions` are
`SkillTools`' instructions. Behind them is one `SkillHost`: every host-side rule of the spec (entry
first, limits, verification, origin framing) applies to what reaches the model.

`read_skill` and `read_resource` take their approval questions as SDK resolvers (`Resolve`), so the
SDK carries them in the protocol era the client negotiated: `elicitation/create` mid-call on a
2025-11-25 session, an input-required result answered on retry on 2026-07-28. A client that cannot
elicit gets a refusal naming the `skillwire approve` command that approves the skill instead.
"""

# No `from __future__ import annotations` here: the SDK reads the tools' and resolvers' annotations
# (`Annotated[..., Resolve(fn)]`) when they are registered, and those name functions local to
# `build_server`, which only evaluated annotations can reach.

import logging
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Annotated, Any, Self

import anyio
import uvicorn
from mcp.server.elicitation import AcceptedElicitation, CancelledElicitation, ElicitationResult
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent

from skillwire._version import __version__
from skillwire.bridge.approval import (
    BridgePolicy,
    Decisions,
    LoadQuestion,
    ReadApproval,
    ReadQuestion,
    SkillApproval,
    decided,
    load_question,
    read_question,
)
from skillwire.bridge.config import BridgeConfig
from skillwire.bridge.sessions import MAX_SESSIONS, Conversations, SessionAdmission
from skillwire.bridge.upstreams import REQUEST_TIMEOUT_SECONDS, Upstreams
from skillwire.client.skills import SkillsClient
from skillwire.core.display import escape as one_line
from skillwire.core.display import quoted
from skillwire.core.errors import ApprovalStoreError, UpstreamUnavailable
from skillwire.core.uri import is_absolute
from skillwire.host.approvals import ApprovalStore
from skillwire.host.gate import cross_origin_read
from skillwire.host.host import SkillHost
from skillwire.host.identity import SkillRef
from skillwire.host.load import Ask, plan_load
from skillwire.host.tools import INSTRUCTIONS, SkillTools, ToolResult
from skillwire.host.trust import TrustPolicy
from skillwire.ops.metrics import record_approval, record_tool_call
from skillwire.ops.tracing import span
from skillwire.server._sdk import use_one_pass_replies
from skillwire.server.app import transport_security
from skillwire.server.observe import CountResponseBytes, RequestObserver, metrics_route

logger = logging.getLogger("skillwire.bridge")

# The ids of the bridge's two questions, as a 2026-07-28 client sees them in `inputRequests` (and may key
# its own handling or logs on): they stay the same across releases.
APPROVE_SKILL_REQUEST = "skillwire:approve-skill"
APPROVE_READ_REQUEST = "skillwire:approve-cross-origin-read"


@dataclass(frozen=True)
class LoadPreflight:
    """What a `read_skill` call needs before the load runs: an error, a question, or neither."""

    error: str | None = None
    question: LoadQuestion | None = None


@dataclass(frozen=True)
class ReadPreflight:
    error: str | None = None
    question: ReadQuestion | None = None


def _can_elicit(ctx: Context[Any, Any]) -> bool:
    """Whether the client declared form elicitation (a bare `elicitation: {}` counts, as the SDK treats it)."""
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


async def _answered(tool: str, call: Awaitable[ToolResult]) -> CallToolResult:
    """One tool call's answer, counted by outcome (`skillwire_bridge_tool_calls_total`): the one place every
    bridge tool call passes through. `error` is a refusal or failure the model is told about; `failed` an
    exception the SDK turns into an error result."""
    try:
        result = await call
    except Exception:
        record_tool_call(tool, "failed")
        raise
    record_tool_call(tool, "error" if result.is_error else "ok")
    return _call_result(result)


def _call_result(result: ToolResult) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=result.text)],
        structured_content=None if result.is_error else result.structured,
        is_error=result.is_error,
    )


class Bridge:
    """The host, its upstreams and its approval store; `build_server()` is the MCP server over them."""

    def __init__(
        self,
        config: BridgeConfig,
        *,
        page_size: int = 50,
        upstream_timeout: float = REQUEST_TIMEOUT_SECONDS,
        trust: TrustPolicy | None = None,
    ) -> None:
        self.config = config
        self.policy = BridgePolicy()
        self.approvals = ApprovalStore(config.approvals)
        self.host = SkillHost(policy=self.policy, approvals=self.approvals, trust=trust)
        # The host's own conversation: stdio's one client, and every HTTP call that carries no MCP session.
        self.tools = SkillTools(self.host, page_size=page_size)
        # Each HTTP MCP session's own loaded skills (bridge/sessions.py): one session's load must never open or
        # close another's cross-origin gate (host/gate.py).
        self.conversations = Conversations(self.tools)
        self.upstream_timeout = upstream_timeout
        self.upstreams = Upstreams(self.host, config.servers, timeout=upstream_timeout)

    async def __aenter__(self) -> Self:
        await self.host.__aenter__()
        try:
            for local in self.config.local:
                self.host.add_local(local.label, list(local.paths), sources=[tree.scan for tree in local.trees])
            await self.upstreams.__aenter__()
        except BaseException as exc:
            await self.host.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            await self.upstreams.__aexit__(exc_type, exc, tb)
        finally:
            await self.host.__aexit__(exc_type, exc, tb)
            self.approvals.close()

    def conversation(self, ctx: Context[Any, Any] | None) -> SkillTools:
        """The tools over the loaded skills of the conversation `ctx` belongs to (bridge/sessions.py)."""
        try:
            session = ctx.request_context.session if ctx is not None else None
        except ValueError:  # outside a request: the host's own conversation
            session = None
        return self.conversations.of(session)

    # -- pre-flight (side-effect free: nothing is revoked, approved or fetched beyond the entry) ------------------

    async def _upstream(self, server: str) -> tuple[SkillsClient | None, str | None]:
        """The connected upstream `server` (None for a local origin), or the refusal when there is none."""
        if server not in self.upstreams:
            if server in self.config.labels():
                return None, None  # a local origin
            known = ", ".join(repr(label) for label in self.config.labels())
            return None, (
                f"Refused: unknown server label {server!r} (known: {known}). Use the server exactly as "
                "list_skills shows it."
            )
        try:
            return await self.upstreams.ensure(server), None
        except UpstreamUnavailable as exc:
            return None, self._unavailable_text(server, exc.reason)

    def _unavailable_text(self, server: str, reason: str) -> str:
        others = [label for label in self.config.labels() if label != server]
        rest = f" The other servers ({', '.join(others)}) are not affected." if others else ""
        return f"Failed: server {server!r} is unavailable: {reason}.{rest} Tell the user; try again later."

    async def preflight_load(self, server: str, uri: str) -> LoadPreflight:
        skills, error = await self._upstream(server)
        if skills is None:
            return LoadPreflight(error=error)  # an error, or a local skill (loaded without approval)
        try:
            skill_uri = uri if is_absolute(uri) else self.tools.resolve_skill_uri(server, uri)
            ref = SkillRef(server, skill_uri)
            registered = self.host.registry.get(ref)
            entry = registered.entry if registered is not None else await skills.get_skill(skill_uri)
        except Exception:
            return LoadPreflight()  # not a skill of that server: read_skill gives the precise refusal
        try:
            plan = plan_load(
                ref, entry, allow_dynamic=self.policy.allow_dynamic, trust=self.host.trust, approvals=self.approvals.get
            )
        except ApprovalStoreError as exc:
            return LoadPreflight(error=f"Failed: the bridge's approval store cannot be used: {exc}")
        if not isinstance(plan, Ask):
            # Refused: the load path refuses it whatever the person says, with the precise reason.
            # Approved: a stored approval covers exactly these files (and signer).
            return LoadPreflight()
        approved = plan.previous.files if plan.previous is not None else None
        return LoadPreflight(question=load_question(ref, entry, approved, bound=plan.bound, signature=plan.signature))

    async def preflight_read(self, server: str, uri: str, tools: SkillTools | None = None) -> ReadPreflight:
        _, error = await self._upstream(server)
        if error is not None:
            return ReadPreflight(error=error)
        if not is_absolute(uri):
            return ReadPreflight()  # a relative path resolves inside a loaded skill of that server, or not at all
        # The host's own rule on this conversation's loaded skills: what the host will ask, asked first.
        request = cross_origin_read((tools or self.tools).session.active, server, uri)
        return ReadPreflight() if request is None else ReadPreflight(question=read_question(request))

    # -- the tools --------------------------------------------------------------------------------------------

    async def list_skills(self, query: str | None, cursor: str | None) -> ToolResult:
        unavailable = await self.upstreams.ensure_all()
        if cursor is None:  # a first page relists (a cursor continues from what is known)
            unavailable |= await self.upstreams.prefetch_listings()
        arguments = {k: v for k, v in (("query", query), ("cursor", cursor)) if v is not None}
        result = await self.tools.call("list_skills", arguments)
        if result.is_error or not unavailable:
            return result
        failed = list(unavailable.items())
        notes = [
            f"Server {label!r} is unavailable ({one_line(why, 300)}); its skills are missing here."
            for label, why in failed
        ]
        structured = dict(result.structured or {})
        structured["unavailable"] = [{"server": label, "reason": reason} for label, reason in unavailable.items()]
        return ToolResult("\n".join([result.text, *notes]), structured=structured)

    def _approve_hint(self, question: LoadQuestion) -> str:
        # One line whatever the URI holds (a hidden character shows as an escape, never breaks the command).
        return one_line(self.config.approve_command(question.ref.origin, question.ref.uri), None)

    async def read_skill(
        self,
        server: str,
        uri: str,
        preflight: LoadPreflight,
        answer: ElicitationResult[Any],
        tools: SkillTools | None = None,
    ) -> ToolResult:
        if preflight.error is not None:
            return ToolResult(preflight.error, is_error=True)
        decisions = Decisions()
        question = preflight.question
        if question is not None:
            data = answer.data if isinstance(answer, AcceptedElicitation) else None
            changed = (
                f" It changed on the server since the user approved it, so it needs re-approval "
                f"({question.changed.describe()})."
                if question.changed is not None
                else ""
            )
            # Not asked (the client cannot elicit), or asked and cancelled (dismissed, or the host had nobody
            # to ask: Claude Code in print mode answers `cancel`): nobody said no, so the way forward is the
            # command that approves it, not "do not retry".
            why = (
                "this MCP client cannot ask for it (it does not support elicitation)"
                if isinstance(data, LoadPreflight)
                else "the question was dismissed, or this host could not show it (nobody answered it)"
                if isinstance(answer, CancelledElicitation)
                else None
            )
            if why is not None:
                record_approval("skill", "unasked" if isinstance(data, LoadPreflight) else "dismissed")
                return ToolResult(
                    f"Not loaded: not approved. The skill {quoted(question.ref.uri)} from server {server!r} needs the "
                    f"user's approval, and {why}.{changed} The user did not decline it. Ask the user to run this "
                    "command in a terminal, then call read_skill again:\n"
                    f"  {self._approve_hint(question)}",
                    is_error=True,
                )
            if not isinstance(data, SkillApproval) or not data.approve:
                record_approval("skill", "refused")
                return ToolResult(
                    f"Not loaded: the user declined to load {quoted(question.ref.uri)} from server {server!r}."
                    f"{changed} Nothing was fetched. Do not retry unless the user asks.",
                    is_error=True,
                )
            record_approval("skill", "granted")
            decisions.skills[(question.ref, question.files_hash)] = bool(getattr(data, "allow_tools", False))
        with decided(decisions):
            return await self._call(tools or self.tools, server, "read_skill", uri)

    async def read_resource(
        self,
        server: str,
        uri: str,
        preflight: ReadPreflight,
        answer: ElicitationResult[Any],
        tools: SkillTools | None = None,
    ) -> ToolResult:
        if preflight.error is not None:
            return ToolResult(preflight.error, is_error=True)
        decisions = Decisions()
        question = preflight.question
        if question is not None:
            data = answer.data if isinstance(answer, AcceptedElicitation) else None
            request = question.request
            if isinstance(data, ReadPreflight):
                record_approval("read", "unasked")
                return ToolResult(
                    f"Refused: {request.describe()}, and this MCP client cannot ask the user to allow that (it does "
                    "not support elicitation). A skill from one server cannot read from another without the "
                    "user's approval.",
                    is_error=True,
                )
            if isinstance(answer, CancelledElicitation):
                record_approval("read", "dismissed")
                return ToolResult(
                    f"Not read: {request.describe()}, which needs the user's approval each time, and the question "
                    "was dismissed, or this host could not show it (the user did not refuse it). Nothing was read. "
                    "Tell the user what the skill wants to read and from which server; if they want it, call "
                    "read_resource again so they are asked again.",
                    is_error=True,
                )
            if not isinstance(data, ReadApproval) or not data.allow:
                record_approval("read", "refused")
                return ToolResult(
                    f"Refused: the user did not allow it. {request.describe()}; nothing was read.", is_error=True
                )
            record_approval("read", "granted")
            decisions.reads.add((request.acting, request.target_origin, request.uri))
        with decided(decisions):
            return await self._call(tools or self.tools, server, "read_resource", uri)

    async def _call(self, tools: SkillTools, server: str, name: str, uri: str) -> ToolResult:
        """One read tool call, bounded in time: a hung upstream is dropped instead of holding the call forever.

        A failed call to an upstream that has stopped answering says so (and it is reconnected next time).
        """
        result: ToolResult | None = None
        # The span carries the configured label and the tool, never the URI the model sent (unbounded text).
        with span("skillwire.bridge.upstream", **{"skillwire.upstream": server, "skillwire.tool": name}) as current:
            with anyio.move_on_after(self.upstream_timeout):
                result = await tools.call(name, {"server": server, "uri": uri})
            current.set_attribute(
                "skillwire.outcome", "timeout" if result is None else "error" if result.is_error else "ok"
            )
        if result is None:
            timed_out = f"it did not answer within {self.upstream_timeout:g} s"
            if server in self.upstreams:
                await self.upstreams.drop(server, timed_out)
            return ToolResult(self._unavailable_text(server, timed_out), is_error=True)
        if not result.is_error or server not in self.upstreams:
            return result
        reason = await self.upstreams.check(server)
        return result if reason is None else ToolResult(self._unavailable_text(server, reason), is_error=True)

    # -- the MCP server ------------------------------------------------------------------------------------------

    def build_server(self, *, log_requests: bool = False) -> MCPServer:
        bridge = self

        async def preflight_load(server: str, uri: str) -> LoadPreflight:
            return await bridge.preflight_load(server, uri)

        async def ask_load(
            preflight: Annotated[LoadPreflight, Resolve(preflight_load)], ctx: Context[Any, Any]
        ) -> Elicit[Any] | LoadPreflight:
            if preflight.question is None or not _can_elicit(ctx):
                return preflight
            return Elicit(preflight.question.message, preflight.question.schema)

        async def preflight_read(server: str, uri: str, ctx: Context[Any, Any]) -> ReadPreflight:
            return await bridge.preflight_read(server, uri, bridge.conversation(ctx))

        async def ask_read(
            preflight: Annotated[ReadPreflight, Resolve(preflight_read)], ctx: Context[Any, Any]
        ) -> Elicit[Any] | ReadPreflight:
            if preflight.question is None or not _can_elicit(ctx):
                return preflight
            return Elicit(preflight.question.message, ReadApproval)

        # The SDK keys an input request by its resolver's `module:qualname`: stable, readable ids, not the
        # Python internals of this closure (`skillwire.bridge.server:Bridge.build_server.<locals>.ask_load`).
        for resolver, request_id in ((ask_load, APPROVE_SKILL_REQUEST), (ask_read, APPROVE_READ_REQUEST)):
            resolver.__module__, resolver.__qualname__ = request_id.split(":")

        async def list_skills(
            ctx: Context[Any, Any], query: str | None = None, cursor: str | None = None
        ) -> CallToolResult:
            bridge.conversation(ctx)  # a session that only lists is still in use: its loaded skills are kept
            return await _answered("list_skills", bridge.list_skills(query, cursor))

        async def read_skill(
            server: str,
            uri: str,
            preflight: Annotated[LoadPreflight, Resolve(preflight_load)],
            answer: Annotated[ElicitationResult[SkillApproval], Resolve(ask_load)],
            ctx: Context[Any, Any],
        ) -> CallToolResult:
            return await _answered(
                "read_skill", bridge.read_skill(server, uri, preflight, answer, bridge.conversation(ctx))
            )

        async def read_resource(
            server: str,
            uri: str,
            preflight: Annotated[ReadPreflight, Resolve(preflight_read)],
            answer: Annotated[ElicitationResult[ReadApproval], Resolve(ask_read)],
            ctx: Context[Any, Any],
        ) -> CallToolResult:
            return await _answered(
                "read_resource", bridge.read_resource(server, uri, preflight, answer, bridge.conversation(ctx))
            )

        functions: dict[str, Callable[..., Any]] = {
            "list_skills": list_skills,
            "read_skill": read_skill,
            "read_resource": read_resource,
        }
        tools: list[Tool] = []
        for definition in self.tools.tool_definitions("mcp"):
            name = definition["name"]
            tool = Tool.from_function(functions[name], name=name, description=definition["description"])
            # The published schemas are SkillTools' own (descriptions, additionalProperties: false, and the
            # output schema that declares `unavailable`), not the ones the SDK would derive from these
            # wrappers' signatures, which accept the same arguments.
            tool.parameters = definition["inputSchema"]
            tool.fn_metadata.output_schema = definition.get("outputSchema")
            tools.append(tool)
        return MCPServer(
            "skillwire-bridge",
            version=__version__,
            instructions=INSTRUCTIONS,
            tools=tools,
            log_level="WARNING",
            # Requests by method and outcome on /metrics, as `serve` counts them.
            # Then a request naming a session this server did not issue is refused (bridge/sessions.py).
            middleware=[RequestObserver(log_requests=log_requests), SessionAdmission()],
        )


def upstream_line(bridge: Bridge, label: str, reason: str) -> str:
    """One stderr line naming an upstream that cannot be used, where it points, and why."""
    origin = bridge.upstreams.origin(label)
    where = origin.url if origin.url is not None else " ".join(origin.command or ())
    return f"skillwire bridge: upstream {label!r} ({where}) is unavailable: {reason}"


async def check_upstreams(bridge: Bridge) -> dict[str, str]:
    """Connect and list every upstream once, each within the upstream timeout; the reason of each that failed."""
    failed = await bridge.upstreams.ensure_all()
    failed |= await bridge.upstreams.prefetch_listings()
    return failed


async def report_upstreams(bridge: Bridge, write: Callable[[str], Any]) -> None:
    """The start-up check, in the background: hosts show the bridge as connected whatever its upstreams
    do, so one line per unreachable or misconfigured upstream goes to stderr (a host's MCP log). Connecting
    only: a listing here would race the host's first calls (a hung upstream's listing is dropped after the
    timeout, under a call that is using it); `--check` lists too."""
    try:
        failed = await bridge.upstreams.ensure_all()
    except Exception:  # the check must never take the bridge down; tool calls report their own failures
        logger.warning("checking the upstreams failed", exc_info=True)
        return
    for label, reason in failed.items():
        write(upstream_line(bridge, label, reason))


def _stderr_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


async def serve_stdio(bridge: Bridge, *, check: bool = True, report: Callable[[str], Any] = _stderr_line) -> None:
    """`report` writes each start-up line about an upstream (stderr; a JSON log line with --log-format json)."""
    async with bridge, anyio.create_task_group() as group:
        if check:
            group.start_soon(report_upstreams, bridge, report)
        await bridge.build_server().run_stdio_async()
        group.cancel_scope.cancel()


async def serve_http(
    bridge: Bridge,
    *,
    host: str = "127.0.0.1",
    port: int = 8766,
    allowed_hosts: Sequence[str] = (),
    on_ready: Callable[[str], Any] | None = None,
    report: Callable[[str], Any] = _stderr_line,
    log_requests: bool = False,
) -> None:
    """Streamable HTTP, with the same DNS-rebinding protection as `skillwire serve`; `report` as in
    `serve_stdio`, `log_requests` one log line per request."""
    async with bridge:
        server = bridge.build_server(log_requests=log_requests)
        use_one_pass_replies()  # as `skillwire serve` over HTTP (server/_sdk.py; SKILLWIRE_SDK_ONE_PASS=0: off)
        app = server.streamable_http_app(
            host=host,
            transport_security=transport_security(host, allowed_hosts),
            max_sessions=MAX_SESSIONS,  # the one cap on conversations: past it a new session is refused, none evicted
        )
        # The scrape, open: a bridge serves one host's person, and its series name only the configured
        # upstream labels and its own tools (no catalog a caller could be denied, unlike `serve`'s views).
        app.router.routes.append(metrics_route())
        # h11, which trims header whitespace itself (under httptools `server.app.http_app` has to); a bridge
        # answers a model's few tool calls, so the faster parser of `serve` would buy nothing here.
        counted = CountResponseBytes(app)
        http = uvicorn.Server(
            uvicorn.Config(counted, host=host, port=port, log_level="warning", lifespan="on", http="h11")
        )
        async with anyio.create_task_group() as group:

            async def run_http() -> None:
                await http.serve()
                group.cancel_scope.cancel()

            group.start_soon(run_http)
            group.start_soon(report_upstreams, bridge, report)
            if on_ready is not None:
                while not http.started:  # noqa: ASYNC110 (uvicorn exposes readiness only as a flag)
                    await anyio.sleep(0.01)
                shown = f"[{host}]" if ":" in host else host
                on_ready(f"http://{shown}:{port}/mcp")
