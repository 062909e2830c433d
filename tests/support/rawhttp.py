"""A JSON-RPC session over Streamable HTTP written by hand, so a test controls every byte on the wire.

The SDK's client adds headers derived from the request (`Mcp-Name` carries a resource URI, so a
100 KB URI becomes a 100 KB header that the HTTP layer refuses before the server sees the request)
and validates what it sends; a hostile-input test must send exactly what a hostile client would.
"""

from __future__ import annotations

import itertools
import json
import urllib.error
import urllib.request
from typing import Any

PROTOCOL_VERSION = "2025-11-25"


class RawSession:
    def __init__(self, url: str, *, timeout: float = 15.0) -> None:
        self.url = url
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        self._ids = itertools.count(1)
        init = self.call(
            "initialize",
            {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
        )
        assert "result" in init, init
        self.post(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode())

    def post(self, body: bytes) -> tuple[int, dict[str, Any] | None]:
        """POST `body` as is; returns the HTTP status and the JSON-RPC message answered, if any."""
        request = urllib.request.Request(self.url, body, self.headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                status, data = response.status, response.read()
                session = response.headers.get("mcp-session-id")
                if session:
                    self.headers["mcp-session-id"] = session
        except urllib.error.HTTPError as exc:
            status, data = exc.code, exc.read()
        return status, _message(data)

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """The JSON-RPC response (`result` or `error`) to one request."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            message["params"] = params
        status, answer = self.post(json.dumps(message).encode())
        assert answer is not None, f"HTTP {status} without a JSON-RPC answer to {method}"
        return answer


def _message(data: bytes) -> dict[str, Any] | None:
    text = data.decode("utf-8", "replace").strip()
    if not text:
        return None
    if text.startswith("{"):
        parsed: dict[str, Any] = json.loads(text)
        return parsed
    for line in text.splitlines():  # server-sent events: the answer is a `data:` line
        if line.startswith("data:") and line[5:].strip().startswith("{"):
            event: dict[str, Any] = json.loads(line[5:])
            if "id" in event:
                return event
    return None
