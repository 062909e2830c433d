"""Which conversation a bridge request belongs to, and which requests are refused: the one owner of session
admission.

Loaded skills decide what a relative path means and which reads cross origins (`host/gate.py`), so each
conversation keeps its own (`SkillHost.session()`). Over HTTP a 2025-11-25 client's MCP session is a
conversation of its own; over stdio the process is one; a 2026-07-28 request over HTTP has no session and
shares the host's own conversation (its gate sees every sessionless load, which only adds questions).

The rules, each here and nowhere else:
- A conversation is keyed by the session the SDK issued and checked (the request's `Connection`), never by
  the `Mcp-Session-Id` header a client sends. A request whose header names any other id (a made-up id on a
  2026-07-28 request, which the SDK does not check) is refused (`SessionAdmission`, a `ServerMiddleware`).
- A conversation lives exactly as long as its SDK session: it is held by the session's `Connection` and
  closed when the SDK ends the session (the client's DELETE, the SDK's idle timeout), whose id then answers
  404. Nothing evicts a live conversation, so no gate is ever reset while its session can still call: the
  bridge never forgets that a conversation loaded skills of two origins.
- How many sessions exist at once is the SDK's admission, capped by `MAX_SESSIONS` (`serve_http` passes it
  as `max_sessions`): past it a new session is refused (HTTP 503) and every open one keeps its skills. The
  memory that bounds is in docs/architecture.md ("bridge/").
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_REQUEST

from skillwire.core.display import escape
from skillwire.host.tools import SkillTools
from skillwire.server.sdk_seam import connection_of

__all__: list[str] = []  # internal: the bridge's HTTP server uses it

# How many HTTP sessions (conversations) the bridge admits at once. A bridge serves one person's host, which
# opens a few; the cap bounds memory (docs/architecture.md gives the per-session figure) and is far above use.
MAX_SESSIONS = 1024
SESSION_HEADER = "mcp-session-id"
# Where a conversation is kept: the SDK's per-connection scratch state, which lives as long as the session.
_CONVERSATION_KEY = "skillwire.bridge.conversation"


def claimed_session(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The `Mcp-Session-Id` a request's client sent, if any (None over stdio)."""
    headers = getattr(ctx.request, "headers", None)
    return headers.get(SESSION_HEADER) if headers is not None else None


def not_issued(claimed: str | None, issued: str | None) -> bool:
    """Whether a request names a session id that is not the one the SDK issued for its connection."""
    return claimed is not None and claimed != issued


class SessionAdmission:
    """A `ServerMiddleware` refusing every request that names a session the server did not issue.

    On 2025-11-25 the SDK has already matched the header to a session (an unknown id is answered 404 before
    any middleware runs); a 2026-07-28 request is routed without a session, so a header there names nothing
    this server issued. Refused with `-32600`, before any tool or resolver runs."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        claimed = claimed_session(ctx)
        if claimed is not None and not_issued(claimed, connection_of(ctx.session).session_id):
            raise MCPError(
                INVALID_REQUEST,
                f"Session not found: this server issued no session {escape(claimed, 80)} (a 2026-07-28 request "
                "carries no Mcp-Session-Id; a 2025-11-25 session sends the id its initialize answer gave)",
            )
        return await call_next(ctx)


class Conversations:
    """Each SDK session's own tools over its own loaded skills; the host's own for requests without one."""

    def __init__(self, tools: SkillTools) -> None:
        self.tools = tools  # the host's own conversation: stdio, and sessionless HTTP requests

    def of(self, session: ServerSession | None) -> SkillTools:
        """The conversation of the request whose `ServerSession` this is (None: outside a request)."""
        if session is None:
            return self.tools
        connection = connection_of(session)
        if connection.session_id is None:
            return self.tools
        found = connection.state.get(_CONVERSATION_KEY)
        if isinstance(found, SkillTools):
            return found
        tools = self.tools.for_session(self.tools.host.session())
        connection.state[_CONVERSATION_KEY] = tools
        # Run when the SDK ends the session: its skills stop being active (the approvals stay the host's).
        connection.exit_stack.callback(tools.session.close)
        return tools
