"""Where skills come from on the host side: MCP servers (a URL or a stdio command) and local folders.

Every origin has a label the host assigns (`work`, `github`, `local`); that label, never the server's
self-reported `serverInfo.name`, names the origin in the registry, approvals, the cache and every
model-facing tool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from skillwire.host.identity import validate_origin_label


@dataclass(frozen=True)
class ServerOrigin:
    """An MCP server: `url` (Streamable HTTP) or `command` (stdio), with optional HTTP headers."""

    label: str
    url: str | None = None
    command: tuple[str, ...] | None = None
    headers: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        validate_origin_label(self.label)
        if (self.url is None) == (self.command is None):
            raise ValueError(f"origin {self.label!r}: give exactly one of a URL or a command")
        if self.command is not None and not self.command:
            raise ValueError(f"origin {self.label!r}: the command is empty")

    def client(self) -> Client:
        if self.url is not None:
            if self.headers:
                http = create_mcp_http_client(headers=dict(self.headers))
                return Client(streamable_http_client(self.url, http_client=http))
            return Client(self.url)
        assert self.command is not None
        params = StdioServerParameters(
            command=self.command[0], args=list(self.command[1:]), env=dict(self.env) if self.env else None
        )
        return Client(params)


def server_origin(
    label: str,
    target: str | Sequence[str],
    *,
    headers: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
) -> ServerOrigin:
    """`target` is an `http(s)://` URL or a command line (a list, or a string split on spaces)."""
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        return ServerOrigin(label, url=target, headers=tuple((headers or {}).items()))
    command = tuple(target.split()) if isinstance(target, str) else tuple(target)
    return ServerOrigin(label, command=command, env=tuple((env or {}).items()))


@dataclass(frozen=True)
class LocalOrigin:
    """Skill folders on this machine (by default the Agent Skills discovery paths that exist)."""

    label: str
    paths: tuple[Path, ...] = field(default=())

    def __post_init__(self) -> None:
        validate_origin_label(self.label)
