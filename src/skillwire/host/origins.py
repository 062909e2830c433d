"""Where skills come from on the host side: MCP servers (a URL or a stdio command) and local folders.

Every origin has a label the host assigns (`work`, `github`, `local`); that label, never the server's
self-reported `serverInfo.name`, names the origin in the registry, approvals, the cache and every
model-facing tool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path

from skillwire.client.connection import ResponseHook, open_skills_client
from skillwire.client.limits import ClientLimits
from skillwire.client.skills import SkillsClient
from skillwire.host.identity import validate_origin_label

__all__ = ["LocalOrigin", "ServerOrigin"]


@dataclass(frozen=True)
class ServerOrigin:
    """An MCP server: `url` (Streamable HTTP) or `command` (stdio), with optional HTTP headers.

    `limits` bound every request to it (its timeout, the bytes of each answer, the size of a listing).
    """

    label: str
    url: str | None = None
    command: tuple[str, ...] | None = None
    headers: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    limits: ClientLimits = field(default_factory=ClientLimits)

    def __post_init__(self) -> None:
        validate_origin_label(self.label)
        if (self.url is None) == (self.command is None):
            raise ValueError(f"origin {self.label!r}: give exactly one of a URL or a command")
        if self.command is not None and not self.command:
            raise ValueError(f"origin {self.label!r}: the command is empty")

    def connect(self, *, on_http_response: ResponseHook | None = None) -> AbstractAsyncContextManager[SkillsClient]:
        """A connected `SkillsClient` over the guarded transports (`skillwire.client.connection`)."""
        return open_skills_client(
            url=self.url,
            command=self.command,
            headers=dict(self.headers) or None,
            env=dict(self.env) or None,
            limits=self.limits,
            origin=self.label,
            on_http_response=on_http_response,
        )


def server_origin(
    label: str,
    target: str | Sequence[str],
    *,
    headers: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    limits: ClientLimits | None = None,
) -> ServerOrigin:
    """`target` is an `http(s)://` URL or a command line (a list, or a string split on spaces)."""
    chosen = limits if limits is not None else ClientLimits()
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        return ServerOrigin(label, url=target, headers=tuple((headers or {}).items()), limits=chosen)
    command = tuple(target.split()) if isinstance(target, str) else tuple(target)
    return ServerOrigin(label, command=command, env=tuple((env or {}).items()), limits=chosen)


@dataclass(frozen=True)
class LocalOrigin:
    """Skill folders on this machine (by default the Agent Skills discovery paths that exist)."""

    label: str
    paths: tuple[Path, ...] = field(default=())

    def __post_init__(self) -> None:
        validate_origin_label(self.label)
