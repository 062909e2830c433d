"""The HTTP stack `skillwire serve` runs (server/app.py): httptools, uvloop, one JSON body per request.

Against a real `skillwire serve` subprocess on 127.0.0.1, with requests written by hand so the test controls
every header byte.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

from support.servers import EXAMPLES, serve_http

MODERN = "2026-07-28"


def post(url: str, method: str, params: dict[str, Any], headers: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """One 2026-07-28 request: the response's content type and its JSON-RPC message."""
    meta = {
        PROTOCOL_VERSION_META_KEY: MODERN,
        CLIENT_INFO_META_KEY: {"name": "test", "version": "0"},
        CLIENT_CAPABILITIES_META_KEY: {},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}).encode()
    request = urllib.request.Request(
        url,
        body,
        {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN,
            **headers,
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return response.headers.get("content-type", ""), json.loads(response.read())
    except urllib.error.HTTPError as exc:  # a refusal: 400 with the JSON-RPC error
        return exc.headers.get("content-type", ""), json.loads(exc.read())


def test_header_values_are_compared_without_surrounding_whitespace_and_answered_as_one_json_body() -> None:
    with serve_http([str(EXAMPLES), "--no-watch", "--no-digest-cache"]) as server:
        _, listing = post(server.url, "skills/list", {}, {"Mcp-Method": "skills/list"})
        skill = listing["result"]["skills"][0]["uri"]
        # RFC 9110 section 5.5: the value is what lies between the optional whitespace. httptools passes
        # the spaces on, and the SDK's header-vs-body check refused this request before the trim.
        content_type, answer = post(
            server.url,
            "resources/read",
            {"uri": skill},
            {"Mcp-Method": " \tresources/read  ", "Mcp-Name": f"  {skill} \t"},
        )
        assert "error" not in answer, answer
        assert answer["result"]["contents"][0]["uri"] == skill
        # json_response: no SSE stream per request.
        assert content_type.startswith("application/json")
        # Whitespace inside a value is part of it: a different name is still refused.
        _, mismatch = post(
            server.url, "resources/read", {"uri": skill}, {"Mcp-Method": "resources/read", "Mcp-Name": f"{skill} x"}
        )
        assert mismatch.get("error", {}).get("code") == -32020, mismatch
