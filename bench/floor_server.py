"""The floor: the same `mcp` SDK stack and HTTP app as `skillwire serve`, answering from precomputed replies.

    python -m bench.floor_server ROOT --port PORT [--page-size N]

At start it scans ROOT once with skillwire's own catalog and turns every answer into a ready-made
Python dict: each `skills/list` page (keyed by cursor), each `skills/get` result, each file's
`resources/read` result. A request then costs one dict lookup in the handler, so what a client
measures against this server is the SDK's transport, dispatch and serialisation alone (the HTTP stack
of `skillwire serve`, built by the same `skillwire.server.app` functions: uvicorn on httptools and uvloop,
Starlette, the SDK's request handling and pydantic dumps) with the same bytes on the wire as skillwire's.
The benchmark table shows it as the `floor` peer: skillwire's latency over this one is the part of each
request that is skillwire's own.

    python -m bench.floor_server ROOT --port PORT --one-pass-json

is the `floor-onepass` peer: the same floor with the SDK's modern-HTTP response writer replaced by one
that encodes the JSON-RPC reply in one pass with pydantic-core (`model_dump_json`'s serializer, bytes
out) instead of `model_dump(mode="json")` and then `json.dumps` of the copy: `skillwire serve`'s own
writer (`skillwire.server._sdk.use_one_pass_replies`, what ask 1 of docs/sdk-upstream.md asks upstream),
so `floor` against `floor-onepass` is what that writer buys on the SDK alone.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import anyio
import uvicorn
from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import PaginatedRequestParams, ReadResourceRequestParams, RequestParams
from mcp_types.jsonrpc import INVALID_PARAMS

from skillwire.catalog.catalog import SkillCatalog
from skillwire.catalog.filesystem import SkillRoot
from skillwire.core.protocol import EXTENSION_ID
from skillwire.server._sdk import use_one_pass_replies
from skillwire.server.app import bind_http_socket, event_loop_options, http_app, uvicorn_config
from skillwire.server.content import file_contents


class _GetParams(RequestParams):
    uri: str


class Precomputed(Extension):
    """`skills/list` and `skills/get` answered from dicts built once; nothing is computed per request."""

    identifier = EXTENSION_ID

    def __init__(self, root: Path, page_size: int) -> None:
        snapshot = SkillCatalog([SkillRoot(root)], digest_cache=None).snapshot
        cache = {"ttlMs": 60_000, "cacheScope": "private"}
        self.pages: dict[str | None, dict[str, Any]] = {}
        cursor: str | None = None
        while True:
            page, after = snapshot.list_page(cursor, page_size)
            result: dict[str, Any] = {"resultType": "complete", "skills": [s.wire for s in page], **cache}
            if after is not None:
                result["nextCursor"] = after
            self.pages[cursor] = result
            if after is None:
                break
            cursor = after
        self.gets = {
            uri: {"resultType": "complete", "skill": one.wire, **cache} for uri, one in snapshot.skill_by_uri.items()
        }
        self.reads = {
            uri: {"resultType": "complete", "contents": [file_contents(f, f.read())], **cache}
            for uri, f in snapshot.files.items()
        }

    def settings(self) -> dict[str, Any]:
        return {}

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("skills/list", PaginatedRequestParams, self.handle_list),
            MethodBinding("skills/get", _GetParams, self.handle_get),
        ]

    async def handle_list(self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams) -> HandlerResult:
        page = self.pages.get(params.cursor)
        if page is None:
            raise MCPError(INVALID_PARAMS, "unknown cursor")
        return page

    async def handle_get(self, ctx: ServerRequestContext[Any, Any], params: _GetParams) -> HandlerResult:
        result = self.gets.get(params.uri)
        if result is None:
            raise MCPError(INVALID_PARAMS, "unknown skill", {"uri": params.uri})
        return result

    async def handle_read(
        self, ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams
    ) -> HandlerResult:
        result = self.reads.get(str(params.uri))
        if result is None:
            raise MCPError(INVALID_PARAMS, "unknown resource", {"uri": str(params.uri)})
        return result


def use_one_pass_json() -> None:
    """Answer modern HTTP requests with skillwire's one-pass reply writer (`skillwire.server._sdk`)."""
    if not use_one_pass_replies():
        raise SystemExit("floor: the installed mcp has no reply writer the one-pass encoder can replace")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.floor_server")
    parser.add_argument("root", type=Path)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--one-pass-json", action="store_true", help="encode replies in one pass (see above)")
    args = parser.parse_args(argv)
    if args.one_pass_json:
        use_one_pass_json()
    extension = Precomputed(args.root, args.page_size)
    server = MCPServer("floor", extensions=[extension])
    # resources/read is a spec method, so an Extension cannot bind it; the same low-level registration
    # SkillsExtension.attach uses (a bench-only peer may use the private accessor).
    server._lowlevel_server.add_request_handler("resources/read", ReadResourceRequestParams, extension.handle_read)
    http = uvicorn.Server(uvicorn_config(http_app(server, host="127.0.0.1"), host="127.0.0.1", port=args.port))
    # Bound here, so --port 0 (the kernel picks) prints the port bound (bench.peers reads it).
    sock = bind_http_socket("127.0.0.1", args.port)
    port = sock.getsockname()[1]
    print(f"floor: {len(extension.gets)} skills, {len(extension.reads)} files precomputed", flush=True)

    async def run() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: http.serve(sockets=[sock]))
            while not http.started:  # uvicorn exposes readiness only as a flag
                await anyio.sleep(0.01)
            print(f"listening on http://127.0.0.1:{port}/mcp", flush=True)

    anyio.run(run, backend_options=event_loop_options())
    return 0


if __name__ == "__main__":
    sys.exit(main())
