"""The seam between skillwire and the `mcp` SDK's private parts: one module, checked against the installed SDK.

`skillwire.server._sdk` is the only module allowed to touch a private attribute of the SDK; these tests check
that its three accesses still work on the installed `mcp` (one clear failure if a new release moved them), that
a moved attribute is reported by name, and that no other module in `src/` reaches into the SDK privately.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Any

import mcp
import mcp_types
import pytest
from mcp.server.mcpserver import MCPServer

from skillwire.core.errors import SdkShapeChanged
from skillwire.server import _sdk

SRC = Path(__file__).resolve().parents[2] / "src" / "skillwire"
SEAM = SRC / "server" / "_sdk.py"


def test_every_private_sdk_shape_skillwire_relies_on_is_there() -> None:
    # On failure this is the one message to read: which attribute moved, in which mcp, checked against which.
    _sdk.check_sdk_shapes()


def test_a_moved_attribute_is_named_in_one_message() -> None:
    server: MCPServer[Any] = MCPServer("moved")
    server._lowlevel_server = None  # type: ignore[assignment]  # what a future mcp might do
    with pytest.raises(SdkShapeChanged) as info:
        _sdk.lowlevel_server(server)
    message = str(info.value)
    assert "MCPServer._lowlevel_server" in message
    assert "checked against mcp 2.3.0" in message
    assert "\n" not in message

    class NoConnection:
        pass

    with pytest.raises(SdkShapeChanged, match=r"ServerSession\._connection"):
        _sdk.connection_of(NoConnection())  # type: ignore[arg-type]
    server._subscriptions = object()  # type: ignore[assignment]
    with pytest.raises(SdkShapeChanged, match=r"MCPServer\._subscriptions"):
        _sdk.subscription_bus(server)


def test_the_seam_returns_the_real_objects() -> None:
    server: MCPServer[Any] = MCPServer("real")
    assert _sdk.lowlevel_server(server).name == "real"
    assert _sdk.lowlevel_server(server).middleware is server.middleware  # the public alias of the same list
    assert callable(_sdk.subscription_bus(server).publish)


@functools.cache
def _sdk_private_names() -> frozenset[str]:
    """Every private name the SDK defines: `self._x` attributes, `_x` functions/classes, module-level `_x`."""
    names: set[str] = set()
    for package in (mcp, mcp_types):
        root = Path(package.__file__).parent  # type: ignore[arg-type]
        for path in root.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                found: list[str] = []
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
                    found.append(node.attr)
                elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    found.append(node.name)
                elif isinstance(node, ast.Assign | ast.AnnAssign):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    found += [t.id for t in targets if isinstance(t, ast.Name)]
                names.update(n for n in found if n.startswith("_") and not n.startswith("__"))
    return frozenset(names)


def _is_private_sdk_module(module: str) -> bool:
    parts = module.split(".")
    return parts[0] in ("mcp", "mcp_types") and any(p.startswith("_") and not p.startswith("__") for p in parts)


def private_sdk_uses(path: Path, sdk_private: frozenset[str], root: Path = SRC.parent) -> list[str]:
    """`file:line: code` for each private SDK access in one source file."""
    uses: list[str] = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        hit = False
        if isinstance(node, ast.Attribute) and node.attr in sdk_private:
            # Our own objects' attributes (self._x, cls._x) may share a name with an SDK private one.
            hit = not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) > 1:
            name = node.args[1]
            hit = (
                node.func.id in ("getattr", "setattr", "hasattr", "delattr")
                and isinstance(name, ast.Constant)
                and name.value in sdk_private
            )
        elif isinstance(node, ast.Import):
            hit = any(_is_private_sdk_module(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            hit = _is_private_sdk_module(node.module) or (
                node.module.split(".")[0] in ("mcp", "mcp_types")
                and any(a.name.startswith("_") and not a.name.startswith("__") for a in node.names)
            )
        if hit:
            uses.append(f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}: {ast.unparse(node)}")
    return uses


def test_no_module_but_the_seam_touches_the_sdk_privately() -> None:
    sdk_private = _sdk_private_names()
    assert {"_lowlevel_server", "_subscriptions", "_connection"} <= sdk_private  # the scan sees the SDK
    offenders = [
        use for path in sorted(SRC.rglob("*.py")) if path != SEAM for use in private_sdk_uses(path, sdk_private)
    ]
    assert offenders == [], "private SDK access outside skillwire/server/_sdk.py:\n" + "\n".join(offenders)


def test_the_scan_finds_each_kind_of_private_access(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import mcp.shared._httpx_utils\n"
        "from mcp.client._transport import TransportStreams\n"
        "from mcp.server.runner import _INIT_EXEMPT\n"
        "def f(server, ctx):\n"
        "    a = server._lowlevel_server\n"
        "    b = getattr(ctx.session, '_connection', None)\n"
        "    c = self._connection\n"  # our own attribute of that name: allowed
        "    return a, b, c\n",
        encoding="utf-8",
    )
    uses = private_sdk_uses(sample, _sdk_private_names(), tmp_path)
    assert [use.split(": ", 1)[0].rsplit(":", 1)[1] for use in uses] == ["1", "2", "3", "5", "6"]


def test_the_reply_writer_the_one_pass_encoder_replaces_has_the_shape_it_was_written_against() -> None:
    import inspect

    from mcp.server import _streamable_http_modern as modern_http

    sdk_write = _sdk._sdk_write or modern_http._write
    assert inspect.iscoroutinefunction(sdk_write)
    assert list(inspect.signature(sdk_write).parameters) == ["msg", "scope", "receive", "send"]
    # What the SDK's writer does that the one-pass one keeps: the status table for errors (left to it) and
    # the dump-then-dumps it replaces for successes.
    from collections.abc import Mapping

    assert isinstance(modern_http.ERROR_CODE_HTTP_STATUS, Mapping)  # type: ignore[attr-defined]
    assert modern_http._OK_STATUS == 200  # the status the one-pass writer gives every success
    assert "model_dump(" in inspect.getsource(sdk_write)
    assert "json.dumps(" in inspect.getsource(sdk_write)


async def _written(writer: Any, msg: Any) -> tuple[int, bytes]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await writer(msg, {"type": "http"}, receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


@pytest.mark.anyio
async def test_the_one_pass_writer_falls_back_for_what_it_cannot_encode_and_parses_equal() -> None:
    import json

    from mcp.server import _streamable_http_modern as modern_http
    from mcp_types import ErrorData, JSONRPCError, JSONRPCResponse

    sdk_write = _sdk._sdk_write or modern_http._write
    taken: list[Any] = []

    async def recording_sdk(msg: Any, scope: Any, receive: Any, send: Any) -> None:
        taken.append(msg)
        await sdk_write(msg, scope, receive, send)

    writer = _sdk.one_pass_writer(recording_sdk)
    cases = [
        (JSONRPCResponse(jsonrpc="2.0", id=1, result={"s": "lone \ud800"}), True),  # pydantic-core refuses it
        (JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=-32700, message="Parse error")), True),
        (JSONRPCResponse(jsonrpc="2.0", id=2, result={"x": float("nan"), "y": float("inf"), "z": "\u00e9"}), False),
    ]
    for msg, falls_back in cases:
        taken.clear()
        status, body = await _written(writer, msg)
        sdk_status, sdk_body = await _written(sdk_write, msg)
        assert (taken == [msg]) is falls_back
        assert status == sdk_status
        assert json.loads(body) == json.loads(sdk_body)  # NaN/inf: null on both (model_dump(mode="json") too)
    assert b'"id":null' in (await _written(writer, cases[1][0]))[1]


def test_installing_is_idempotent_and_guarded(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp.server import _streamable_http_modern as modern_http

    original = modern_http._write
    monkeypatch.setattr(modern_http, "_write", original)  # restored after the test
    monkeypatch.setattr(_sdk, "_sdk_write", _sdk._sdk_write)
    monkeypatch.delenv(_sdk.ONE_PASS_ENV, raising=False)
    assert _sdk.use_one_pass_replies()
    installed = modern_http._write
    assert installed is not original or _sdk._sdk_write is not None
    assert _sdk.use_one_pass_replies()
    assert modern_http._write is installed
    monkeypatch.setenv(_sdk.ONE_PASS_ENV, "0")
    assert not _sdk.use_one_pass_replies()
    assert modern_http._write is _sdk._sdk_write

    async def moved(message: Any, scope: Any, receive: Any, send: Any, extra: Any) -> None:
        pass

    monkeypatch.delenv(_sdk.ONE_PASS_ENV)
    monkeypatch.setattr(_sdk, "_sdk_write", None)
    monkeypatch.setattr(modern_http, "_write", moved)  # what a future mcp might do
    assert not _sdk.use_one_pass_replies()
    assert modern_http._write is moved  # type: ignore[comparison-overlap]  # left alone
