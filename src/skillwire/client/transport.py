"""Transports that bound every answer on the wire and keep a transport fault to the request it hit.

The `mcp` SDK reads a JSON answer whole (`response.aread()`) and a stdio line whole (it appends
chunks to a string until a newline), so a server that sends 200 MB for a 10-byte file costs the client
200 MB (and, on stdio, time quadratic in the line). And a connection that breaks mid-answer
(`httpx2.RemoteProtocolError`) fails the SDK's transport task group, which cancels everything on that
connection and surfaces as a foreign exception group. Both are fixed below, under the SDK, through its
public seams:

- HTTP: `GuardedHTTPTransport`, an `httpx2` transport under the SDK's `streamable_http_client`. For
  each JSON-RPC request it looks up the answer's byte bound (`ResponseBudget.limit_for`), refuses a
  `Content-Length` above it, reads a JSON body itself up to the bound, and counts an event stream's
  bytes as they pass. A refused or broken answer becomes a JSON-RPC error for that request id alone
  (after the handshake; before it, errors propagate so the caller can say "cannot connect"), and the
  reason is left in the budget for `SkillsClient` to raise as `ResponseTooLarge` / `ConnectionLost`.
  Compression is not negotiated (`Accept-Encoding: identity`): a bound checked before decompression
  would not bound memory.
- stdio: `bounded_stdio_client`, a replacement for the SDK's `stdio_client` (which takes no reader) with
  the same process handling: its own process group, stdin closed then SIGTERM/SIGKILL on exit. Lines
  are split in a byte buffer; a line longer than the largest bound of the requests in flight is
  discarded as it streams (never held), and every request in flight fails, since the line cannot be
  the answer to any of them. A line that is not JSON-RPC is logged on one line and skipped.
"""

from __future__ import annotations

import json
import logging
import sys
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any, TextIO

import anyio
import httpx2
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.stdio import get_default_environment
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage
from mcp_types import ErrorData, JSONRPCError, JSONRPCRequest, JSONRPCResponse, jsonrpc_message_adapter
from mcp_types.jsonrpc import CONNECTION_CLOSED, INTERNAL_ERROR

from skillwire.client.limits import UNSOLICITED_MESSAGE_BYTES, Refusal, ResponseBudget

logger = logging.getLogger("skillwire.client")

CHUNK_BYTES = 64 * 1024
STDIN_CLOSE_GRACE = 2.0  # seconds for a stdio server to exit on its own once its stdin closes
KILL_GRACE = 2.0  # seconds between SIGTERM and SIGKILL of the server's process group


class _TooLarge(Exception):
    def __init__(self, seen: int, declared: bool) -> None:
        self.seen = seen
        self.declared = declared


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _what(method: str, params: Mapping[str, Any] | None) -> str:
    uri = params.get("uri") if params else None
    return f"{method} of {uri}" if isinstance(uri, str) else method


def _too_large(method: str, params: Mapping[str, Any] | None, limit: int, seen: int, declared: bool) -> Refusal:
    detail = f"its Content-Length is {seen:,}" if declared else f"cut off after {seen:,} bytes"
    message = f"the answer to {_what(method, params)} is over its bound of {limit:,} bytes ({detail}); refused unread"
    return Refusal("too-large", message)


class _OneLine(logging.Filter):
    """Turns the SDK's transport tracebacks (a server's bad bytes are not a bug here) into one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            record.msg = f"{record.getMessage()}: {_describe(record.exc_info[1])[:300]}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


for _name in ("mcp.client.streamable_http", "mcp.client.stdio"):
    logging.getLogger(_name).addFilter(_OneLine())


# -- HTTP --------------------------------------------------------------------------------------------------------


def _json_rpc_request(request: httpx2.Request) -> tuple[str, dict[str, Any] | None, Any] | None:
    """(method, params, id) of the JSON-RPC request a POST carries; None for anything else."""
    if request.method != "POST":
        return None
    try:
        message = json.loads(request.content)
    except (httpx2.RequestNotRead, ValueError):
        return None
    if not isinstance(message, dict) or "id" not in message or not isinstance(message.get("method"), str):
        return None
    params = message.get("params")
    return message["method"], params if isinstance(params, dict) else None, message["id"]


def _error_response(request: httpx2.Request, request_id: Any, code: int, message: str) -> httpx2.Response:
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})
    return httpx2.Response(200, headers={"content-type": "application/json"}, content=body.encode(), request=request)


async def _read_bounded(response: httpx2.Response, limit: int) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _TooLarge(int(declared), True)
    body = bytearray()
    async for chunk in response.aiter_raw():
        body += chunk
        if len(body) > limit:
            raise _TooLarge(len(body), False)
    return bytes(body)


class _CountedEventStream(httpx2.AsyncByteStream):
    """An event-stream body that fails (as the `SSEError` the SDK handles per request) past its bound."""

    def __init__(self, response: httpx2.Response, limit: int, refuse: Any) -> None:
        self._response = response
        self._limit = limit
        self._refuse = refuse

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        try:
            async for chunk in self._response.aiter_raw():
                seen += len(chunk)
                if seen > self._limit:
                    raise httpx2.SSEError(self._refuse(None, seen))
                yield chunk
        except httpx2.SSEError:
            raise
        except httpx2.TransportError as exc:
            raise httpx2.SSEError(self._refuse(exc, seen)) from None

    async def aclose(self) -> None:
        await self._response.aclose()


class GuardedHTTPTransport(httpx2.AsyncBaseTransport):
    """See the module docstring. `inner` is the real transport (default: `httpx2.AsyncHTTPTransport()`)."""

    def __init__(self, budget: ResponseBudget, inner: httpx2.AsyncBaseTransport | None = None) -> None:
        self._budget = budget
        self._inner = inner if inner is not None else httpx2.AsyncHTTPTransport()

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "identity"
        message = _json_rpc_request(request)
        if message is None:  # the GET event stream, a DELETE, a notification: no per-request answer to bound
            return await self._inner.handle_async_request(request)
        method, params, request_id = message
        limit = self._budget.limit_for(method, params)

        def fail(refusal: Refusal) -> httpx2.Response:
            self._budget.refuse(method, params, refusal)
            code = INTERNAL_ERROR if refusal.kind == "too-large" else CONNECTION_CLOSED
            return _error_response(request, request_id, code, refusal.message)

        def broken(exc: BaseException) -> Refusal:
            return Refusal("connection", f"the connection broke during {_what(method, params)} ({_describe(exc)})")

        try:
            response = await self._inner.handle_async_request(request)
        except httpx2.TransportError as exc:
            if not self._budget.connected:
                raise
            return fail(broken(exc))
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            await response.aclose()
            return fail(Refusal("invalid", f"the answer to {_what(method, params)} is {encoding}-encoded, unasked"))
        if response.headers.get("content-type", "").lower().startswith("text/event-stream"):

            def refuse(exc: BaseException | None, seen: int) -> str:
                refusal = broken(exc) if exc is not None else _too_large(method, params, limit, seen, False)
                self._budget.refuse(method, params, refusal)
                return refusal.message

            stream = _CountedEventStream(response, limit, refuse)
            return httpx2.Response(
                response.status_code, headers=response.headers, stream=stream, request=request,
                extensions=response.extensions,
            )  # fmt: skip
        try:
            body = await _read_bounded(response, limit)
        except _TooLarge as exc:
            return fail(_too_large(method, params, limit, exc.seen, exc.declared))
        except httpx2.TransportError as exc:
            if not self._budget.connected:
                raise
            return fail(broken(exc))
        finally:
            await response.aclose()
        return httpx2.Response(
            response.status_code, headers=response.headers, content=body, request=request,
            extensions=response.extensions,
        )  # fmt: skip


def _environment_proxy(url: str) -> str | None:
    """The proxy the environment (`HTTPS_PROXY`, `NO_PROXY`, ...) names for `url`, as httpx2 would pick it
    for a client without an explicit transport (an explicit transport, as here, gets none by itself)."""
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname or urllib.request.proxy_bypass(parts.hostname):
        return None
    proxies = urllib.request.getproxies()
    return proxies.get(parts.scheme) or proxies.get("all")


def guarded_http_client(
    budget: ResponseBudget, headers: Mapping[str, str] | None = None, *, url: str | None = None
) -> httpx2.AsyncClient:
    """An `httpx2.AsyncClient` for the SDK's `streamable_http_client`: guarded, with the budget's timeout
    and the environment's proxy for `url`."""
    timeout = budget.limits.timeout
    proxy = _environment_proxy(url) if url is not None else None
    return httpx2.AsyncClient(
        headers=dict(headers) if headers else None,
        timeout=httpx2.Timeout(timeout),
        transport=GuardedHTTPTransport(budget, httpx2.AsyncHTTPTransport(proxy=proxy)),
    )


# -- stdio -------------------------------------------------------------------------------------------------------


def _stderr_target(errlog: TextIO) -> TextIO | None:
    """Where the server's stderr goes: `errlog` when it is a real file, else this process's own stderr."""
    try:
        errlog.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    return errlog


async def _exited_within(process: Process, seconds: float) -> bool:
    """Whether the process exits within `seconds`. Polls `returncode`: `process.wait()` also waits for
    end-of-file on its pipes, which a child process that inherited them can hold open."""
    with anyio.move_on_after(seconds):
        while process.returncode is None:  # noqa: ASYNC110 (see the docstring)
            await anyio.sleep(0.01)
    return process.returncode is not None


# What bounded_stdio_client yields, spelled with anyio's public types: the SDK's name for the pair,
# `TransportStreams`, lives in the private `mcp.client._transport` (no module but server/_sdk.py may touch
# an SDK private: tests/server/test_sdk_seam.py).
StdioStreams = tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]


@asynccontextmanager
async def bounded_stdio_client(
    command: Sequence[str],
    budget: ResponseBudget,
    *,
    env: Mapping[str, str] | None = None,
    errlog: TextIO = sys.stderr,
) -> AsyncIterator[StdioStreams]:
    """Run `command` and talk newline-delimited JSON-RPC over its stdin/stdout, every line bounded."""
    process: Process = await anyio.open_process(
        list(command),
        env=get_default_environment() | dict(env or {}),
        stderr=_stderr_target(errlog),
        start_new_session=True,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    # Requests in flight: id -> (method, params, byte bound of the answer).
    pending: dict[Any, tuple[str, dict[str, Any] | None, int]] = {}

    def line_bound() -> int:
        return max([UNSOLICITED_MESSAGE_BYTES, *(bound for _, _, bound in pending.values())])

    async def fail_pending(kind: str, reason: str) -> None:
        failed = list(pending.items())
        pending.clear()
        for request_id, (method, params, bound) in failed:
            message = reason.format(what=_what(method, params), bound=bound)
            budget.refuse(method, params, Refusal(kind, message))
            code = INTERNAL_ERROR if kind == "too-large" else CONNECTION_CLOSED
            error = JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))
            with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await read_writer.send(SessionMessage(error))

    async def deliver(line: bytes) -> None:
        if not line.strip():
            return
        try:
            message = jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValueError:
            logger.warning("ignored %d bytes on the stdio server's stdout that are not a JSON-RPC message", len(line))
            return
        if isinstance(message, (JSONRPCResponse, JSONRPCError)):
            pending.pop(message.id, None)
        await read_writer.send(SessionMessage(message))

    async def reader() -> None:
        assert process.stdout is not None
        line = bytearray()
        discarding = 0  # bytes of an over-long line thrown away so far (0: not discarding)
        async with read_writer:
            while True:
                try:
                    chunk = await process.stdout.receive(CHUNK_BYTES)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                    break
                start = 0
                while start <= len(chunk):
                    newline = chunk.find(b"\n", start)
                    piece = chunk[start:] if newline < 0 else chunk[start:newline]
                    if discarding:
                        discarding += len(piece)
                    else:
                        line += piece
                        if len(line) > line_bound():
                            discarding = len(line)
                            line.clear()
                            await fail_pending(
                                "too-large",
                                "the answer to {what} is over its bound of {bound:,} bytes (a line cut off after "
                                f"{discarding:,} bytes); refused unread",
                            )
                    if newline < 0:
                        break
                    if discarding:
                        logger.warning("discarded a %d-byte line from the stdio server (over its bound)", discarding)
                        discarding = 0
                    else:
                        try:
                            await deliver(bytes(line))
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            return
                        line.clear()
                    start = newline + 1
            # The server closed its stdout (it exited, or will): nothing in flight can be answered.
            await _exited_within(process, 0.5)
            status = f" (it exited with status {process.returncode})" if process.returncode is not None else ""
            await fail_pending("connection", f"the stdio server closed its output before answering {{what}}{status}")

    async def writer() -> None:
        assert process.stdin is not None
        async with write_reader:
            async for session_message in write_reader:
                message = session_message.message
                if isinstance(message, JSONRPCRequest):
                    bound = budget.limit_for(message.method, message.params)
                    pending[message.id] = (message.method, message.params, bound)
                data = message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                try:
                    await process.stdin.send(data.encode("utf-8"))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                    await fail_pending("connection", "the stdio server stopped reading before {what} was sent")
                    return

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                write_stream.close()
                read_stream.close()
                with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                    assert process.stdin is not None
                    await process.stdin.aclose()
                if not await _exited_within(process, STDIN_CLOSE_GRACE):
                    await terminate_posix_process_tree(process, KILL_GRACE)
            group.cancel_scope.cancel()
