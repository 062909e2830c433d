"""`skillwire serve`'s one-pass reply writer (server/_sdk.py `use_one_pass_replies`) against the SDK's own.

Two real `skillwire serve` subprocesses on 127.0.0.1 over the same catalog, one with the writer and one with
`SKILLWIRE_SDK_ONE_PASS=0`: every reply (pages, skills/get, text and blob reads, an error with an id, a
malformed body answered with `id: null`) has the same status, content type and parsed body on both, and only
the one-pass server writes non-ASCII as UTF-8 (the sign its writer, not the SDK's, produced the bytes).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from mcp_types import CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY, PROTOCOL_VERSION_META_KEY

from support.servers import serve_http

MODERN = "2026-07-28"


def raw(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, str, bytes]:
    request = urllib.request.Request(
        url,
        body,
        {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=15) as response:
            return response.status, response.headers.get("content-type", ""), response.read()
    except urllib.error.HTTPError as exc:  # a refusal: the JSON-RPC error with its mapped status
        return exc.code, exc.headers.get("content-type", ""), exc.read()


def call(url: str, method: str, params: dict[str, Any], name: str | None = None) -> tuple[int, str, bytes]:
    meta = {
        PROTOCOL_VERSION_META_KEY: MODERN,
        CLIENT_INFO_META_KEY: {"name": "test", "version": "0"},
        CLIENT_CAPABILITIES_META_KEY: {},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method, "params": {**params, "_meta": meta}}).encode()
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return raw(url, body, headers)


def catalog(root: Path) -> Path:
    for n in range(5):
        skill = root / f"cafe-{n}"
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(
            f"---\nname: cafe-{n}\n"
            f"description: Cr\u00e8me br\u00fbl\u00e9e \u2014 \u201cskill\u201d {n} \\ \U0001f600\n---\n"
            "# Body \u00e9\n\ncontrol \x01 char, tab\t.\n",
            encoding="utf-8",
        )
        (skill / "notes.md").write_text("na\u00efve notes\n", encoding="utf-8")
        (skill / "icon.bin").write_bytes(bytes(range(256)))
    return root


def exchange(url: str) -> list[tuple[int, str, bytes]]:
    """The same requests, in the same order, against one server."""
    replies = []
    cursor: str | None = None
    skills: list[dict[str, Any]] = []
    while True:
        reply = call(url, "skills/list", {} if cursor is None else {"cursor": cursor})
        replies.append(reply)
        result = json.loads(reply[2])["result"]
        skills += result["skills"]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    uri = skills[0]["uri"]
    replies.append(call(url, "skills/get", {"uri": uri}))
    replies.append(call(url, "skills/get", {"uri": uri + "-missing"}))  # an error reply with id 7
    base = uri.rsplit("/", 1)[0]
    for file in ("SKILL.md", "notes.md", "icon.bin"):
        replies.append(call(url, "resources/read", {"uri": f"{base}/{file}"}, name=f"{base}/{file}"))
    replies.append(raw(url, b"{not json", {"MCP-Protocol-Version": MODERN}))  # id: null
    return replies


def test_every_reply_parses_equal_with_and_without_the_one_pass_writer(tmp_path: Path) -> None:
    root = catalog(tmp_path / "skills")
    args = [str(root), "--no-watch", "--no-digest-cache", "--page-size", "2"]
    with serve_http(args) as on, serve_http(args, env={"SKILLWIRE_SDK_ONE_PASS": "0"}) as off:
        fast, sdk = exchange(on.url), exchange(off.url)
    assert len(fast) == len(sdk) == 3 + 2 + 3 + 1
    for (status, kind, body), (sdk_status, sdk_kind, sdk_body) in zip(fast, sdk, strict=True):
        assert (status, kind) == (sdk_status, sdk_kind), (body, sdk_body)
        assert json.loads(body) == json.loads(sdk_body)
    assert sdk[-1][0] >= 400
    assert json.loads(sdk[-1][2])["id"] is None
    assert b'"id":null' in fast[-1][2]
    assert "error" in json.loads(fast[4][2])
    assert json.loads(fast[4][2])["id"] == 7
    assert any("blob" in c for c in json.loads(fast[-2][2])["result"]["contents"])
    # The SDK's json.dumps escapes non-ASCII; the one-pass writer sends UTF-8: the page came from the seam.
    assert "Cr\u00e8me".encode() in fast[0][2]
    assert b"\\u00e8" in sdk[0][2]
