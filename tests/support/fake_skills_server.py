"""An honest skills server in memory, for the audit behind `skillwire check` (`audit(send, capabilities)`):
tests break it in one way each (an attribute, an error, a raw reply) to pin one rule."""

from __future__ import annotations

import hashlib
from typing import Any

import anyio
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS, METHOD_NOT_FOUND

from skillwire.checks.audit import AuditResult, audit

EXTENSION_ID = "io.modelcontextprotocol/skills"
DIR = "inode/directory"


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def md(name: str, description: str = "A skill.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n"


FAKE_FILES: dict[str, str] = {
    "skill://fake/alpha/SKILL.md": md("alpha"),
    "skill://fake/alpha/refs/one.md": "one\n",
    "skill://fake/beta/SKILL.md": md("beta"),
    "skill://fake/outer/SKILL.md": md("outer"),
    "skill://fake/outer/notes.md": "notes\n",
    "skill://fake/outer/inner/SKILL.md": md("inner"),
    "skill://fake/outer/inner/data.md": "data\n",
}


class FakeServer:
    """An honest skills server in memory; tests edit its attributes to break one thing."""

    def __init__(self, files: dict[str, str] | None = None, *, page_size: int = 2, directory_read: bool = True):
        self.files = dict(files or FAKE_FILES)
        self.capabilities: dict[str, Any] = {
            "resources": {},
            "extensions": {EXTENSION_ID: {"directoryRead": True} if directory_read else {}},
        }
        self.entries = {uri: self.entry(uri) for uri in sorted(self.files) if uri.endswith("/SKILL.md")}
        self.page_size = page_size
        self.pages: list[list[Any]] | None = None  # None: page `entries` by page_size
        self.get_entries: dict[str, dict[str, Any]] = {}  # overrides for skills/get
        self.list_envelope: dict[str, Any] = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
        self.get_envelope: dict[str, Any] = {"resultType": "complete", "ttlMs": 5000, "cacheScope": "public"}
        self.errors: dict[tuple[str, str], MCPError] = {}  # (method, uri or "" for every uri)
        self.directories: dict[str, dict[str, dict[str, Any]]] = self.directory_tree()
        self.served: dict[str, str] = {}  # extra readable resources
        self.listed_resources: list[dict[str, Any]] = [{"uri": u, "name": u} for u in self.entries]
        self.hang: set[str] = set()
        self.replies: dict[tuple[str, str], dict[str, Any]] = {}  # (method, uri or cursor): a raw result as is
        self.requests: list[tuple[str, str]] = []

    def entry(self, skill_uri: str) -> dict[str, Any]:
        root = skill_uri.removesuffix("/SKILL.md")
        text = self.files[skill_uri]
        fm = dict(line.split(": ", 1) for line in text.split("---\n")[1].splitlines())
        files = [u for u in sorted(self.files) if u.startswith(root + "/")]
        resources = [{"uri": u, "digest": digest(self.files[u]), "size": len(self.files[u].encode())} for u in files]
        return {"uri": skill_uri, "frontmatter": fm, "resources": resources}

    def directory_tree(self) -> dict[str, dict[str, dict[str, Any]]]:
        tree: dict[str, dict[str, dict[str, Any]]] = {}
        for uri in self.files:
            segments = uri.removeprefix("skill://").split("/")
            for depth in range(1, len(segments)):
                parent = "skill://" + "/".join(segments[:depth])
                child = "skill://" + "/".join(segments[: depth + 1])
                mime = DIR if depth < len(segments) - 1 else "text/markdown"
                tree.setdefault(parent, {})[child] = {"uri": child, "name": segments[depth], "mimeType": mime}
        return tree

    async def send(self, request: Any) -> dict[str, Any]:
        method = request.method
        params = request.params
        uri: str = getattr(params, "uri", "")
        cursor = getattr(params, "cursor", None)
        self.requests.append((method, uri))
        if uri in self.hang:
            await anyio.sleep(60)
        for key in ((method, uri), (method, "")):
            if key in self.errors:
                raise self.errors[key]
        reply = self.replies.get((method, uri or cursor or ""))
        if reply is not None:
            return reply
        if method == "skills/list":
            pages = self.pages
            if pages is None:
                listed = list(self.entries.values())
                pages = [listed[i : i + self.page_size] for i in range(0, len(listed), self.page_size)] or [[]]
            index = int(cursor or 0)
            result = {"skills": pages[index], **self.list_envelope}
            if index + 1 < len(pages):
                result["nextCursor"] = str(index + 1)
            return result
        if method == "skills/get":
            found = self.get_entries.get(uri) or self.entries.get(uri)
            if found is None:
                raise MCPError(INVALID_PARAMS, f"Unknown skill {uri}")
            return {"skill": found, **self.get_envelope}
        if method == "resources/read":
            text = self.files.get(uri) or self.served.get(uri)
            if text is None:
                raise MCPError(INVALID_PARAMS, f"Resource not found: {uri}")
            mime = "text/markdown"
            return {"resultType": "complete", "contents": [{"uri": uri, "mimeType": mime, "text": text}]}
        if method == "resources/list":
            return {"resultType": "complete", "resources": self.listed_resources}
        if method == "resources/directory/read":
            children = self.directories.get(uri)
            if children is None:
                raise MCPError(INVALID_PARAMS, f"No such directory: {uri}")
            return {"resultType": "complete", "resources": list(children.values())}
        raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method}")

    def audit(self, **options: Any) -> AuditResult:
        async def go() -> AuditResult:
            return await audit(self.send, self.capabilities, nonce="n0nce", **options)

        return anyio.run(go)
