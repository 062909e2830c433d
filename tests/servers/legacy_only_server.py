"""A skills server that speaks only protocol 2025-11-25 over stdio, for the native-client test.

    python tests/servers/legacy_only_server.py

Raw JSON-RPC lines, written by hand so that nothing of the SDK's newer protocol leaks in: `initialize` answers
2025-11-25 and declares `io.modelcontextprotocol/skills` with `directoryRead: true`, `server/discover` is
"Method not found" (as a server of that era answers), and `skills/list`, `skills/get` and
`resources/directory/read` answer correctly, so a client that sent them anyway would be seen succeeding. Every
method received is written to stderr, one line each ("received METHOD").
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any

SKILL_URI = "skill://legacy/hello/SKILL.md"
SKILL_MD = "---\nname: hello\ndescription: Says hello.\n---\nHello.\n"
ENTRY = {
    "uri": SKILL_URI,
    "frontmatter": {"name": "hello", "description": "Says hello."},
    "resources": [
        {
            "uri": SKILL_URI,
            "digest": "sha256:" + hashlib.sha256(SKILL_MD.encode()).hexdigest(),
            "size": len(SKILL_MD.encode()),
        }
    ],
}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    if method == "initialize":
        return {
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "resources": {},
                "extensions": {"io.modelcontextprotocol/skills": {"directoryRead": True}},
            },
            "serverInfo": {"name": "legacy-only", "version": "1"},
        }
    if method == "skills/list":
        return {"skills": [ENTRY]}
    if method == "skills/get":
        return {"skill": ENTRY}
    if method == "resources/directory/read":
        return {"resources": [{"uri": SKILL_URI, "name": "SKILL.md"}]}
    if method == "resources/list":
        return {"resources": [{"uri": SKILL_URI, "name": "hello", "mimeType": "text/markdown"}]}
    if method == "resources/read":
        return {"contents": [{"uri": SKILL_URI, "mimeType": "text/markdown", "text": SKILL_MD}]}
    if method == "ping":
        return {}
    return None


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        method = message.get("method")
        print(f"received {method}", file=sys.stderr, flush=True)
        if "id" not in message:
            continue  # a notification
        result = answer(str(method), message.get("params") or {})
        if result is None:
            reply: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {"code": -32601, "message": "Method not found"},
            }
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
