"""Talking to one server from a command: connect, run a session, and explain a failure in one line.

Every client command (and `check`, and `approve` through the bridge's configuration) connects here, so
every one words a connection failure alike: `explain_client_failure` turns an HTTP status, a network
error, a JSON-RPC error or a stdio command that does not start into a line that says what to try.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import CONNECTION_CLOSED, METHOD_NOT_FOUND

from skillwire.cli.args import ServerTarget, UsageError
from skillwire.cli.output import printable
from skillwire.client.connection import plain_http_answer, refused_credentials
from skillwire.client.limits import ClientLimits
from skillwire.client.skills import SkillsClient
from skillwire.core.errors import AmbiguousName, SkillwireError
from skillwire.host.origins import server_origin

# The SDK logs a server's bad bytes (invalid JSON, a broken stream) at ERROR level; the commands report
# each such fault themselves, on one line, so while they talk to a server those records are not printed
# a second time (`connect` stops them propagating; the NullHandler keeps logging's last resort quiet).
_SDK_LOGGER = logging.getLogger("mcp")
_SDK_LOGGER.addHandler(logging.NullHandler())

T = TypeVar("T")


class ClientError(Exception):
    """Talking to the server failed; the message is one line that says what to try."""


@asynccontextmanager
async def connect(
    target: ServerTarget, *, label: str = "server", http_statuses: list[int] | None = None
) -> AsyncIterator[SkillsClient]:
    """A connected `SkillsClient`. `http_statuses` collects every HTTP error status seen (the SDK reports
    a 401 only as a generic JSON-RPC error, so this is how a command can say "HTTP 401")."""
    origin = server_origin(
        label,
        target.url if target.url is not None else list(target.command or ()),
        headers=dict(target.headers),
        limits=ClientLimits(timeout=target.timeout),
    )
    record = None
    if http_statuses is not None:
        statuses = http_statuses

        async def record(response: Any) -> None:
            if response.status_code >= 400:
                statuses.append(response.status_code)

    propagated = _SDK_LOGGER.propagate
    _SDK_LOGGER.propagate = False
    try:
        async with origin.connect(on_http_response=record) as client:
            yield client
    finally:
        _SDK_LOGGER.propagate = propagated


def run_client(target: ServerTarget, body: Callable[[SkillsClient], Awaitable[T]]) -> T:
    """Connect, run `body(client)`, disconnect; failures come out as one exception with a clear message
    (see `run_session`)."""

    statuses: list[int] = []

    async def session() -> T:
        async with connect(target, http_statuses=statuses) as client:
            return await body(client)

    return run_session(target, session, statuses)


def run_session(target: ServerTarget, session: Callable[[], Awaitable[T]], http_statuses: Sequence[int] = ()) -> T:
    """Run `session()` (which talks to `target`) to its end in a new event loop.

    The SDK's task groups wrap every error in exception groups; the first real error is taken out.
    `UsageError` and `SkillwireError` pass through unchanged; anything else (network, HTTP status,
    a stdio command that does not start) becomes a `ClientError` that explains what to try, using
    the last HTTP error status in `http_statuses` when the error itself carries none.
    """
    try:
        return anyio.run(session)
    except BaseException as exc:
        leaf = _first_leaf(exc)
        if leaf is exc and not isinstance(exc, Exception):
            raise
        if isinstance(leaf, AmbiguousName):  # the fix is on the command line: the URI of the one meant
            raise UsageError(str(leaf)) from None
        if isinstance(leaf, (UsageError, SkillwireError, KeyboardInterrupt)):
            raise leaf from None
        if not isinstance(leaf, Exception):
            raise
        status = http_statuses[-1] if http_statuses else None
        raise ClientError(printable(explain_client_failure(leaf, target, status))) from leaf


def _first_leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def explain_client_failure(exc: Exception, target: ServerTarget, http_status: int | None = None) -> str:
    """One line for a failure to talk to the server, saying what to try."""
    where = target.label
    kind = type(exc).__name__
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    status = status if isinstance(status, int) else http_status
    if status is not None:
        refused = refused_credentials(status, target.headers)
        if refused is not None:
            return f"{where} {refused}"
        if status in (401, 403):
            return (
                f"{where} refused the request (HTTP {status}); an authenticated server needs a header, "
                "e.g. --header 'Authorization: Bearer TOKEN'"
            )
        if status == 404:
            return f"{where} answered HTTP 404; check the URL path (skillwire serve listens on /mcp)"
        return f"{where} answered HTTP {status}; check the URL and the server's log"
    if (plain := plain_http_answer(exc, target.url)) is not None:
        return f"{where} {plain}"
    if type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "httpcore2"):
        if kind == "ConnectError":
            return f"cannot connect to {where} ({exc}); is the server running, and is the URL right?"
        if "Timeout" in kind:
            return f"{where} did not answer in time ({kind}); try again, or check the server"
        return f"cannot talk to {where} ({kind}: {exc}); check the URL"
    if isinstance(exc, MCPError):
        if target.command is not None and exc.code == CONNECTION_CLOSED:
            return f"the server command `{where}` closed the connection before answering; run it alone to see why"
        if exc.code == METHOD_NOT_FOUND:
            return (
                f"{where} does not know the method ({exc.message}); is it an MCP endpoint? "
                "(skillwire serve listens on /mcp)"
            )
        return f"{where} answered with an error: {exc.message} (JSON-RPC {exc.code})"
    if isinstance(exc, FileNotFoundError) and target.command is not None:
        return f"cannot start `{target.command[0]}`: command not found; check the command after `--`"
    if isinstance(exc, OSError):
        return f"{where}: {exc.strerror or exc}"
    return f"{where}: {kind}: {exc}"
