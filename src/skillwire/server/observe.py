"""What a running server tells its operator: request metrics and logs, `/metrics`, and bytes served.

`RequestObserver` is a `ServerMiddleware` (the SDK's public hook, outermost of skillwire's): it times
every request, counts it by method and outcome (the JSON-RPC error code of a failure, as the SDK's own
OpenTelemetry middleware reads it) and, when request logging is on, logs one line with the method,
outcome and duration. Only the method name (one of `ops.metrics.KNOWN_METHODS`) and the code (one of
`ops.metrics.ERROR_CODES`, else "other") reach a label or a log line: never a URI, a name, a parameter or an
error code a client sent.

`/metrics` is the scrape (`ops.metrics.exposition`). With per-caller catalogs it is protected: the
catalog's sizes and skip counts would tell any caller how many skills it may not see, so the route
then answers only a bearer token whose audiences include `metrics` (a token in the `--tokens` file,
given to the scraper), and refuses everyone else with 403. Without per-caller views every caller sees
the whole catalog anyway, and `/metrics` is open like `/healthz`.
"""

from __future__ import annotations

import logging
import time
from bisect import bisect_left
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from skillwire.ops.logs import log_request
from skillwire.ops.metrics import LATENCY_BUCKETS, code_label, exposition, method_label, metrics

__all__: list[str] = []  # internal (see the module docstring)

METRICS_AUDIENCE = "metrics"
request_log = logging.getLogger("skillwire.requests")


class RequestObserver:
    """Counts, times and (with `log_requests`, or the `skillwire.requests` logger at DEBUG) logs each request."""

    def __init__(self, *, log_requests: bool = False, count: bool = True) -> None:
        self.log_requests = log_requests
        self.count = count  # False: log only (`--no-metrics`), nothing recorded for /metrics
        # Plain counts (ops.metrics.RequestCounts): a request costs two list additions and a bisect here.
        self._counts = metrics().requests

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.request_id is None:  # a notification: nothing is answered
            return await call_next(ctx)
        method = method_label(ctx.method)
        started = time.perf_counter()
        code = ""
        try:
            result = await call_next(ctx)
        except MCPError as exc:
            code = code_label(exc.error.code)  # a client's own code (an error answer to a question) is "other"
            raise
        except ValidationError:
            code = code_label(INVALID_PARAMS)  # what the SDK answers for params its models refuse
            raise
        except Exception:
            code = code_label(INTERNAL_ERROR)
            raise
        finally:
            seconds = time.perf_counter() - started
            outcome = "error" if code else "ok"
            if self.count:
                series = self._counts.series.get((method, code)) or self._counts.series_of(method, code)
                series[bisect_left(LATENCY_BUCKETS, seconds)] += 1  # the first bucket whose bound >= seconds
                series[-1] += seconds
            level = logging.INFO if self.log_requests else logging.DEBUG  # DEBUG: only with --debug
            if request_log.isEnabledFor(level):
                log_request(request_log, level, method, outcome, code, seconds)
        return result


class CountResponseBytes:
    """ASGI middleware: the bytes of every HTTP response body sent (`skillwire_response_bytes_total`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._counts = metrics().requests

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        counts = self._counts

        # Not a coroutine function: it hands back `send`'s own awaitable, so each message sent costs one
        # plain call here instead of a coroutine of its own (a response is two messages, or more streamed).
        def counting(message: Message) -> Awaitable[None]:
            if message["type"] == "http.response.body":
                counts.response_bytes += len(message.get("body", b""))
            return send(message)

        await self.app(scope, receive, counting)


TokenCheck = Callable[[str], Awaitable[frozenset[str] | None]]


def metrics_route(
    *,
    audiences_of_token: TokenCheck | None = None,
    protected: bool = False,
    path: str = "/metrics",
    before_scrape: Callable[[], None] | None = None,
) -> Route:
    """`GET /metrics`. `protected`: per-caller catalogs are served, so a bearer token with the `metrics`
    audience is required (`audiences_of_token` turns a token into its audiences, None when refused).
    `before_scrape`: the catalog's `observe_gauges`, so the scraped worker's own gauges are exact (every
    worker also sets them at each swap, check and heartbeat, for the scrapes that land elsewhere)."""

    async def endpoint(request: Request) -> Response:
        if protected:
            refusal = await _refused(request, audiences_of_token)
            if refusal is not None:
                return refusal
        if before_scrape is not None:
            before_scrape()
        body, content_type = exposition(request.headers.get("accept"))
        return Response(body, media_type=content_type, headers={"Cache-Control": "no-store"})

    return Route(path, endpoint, methods=["GET"])


async def _refused(request: Request, audiences_of_token: TokenCheck | None) -> Response | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if audiences_of_token is None:
        why = "metrics are protected with per-caller catalogs: serve with --tokens and give the scraper a token"
        return PlainTextResponse(f"{why} with the '{METRICS_AUDIENCE}' audience\n", status_code=403)
    if scheme.lower() != "bearer" or not token.strip():
        return PlainTextResponse(
            f"metrics need a bearer token with the '{METRICS_AUDIENCE}' audience\n",
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )
    audiences = await audiences_of_token(token.strip())
    if audiences is None:
        return PlainTextResponse(
            "the bearer token was refused\n", status_code=401, headers={"WWW-Authenticate": "Bearer"}
        )
    if METRICS_AUDIENCE not in audiences:
        return PlainTextResponse(f"this token lacks the '{METRICS_AUDIENCE}' audience\n", status_code=403)
    return None
